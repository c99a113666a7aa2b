/**
 * Datetimes of the payloads. The spec marks most of them "ISO 8601 UTC-3" with the offset -03:00
 * (Brasília time, no daylight saving since 2019). We write every payload datetime that way, also the
 * few the spec leaves unmarked (`created_at` of reports, a message's `datetime`, the statistics'
 * `datetime`), so a receiver parses one shape. The host's time zone never matters: the offset is
 * applied by arithmetic on the epoch, not by the runtime's local time.
 */
import { ArgumentError } from '../core/errors.js';
import { describeValue } from '../core/problems.js';

const OFFSET_MS = -3 * 3_600_000;

/** The last instant written and its text (see formatTime). */
let lastMs = Number.NaN;
let lastText = '';

/** Largest epoch millisecond a `Date` can hold (±8.64e15). */
const MAX_EPOCH_MS = 8.64e15;

/**
 * `ms` (milliseconds since the epoch) as ISO 8601 with the -03:00 offset and millisecond precision,
 * e.g. `1735732800000` -> `2025-01-01T09:00:00.000-03:00`.
 */
export function formatUtcMinus3(ms: number): string {
  return formatTime('formatUtcMinus3(ms)', ms);
}

/** {@link formatUtcMinus3} for a builder: an unwritable time throws {@link ArgumentError} naming `argument`. */
export function formatTime(argument: string, ms: number): string {
  // The same instant comes many times in a row (every notification of a request): written once.
  if (ms === lastMs) return lastText;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || Math.abs(ms) > MAX_EPOCH_MS - 3 * 3_600_000) {
    throw new ArgumentError(argument, 'a finite epoch time in milliseconds', describeValue(ms));
  }
  const shifted = new Date(Math.floor(ms) + OFFSET_MS).toISOString();
  // toISOString is always UTC with a trailing "Z"; the wall time is already shifted.
  if (!shifted.startsWith('+') && !shifted.startsWith('-') && shifted.length === 24) {
    lastText = `${shifted.slice(0, 23)}-03:00`;
    lastMs = ms;
    return lastText;
  }
  throw new ArgumentError(argument, 'a time between years 0000 and 9999', describeValue(ms));
}

/** RFC 3339 date-time (the JSON Schema `date-time` format): date, `T`, time, fraction, offset. */
export const DATE_TIME_PATTERN = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/** The epoch milliseconds of an RFC 3339 date-time, or `undefined` when it is not one. */
export function parseDateTime(value: string): number | undefined {
  if (!DATE_TIME_PATTERN.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
