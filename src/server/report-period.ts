/**
 * The period of a report request: `start_date` and `end_date` of POST /reports/ (the spec shows no
 * payload for the report endpoints; docs/server.md, "Reports"). Each is a day `YYYY-MM-DD`, taken
 * in the spec's zone (-03:00), or an RFC 3339 date-time. The period is `[start, end)`: a day as
 * `end_date` includes that whole day, a date-time excludes itself.
 */
import { problem, type Problem } from '../core/problems.js';
import { formatUtcMinus3, parseDateTime } from '../events/datetime.js';
import type { ReportType } from '../events/schemas/report.js';

/** A report's period, epoch milliseconds, `[start, end)`. */
export interface ReportPeriod {
  readonly start: number;
  readonly end: number;
}

/** Report types built from the current state: they take no period. */
export const STATE_REPORTS: readonly ReportType[] = ['numbers', 'templates'];

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;
const EXPECTED = 'a day YYYY-MM-DD (in -03:00) or an RFC 3339 date-time such as 2025-01-31T09:00:00-03:00';

/** Epoch ms of a bound: a day's start (or the next day's, for an end) in -03:00, or a date-time. */
function bound(value: string, isEnd: boolean): number | undefined {
  const day = DAY.exec(value);
  if (day) {
    const start = Date.parse(`${value}T00:00:00.000-03:00`);
    // Date.parse rolls 2025-02-30 over to March: a day must write back as itself.
    if (Number.isNaN(start) || !formatUtcMinus3(start).startsWith(value)) return undefined;
    return isEnd ? start + DAY_MS : start;
  }
  return parseDateTime(value);
}

/**
 * Reads `start_date` and `end_date` of a report request. Without them the period is everything
 * kept: from `now - retentionMs` to `now`. A state report (numbers, templates) takes neither.
 */
export function parseReportPeriod(
  body: { readonly start_date?: unknown; readonly end_date?: unknown },
  type: ReportType | undefined,
  now: number,
  retentionMs: number,
): { readonly ok: true; readonly period: ReportPeriod | undefined } | { readonly ok: false; readonly problems: Problem[] } {
  const problems: Problem[] = [];
  const read = (field: 'start_date' | 'end_date'): number | undefined => {
    const value = body[field];
    if (value === undefined) return undefined;
    if (type !== undefined && STATE_REPORTS.includes(type)) {
      problems.push(problem(`$.${field}`, `no such field for a ${type} report (it shows the state now; a period is for the other types)`, value));
      return undefined;
    }
    const ms = typeof value === 'string' ? bound(value, field === 'end_date') : undefined;
    if (ms === undefined) problems.push(problem(`$.${field}`, EXPECTED, value));
    return ms;
  };
  const start = read('start_date');
  const end = read('end_date');
  if (problems.length > 0) return { ok: false, problems };
  if (type === undefined || STATE_REPORTS.includes(type)) return { ok: true, period: undefined };
  const period = { start: start ?? Math.min(now - retentionMs, end ?? now), end: end ?? Math.max(now, start ?? now) };
  if (period.end < period.start) {
    return { ok: false, problems: [problem('$.end_date', `a time not before start_date (${formatUtcMinus3(period.start)})`, body.end_date)] };
  }
  return { ok: true, period };
}
