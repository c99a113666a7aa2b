/**
 * The pace at which a queue drains, measured: completions per second over the last minute. For a
 * wait told to a client (`Retry-After`) where no limit sets the pace: the SMS gateway answers as
 * fast as it answers, so only what it did lately says how long the queue ahead will take.
 */

/** Seconds of history kept. */
const WINDOW_S = 60;

export class DrainRate {
  readonly #now: () => number;
  /** Completions per second, on a ring indexed by the second (epoch s modulo the window). */
  readonly #counts = new Float64Array(WINDOW_S);
  /** Which second each slot of the ring holds (-1: none). */
  readonly #seconds = new Float64Array(WINDOW_S).fill(-1);

  /** @param now clock in milliseconds */
  constructor(now: () => number) {
    this.#now = now;
  }

  /** Counts `count` completions now. */
  record(count = 1): void {
    const second = Math.floor(this.#now() / 1000);
    const slot = second % WINDOW_S;
    if (this.#seconds[slot] !== second) {
      this.#seconds[slot] = second;
      this.#counts[slot] = 0;
    }
    this.#counts[slot]! += count;
  }

  /**
   * Completions per second since the first one of the last minute (that second included), or
   * undefined when nothing completed in the last minute.
   */
  perSecond(): number | undefined {
    const second = Math.floor(this.#now() / 1000);
    let total = 0;
    let first = Infinity;
    for (let slot = 0; slot < WINDOW_S; slot++) {
      const s = this.#seconds[slot]!;
      if (s < 0 || s > second || s <= second - WINDOW_S) continue;
      total += this.#counts[slot]!;
      if (s < first) first = s;
    }
    return total > 0 ? total / (second - first + 1) : undefined;
  }
}
