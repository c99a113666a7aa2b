/**
 * A number's limits once the timed events have run, for the numbers tables of `forecast` and
 * `simulate`: a cell shows the fleet's value, or `fleet → after` when a `setLimit` event changed it,
 * so a table never shows a limit the run no longer had.
 */
import type { Column } from './table.js';
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

/**
 * The columns of the numbers table both commands print: the fleet's limits (with their change by
 * the events), what each number sent and its share, and when its 24 h limit ran out; the forecast
 * adds the per-second rate and what held each number back.
 */
export function numberColumns(forecast: boolean): Column[] {
  return [
    { header: 'phone' },
    { header: 'per hour', align: 'right' },
    { header: '24h limit', align: 'right' },
    ...(forecast ? [{ header: 'per second', align: 'right' } as const] : []),
    { header: 'sent', align: 'right' },
    { header: 'share', align: 'right' },
    { header: '24h used up at', align: 'right' },
    ...(forecast ? [{ header: 'held back by' }] : []),
  ];
}
