/**
 * Group commit for the durable server: whoever must not let something out before it is on disk (a
 * 202, a message to the channel) asks `commit()` and waits; every request asking in the same turn
 * of the event loop shares one write. A write takes the step's outcomes first (their notifications
 * belong to the step), then the engine's changes and the durable components' (durable-step.ts), in
 * one transaction; what it staged meanwhile (events, SMS: staged-writes.ts) is a component's too.
 *
 * A failed write (disk full, a broken file) fails the server closed: the waiting 202s become 503s,
 * held messages are never sent, and every later commit fails at once. Nothing that was answered or
 * sent is lost, because nothing is answered or sent without its write; the operator restarts the
 * server once the disk is fixed, and it resumes from what was written.
 */
import type { Engine } from '../../../core/engine.js';
import type { OutboxEvent } from '../../../events/outbox.js';
import type { OutgoingSms } from '../../ports/channel.js';
import { storedRun, type EnqueuedRun, type Persistence, type WrittenEvent } from '../../ports/persistence.js';
import type { ServerStorage, StorageStep } from '../../../storage/sqlite-storage.js';
import type { StagedWrites } from './staged-writes.js';

interface Deps {
  readonly storage: ServerStorage;
  readonly engine: Engine;
  /** Handles the engine's outcomes due so far (the dispatch worker's), before the changes are taken. */
  readonly takeOutcomes: () => void;
  /** The durable components' part of a step (`full`: everything, not only what changed). */
  readonly collect: (full: boolean) => Omit<StorageStep, 'engine'>;
  /** Where events and SMS wait for the next step (taken by its components). */
  readonly staged: StagedWrites;
  readonly onError: (error: unknown) => void;
  /** The first write carries everything live (an engine restored from a snapshot file into an empty store). */
  readonly full?: boolean;
  /**
   * How long changes nobody waits for (results, deliveries) may gather before they are written, so
   * a busy server writes them in few steps; a `commit()` writes at once.
   * @default 25
   */
  readonly lazyMs?: number;
  /** Webhook events and runs of a step, once written: they may be delivered now. */
  readonly onWritten: (events: readonly WrittenEvent[]) => void;
  /** The store's intake journal could not be written (said once; the commits stand). */
  readonly onJournalLost?: (why: string) => void;
}

export class Durability implements Persistence {
  readonly #deps: Deps;
  #waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  /** A write is due on the next turn (someone waits). */
  #scheduled = false;
  /** The intake journal's loss was said. */
  #journalSaid = false;
  /** A lazy write is due when this timer fires. */
  #lazy: NodeJS.Timeout | undefined;
  #failed: unknown;
  #writes = 0;
  #full: boolean;
  readonly #staged: StagedWrites;
  /** Inside `flush`: what is staged now goes in this write. */
  #flushing = false;

  constructor(deps: Deps) {
    this.#deps = deps;
    this.#full = deps.full === true;
    this.#staged = deps.staged;
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
    if (this.#failed !== undefined) return Promise.reject(this.#failed instanceof Error ? this.#failed : new Error('the durable write failed', { cause: this.#failed }));
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
    return done;
  }

  /**
   * Something changed that nobody waits for (a send's result, a delivery): written within `lazyMs`
   * with whatever else gathers meanwhile (a crash before re-sends at most what was in flight).
   */
  schedule(): void {
    if (this.#scheduled || this.#lazy !== undefined || this.#flushing || this.#failed !== undefined) return;
    this.#lazy = setTimeout(() => this.flush(), this.#deps.lazyMs ?? 25);
  }

  /** A webhook event, written with the step that made it, delivered only after. */
  stage(event: OutboxEvent): void {
    this.#staged.stage(event);
    this.schedule();
  }

  /** A request's ENQUEUED notifications: one row, written with the step that made them. */
  stageRun(run: EnqueuedRun): void {
    this.#staged.stage({ run: storedRun(run) });
    this.schedule();
  }

  /** A run written before changed (a dead-lettered notification): its row is written again. */
  runChanged(run: EnqueuedRun): void {
    this.#staged.runChanged(run);
    this.schedule();
  }

  /**
   * Dead letters an operator replayed: written back to the outbox in the next step (which also
   * removes them from the dead letters: the book's changes go with every step), delivered after it.
   */
  replay(events: readonly OutboxEvent[]): void {
    for (const event of events) this.#staged.stage({ replay: event });
  }

  /** SMS accepted: written in the next step (their 202 waits for it). */
  stageSms(items: readonly OutgoingSms[]): void {
    this.#staged.stageSms(items);
  }

  /** An SMS the gateway answered: its row goes in a later step (lost, it is sent again). */
  smsAnswered(smsId: string): void {
    this.#staged.smsAnswered(smsId);
    this.schedule();
  }

  /** Events delivered (or given up): their rows go in a later step (lost, they are delivered again). */
  delivered(ids: readonly string[]): void {
    this.#staged.delivered(ids);
    this.schedule();
  }

  /** Writes now (also called on close). */
  flush(): void {
    this.#scheduled = false;
    if (this.#lazy !== undefined) clearTimeout(this.#lazy);
    this.#lazy = undefined;
    const waiters = this.#waiters;
    this.#waiters = [];
    if (this.#failed !== undefined) {
      for (const w of waiters) w.reject(this.#failed);
      return;
    }
    let written: WrittenEvent[];
    this.#flushing = true;
    try {
      this.#deps.takeOutcomes();
      const engine = this.#deps.engine.takeChanges({ full: this.#full });
      // After the outcomes: their notifications belong to this step (the outbox component takes them).
      this.#deps.storage.write({ engine, ...this.#deps.collect(this.#full) });
      written = this.#staged.takeWritten();
      this.#full = false;
      this.#writes++;
      if (!this.#journalSaid) {
        const lost = this.#deps.storage.journalLost?.();
        if (lost !== undefined) {
          this.#journalSaid = true;
          this.#deps.onJournalLost?.(lost);
        }
      }
    } catch (e) {
      this.#failed = e;
      this.#deps.onError(e);
      for (const w of waiters) w.reject(e);
      return;
    } finally {
      this.#flushing = false;
    }
    if (written.length > 0) this.#deps.onWritten(written);
    for (const w of waiters) w.resolve();
  }
}
