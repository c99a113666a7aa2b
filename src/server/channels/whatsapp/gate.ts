/**
 * A counting semaphore: at most `limit` sends of one number wait for the platform at once. The
 * engine paces a number's messages at its throughput (80/s by default); the gate only keeps the
 * sends of a burst, or of a platform answering slowly, from piling up as sockets. Its limit moves
 * with {@link InFlightWindow}.
 */
export class Gate {
  #active = 0;
  #limit: number;
  readonly #waiting: (() => void)[] = [];
  #head = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get limit(): number {
    return this.#limit;
  }

  /**
   * Changes the limit: a higher one hands the new slots to waiting sends at once; a lower one takes
   * effect as sends end (none is cut short).
   */
  setLimit(limit: number): void {
    this.#limit = limit;
    while (this.#active < this.#limit && this.#head < this.#waiting.length) {
      this.#active++;
      this.#next()();
    }
  }

  /** Takes a slot at once (true), or says to wait for {@link wait}. */
  tryAcquire(): boolean {
    if (this.#active < this.#limit) {
      this.#active++;
      return true;
    }
    return false;
  }

  /** Resolves when a slot is handed over (the slot is already counted as taken). */
  wait(): Promise<void> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    if (this.#active <= this.#limit && this.#head < this.#waiting.length) {
      this.#next()(); // the slot passes to the next sender; `active` stays
      return;
    }
    this.#active--;
  }

  /** Takes the next waiting sender off the queue. */
  #next(): () => void {
    const next = this.#waiting[this.#head]!;
    // Clear the slot so a long queue does not keep resolved callbacks alive.
    (this.#waiting as unknown[])[this.#head++] = undefined;
    if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting.splice(0, this.#head);
      this.#head = 0;
    }
    return next;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiting.length - this.#head;
  }
}

/** Options of {@link InFlightWindow}. */
export interface InFlightWindowOptions {
  /** The smallest window. */
  readonly min: number;
  /** The largest window (`maxInFlightPerNumber`). */
  readonly max: number;
  /** The window before anything was measured. */
  readonly initial: number;
  /** Length of a rate measurement, in ms. @default 250 */
  readonly periodMs?: number;
  /** The window over the sends Little's law says are at the platform at once. @default 1.5 */
  readonly headroom?: number;
}

/**
 * The in-flight window of one number, sized by Little's law: the sends at the platform at once are
 * the rate they come at times the time the platform takes to answer. The window is that, with
 * headroom: `ceil(rate × smoothed latency × 1.5)`, bounded by `[min, max]`.
 *
 * - the rate is counted as sends arrive (before the gate, so a window too small still sees the
 *   whole demand), over periods of `periodMs`; a period much longer (the number was idle) measures
 *   nothing, so a number resuming keeps the window it had;
 * - the latency is a moving average of the answers (weight 1/8, as TCP's smoothed round trip).
 *
 * A window too small for the demand grows at least by the headroom each period, since the sends it
 * lets through then are the rate it measures; one too large shrinks as the rate or the latency
 * falls, by at most an eighth a period. Pure: the clock is read by the caller.
 */
export class InFlightWindow {
  readonly #min: number;
  readonly #max: number;
  readonly #periodMs: number;
  readonly #headroom: number;
  #size: number;
  #latencyMs: number | undefined;
  #periodStart: number | undefined;
  #arrivals = 0;
  #rate: number | undefined;

  constructor(options: InFlightWindowOptions) {
    this.#max = Math.max(1, options.max);
    this.#min = Math.min(Math.max(1, options.min), this.#max);
    this.#periodMs = options.periodMs ?? 250;
    this.#headroom = options.headroom ?? 1.5;
    this.#size = Math.min(Math.max(options.initial, this.#min), this.#max);
  }

  /** The window now. */
  get size(): number {
    return this.#size;
  }

  /** Smoothed answer time, in ms (undefined before the first answer). */
  get latencyMs(): number | undefined {
    return this.#latencyMs;
  }

  /** Sends a second over the last period measured (undefined before one). */
  get rate(): number | undefined {
    return this.#rate;
  }

  /** A send arrived at `now`. Answers the window (it may have changed). */
  arrived(now: number): number {
    this.#roll(now);
    this.#arrivals++;
    return this.#size;
  }

  /** A send was answered after `latencyMs`, at `now`. Answers the window (it may have changed). */
  answered(latencyMs: number, now: number): number {
    const sample = Math.max(0, latencyMs);
    this.#latencyMs = this.#latencyMs === undefined ? sample : this.#latencyMs + (sample - this.#latencyMs) / 8;
    this.#roll(now);
    return this.#size;
  }

  /** Closes the period when it is over: measures the rate and sizes the window. */
  #roll(now: number): void {
    if (this.#periodStart === undefined) {
      this.#periodStart = now;
      return;
    }
    const elapsed = now - this.#periodStart;
    if (elapsed < this.#periodMs) return;
    // A period far longer than asked held a pause in the sending: it says nothing of the rate.
    if (elapsed <= 4 * this.#periodMs) {
      this.#rate = (this.#arrivals * 1000) / elapsed;
      this.#resize();
    }
    this.#periodStart = now;
    this.#arrivals = 0;
  }

  #resize(): void {
    if (this.#rate === undefined || this.#latencyMs === undefined) return;
    const wanted = Math.min(this.#max, Math.max(this.#min, Math.ceil(((this.#rate * this.#latencyMs) / 1000) * this.#headroom)));
    // Up at once; down by at most an eighth a period, so one quiet period (the engine hands out
    // in steps) does not take away the room the next one needs.
    this.#size = wanted >= this.#size ? wanted : Math.max(wanted, Math.floor((this.#size * 7) / 8));
  }
}
