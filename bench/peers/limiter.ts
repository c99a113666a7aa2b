/**
 * `limiter` (TokenBucket): one bucket per number, round-robin over the numbers, templates
 * round-robin; `tryRemoveTokens(1)` is the library's synchronous path (it reads performance.now()
 * on every call to drip).
 */
import { TokenBucket } from 'limiter';
import type { Peer } from './ceiling.js';

export function makeLimiterPeer(n: number, templateCount: number, perHour: number): Peer {
  const buckets: TokenBucket[] = [];
  for (let i = 0; i < n; i++) {
    const b = new TokenBucket({ bucketSize: perHour, tokensPerInterval: perHour, interval: 'hour' });
    b.content = perHour; // start full, as sendpool's numbers do
    buckets.push(b);
  }
  const templateIds = Array.from({ length: templateCount }, (_, k) => 100 + k);
  let rr = 0;
  let cursor = 0;
  return {
    fill(_now, count, numbers, templates) {
      let i = 0;
      let misses = 0;
      while (i < count && misses < n) {
        const m = rr;
        rr = rr + 1 === n ? 0 : rr + 1;
        if (!buckets[m]!.tryRemoveTokens(1)) {
          misses++;
          continue;
        }
        misses = 0;
        numbers[i] = m;
        templates[i] = templateIds[cursor]!;
        cursor = cursor + 1 === templateCount ? 0 : cursor + 1;
        i++;
      }
      return i;
    },
  };
}
