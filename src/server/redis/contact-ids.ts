/**
 * Contact ids of the server on Redis: one counter for every instance (the 202's ids must not repeat
 * across instances), taken in blocks so that a request costs no round trip: an instance reserves a
 * block with `INCRBY` and numbers its requests from it, reserving the next block when half is used.
 * Ids are unique and increase within an instance; blocks leave gaps between instances.
 */
export interface ContactIdClient {
  incrby(key: string, by: number): Promise<number>;
}

export class ContactIdBlocks {
  readonly #client: ContactIdClient;
  readonly #key: string;
  readonly #block: number;
  #next = 0;
  /** Exclusive end of the block in use. */
  #end = 0;
  #reserving: Promise<void> | undefined;
  /** A block reserved ahead, used when the current one runs out. */
  #ahead: { next: number; end: number } | undefined;

  constructor(client: ContactIdClient, key: string, block = 100_000) {
    this.#client = client;
    this.#key = key;
    this.#block = block;
  }

  /** Ids that `take` can hand out without waiting. */
  get available(): number {
    return this.#end - this.#next + (this.#ahead ? this.#ahead.end - this.#ahead.next : 0);
  }

  /** Waits until `n` ids can be taken at once (one round trip when the blocks ran low). */
  async ensure(n: number): Promise<void> {
    while (this.#end - this.#next < n) {
      if (this.#ahead && this.#ahead.end - this.#ahead.next >= n) {
        ({ next: this.#next, end: this.#end } = this.#ahead);
        this.#ahead = undefined;
        break;
      }
      await this.#reserve(Math.max(this.#block, n));
      if (this.#ahead && this.#ahead.end - this.#ahead.next >= n) {
        ({ next: this.#next, end: this.#end } = this.#ahead);
        this.#ahead = undefined;
      }
    }
    // Half used: the next block is reserved in the background.
    if (!this.#ahead && this.#end - this.#next < this.#block / 2) void this.#reserve(this.#block).catch(() => {});
  }

  /** Takes `n` consecutive ids (after `ensure(n)`); answers the first. */
  take(n: number): number {
    if (this.#end - this.#next < n) throw new Error(`contact ids: ${n} asked, ${this.#end - this.#next} reserved (ensure first)`);
    const first = this.#next;
    this.#next += n;
    return first;
  }

  #reserve(size: number): Promise<void> {
    this.#reserving ??= this.#client
      .incrby(this.#key, size)
      .then((last) => {
        this.#ahead = { next: last - size + 1, end: last + 1 };
      })
      .finally(() => {
        this.#reserving = undefined;
      });
    return this.#reserving;
  }
}
