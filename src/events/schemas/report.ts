/** Report webhook payloads (spec 6.1), sent to `url_report_webhook`. */
import { Type, type Static } from '@sinclair/typebox';
import { CLOSED, DateTimeSchema, EventIdSchema } from './common.js';

/** Report types of spec 2.6, in the spec's order. */
export const REPORT_TYPES = [
  'licenses',
  'numbers',
  'templates',
  'official-messages',
  'attendance-history',
  'attendance-statistics',
  'tickets-summary',
  'ticket-detail',
] as const;

/** One of the report types of spec 2.6. */
export type ReportType = (typeof REPORT_TYPES)[number];

/** `report_type`: one of {@link REPORT_TYPES}. */
export const ReportTypeSchema = Type.Union([
  Type.Literal('licenses'),
  Type.Literal('numbers'),
  Type.Literal('templates'),
  Type.Literal('official-messages'),
  Type.Literal('attendance-history'),
  Type.Literal('attendance-statistics'),
  Type.Literal('tickets-summary'),
  Type.Literal('ticket-detail'),
]);

/** `report.ready`: the report was processed and can be downloaded from `file_url` for 24 hours. */
export const ReportReadySchema = Type.Object(
  {
    event_id: EventIdSchema,
    event: Type.Literal('report.ready'),
    report_id: Type.Integer(),
    report_type: ReportTypeSchema,
    report_name: Type.String(),
    status: Type.Literal('ready'),
    file_url: Type.String(),
    company_id: Type.Integer(),
    created_at: DateTimeSchema,
  },
  { ...CLOSED, title: 'report.ready' },
);
export type ReportReadyPayload = Static<typeof ReportReadySchema>;

/** `report.error`: processing the report failed; `error_message` says why. */
export const ReportErrorSchema = Type.Object(
  {
    event_id: EventIdSchema,
    event: Type.Literal('report.error'),
    report_id: Type.Integer(),
    report_type: ReportTypeSchema,
    report_name: Type.String(),
    status: Type.Literal('error'),
    error_message: Type.String(),
    company_id: Type.Integer(),
    created_at: DateTimeSchema,
  },
  { ...CLOSED, title: 'report.error' },
);
export type ReportErrorPayload = Static<typeof ReportErrorSchema>;

/** Either report event; `event` discriminates. */
export const ReportEventSchema = Type.Union([ReportReadySchema, ReportErrorSchema]);
export type ReportEventPayload = Static<typeof ReportEventSchema>;
