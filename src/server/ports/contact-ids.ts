/**
 * Where contact ids (each contact's HSM `id`, the provider's idempotency key) come from: a counter
 * of this process (in memory, or kept by the durable server), or blocks of one counter every
 * instance shares (the server on Redis: backends/redis/contact-ids.ts). The intake takes a request's ids in
 * its one piece; a shared source is made ready before (`ensure`), so taking never waits.
 */
export interface ContactIds {
  /** Resolves once `n` ids can be taken at once (at once for a counter of this process). */
  ensure(n: number): Promise<void>;
  /** Takes `n` consecutive ids and answers the first (a shared source: after `ensure(n)`). */
  take(n: number): number;
  /** The id a counter of this process gives next (kept by snapshots and the durable server); undefined for a shared source. */
  readonly next: number | undefined;
}

/** Contact ids of one process: a counter from `first`. */
export class LocalContactIds implements ContactIds {
  #next: number;

  /** @param first the first id to give (1 for a new server, the kept one after a restart) */
  constructor(first: number) {
    this.#next = first;
  }

  ensure(): Promise<void> {
    return Promise.resolve();
  }

  take(n: number): number {
    const first = this.#next;
    this.#next += n;
    return first;
  }

  get next(): number {
    return this.#next;
  }
}
