/**
 * Report lifecycle (spec 3): a report is created, processed once, and ends `ready` or `error`;
 * the end sends `report.ready` (with a download link) or `report.error`. The tracker makes "once"
 * hold: finishing an unknown or already finished report is refused as data, not sent twice.
 */
import { problem, type Problem } from '../core/problems.js';
import { formatTime } from './datetime.js';
import type { SecretKey } from './hmac.js';
import { requireInteger, requireOneOf, requireString } from './ids.js';
import type { RandomSource } from './random.js';
import { issueReportToken, reportDownloadUrl } from './report-token.js';
import { REPORT_TYPES, type ReportErrorPayload, type ReportReadyPayload, type ReportType } from './schemas/report.js';
import { uuidV4 } from './uuid.js';

/** True for one of the report types of spec 2.6. */
export function isReportType(value: unknown): value is ReportType {
  return typeof value === 'string' && (REPORT_TYPES as readonly string[]).includes(value);
}

/** Validates a report type from user input: the type, or a problem naming the accepted values. */
export function parseReportType(value: unknown, path = '$.report_type'): { readonly ok: true; readonly value: ReportType } | { readonly ok: false; readonly problems: readonly Problem[] } {
  if (isReportType(value)) return { ok: true, value };
  return { ok: false, problems: [problem(path, `one of ${REPORT_TYPES.map((t) => JSON.stringify(t)).join(', ')}`, value)] };
}

/** A report being processed. */
export interface ReportRequest {
  readonly reportId: number;
  readonly reportType: ReportType;
  /** File name of the report. */
  readonly reportName: string;
  readonly companyId: number;
  /** Creation time, epoch milliseconds. */
  readonly createdAt: number;
}

/** How a report's processing ended (the dispatch loop's `ReportResult` is the answer to a send's report). */
export type ReportCompletion =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** Descriptive error text for `error_message` (spec 7.2). */
      readonly errorMessage: string;
    };

/** The event a finished report sends. */
export type ReportEvent = ReportReadyPayload | ReportErrorPayload;

/** Answer of {@link ReportTracker.finish}. */
export type FinishOutcome =
  | { readonly ok: true; readonly event: ReportEvent }
  | { readonly ok: false; readonly reason: 'unknown-report' }
  | { readonly ok: false; readonly reason: 'already-finished'; readonly status: 'ready' | 'error' };

/** Options of {@link ReportTracker}. */
export interface ReportTrackerOptions {
  /**
   * Public origin of the service for download links, e.g. `https://api.example.com`; a function is
   * asked each time a report finishes (a server learns its address only once it listens).
   */
  readonly baseUrl: string | (() => string);
  /** Key that signs download tokens. */
  readonly tokenKey: SecretKey;
  /** Source of `event_id`s. */
  readonly random: RandomSource;
  /** Token validity. @default 24 hours */
  readonly tokenTtlMs?: number;
}

/**
 * Checks a report's fields the types cannot constrain (integer ids, a known type for JavaScript
 * callers, a writable creation time) and answers `created_at`; `at` names them, e.g.
 * `buildReportReady(report.` gives `buildReportReady(report.reportId)`.
 * @throws {ArgumentError} naming the first bad field
 */
function checkReport(report: ReportRequest, at: string): string {
  requireInteger(`${at}reportId)`, report.reportId);
  requireInteger(`${at}companyId)`, report.companyId);
  requireOneOf(`${at}reportType)`, report.reportType, REPORT_TYPES);
  requireString(`${at}reportName)`, report.reportName);
  return formatTime(`${at}createdAt)`, report.createdAt);
}

/**
 * Builds `report.ready` for a report finished at `now`, with a fresh download token.
 * @throws {ArgumentError} for a fractional or unsafe id, an unknown report type, a time that
 * cannot be written or a token validity below 1 ms: the payload always passes `ReportReadySchema`
 */
