/**
 * Report record (spec 2.6): the identifiers and attributes the report events carry. The spec shows
 * no other field; `file_url` and `error_message` belong to the events (the URL holds a token valid
 * 24 h, so it is not part of the stored record).
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_ID } from './limits.js';

/** Values of `report_type` (spec 2.6). */
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
export type ReportType = (typeof REPORT_TYPES)[number];

/** Values of a report's `status` (spec 3). */
export const REPORT_STATUSES = ['ready', 'error'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

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
