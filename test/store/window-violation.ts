/** The window check of the Redis tests, from the record of what was sent (no vitest here: the benchmarks use it too). */
import type { NumberLimits } from '../../src/core/limits/store.js';

/**
 * Checks sends (times, ascending) against every window: any interval [a, b] holds at most
 * capacity + floor((b - a) × capacity / period) per rate window, and any 24 h at most the limit.
 * Returns a description of the first violation, or null.
 */
export function windowViolation(sends: readonly number[], limits: NumberLimits, slackMs = 0): string | null {
  const rate = (cap: number, period: number, label: string): string | null => {
    // count(i..j) <= cap + floor((t_j - t_i + slack) * cap / period), for all i <= j; in integers:
    // (S_j - cap) * period - t_j * cap <= S_{i-1} * period - (t_i - slack) * cap, with a running minimum.
    let best = Infinity;
    for (let j = 0; j < sends.length; j++) {
      const v = j * period - (sends[j]! - slackMs) * cap;
      if (v < best) best = v;
      const lhs = (j + 1 - cap) * period - sends[j]! * cap;
      if (lhs > best) return `${label}: more than ${cap} + refill in an interval ending at ${sends[j]}`;
    }
    return null;
  };
  const hour = rate(limits.perHour, 3_600_000, 'per hour');
  if (hour) return hour;
  if (limits.perSecond !== undefined && limits.perSecond > 0) {
    const s = rate(limits.perSecond, 1000, 'per second');
    if (s) return s;
  }
  let i = 0;
  for (let j = 0; j < sends.length; j++) {
    while (sends[j]! - sends[i]! >= 86_400_000) i++;
    if (j - i + 1 > limits.per24h) return `24 h: ${j - i + 1} > ${limits.per24h} in the 24 h ending at ${sends[j]}`;
  }
  return null;
}
