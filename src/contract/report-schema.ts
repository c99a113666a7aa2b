/**
 * Report record (spec 2.6): the identifiers and attributes the report events carry. The spec shows
 * no other field; `file_url` and `error_message` belong to the events (the URL holds a token valid
 * 24 h, so it is not part of the stored record).
 */
import { Type, type Static } from '@sinclair/typebox';
import { REPORT_STATUSES, REPORT_TYPES, type ReportStatus, type ReportType } from '../core/report-types.js';
import { MAX_ID } from './limits.js';

export { REPORT_STATUSES, REPORT_TYPES, type ReportStatus, type ReportType };

export const ReportSchema = Type.Object(
  {
    report_id: Type.Integer({ minimum: 1, maximum: MAX_ID }),
    report_type: Type.Union(REPORT_TYPES.map((t) => Type.Literal(t))),
    report_name: Type.String({ description: 'file name of the report' }),
    status: Type.Union(REPORT_STATUSES.map((s) => Type.Literal(s))),
    company_id: Type.Integer({ minimum: 1, maximum: MAX_ID }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, title: 'Report' },
);
export type Report = Static<typeof ReportSchema>;
