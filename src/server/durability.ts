/**
 * Group commit for the durable server: whoever must not let something out before it is on disk (a
 * 202, a message to the channel) asks `commit()` and waits; every request asking in the same turn
 * of the event loop shares one write. A write takes the step's outcomes first (their notifications
 * belong to the step), then the engine's changes and the server's values, in one transaction.
 *
 * A failed write (disk full, a broken file) fails the server closed: the waiting 202s become 503s,
 * held messages are never sent, and every later commit fails at once. Nothing that was answered or
 * sent is lost, because nothing is answered or sent without its write; the operator restarts the
 * server once the disk is fixed, and it resumes from what was written.
 */
import type { Engine } from '../core/engine.js';
import type { ServerStorage, StorageStep } from '../storage/sqlite-storage.js';

interface Deps {
  readonly storage: ServerStorage;
  readonly engine: Engine;
  /** Handles the engine's outcomes due so far (the dispatch worker's), before the changes are taken. */
  readonly takeOutcomes: () => void;
  /** The server's values and outbox changes for this step. */
  readonly collect: () => Omit<StorageStep, 'engine'>;
  readonly onError: (error: unknown) => void;
  /** The first write carries everything live (an engine restored from a snapshot file into an empty store). */
  readonly full?: boolean;
}

export class Durability {
  readonly #deps: Deps;
  #waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  #scheduled = false;
  #failed: unknown;
  #writes = 0;
  #full: boolean;

  constructor(deps: Deps) {
    this.#deps = deps;
    this.#full = deps.full === true;
  }

  /** Steps written so far (metrics, tests). */
  get writes(): number {
    return this.#writes;
  }

  /** Set once a write failed: the server is closed for good. */
  get failed(): boolean {
    return this.#failed !== undefined;
  }

  /** Resolves when everything done before the call is on disk; rejects when it cannot be. */
  commit(): Promise<void> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
    return done;
  }

  /** Writes now (also called on close). */
  flush(): void {
    this.#scheduled = false;
    const waiters = this.#waiters;
    this.#waiters = [];
    if (this.#failed !== undefined) {
      for (const w of waiters) w.reject(this.#failed);
      return;
    }
    try {
      this.#deps.takeOutcomes();
      const engine = this.#deps.engine.takeChanges({ full: this.#full });
      this.#deps.storage.write({ engine, ...this.#deps.collect() });
      this.#full = false;
      this.#writes++;
    } catch (e) {
      this.#failed = e;
      this.#deps.onError(e);
      for (const w of waiters) w.reject(e);
      return;
    }
    for (const w of waiters) w.resolve();
  }
}
