/**
 * What a report generator is given and gives back: the types a host's generator and the server's
 * own (activity-reports.ts) share with the report service, apart from it so neither imports the other.
 */
import type { Engine } from '../core/engine.js';
import type { ReportType } from '../events/schemas/report.js';
import type { ActivityLogView } from './activity-log.js';
import type { ReportPeriod } from './report-period.js';

/** A report's file. */
export interface ReportFile {
  /** File content. */
  readonly body: string | Uint8Array;
  /** @default 'text/csv; charset=utf-8' */
  readonly contentType?: string;
}

/** What a generator is given: the company and its businesses, the period, what the server holds. */
export interface ReportContext {
  readonly reportId: number;
  readonly reportType: ReportType;
  readonly companyId: number;
  /** Businesses of the company. */
  readonly businessIds: readonly number[];
  readonly engine: Engine;
  /**
   * The request's `start_date` and `end_date` as epoch ms, `[start, end)`; without them, everything
   * kept (the last `reportRetentionMs` up to the request). Undefined for `numbers` and `templates`.
   */
  readonly period: ReportPeriod | undefined;
  /** The messages sent and attendances closed that the server keeps (the company's only: filter by `companyId`). */
  readonly activity: ActivityLogView;
  /** Most rows a file should have (`maxReportRows`); the server's own reports end in `report.error` beyond it. */
  readonly maxRows: number;
}

/** Builds one report type's file; throw (or reject) to end the report with `report.error` and the error's message. */
export type ReportGenerator = (context: ReportContext) => ReportFile | Promise<ReportFile>;