export function buildReportReady(
  report: ReportRequest,
  o: { readonly now: number; readonly baseUrl: string; readonly tokenKey: SecretKey; readonly random: RandomSource; readonly tokenTtlMs?: number },
): ReportReadyPayload {
  const createdAt = checkReport(report, 'buildReportReady(report.');
  requireInteger('buildReportReady(o.now)', o.now);
  if (o.tokenTtlMs !== undefined) requireInteger('buildReportReady(o.tokenTtlMs)', o.tokenTtlMs, 1);
  requireString('buildReportReady(o.baseUrl)', o.baseUrl);
  const token = issueReportToken({
    reportId: report.reportId,
    companyId: report.companyId,
    now: o.now,
    key: o.tokenKey,
    ...(o.tokenTtlMs === undefined ? {} : { ttlMs: o.tokenTtlMs }),
  });
  return {
    event_id: uuidV4(o.random),
    event: 'report.ready',
    report_id: report.reportId,
    report_type: report.reportType,
    report_name: report.reportName,
    status: 'ready',
    file_url: reportDownloadUrl(o.baseUrl, report.reportId, token),
    company_id: report.companyId,
    created_at: createdAt,
  };
}

/**
 * Builds `report.error` with the descriptive `error_message`.
 * @throws {ArgumentError} for a fractional or unsafe id, an unknown report type or a time that
 * cannot be written: the payload always passes `ReportErrorSchema`
 */
export function buildReportError(report: ReportRequest, errorMessage: string, random: RandomSource): ReportErrorPayload {
  const createdAt = checkReport(report, 'buildReportError(report.');
  requireString('buildReportError(errorMessage)', errorMessage);
  return {
    event_id: uuidV4(random),
    event: 'report.error',
    report_id: report.reportId,
    report_type: report.reportType,
    report_name: report.reportName,
    status: 'error',
    error_message: errorMessage,
    company_id: report.companyId,
    created_at: createdAt,
  };
}

/** Tracks reports from creation to their single end. */
export class ReportTracker {
  readonly #options: ReportTrackerOptions;
  readonly #processing = new Map<number, ReportRequest>();
  readonly #finished = new Map<number, 'ready' | 'error'>();

  constructor(options: ReportTrackerOptions) {
    this.#options = options;
  }

  /**
   * Starts processing a report. Returns false (and changes nothing) when the id is already known.
   * @throws {ArgumentError} for a report its events could not be built from (see {@link buildReportReady})
   */
  begin(report: ReportRequest): boolean {
    // Checked now rather than at finish, so a bad report never sits in processing.
    checkReport(report, 'ReportTracker.begin(');
    if (this.#processing.has(report.reportId) || this.#finished.has(report.reportId)) return false;
    this.#processing.set(report.reportId, report);
    return true;
  }

  /** Ends a report's processing at `now` and returns its event; refused when unknown or already ended. */
  finish(reportId: number, result: ReportCompletion, now: number): FinishOutcome {
    const done = this.#finished.get(reportId);
    if (done) return { ok: false, reason: 'already-finished', status: done };
    const report = this.#processing.get(reportId);
    if (!report) return { ok: false, reason: 'unknown-report' };
    const o = this.#options;
    const event = result.ok
      ? buildReportReady(report, {
          now,
          baseUrl: typeof o.baseUrl === 'function' ? o.baseUrl() : o.baseUrl,
          tokenKey: o.tokenKey,
          random: o.random,
          ...(o.tokenTtlMs === undefined ? {} : { tokenTtlMs: o.tokenTtlMs }),
        })
      : buildReportError(report, result.errorMessage, o.random);
    this.#processing.delete(reportId);
    this.#finished.set(reportId, event.status);
    return { ok: true, event };
  }

  /** `processing`, `ready`, `error`, or undefined for an unknown report. */
  status(reportId: number): 'processing' | 'ready' | 'error' | undefined {
    return this.#finished.get(reportId) ?? (this.#processing.has(reportId) ? 'processing' : undefined);
  }
}
