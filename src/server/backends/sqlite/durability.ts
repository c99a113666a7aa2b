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
import type { Engine } from '../../../core/engine.js';
import type { OutboxEvent } from '../../../events/outbox.js';
import type { OutgoingSms } from '../../ports/channel.js';
import { storedRun, writtenId, type EnqueuedRun, type Persistence, type WrittenEvent } from '../../ports/persistence.js';
import type { ServerStorage, StorageStep } from '../../../storage/sqlite-storage.js';

interface Deps {
  readonly storage: ServerStorage;
  readonly engine: Engine;
  /** Handles the engine's outcomes due so far (the dispatch worker's), before the changes are taken. */
  readonly takeOutcomes: () => void;
  /** The server's values and outbox changes for this step. */
  /** The server's part of a step (`full`: everything, not only what changed). */
  readonly collect: (full: boolean) => Omit<StorageStep, 'engine'>;
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
  #staged: WrittenEvent[] = [];
  /** Runs written before, to write again as they are now (not delivered again: they are live here). */
  #changedRuns = new Map<string, EnqueuedRun>();
  #delivered: string[] = [];
  #smsIn: OutgoingSms[] = [];
  #smsDone: string[] = [];
  /** Inside `flush`: what is staged now goes in this write. */
  #flushing = false;

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
    this.#staged.push(event);
    this.schedule();
  }

  /** A request's ENQUEUED notifications: one row, written with the step that made them. */
  stageRun(run: EnqueuedRun): void {
    this.#staged.push({ run: storedRun(run) });
    this.schedule();
  }

  /** A run written before changed (a dead-lettered notification): its row is written again. */
  runChanged(run: EnqueuedRun): void {
    this.#changedRuns.set(run.id, run);
    this.schedule();
  }

  /**
   * Dead letters an operator replayed: written back to the outbox in the next step (which also
   * removes them from the dead letters: the book's changes go with every step), delivered after it.
   */
  replay(events: readonly OutboxEvent[]): void {
    for (const event of events) this.#staged.push({ replay: event });
  }

  /** SMS accepted: written in the next step (their 202 waits for it). */
  stageSms(items: readonly OutgoingSms[]): void {
    for (const s of items) this.#smsIn.push(s);
  }

  /** An SMS the gateway answered: its row goes in a later step (lost, it is sent again). */
  smsAnswered(smsId: string): void {
    this.#smsDone.push(smsId);
    this.schedule();
  }

  /** Events delivered (or given up): their rows go in a later step (lost, they are delivered again). */
  delivered(ids: readonly string[]): void {
    for (const id of ids) this.#delivered.push(id);
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
    let staged: WrittenEvent[];
    this.#flushing = true;
    try {
      this.#deps.takeOutcomes();
      const engine = this.#deps.engine.takeChanges({ full: this.#full });
      // After the outcomes: their notifications belong to this step.
      staged = this.#staged;
      this.#staged = [];
      const delivered = this.#delivered;
      this.#delivered = [];
      const changedRuns = [...this.#changedRuns.values()].map((run) => [run.id, { run: storedRun(run) }] as const);
      this.#changedRuns.clear();
      const smsIn = this.#smsIn;
      this.#smsIn = [];
      const smsDone = this.#smsDone;
      this.#smsDone = [];
      this.#deps.storage.write({
        engine,
        ...this.#deps.collect(this.#full),
        // Rows put before rows deleted: a run that changed and ended in one step goes.
        ...(staged.length + changedRuns.length > 0 ? { outboxPut: [...staged.map((e) => [writtenId(e), e] as const), ...changedRuns] } : {}),
        ...(delivered.length > 0 ? { outboxDelete: delivered } : {}),
        ...(smsIn.length > 0 ? { smsPut: smsIn.map((s) => [s.smsId, s] as const) } : {}),
        ...(smsDone.length > 0 ? { smsDelete: smsDone } : {}),
      });
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
    if (staged.length > 0) this.#deps.onWritten(staged);
    for (const w of waiters) w.resolve();
  }
}
