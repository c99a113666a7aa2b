/**
 * Builds the attendance notification (spec 6.2). Message patterns and the active/receptive split
 * are chosen by input kind, so the flags cannot disagree: a `bot` message is always
 * `from_me: true, from_bot: true, user: null`, an `attendant` message always carries its user.
 * {@link attendanceProblems} checks a payload from elsewhere (schema and patterns) as data.
 */
import { ArgumentError } from '../core/errors.js';
import { describeValue, type Problem } from '../core/problems.js';
import { formatTime } from './datetime.js';
import { requireInteger, requireOneOf, requireString, requireStringOrNull, requireStringRecord } from './ids.js';
import type { RandomSource } from './random.js';
import {
  ATTENDANCE_MESSAGE_TYPES,
  AttendanceNotificationSchema,
  SURVEY_STATUSES,
  type AttendanceMessagePayload,
  type AttendanceMessageType,
  type AttendanceNotificationPayload,
  type SurveyPayload,
} from './schemas/attendance.js';
import { UUID_PATTERN, uuidV4 } from './uuid.js';
import { validatePayload } from './validate.js';

/** Who sent a message: the four patterns of spec 6.2. */
export type AttendanceSender =
  /** The HSM the campaign sent: from_me true, from_bot false, user null. */
  | { readonly kind: 'campaign' }
  /** The client: from_me false. */
  | { readonly kind: 'client' }
  /** A bot: from_me true, from_bot true. */
  | { readonly kind: 'bot' }
  /** An attendant: from_me true, from_bot false, user = the attendant's id. */
  | { readonly kind: 'attendant'; readonly userId: number };

/** One message of the attendance. */
export interface AttendanceMessageInput {
  readonly sender: AttendanceSender;
  readonly from: string;
  readonly to: string;
  readonly type: AttendanceMessageType;
  readonly text: string;
  /** URL of the file sent. @default null */
  readonly file?: string | null;
  /** Send time, epoch milliseconds. */
  readonly sentAt: number;
}

/** The satisfaction survey; the status decides which end time it carries. */
export type SurveyInput = {
  readonly id: number;
  readonly name: string;
  /** Epoch milliseconds. */
  readonly startedAt: number;
  readonly answers: readonly {
    readonly question: string;
    readonly questionType: 'scale' | 'text';
    readonly answer: string;
    /** Epoch milliseconds. */
    readonly answeredAt: number;
  }[];
} & ({ readonly status: 'completed'; readonly completedAt: number } | { readonly status: 'expired'; readonly expiredAt: number } | { readonly status: 'declined' | 'failed' | 'cancelled' });

/** How the attendance started: by a campaign (active) or by the client (receptive). */
export type AttendanceOrigin = { readonly kind: 'active'; readonly campaignId: number; readonly requestId: string | null; readonly costCenterId: number } | { readonly kind: 'receptive' };

/** Everything the attendance notification builder needs. */
export interface AttendanceInput {
  /** Attendance id. */
  readonly id: number;
  readonly ticketId: number;
  /** Ticket UUID. */
  readonly ticketUuid: string;
  readonly origin: AttendanceOrigin;
  /** Contact phone number. */
  readonly number: string;
  /** Additional data from the send. @default null */
  readonly data?: Readonly<Record<string, string>> | null;
  /** CPF or CNPJ. @default null */
  readonly document?: string | null;
  /** @default null */
  readonly occurrence?: { readonly id: number; readonly name: string } | null;
  /** The attendant. @default null */
  readonly user?: { readonly id: number; readonly name: string } | null;
  /** Closing time, epoch milliseconds. */
  readonly closedAt: number;
  readonly messages: readonly AttendanceMessageInput[];
  /** @default null */
  readonly survey?: SurveyInput | null;
}

const API = 'buildAttendanceNotification';
const SENDER_KINDS: readonly AttendanceSender['kind'][] = ['campaign', 'client', 'bot', 'attendant'];

/** The flags of each sender kind (spec 6.2 message patterns). */
function flags(s: AttendanceSender, i: number): { from_me: boolean; from_bot: boolean; user: number | null } {
  requireOneOf(`${API}(messages[${i}].sender.kind)`, s.kind, SENDER_KINDS);
  switch (s.kind) {
    case 'campaign':
      return { from_me: true, from_bot: false, user: null };
    case 'client':
      return { from_me: false, from_bot: false, user: null };
    case 'bot':
      return { from_me: true, from_bot: true, user: null };
    case 'attendant':
      requireInteger(`${API}(messages[${i}].sender.userId)`, s.userId);
      return { from_me: true, from_bot: false, user: s.userId };
  }
}

function message(m: AttendanceMessageInput, i: number): AttendanceMessagePayload {
  const at = (field: string) => `${API}(messages[${i}].${field})`;
  requireString(at('from'), m.from);
  requireString(at('to'), m.to);
  requireOneOf(at('type'), m.type, ATTENDANCE_MESSAGE_TYPES);
  requireString(at('text'), m.text);
  if (m.file !== undefined) requireStringOrNull(at('file'), m.file);
  // Keys in the spec's table order; the flags come from the sender kind, so they always fit a pattern.
  return {
    from: m.from,
    to: m.to,
    ...flags(m.sender, i),
    type: m.type,
    text: m.text,
    file: m.file ?? null,
    datetime: formatTime(at('sentAt'), m.sentAt),
  } as AttendanceMessagePayload;
}

