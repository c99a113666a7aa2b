/**
 * The system clock, outside the pure core: the only place sendpool reads wall time. Readings never
 * go back, even when the host's clock is stepped back, because limits already charged cannot be
 * un-spent.
 */
import type { Clock } from '../core/clock.js';

export class SystemClock implements Clock {
  #last = 0;

  now(): number {
    const t = Date.now();
    if (t > this.#last) this.#last = t;
    return this.#last;
  }
}

/** A shared system clock; the default of `createEngine`. */
export const systemClock: Clock = new SystemClock();
