/**
 * Webhook deliveries per second per (company, receiver), over the last ten seconds, and each
 * receiver's last dead letter, from the delivery worker's outcomes. The outbox knows what waits
 * and whether a receiver is down; what went through is counted here. Receivers quiet for a minute
 * are forgotten, so the map follows the live receivers, not every origin ever seen.
 */
import { originOf } from '../../events/outbox.js';
import type { DeliveryOutcome } from '../../events/outbox.js';

/** Seconds the rate is averaged over. */
export const RATE_WINDOW_S = 10;
const FORGET_AFTER_MS = 60_000;
/** Receivers counted at most: SMS callbacks go to origins of each item's choosing. */
const MAX_COUNTERS = 5_000;

interface Counter {
  readonly companyId: number;
  readonly origin: string;
  /** Deliveries per second, on a ring indexed by the second (epoch s mod window). */
  readonly buckets: Uint32Array;
  /** The epoch second the ring was last written at. */
  second: number;
  lastAt: number;
  delivered: number;
  deadLettered: number;
  lastDeadLetter: { readonly at: number; readonly error: string } | undefined;
}

/** What went to one receiver for one company. */
export interface DeliveryRate {
  readonly companyId: number;
  readonly origin: string;
  readonly perSecond: number;
  /** Deliveries and dead letters counted since this server started watching the receiver. */
  readonly delivered: number;
  readonly deadLettered: number;
  readonly lastDeadLetter: { readonly at: number; readonly error: string } | undefined;
}

export class DeliveryRates {
  readonly #counters = new Map<string, Counter>();

  /** Counts the outcomes the delivery worker settled. */
  outcomes(outcomes: readonly DeliveryOutcome[]): void {
    for (const o of outcomes) {
      const origin = originOf(o.event.url);
      const key = `${o.event.companyId} ${origin}`;
      let c = this.#counters.get(key);
      if (c === undefined) {
        c = { companyId: o.event.companyId, origin, buckets: new Uint32Array(RATE_WINDOW_S), second: Math.floor(o.at / 1000), lastAt: o.at, delivered: 0, deadLettered: 0, lastDeadLetter: undefined };
        this.#counters.set(key, c);
      }
      c.lastAt = Math.max(c.lastAt, o.at);
      if (this.#counters.size > MAX_COUNTERS) this.#prune(o.at);
      if (o.kind === 'dead-lettered') {
        c.deadLettered++;
        c.lastDeadLetter = { at: o.at, error: o.lastError.slice(0, 200) };
        continue;
      }
      c.delivered++;
      const second = Math.floor(o.at / 1000);
      advance(c, second);
      // An outcome older than the window (settled late) counts in the totals only.
      if (second > c.second - RATE_WINDOW_S) c.buckets[((second % RATE_WINDOW_S) + RATE_WINDOW_S) % RATE_WINDOW_S]!++;
    }
  }

  /** Forgets receivers quiet for a minute; if that is not enough, those first seen longest ago. */
  #prune(now: number): void {
    for (const [key, c] of this.#counters) if (c.lastAt + FORGET_AFTER_MS < now) this.#counters.delete(key);
    while (this.#counters.size > MAX_COUNTERS) this.#counters.delete(this.#counters.keys().next().value!);
  }

  /** Every receiver with recent outcomes, its rate over the window that ends at `now`. */
  rates(now: number): DeliveryRate[] {
    const out: DeliveryRate[] = [];
    const second = Math.floor(now / 1000);
    for (const [key, c] of this.#counters) {
      if (c.lastAt + FORGET_AFTER_MS < now) {
        this.#counters.delete(key);
        continue;
      }
      advance(c, second);
      let sum = 0;
      for (const n of c.buckets) sum += n;
      out.push({ companyId: c.companyId, origin: c.origin, perSecond: sum / RATE_WINDOW_S, delivered: c.delivered, deadLettered: c.deadLettered, lastDeadLetter: c.lastDeadLetter });
    }
    return out;
  }
}

/** Clears the ring's seconds between the last one written and `second` (they saw nothing). */
function advance(c: Counter, second: number): void {
  if (second <= c.second) return;
  const gap = Math.min(second - c.second, RATE_WINDOW_S);
  for (let k = 1; k <= gap; k++) c.buckets[(((c.second + k) % RATE_WINDOW_S) + RATE_WINDOW_S) % RATE_WINDOW_S] = 0;
  c.second = second;
}
