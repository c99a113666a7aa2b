/** The spec's report vocabulary (parts 2.6 and 3), shared by the HTTP contract and the webhook events. */

/** Values of `report_type`, in the spec's order. */
export const REPORT_TYPES = ['licenses', 'numbers', 'templates', 'official-messages', 'attendance-history', 'attendance-statistics', 'tickets-summary', 'ticket-detail'] as const;

/** One of the report types of spec 2.6. */
export type ReportType = (typeof REPORT_TYPES)[number];

/** Values of a report's `status` (spec 3). */
export const REPORT_STATUSES = ['ready', 'error'] as const;

export type ReportStatus = (typeof REPORT_STATUSES)[number];
