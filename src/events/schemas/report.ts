/** Report webhook payloads (spec 6.1), sent to `url_report_webhook`. */
import { Type, type Static } from '@sinclair/typebox';
import { REPORT_TYPES, type ReportType } from '../../core/report-types.js';
import { CLOSED, DateTimeSchema, EventIdSchema } from './common.js';

export { REPORT_TYPES, type ReportType };

/** `report_type`: one of {@link REPORT_TYPES}. */
const ReportTypeSchema = Type.Union(REPORT_TYPES.map((t) => Type.Literal(t)));

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
