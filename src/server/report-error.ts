/**
 * Why the server could not make a report: the message becomes the report's `error_message`
 * (`report.error`), so it says what to do, with the option or request field concerned.
 */
import type { ReportType } from '../events/schemas/report.js';

const REPORT = Symbol.for('sendpool.ReportError');

/** A report that cannot be made: no generator for its type, or a period of more rows than a report may have. */
export class ReportError extends Error {
  readonly [REPORT] = true;
  readonly reportType: ReportType;
  readonly reason: 'no-generator' | 'too-many-rows';

  constructor(reportType: ReportType, reason: 'no-generator' | 'too-many-rows', message: string) {
    super(message);
    this.name = 'ReportError';
    this.reportType = reportType;
    this.reason = reason;
  }
}

/** True when `e` is a {@link ReportError}, from this copy of sendpool or another. */
export function isReportError(e: unknown): e is ReportError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[REPORT] === true;
}
