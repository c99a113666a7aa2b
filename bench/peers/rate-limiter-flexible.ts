/**
 * `rate-limiter-flexible` RateLimiterMemory: one key per number (points per hour), round-robin
 * over the keys, templates round-robin. Its API is promise-based: each assignment awaits one
 * `consume(key)`.
 */
import { RateLimiterMemory } from 'rate-limiter-flexible';

export interface AsyncPeer {
  /** Makes `count` assignments; resolves to how many were made. */
  run(count: number, numbers: Int32Array, templates: Float64Array): Promise<number>;
}

export function makeRateLimiterFlexiblePeer(n: number, templateCount: number, perHour: number): AsyncPeer {
  const limiter = new RateLimiterMemory({ points: perHour, duration: 3600 });
  const keys = Array.from({ length: n }, (_, i) => `n${i}`);
  const templateIds = Array.from({ length: templateCount }, (_, k) => 100 + k);
  let rr = 0;
  let cursor = 0;
  return {
    async run(count, numbers, templates) {
      let i = 0;
      while (i < count) {
        const m = rr;
        rr = rr + 1 === n ? 0 : rr + 1;
        try {
          await limiter.consume(keys[m]!, 1);
        } catch {
          continue; // over the limit (does not happen with ample capacity)
        }
        numbers[i] = m;
        templates[i] = templateIds[cursor]!;
        cursor = cursor + 1 === templateCount ? 0 : cursor + 1;
        i++;
      }
      return i;
    },
  };
}
