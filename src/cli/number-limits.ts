/**
 * A number's limits once the timed events have run, for the numbers tables of `forecast` and
 * `simulate`: a cell shows the fleet's value, or `fleet → after` when a `setLimit` event changed it,
 * so a table never shows a limit the run no longer had.
 */
import type { TimedEvent } from './events-file.js';
import { count } from './format.js';

/** The windows of one number; `messagesPerSecond` null when it has none. */
export interface NumberLimits {
  readonly throughputPerHour: number;
  readonly messagingLimit24h: number;
  readonly messagesPerSecond: number | null;
}

/** The limits of `phone` after the events (in time order) that happened by `untilMs`. */
export function limitsAfter(phone: string, start: NumberLimits, events: readonly TimedEvent[], untilMs: number): NumberLimits {
  let limits = start;
  for (const { change: c } of events) {
    if (c.at > untilMs) break;
    if (c.kind !== 'number-limits' || c.phone !== phone) continue;
    limits = {
      throughputPerHour: c.throughputPerHour ?? limits.throughputPerHour,
      messagingLimit24h: c.messagingLimit24h ?? limits.messagingLimit24h,
      messagesPerSecond: c.messagesPerSecond === undefined ? limits.messagesPerSecond : c.messagesPerSecond,
    };
  }
  return limits;
}

/** `10,000`, `10,000 → 100,000` when it changed, `-` for no window. */
export function limitCell(start: number | null, end: number | null): string {
  const text = (n: number | null) => (n === null ? '-' : count(n));
  return start === end ? text(start) : `${text(start)} → ${text(end)}`;
}
