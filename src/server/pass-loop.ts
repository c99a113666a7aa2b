/**
 * How the server's workers run: a *pass* (poll the engine, take due outbox attempts) runs soon
 * after something happens (`kick`, coalesced into one pass per turn of the event loop) or when the
 * clock reaches the next wake-up the pure part asked for ("timers are data": the engine and the
 * outbox say when, this owns the timer).
 */
export class PassLoop {
  readonly #pass: () => void;
  readonly #now: () => number;
  readonly #maxSleepMs: number;
  #scheduled = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  /**
   * @param pass the work; it must not throw
   * @param now the clock the wake-up times are on
   * @param maxSleepMs longest single sleep (a wake-up further away is re-checked then) @default 2^31 - 1
   */
  constructor(pass: () => void, now: () => number, maxSleepMs = 2 ** 31 - 1) {
    this.#pass = pass;
    this.#now = now;
    this.#maxSleepMs = maxSleepMs;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Clock time of the armed wake-up; Infinity when none. */
  get wakeTime(): number {
    return this.#timerAt;
  }

  /** Runs a pass soon; several kicks before it runs make one pass. */
  kick(): void {
    if (this.#scheduled || this.#stopped) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.run();
    });
  }

  /** Runs a pass now (unless stopped). */
  run(): void {
    if (!this.#stopped) this.#pass();
  }

  /** Arms the one wake-up at clock time `at` (replacing any), or disarms it with null. */
  wakeAt(at: number | null): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    if (at === null || this.#stopped) return;
    this.#timerAt = at;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Number.POSITIVE_INFINITY;
        this.run();
      },
      Math.max(0, Math.min(at - this.#now(), this.#maxSleepMs)),
    );
    // The server's listening socket keeps the process alive, not a worker's sleep.
    this.#timer.unref?.();
  }

  /** No more passes. */
  stop(): void {
    this.#stopped = true;
    this.wakeAt(null);
  }
}

/** Waits for `running` to settle, at most `ms` milliseconds. */
export async function settleWithin(running: Iterable<Promise<unknown>>, ms: number): Promise<void> {
  const pending = [...running];
  if (pending.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(pending), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  if (timer) clearTimeout(timer);
}
