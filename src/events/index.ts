/**
 * The events subsystem (spec parts 3, 5.3, 6, 7): webhook payloads and their schemas, status
 * merge, campaign statistics, reports and download tokens, Standard Webhooks signing, and the
 * delivery outbox. Pure: time is passed in, randomness comes from a {@link RandomSource}.
 */

// Ports and primitives
export type { RandomSource } from './random.js';
export { randomUnit } from './random.js';
export { uuidV4, isUuidV4, UUID_V4_PATTERN } from './uuid.js';
export { formatUtcMinus3, parseDateTime, DATE_TIME_PATTERN } from './datetime.js';
export type { SecretKey } from './hmac.js';

// Schemas
export { EventIdSchema, DateTimeSchema, ContactDataSchema, Nullable } from './schemas/common.js';
export { registerEventFormats } from './schemas/formats.js';
export {
  REPORT_TYPES,
  ReportTypeSchema,
  ReportReadySchema,
  ReportErrorSchema,
  ReportEventSchema,
} from './schemas/report.js';
export type { ReportType, ReportReadyPayload, ReportErrorPayload, ReportEventPayload } from './schemas/report.js';
export {
  ATTENDANCE_MESSAGE_TYPES,
  SURVEY_STATUSES,
  AttendanceMessageSchema,
  SurveyAnswerSchema,
  SurveySchema,
  AttendanceNotificationSchema,
} from './schemas/attendance.js';
export type {
  AttendanceMessageType,
  SurveyStatus,
  AttendanceMessagePayload,
  SurveyAnswerPayload,
  SurveyPayload,
  AttendanceNotificationPayload,
} from './schemas/attendance.js';
export {
  HSM_STATUSES,
  STATUSES_WITH_RECIPIENT_IDS,
  STATUSES_WITH_NULLABLE_MESSAGE,
  HsmNotificationSchema,
} from './schemas/hsm.js';
export type { HsmStatus, HsmNotificationPayload } from './schemas/hsm.js';
export {
  CAMPAIGN_STATUSES,
  CAMPAIGN_COUNT_KEYS,
  CampaignStatisticsSchema,
  CampaignBatchSchema,
} from './schemas/campaign.js';
export type {
  CampaignStatus,
  CampaignCountKey,
  CampaignStatisticsPayload,
  CampaignBatchPayload,
} from './schemas/campaign.js';
export { validatePayload } from './validate.js';

// Builders
export { buildHsmNotification, carriesRecipientIds } from './hsm.js';
export type { HsmNotificationInput, HsmCommonInput, HsmStatusInput } from './hsm.js';
export { reasonFor, parseFailureReason } from './failure-reason.js';
export type { SendFailure } from './failure-reason.js';
export { buildAttendanceNotification, attendanceProblems, messagePattern } from './attendance.js';
export type {
  AttendanceInput,
  AttendanceMessageInput,
  AttendanceSender,
  AttendanceOrigin,
  SurveyInput,
} from './attendance.js';

// Status merge and statistics
export {
  PROGRESS_ORDER,
  ENDING_STATUSES,
  NO_PROGRESS,
  observe,
  mergeProgress,
  hasObserved,
  highestProgress,
  reached,
  currentStatus,
  statusRank,
  failedAsDoesNotExist,
  repliedAsBlocklist,
  attemptKey,
  StatusMerger,
} from './status-merge.js';
export type {
  ProgressStatus,
  MessageProgress,
  StatusObservation,
  StatusNotification,
  MergeOutcome,
} from './status-merge.js';
export {
  ADMISSIONS,
  emptyCounts,
  admitContact,
  contactStatus,
  mergeContact,
  classifyContact,
  recount,
  countProblems,
  campaignStatus,
  campaignStatisticsPayload,
} from './campaign-counts.js';
export type { Admission, CampaignCounts, ContactState } from './campaign-counts.js';
export { CampaignStatistics } from './campaign-stats.js';
export type {
  ContactStatusChange,
  CampaignStatisticsOptions,
  CampaignStatisticsSnapshot,
  CampaignStatisticsChanges,
  CampaignRow,
  ContactRow,
} from './campaign-stats.js';

// Reports
export { ReportTracker, buildReportReady, buildReportError, isReportType, parseReportType } from './reports.js';
export type { ReportRequest, ReportResult, ReportEvent, FinishOutcome, ReportTrackerOptions } from './reports.js';
export { REPORT_TOKEN_TTL_MS, issueReportToken, verifyReportToken, reportDownloadUrl } from './report-token.js';
export type {
  IssueReportTokenOptions,
  VerifyReportTokenOptions,
  ReportTokenVerdict,
  ReportTokenRejection,
} from './report-token.js';

// Webhook signing and delivery
export { WEBHOOK_TOLERANCE_MS, generateWebhookSecret, signWebhook, verifyWebhook } from './signing.js';
export type {
  WebhookHeaders,
  SignWebhookInput,
  VerifyWebhookInput,
  ReceivedHeaders,
  WebhookVerdict,
  WebhookRejection,
} from './signing.js';
export { Outbox, httpAttemptResult } from './outbox.js';
export type {
  WebhookFamily,
  OutboxEvent,
  OutboxOptions,
  DeliveryAttempt,
  AttemptResult,
  DeliveryOutcome,
  EnqueueOutcome,
  SettleOutcome,
  OutboxSnapshot,
} from './outbox.js';