function survey(s: SurveyInput): SurveyPayload {
  const at = (field: string) => `${API}(survey.${field})`;
  requireInteger(at('id'), s.id);
  requireString(at('name'), s.name);
  requireOneOf(at('status'), s.status, SURVEY_STATUSES);
  if (!Array.isArray(s.answers)) throw new ArgumentError(at('answers'), 'an array', describeValue(s.answers));
  const common = {
    id: s.id,
    name: s.name,
    started_at: formatTime(at('startedAt'), s.startedAt),
    answers: (s.answers as SurveyInput['answers']).map((a, k) => {
      requireString(at(`answers[${k}].question`), a.question);
      requireOneOf(at(`answers[${k}].questionType`), a.questionType, ['scale', 'text']);
      requireString(at(`answers[${k}].answer`), a.answer);
      return {
        question: a.question,
        question_type: a.questionType,
        answer: a.answer,
        answered_at: formatTime(at(`answers[${k}].answeredAt`), a.answeredAt),
      };
    }),
  };
  switch (s.status) {
    case 'completed':
      return { ...common, status: s.status, completed_at: formatTime(at('completedAt'), s.completedAt), expired_at: null };
    case 'expired':
      return { ...common, status: s.status, completed_at: null, expired_at: formatTime(at('expiredAt'), s.expiredAt) };
    default:
      return { ...common, status: s.status, completed_at: null, expired_at: null };
  }
}

/** `{ id, name }` of an occurrence or a user, or null. */
function idName(value: { readonly id: number; readonly name: string } | null | undefined, field: string): { id: number; name: string } | null {
  if (value === null || value === undefined) return null;
  requireInteger(`${API}(${field}.id)`, value.id);
  requireString(`${API}(${field}.name)`, value.name);
  return { id: value.id, name: value.name };
}

/**
 * Builds the attendance notification with a fresh `event_id` from `random`.
 * @throws {ArgumentError} for a fractional or unsafe id, a ticket UUID that is not a UUID, a time
 * that cannot be written, an unknown kind, type or status, or a field of the wrong kind: the
 * payload always passes `AttendanceNotificationSchema`
 */
export function buildAttendanceNotification(input: AttendanceInput, random: RandomSource): AttendanceNotificationPayload {
  requireInteger(`${API}(id)`, input.id);
  requireInteger(`${API}(ticketId)`, input.ticketId);
  if (typeof input.ticketUuid !== 'string' || !UUID_PATTERN.test(input.ticketUuid)) {
    throw new ArgumentError(`${API}(ticketUuid)`, 'a UUID (8-4-4-4-12 hex digits)', describeValue(input.ticketUuid));
  }
  const o = input.origin;
  requireOneOf(`${API}(origin.kind)`, o.kind, ['active', 'receptive']);
  if (o.kind === 'active') {
    requireInteger(`${API}(origin.campaignId)`, o.campaignId);
    requireStringOrNull(`${API}(origin.requestId)`, o.requestId);
    requireInteger(`${API}(origin.costCenterId)`, o.costCenterId);
  }
  requireString(`${API}(number)`, input.number);
  requireStringRecord(`${API}(data)`, input.data);
  if (input.document !== undefined) requireStringOrNull(`${API}(document)`, input.document);
  if (!Array.isArray(input.messages)) throw new ArgumentError(`${API}(messages)`, 'an array', describeValue(input.messages));
  // Every part is checked and built before the event id is drawn: a refused input uses no randomness.
  const occurrence = idName(input.occurrence, 'occurrence');
  const user = idName(input.user, 'user');
  const datetime = formatTime(`${API}(closedAt)`, input.closedAt);
  const messages = input.messages.map(message);
  const surveyPayload = input.survey ? survey(input.survey) : null;
  const origin =
    o.kind === 'active'
      ? { campaign_id: o.campaignId, request_id: o.requestId, cost_center_id: o.costCenterId, from_me: true as const }
      : { campaign_id: null, request_id: null, cost_center_id: null, from_me: false as const };
  // Keys in the spec's table order.
  return {
    event_id: uuidV4(random),
    id: input.id,
    ticket_id: input.ticketId,
    ticket_uuid: input.ticketUuid,
    campaign_id: origin.campaign_id,
    request_id: origin.request_id,
    cost_center_id: origin.cost_center_id,
    from_me: origin.from_me,
    number: input.number,
    data: input.data ? { ...input.data } : null,
    document: input.document ?? null,
    occurrence,
    user,
    datetime,
    messages,
    survey: surveyPayload,
  } as AttendanceNotificationPayload;
}

/** Which pattern of spec 6.2 a message follows, or undefined when it follows none. */
export function messagePattern(m: { from_me: unknown; from_bot: unknown; user: unknown }): AttendanceSender['kind'] | undefined {
  if (m.from_me === false && m.from_bot === false && m.user === null) return 'client';
  if (m.from_me === true && m.from_bot === true && m.user === null) return 'bot';
  if (m.from_me === true && m.from_bot === false) {
    if (m.user === null) return 'campaign';
    if (Number.isSafeInteger(m.user)) return 'attendant';
  }
  return undefined;
}

/** Every problem of an attendance payload: schema, message patterns, active/receptive fields. */
export function attendanceProblems(payload: unknown): Problem[] {
  return validatePayload(AttendanceNotificationSchema, payload);
}
