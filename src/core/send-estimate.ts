/**
 * How long a pool takes to send a number of messages at its numbers' rates: an estimate for a
 * caller's wait (the server's `Retry-After`), not a schedule; the engine never sends by it. Pure.
 *
 * Model: each number sends at its hourly rate, or at its per-second rate when that is lower; over
 * more than a day a number sends at most its 24 h limit per 24 hours. So `count` messages take
 * `count / rate` while they fit in one 24 h allowance of the pool, and one more day for each
 * allowance beyond. Where the numbers stand now (what they may send at once, when the first one
 * regains capacity) is the engine's part (`Engine.estimateSendTime`).
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The windows of one number, as the estimate reads them. */
export interface NumberRates {
  readonly perHour: number;
  readonly per24h: number;
  /** 0 when the number has no per-second window. */
  readonly perSecond: number;
}

/**
 * Milliseconds the numbers need to send `count` messages from a standing start: `count / rate`
 * within one 24 h allowance, plus a day for each further one. Infinity when they send nothing.
 */
export function sendDurationMs(count: number, numbers: Iterable<NumberRates>): number {
  if (count <= 0) return 0;
  let perHour = 0;
  let perDay = 0;
  for (const n of numbers) {
    const rate = n.perSecond > 0 ? Math.min(n.perHour, n.perSecond * 3600) : n.perHour;
    perHour += Math.min(rate, n.per24h);
    perDay += n.per24h;
  }
  if (perHour <= 0 || perDay <= 0) return Infinity;
  const days = Math.floor((count - 1) / perDay);
  const rest = count - days * perDay;
  return days * DAY + Math.ceil((rest * HOUR) / perHour);
}
