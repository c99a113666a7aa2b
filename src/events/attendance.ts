/**
 * Builds the attendance notification (spec 6.2). Message patterns and the active/receptive split
 * are chosen by input kind, so the flags cannot disagree: a `bot` message is always
 * `from_me: true, from_bot: true, user: null`, an `attendant` message always carries its user.
 * {@link attendanceProblems} checks a payload from elsewhere (schema and patterns) as data.
 */
import type { Problem } from '../core/problems.js';
import { formatUtcMinus3 } from './datetime.js';
import { requireInteger } from './ids.js';
import type { RandomSource } from './random.js';
import {
  AttendanceNotificationSchema,
  type AttendanceMessagePayload,
  type AttendanceMessageType,
  type AttendanceNotificationPayload,
  type SurveyPayload,
} from './schemas/attendance.js';
import { uuidV4 } from './uuid.js';
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
} & (
  | { readonly status: 'completed'; readonly completedAt: number }
  | { readonly status: 'expired'; readonly expiredAt: number }
  | { readonly status: 'declined' | 'failed' | 'cancelled' }
);

/** How the attendance started: by a campaign (active) or by the client (receptive). */
export type AttendanceOrigin =
  | { readonly kind: 'active'; readonly campaignId: number; readonly requestId: string | null; readonly costCenterId: number }
  | { readonly kind: 'receptive' };

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

/** The flags of each sender kind (spec 6.2 message patterns). */
function flags(s: AttendanceSender, i: number): { from_me: boolean; from_bot: boolean; user: number | null } {
  switch (s.kind) {
    case 'campaign':
      return { from_me: true, from_bot: false, user: null };
    case 'client':
      return { from_me: false, from_bot: false, user: null };
    case 'bot':
      return { from_me: true, from_bot: true, user: null };
    case 'attendant':
      requireInteger(`buildAttendanceNotification(messages[${i}].sender.userId)`, s.userId);
      return { from_me: true, from_bot: false, user: s.userId };
  }
}

function message(m: AttendanceMessageInput, i: number): AttendanceMessagePayload {
  // Keys in the spec's table order; the flags come from the sender kind, so they always fit a pattern.
  return {
    from: m.from,
    to: m.to,
    ...flags(m.sender, i),
    type: m.type,
    text: m.text,
    file: m.file ?? null,
    datetime: formatUtcMinus3(m.sentAt),
  } as AttendanceMessagePayload;
}

function survey(s: SurveyInput): SurveyPayload {
  const common = {
    id: s.id,
    name: s.name,
    started_at: formatUtcMinus3(s.startedAt),
    answers: s.answers.map((a) => ({
      question: a.question,
      question_type: a.questionType,
      answer: a.answer,
      answered_at: formatUtcMinus3(a.answeredAt),
    })),
  };
  switch (s.status) {
    case 'completed':
      return { ...common, status: s.status, completed_at: formatUtcMinus3(s.completedAt), expired_at: null };
    case 'expired':
      return { ...common, status: s.status, completed_at: null, expired_at: formatUtcMinus3(s.expiredAt) };
    default:
      return { ...common, status: s.status, completed_at: null, expired_at: null };
  }
}

/** Builds the attendance notification with a fresh `event_id` from `random`. */
export function buildAttendanceNotification(input: AttendanceInput, random: RandomSource): AttendanceNotificationPayload {
  requireInteger('buildAttendanceNotification(id)', input.id);
  requireInteger('buildAttendanceNotification(ticketId)', input.ticketId);
  const o = input.origin;
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
    occurrence: input.occurrence ? { id: input.occurrence.id, name: input.occurrence.name } : null,
    user: input.user ? { id: input.user.id, name: input.user.name } : null,
    datetime: formatUtcMinus3(input.closedAt),
    messages: input.messages.map(message),
    survey: input.survey ? survey(input.survey) : null,
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
