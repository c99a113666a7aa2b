/**
 * A counting semaphore: at most `limit` sends of one number wait for the platform at once. The
 * Cloud API takes a number's messages at its throughput (80/s by default), so unbounded concurrency
 * would only queue sockets and turn the number's own limit into 130429 errors.
 */
export class Gate {
  #active = 0;
  readonly #waiting: (() => void)[] = [];
  #head = 0;

  constructor(readonly limit: number) {}

  /** Takes a slot at once (true), or says to wait for {@link wait}. */
  tryAcquire(): boolean {
    if (this.#active < this.limit) {
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
    if (this.#head < this.#waiting.length) {
      const next = this.#waiting[this.#head]!;
      // Clear the slot so a long queue does not keep resolved callbacks alive.
      (this.#waiting as unknown[])[this.#head++] = undefined;
      if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
        this.#waiting.splice(0, this.#head);
        this.#head = 0;
      }
      next(); // the slot passes to the next sender; `active` stays
      return;
    }
    this.#active--;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiting.length - this.#head;
  }
}
