/**
 * The period reports the server builds from its activity log (activity-log.ts): `official-messages`
 * (the HSM log), `attendance-history` and `attendance-statistics`. Columns are named after the
 * webhook payloads' keys (spec 6.2, 6.3) where one exists; docs/server.md lists them. Times are
 * ISO 8601 with -03:00, as in the payloads.
 */
import { formatUtcMinus3 } from '../events/datetime.js';
import { repliedAsBlocklist } from '../events/status-merge.js';
import { messageStatus, type AttendanceLogEntry } from './activity-log.js';
import { csv } from './report-csv.js';
import { ReportError } from './report-error.js';
import type { ReportContext, ReportFile, ReportGenerator } from './report-types.js';

/** A report made before periods existed (restored while processing): everything kept. */
const EVERYTHING = { start: 0, end: Number.POSITIVE_INFINITY };

const time = (ms: number | undefined) => (ms === undefined ? '' : formatUtcMinus3(ms));

/** Refuses a file of more rows than the server allows (a request cannot buy an unbounded file). */
function checkRows(what: string, count: number, context: ReportContext): void {
  if (count <= context.maxRows) return;
  throw new ReportError(
    context.reportType,
    'too-many-rows',
    `The period holds ${count.toLocaleString('en-US')} ${what}, more than the ${context.maxRows.toLocaleString('en-US')} rows a report may have (maxReportRows): ask for a shorter period with start_date and end_date.`,
  );
}

export const officialMessages: ReportGenerator = (context): ReportFile => {
  const { start, end } = context.period ?? EVERYTHING;
  const entries = context.activity.messages(context.companyId, start, end);
  checkRows('messages', entries.length, context);
  const rows: unknown[][] = [
    [
      'id',
      'request_id',
      'campaign_id',
      'cost_center_id',
      'business_id',
      'from',
      'to',
      'is_retry',
      'retry_index',
      'message',
      'datetime',
      'status',
      'status_datetime',
      'server_datetime',
      'device_datetime',
      'read_datetime',
      'replied_datetime',
      'blocklist_response',
      'reason',
    ],
  ];
  for (const e of entries) {
    const { status, at } = messageStatus(e);
    rows.push([
      e.contactId,
      e.requestId,
      e.campaignId,
      e.costCenterId,
      e.businessId,
      e.from,
      e.to,
      e.retryIndex !== null,
      e.retryIndex,
      e.text,
      time(e.sentAt),
      status,
      time(at),
      time(e.times.SERVER),
      time(e.times.DEVICE),
      time(e.times.READ),
      time(e.times.REPLIED),
      e.times.REPLIED === undefined ? '' : repliedAsBlocklist(e.progress),
      e.reason,
    ]);
  }
  return { body: csv(rows) };
};

const seconds = (ms: number) => Math.round(ms / 1000);

export const attendanceHistory: ReportGenerator = (context): ReportFile => {
  const { start, end } = context.period ?? EVERYTHING;
  const entries = context.activity.attendances(context.companyId, start, end);
  checkRows('attendances', entries.length, context);
  const rows: unknown[][] = [
    [
      'id',
      'ticket_id',
      'ticket_uuid',
      'campaign_id',
      'request_id',
      'cost_center_id',
      'hsm_id',
      'number',
      'from',
      'opened_at',
      'datetime',
      'duration_seconds',
      'messages',
      'campaign_messages',
      'client_messages',
      'bot_messages',
      'attendant_messages',
      'user_id',
      'user_name',
      'occurrence_id',
      'occurrence_name',
      'survey_id',
      'survey_name',
      'survey_status',
      'survey_answers',
      'survey_score',
    ],
  ];
  for (const a of entries) {
    rows.push([
      a.attendanceId,
      a.ticketId,
      a.ticketUuid,
      a.campaignId,
      a.requestId,
      a.costCenterId,
      a.contactId,
      a.number,
      a.from,
      time(a.openedAt),
      time(a.closedAt),
      seconds(a.closedAt - a.openedAt),
      a.messages.total,
      a.messages.campaign,
      a.messages.client,
      a.messages.bot,
      a.messages.attendant,
      a.user?.id,
      a.user?.name,
      a.occurrence?.id,
      a.occurrence?.name,
      a.survey?.id,
      a.survey?.name,
      a.survey?.status,
      a.survey?.answers,
      a.survey?.score === null || a.survey === null ? '' : round2(a.survey.score),
    ]);
  }
  return { body: csv(rows) };
};

const SURVEY_STATUSES = ['completed', 'declined', 'failed', 'expired', 'cancelled'] as const;

/** One row of attendance statistics over a group of attendances. */
function statisticsRow(label: string | number, list: readonly AttendanceLogEntry[]): unknown[] {
  const n = list.length;
  const durations = list.map((a) => a.closedAt - a.openedAt);
  const messages = list.reduce((s, a) => s + a.messages.total, 0);
  const scores = list.flatMap((a) => (a.survey?.score === null || a.survey === null ? [] : [a.survey.score]));
  const surveys = SURVEY_STATUSES.map((status) => list.filter((a) => a.survey?.status === status).length);
  return [
    label,
    n,
    list.filter((a) => a.user !== null).length,
    messages,
    n === 0 ? '' : round2(messages / n),
    n === 0 ? '' : seconds(durations.reduce((s, d) => s + d, 0) / n),
    n === 0 ? '' : seconds(durations.reduce((m, d) => Math.max(m, d), 0)),
    list.filter((a) => a.survey !== null).length,
    ...surveys,
    scores.length === 0 ? '' : round2(scores.reduce((s, x) => s + x, 0) / scores.length),
  ];
}

export const attendanceStatistics: ReportGenerator = (context): ReportFile => {
  const { start, end } = context.period ?? EVERYTHING;
  const entries = context.activity.attendances(context.companyId, start, end);
  const byCampaign = new Map<number, AttendanceLogEntry[]>();
  for (const a of entries) {
    const list = byCampaign.get(a.campaignId) ?? [];
    list.push(a);
    byCampaign.set(a.campaignId, list);
  }
  const rows: unknown[][] = [
    [
      'campaign_id',
      'attendances',
      'with_attendant',
      'messages',
      'average_messages',
      'average_duration_seconds',
      'max_duration_seconds',
      'surveys',
      ...SURVEY_STATUSES.map((s) => `surveys_${s}`),
      'average_survey_score',
    ],
  ];
  for (const id of [...byCampaign.keys()].sort((a, b) => a - b)) rows.push(statisticsRow(id, byCampaign.get(id)!));
  // The period's totals last, also when it holds no attendance (a row of zeros says "none", not "broken").
  rows.push(statisticsRow('all', entries));
  return { body: csv(rows) };
};

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
