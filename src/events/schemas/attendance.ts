/**
 * Attendance webhook payload (spec 6.2), sent to `url_attendance_callback` when an attendance
 * closes. It has no `event` field.
 *
 * The spec's message patterns are written into the message schema as a union of four closed
 * objects, so a message that fits none of them fails validation:
 * - campaign HSM: `from_me` true, `from_bot` false, `user` null;
 * - client reply: `from_me` false (and, our reading, `from_bot` false, `user` null);
 * - bot reply: `from_me` true, `from_bot` true (our reading: `user` null);
 * - attendant reply: `from_me` true, `from_bot` false, `user` set.
 */
import { Type, type Static } from '@sinclair/typebox';
import { CLOSED, ContactDataSchema, DateTimeSchema, EventIdSchema, Nullable } from './common.js';

/** Message types of spec 6.2. */
export const ATTENDANCE_MESSAGE_TYPES = ['text', 'audio', 'image', 'video', 'file'] as const;
export type AttendanceMessageType = (typeof ATTENDANCE_MESSAGE_TYPES)[number];

/** Survey statuses of spec part 3. */
export const SURVEY_STATUSES = ['completed', 'declined', 'failed', 'expired', 'cancelled'] as const;
export type SurveyStatus = (typeof SURVEY_STATUSES)[number];

const MessageTypeSchema = Type.Union([Type.Literal('text'), Type.Literal('audio'), Type.Literal('image'), Type.Literal('video'), Type.Literal('file')]);

const messageCommon = {
  from: Type.String(),
  to: Type.String(),
  type: MessageTypeSchema,
  text: Type.String(),
  file: Nullable(Type.String()),
  datetime: DateTimeSchema,
};

/** One message of an attendance: one of the four patterns of spec 6.2. */
export const AttendanceMessageSchema = Type.Union(
  [
    Type.Object({ ...messageCommon, from_me: Type.Literal(true), from_bot: Type.Literal(false), user: Type.Null() }, { ...CLOSED, title: 'campaign HSM' }),
    Type.Object({ ...messageCommon, from_me: Type.Literal(false), from_bot: Type.Literal(false), user: Type.Null() }, { ...CLOSED, title: 'client reply' }),
    Type.Object({ ...messageCommon, from_me: Type.Literal(true), from_bot: Type.Literal(true), user: Type.Null() }, { ...CLOSED, title: 'bot reply' }),
    Type.Object({ ...messageCommon, from_me: Type.Literal(true), from_bot: Type.Literal(false), user: Type.Integer() }, { ...CLOSED, title: 'attendant reply' }),
  ],
  { title: 'attendance message' },
);
export type AttendanceMessagePayload = Static<typeof AttendanceMessageSchema>;

/** One answer of a satisfaction survey. */
export const SurveyAnswerSchema = Type.Object(
  {
    question: Type.String(),
    question_type: Type.Union([Type.Literal('scale'), Type.Literal('text')]),
    answer: Type.String(),
    answered_at: DateTimeSchema,
  },
  { ...CLOSED, title: 'survey answer' },
);
export type SurveyAnswerPayload = Static<typeof SurveyAnswerSchema>;

const surveyCommon = {
  id: Type.Integer(),
  name: Type.String(),
  started_at: DateTimeSchema,
  answers: Type.Array(SurveyAnswerSchema),
};

/**
 * The satisfaction survey. Our reading of the nullable times: `completed_at` is set exactly when
 * the status is `completed`, `expired_at` exactly when it is `expired`.
 */
export const SurveySchema = Type.Union(
  [
    Type.Object({ ...surveyCommon, status: Type.Literal('completed'), completed_at: DateTimeSchema, expired_at: Type.Null() }, { ...CLOSED, title: 'survey completed' }),
    Type.Object({ ...surveyCommon, status: Type.Literal('expired'), completed_at: Type.Null(), expired_at: DateTimeSchema }, { ...CLOSED, title: 'survey expired' }),
    Type.Object(
      {
        ...surveyCommon,
        status: Type.Union([Type.Literal('declined'), Type.Literal('failed'), Type.Literal('cancelled')]),
        completed_at: Type.Null(),
        expired_at: Type.Null(),
      },
      { ...CLOSED, title: 'survey declined/failed/cancelled' },
    ),
  ],
  { title: 'survey' },
);
export type SurveyPayload = Static<typeof SurveySchema>;

const IdName = Type.Object({ id: Type.Integer(), name: Type.String() }, CLOSED);

const attendanceCommon = {
  event_id: EventIdSchema,
  id: Type.Integer(),
  ticket_id: Type.Integer(),
  ticket_uuid: Type.String({ format: 'uuid' }),
  number: Type.String(),
  data: ContactDataSchema,
  document: Nullable(Type.String()),
  occurrence: Nullable(IdName),
  user: Nullable(IdName),
  datetime: DateTimeSchema,
  messages: Type.Array(AttendanceMessageSchema),
  survey: Nullable(SurveySchema),
};

/**
 * The attendance notification. Active attendances (`from_me` true, started by a campaign) carry
 * the campaign and cost center; receptive ones (`from_me` false) carry null there (spec 6.2).
 */
export const AttendanceNotificationSchema = Type.Union(
  [
    Type.Object(
      {
        ...attendanceCommon,
        campaign_id: Type.Integer(),
        request_id: Nullable(Type.String()),
        cost_center_id: Type.Integer(),
        from_me: Type.Literal(true),
      },
      { ...CLOSED, title: 'attendance (active)' },
    ),
    Type.Object(
      {
        ...attendanceCommon,
        campaign_id: Type.Null(),
        request_id: Type.Null(),
        cost_center_id: Type.Null(),
        from_me: Type.Literal(false),
      },
      { ...CLOSED, title: 'attendance (receptive)' },
    ),
  ],
  { title: 'attendance notification' },
);
export type AttendanceNotificationPayload = Static<typeof AttendanceNotificationSchema>;
