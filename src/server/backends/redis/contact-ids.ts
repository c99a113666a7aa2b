/**
 * Contact ids of the server on Redis: one counter for every instance (the 202's ids must not repeat
 * across instances), taken in blocks so that a request costs no round trip: an instance reserves a
 * block with `INCRBY` and numbers its requests from it, reserving the next block when half is used.
 * Ids are unique and increase within an instance; blocks leave gaps between instances.
 *
 * Ids never repeat, whatever Redis loses: a counter that is not there (a new Redis, or one that lost
 * its data) starts at a floor, atomically with the first reservation: the larger of the highest id
 * this instance reserved and the time in milliseconds times 1,000. So after a reset, even with every
 * instance restarted, ids go on above those handed out before, unless more than a million contacts
 * a second were accepted on average since the counter last started (docs/scaling.md).
 */
import { ArgumentError } from '../../../core/errors.js';
import type { RedisScriptClient } from '../../../redis/script-runner.js';
import type { ContactIds } from '../../ports/contact-ids.js';
import { callScript } from './scripts/codec.js';
import { CONTACT_IDS_RESERVE } from './scripts/contact-ids-reserve.js';

/** The commands the contact ids use (an ioredis `Redis` or `Cluster`). */
export type ContactIdClient = RedisScriptClient;

/** Ids a millisecond of the floor leaves room for (see the module comment). */
const IDS_PER_MS = 1_000;

export class ContactIdBlocks implements ContactIds {
  /** Shared: no counter of this process to keep. */
  readonly next = undefined;

  readonly #client: ContactIdClient;
  readonly #key: string;
  readonly #block: number;
  #next = 0;
  /** Exclusive end of the block in use. */
  #end = 0;
  #reserving: Promise<void> | undefined;
  /** A block reserved ahead, used when the current one runs out. */
  #ahead: { next: number; end: number } | undefined;

  readonly #now: () => number;
  /** The highest id this instance reserved: a floor of the counter if Redis loses it. */
  #highest = 0;

  constructor(client: ContactIdClient, key: string, block = 100_000, now: () => number = Date.now) {
    this.#client = client;
    this.#key = key;
    this.#block = block;
    this.#now = now;
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
    // A failed reservation ahead is not lost work: the next `ensure` that runs short reserves again
    // and its caller sees the error then.
    if (!this.#ahead && this.#end - this.#next < this.#block / 2) void this.#reserve(this.#block).catch(() => {});
  }

  /** Takes `n` consecutive ids (after `ensure(n)`); answers the first. */
  take(n: number): number {
    if (this.#end - this.#next < n) throw new ArgumentError('ContactIds.take(n)', `at most the ${this.#end - this.#next} ids reserved (await ensure(n) first)`, String(n));
    const first = this.#next;
    this.#next += n;
    return first;
  }

  #reserve(size: number): Promise<void> {
    const floor = Math.max(this.#highest, Math.floor(this.#now()) * IDS_PER_MS);
    this.#reserving ??= callScript(this.#client, CONTACT_IDS_RESERVE, { counter: this.#key, count: size, floor })
      .then((last) => {
        this.#highest = Math.max(this.#highest, last);
        this.#ahead = { next: last - size + 1, end: last + 1 };
      })
      .finally(() => {
        this.#reserving = undefined;
      });
    return this.#reserving;
  }
}
