/**
 * `sendpool/events`, the events subsystem (spec parts 3, 5.3, 6, 7): webhook payloads and their
 * schemas, status merge, campaign statistics, reports and download tokens, Standard Webhooks
 * signing, and the delivery outbox. Pure: time is passed in, randomness comes from a
 * {@link RandomSource}.
 *
 * This list is the entry's surface (docs/events.md describes it); the building blocks behind it
 * (sub-schemas, the bit-mask status merge, per-contact counting, id and date helpers) stay internal,
 * so they can change without a breaking release.
 */

// Ports
export type { RandomSource } from './random.js';
export type { SecretKey } from './hmac.js';

// Schemas
export { REPORT_TYPES, ReportReadySchema, ReportErrorSchema, ReportEventSchema } from './schemas/report.js';
export type { ReportType, ReportReadyPayload, ReportErrorPayload, ReportEventPayload } from './schemas/report.js';
export { ATTENDANCE_MESSAGE_TYPES, SURVEY_STATUSES, AttendanceNotificationSchema } from './schemas/attendance.js';
export type { AttendanceMessageType, SurveyStatus, AttendanceMessagePayload, SurveyAnswerPayload, SurveyPayload, AttendanceNotificationPayload } from './schemas/attendance.js';
export { HSM_STATUSES, HsmNotificationSchema } from './schemas/hsm.js';
export type { HsmStatus, HsmNotificationPayload } from './schemas/hsm.js';
export { CAMPAIGN_STATUSES, CAMPAIGN_COUNT_KEYS, CampaignBatchSchema } from './schemas/campaign.js';
export type { CampaignStatus, CampaignCountKey, CampaignStatisticsPayload, CampaignBatchPayload } from './schemas/campaign.js';
export { validatePayload } from './validate.js';

// Builders
export { buildHsmNotification } from './hsm.js';
export type { HsmNotificationInput, HsmCommonInput, HsmStatusInput } from './hsm.js';
export { reasonFor, parseFailureReason } from './failure-reason.js';
export type { SendFailure } from './failure-reason.js';
export { buildAttendanceNotification } from './attendance.js';
export type { AttendanceInput, AttendanceMessageInput, AttendanceSender, AttendanceOrigin, SurveyInput } from './attendance.js';

// Status merge and statistics
export { StatusMerger, attemptKey, reached } from './status-merge.js';
export type { ProgressStatus, MessageProgress, StatusObservation, StatusNotification, MergeOutcome } from './status-merge.js';
export { ADMISSIONS, countProblems } from './campaign-counts.js';
export type { Admission, CampaignCounts } from './campaign-counts.js';
export { CampaignStatistics } from './campaign-stats.js';
export type { ContactStatusChange, CampaignStatisticsOptions, CampaignStatisticsSnapshot, CampaignStatisticsChanges, CampaignRow, ContactRow } from './campaign-stats.js';
export type { SnapshotContact } from './campaign-stats-types.js';

// Reports
export { ReportTracker, buildReportReady, buildReportError, isReportType, parseReportType } from './reports.js';
export type { ReportRequest, ReportCompletion, ReportEvent, FinishOutcome, ReportTrackerOptions } from './reports.js';
export { REPORT_TOKEN_TTL_MS, issueReportToken, verifyReportToken, reportDownloadUrl } from './report-token.js';
export type { IssueReportTokenOptions, VerifyReportTokenOptions, ReportTokenVerdict, ReportTokenRejection } from './report-token.js';

// Webhook signing and delivery
export { WEBHOOK_TOLERANCE_MS, generateWebhookSecret, signWebhook, verifyWebhook } from './signing.js';
export type { WebhookHeaders, SignWebhookInput, VerifyWebhookInput, ReceivedHeaders, WebhookVerdict, WebhookRejection } from './signing.js';
export { Outbox, httpAttemptResult } from './outbox.js';
export type { WebhookFamily, OutboxEvent, OutboxOptions, DeliveryAttempt, AttemptResult, DeliveryOutcome, EnqueueOutcome, SettleOutcome, OutboxSnapshot, OutboxTargetView } from './outbox.js';
export type { EntryState } from './outbox-types.js';
