/**
 * A Redis that comes back without the queue (a restart without persistence, FLUSHALL, a failover to
 * an empty replica) is an incident this instance handles to the end (docs/scaling.md, "Redis comes
 * back empty"):
 *
 * - **Noticed.** The queue's slot holds an epoch marker (`<p>epoch`, a random id). Every step and
 *   every renewal carries the id this instance knows, and Redis refuses them (`RESET`) when the
 *   marker is gone or another, so nothing is recorded against an empty queue (a chunk would read as
 *   "taken over by another" and be sent by nobody). The marker is also read every renewal period,
 *   and at start against the id kept in the state file (`stateFile`), so a Redis that came back
 *   empty under instances that all restarted is noticed too.
 * - **Counted and said.** `sendpool_redis_resets_total`, an error log line `redis-reset` with what
 *   the instance holds, and the host's `onReset`.
 * - **What this instance holds goes on.** Every chunk it holds is written again as an entry pending
 *   under it, with the progress it knows (hand-outs, finals), so it keeps sending them and records
 *   their finals and notifications; the consumer groups are created with them.
 * - **What it accepted is written again.** Each instance keeps, in memory, the chunks it wrote for its
 *   202s until it sees them gone from their streams (done; looked at every renewal period, fenced
 *   by the epoch). One lease after the reset, those no live holder wrote again (`<p>rb:` marks) are
 *   written again for any instance to send. With a state file they are also journaled beside it
 *   (accepted-journal.ts) before the 202 leaves, and read back at start: an instance restarted on
 *   an empty Redis writes again what it had accepted, after the same lease; one restarted on the
 *   same Redis keeps them in memory for a later reset.
 * - **Webhook configurations come back.** Those this instance knows (or its state file kept) are
 *   written back where Redis has none, then read again by all.
 * - **Intake refuses** (503, `Retry-After`) while the reset is handled.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { AcceptedJournal, acceptedJournalPath, type JournalEntry } from './accepted-journal.js';
import type { LocalStateFile } from './local-state.js';
import type { ChunkBody, ClaimedChunk } from './chunks.js';
import type { ContactQueue } from './queue.js';
import type { SharedDispatch } from './shared-dispatch.js';
import type { SharedWebhooks } from './shared-webhooks.js';

/** What `onReset` is told when this instance noticed that Redis lost the queue. */
export interface RedisResetEvent {
  /** The queue's epoch id this instance knew ('' when it was kept nowhere). */
  readonly previousEpoch: string;
  /** The marker's id found (or created) now. */
  readonly epoch: string;
  /** Chunks this instance held and wrote again (it keeps sending them). */
  readonly heldChunks: number;
  /** Contacts of chunks this instance accepted and had not seen done: written again one lease later unless their holder did. */
  readonly recordedContacts: number;
  /** Companies whose webhook configuration this instance wrote back. */
  readonly webhooksRestored: readonly number[];
}

/** Is this the refusal of a script fenced by the queue's epoch? */
export function isResetError(e: unknown): boolean {
  return e instanceof Error && e.message.startsWith('RESET');
}

/** A chunk this instance accepted, kept until it is seen done. */
interface Recorded {
  readonly stream: string;
  entryId: string;
  readonly body: ChunkBody;
  /** The queue's epoch it was written under: only chunks of an epoch Redis lost are written again. */
  epoch: string;
}

interface Deps {
  readonly queue: ContactQueue;
  readonly shared: SharedDispatch;
  readonly webhooks: SharedWebhooks;
  readonly log: () => FastifyBaseLogger;
  /** The instance's state file, when the host keeps one (the accepted journal is kept beside it). */
  readonly state?: LocalStateFile;
  /** `done` records the accepted journal holds before a compaction is considered. @default 1000 */
  readonly journalCompactAfter?: number;
  /** Webhook events and SMS held from the old streams: forgotten (they are delivered and sent from memory, nothing to acknowledge). */
  readonly forgetHeldWork: () => void;
  readonly onReset?: (event: RedisResetEvent) => void;
}

/** What the persistence and the feed ask of the reset path (redis-persistence.ts, instance-feed.ts). */
export interface ResetGuard {
  /** Once a renewal period, before renewing: reads the queue's epoch marker (handles a reset). */
  tick(): Promise<void>;
  /** A write refused with `RESET`: resolves once it may be sent again. */
  recover(e: unknown): Promise<boolean>;
  /** True while a reset is handled. */
  readonly handling: boolean;
  /** Chunks accepted here were written, with their entry ids (and the JSON they were written as). */
  accepted(chunks: readonly ChunkBody[], ids: readonly string[], epoch: string, json?: readonly string[]): void;
  /** Chunks this instance held were acknowledged done by a written step. */
  finished(chunks: readonly Pick<ClaimedChunk, 'stream' | 'entryId'>[]): void;
}

export class QueueReset implements ResetGuard {
  readonly #d: Deps;
  /** The id this instance knows (from its state file at start, else the first one read). */
  #known: string;
  #resets = 0;
  #handling: Promise<void> | undefined;
  readonly #recorded = new Map<string, Recorded>();
  #recordedContacts = 0;
  /** When (Date.now()) the chunks accepted here are written again, after a reset. */
  #rebuildAt: number | undefined;
  /** The recorded chunks, kept outside Redis (with a state file). */
  readonly #journal: AcceptedJournal | undefined;

  constructor(deps: Deps) {
    this.#d = deps;
    this.#known = deps.state?.state.queueEpoch ?? '';
    if (deps.state === undefined) return;
    // What the instance had accepted and not seen done before it stopped: recorded again.
    const { journal, entries, damaged } = AcceptedJournal.open(acceptedJournalPath(deps.state.path), deps.journalCompactAfter);
    this.#journal = journal;
    for (const e of entries) {
      this.#recorded.set(`${e.stream} ${e.entryId}`, { stream: e.stream, entryId: e.entryId, body: e.body, epoch: e.epoch });
      this.#recordedContacts += e.body.contacts.length;
    }
    const log = deps.log();
    if (damaged > 0)
      log.error(
        { event: 'accepted-journal-damaged', file: journal.path, damagedLines: damaged, chunks: entries.length },
        `accepted journal ${journal.path}: ${damaged} damaged line(s) skipped (a write cut by a kill, or an edit); the chunks of the other lines are kept`,
      );
    if (entries.length > 0)
      log.warn(
        { event: 'accepted-journal-read', file: journal.path, chunks: entries.length, contacts: this.#recordedContacts },
        'accepted journal read: chunks accepted before the restart and not seen done are recorded again (written again if Redis lost them)',
      );
  }

  /** Resets noticed by this instance (the metric). */
  get resets(): number {
    return this.#resets;
  }

  /** True while a reset is being handled (intake refuses). */
  get handling(): boolean {
    return this.#handling !== undefined;
  }

  /** Contacts of chunks accepted here and not seen done. */
  get recordedContacts(): number {
    return this.#recordedContacts;
  }

  /**
   * Chunks accepted here were written (their entry ids, in order) by a step sent under `epoch`;
   * `json`: the JSON each was written as, when the queue says (the journal writes it as it is).
   */
  accepted(chunks: readonly ChunkBody[], ids: readonly string[], epoch: string, json?: readonly string[]): void {
    const journaled: JournalEntry[] = [];
    chunks.forEach((body, k) => {
      const entryId = ids[k];
      if (entryId === undefined) return;
      const stream = this.#d.queue.streamOf(body);
      this.#recorded.set(`${stream} ${entryId}`, { stream, entryId, body, epoch });
      this.#recordedContacts += body.contacts.length;
      const text = json?.[k];
      journaled.push({ stream, entryId, epoch, body, ...(text === undefined ? {} : { json: text }) });
    });
    // Before the step's 202s are answered (the caller resolves them after this).
    this.#journalWrite(() => this.#journal?.add(journaled));
  }

  /**
   * Chunks held here were acknowledged done by a step: those accepted here are forgotten at once
   * (the renewal period's look finds the others), so a kill soon after does not leave them in the
   * journal to be written again.
   */
  finished(chunks: readonly { readonly stream: string; readonly entryId: string }[]): void {
    const done: Recorded[] = [];
    for (const c of chunks) {
      const r = this.#recorded.get(`${c.stream} ${c.entryId}`);
      if (r !== undefined && this.#forget(r)) done.push(r);
    }
    if (done.length > 0) this.#journalWrite(() => this.#journal?.done(done));
  }

  /**
   * A journal write that failed (a full disk, a permission) is logged, not thrown: the chunks are in
   * Redis and in memory, and a refused 202 would have its client post them again.
   */
  #journalWrite(write: () => void): void {
    try {
      write();
    } catch (e) {
      this.#d
        .log()
        .error(
          { event: 'accepted-journal-write-failed', file: this.#journal?.path, err: e },
          'accepted journal not written: chunks accepted here are kept in memory only (lost if every instance restarts on an empty Redis)',
        );
    }
  }

  /**
   * Once a renewal period: reads the marker (a reset is handled before anything else), writes the
   * accepted chunks again when due, else forgets those seen done; keeps the webhook configurations
   * in the state file.
   */
  async tick(): Promise<void> {
    await this.check();
    if (this.#rebuildAt !== undefined && Date.now() >= this.#rebuildAt) await this.#rebuildRecorded();
    else if (this.#rebuildAt === undefined) await this.#prune();
    // Once read from Redis: an instance just started knows none yet, and must not erase what the file kept.
    if (this.#d.webhooks.loaded) this.#d.state?.update({ webhooks: this.#d.webhooks.configured() });
  }

  /**
   * A step or a renewal was refused with `RESET`: handles the reset (once, whoever asks) and
   * answers true once the refused write may be sent again; false for any other error.
   */
  async recover(e: unknown): Promise<boolean> {
    if (!isResetError(e)) return false;
    await this.check();
    return true;
  }

  /** Reads the marker; a reset is handled once, whoever asks meanwhile waits for it. */
  async check(): Promise<void> {
    if (this.#handling) return this.#handling;
    const { id } = await this.#d.queue.readEpoch(randomUUID());
    if (this.#d.queue.epoch === id) return;
    if (this.#known === '' || this.#known === id) {
      // First look (nothing kept), or a restart on the same Redis.
      this.#d.queue.epoch = id;
      this.#known = id;
      this.#d.state?.update({ queueEpoch: id });
      // Chunks written before this first look (a step is not fenced then) are of this epoch.
      const adopted = [...this.#recorded.values()].filter((r) => r.epoch === '');
      for (const r of adopted) r.epoch = id;
      if (adopted.length > 0) this.#journalWrite(() => this.#journal?.add(adopted.map((r) => ({ stream: r.stream, entryId: r.entryId, epoch: id, body: r.body }))));
      // Chunks of an epoch Redis no longer has, read from the journal (the instance stopped after a
      // reset and before writing them again): written again one lease later, as after a reset.
      if (this.#rebuildAt === undefined && [...this.#recorded.values()].some((r) => r.epoch !== id)) this.#rebuildAt = Date.now() + this.#d.queue.leaseMs;
      return;
    }
    if (this.#handling) return this.#handling;
    this.#handling = this.#handle(this.#known, id).finally(() => (this.#handling = undefined));
    return this.#handling;
  }

  async #handle(previous: string, epoch: string): Promise<void> {
    this.#resets++;
    const log = this.#d.log();
    log.error(
      { event: 'redis-reset', previousEpoch: previous, epoch, heldChunks: this.#d.shared.held, heldContacts: this.#d.shared.open, recordedContacts: this.#recordedContacts },
      'redis-reset: Redis came back without the queue; intake refuses until the contacts held here are written again',
    );
    this.#d.forgetHeldWork();
    // What this instance holds, written again under the new epoch before any step names it.
    const heldChunks = await this.#d.shared.rebuild(epoch);
    this.#d.queue.epoch = epoch;
    this.#known = epoch;
    this.#d.state?.update({ queueEpoch: epoch });
    // Webhook configurations: this instance's, and those its state file kept for companies it does not know.
    const mine = this.#d.webhooks.configured();
    const kept = (this.#d.state?.state.webhooks ?? []).filter((w) => !mine.some((m) => m.companyId === w.companyId));
    let webhooksRestored: number[] = [];
    try {
      webhooksRestored = await this.#d.webhooks.restore([...mine, ...kept]);
    } catch (e) {
      log.warn({ err: e }, 'redis-reset: webhook configurations not written back yet: the next reset check tries again');
    }
    // The chunks accepted here: after one lease, so that their holders, if alive, write them first.
    this.#rebuildAt = Date.now() + this.#d.queue.leaseMs;
    const event: RedisResetEvent = { previousEpoch: previous, epoch, heldChunks, recordedContacts: this.#recordedContacts, webhooksRestored };
    log.warn(
      { ...event, event: 'redis-reset-handled' },
      'redis-reset handled: held chunks written again, intake open; contacts accepted here are written again after one lease unless their holder did',
    );
    try {
      this.#d.onReset?.(event);
    } catch {
      // The host's callback does not stop the recovery.
    }
  }

  /** Forgets the chunks accepted here that are no longer in their streams (done). */
  async #prune(): Promise<void> {
    if (this.#recorded.size === 0) return;
    const list = [...this.#recorded.values()];
    let still: boolean[];
    try {
      still = await this.#d.queue.stillQueued(list);
    } catch (e) {
      if (!isResetError(e)) throw e;
      return this.check();
    }
    const epoch = this.#d.queue.epoch;
    const done: Recorded[] = [];
    list.forEach((r, k) => {
      // Only those of this epoch can be looked up (the others wait for their rebuild).
      if (still[k] === false && r.epoch === epoch && this.#forget(r)) done.push(r);
    });
    this.#journalWrite(() => this.#journal?.done(done));
  }

  #forget(r: Recorded): boolean {
    if (!this.#recorded.delete(`${r.stream} ${r.entryId}`)) return false;
    this.#recordedContacts -= r.body.contacts.length;
    return true;
  }

  /** Writes again the chunks accepted here that no holder wrote again (they keep their contact ids). */
  async #rebuildRecorded(): Promise<void> {
    // Those written under an epoch Redis lost, not those accepted since (they are in Redis).
    const epoch = this.#d.queue.epoch;
    const list = [...this.#recorded.values()].filter((r) => r.epoch !== epoch);
    let ids: (string | null)[];
    try {
      ids = await this.#d.queue.rebuild(
        epoch,
        list.map((r) => ({ stream: r.stream, entryId: r.entryId, body: r.body, open: r.body.contacts.length, hold: false })),
      );
    } catch (e) {
      if (!isResetError(e)) throw e;
      return this.check();
    }
    this.#rebuildAt = undefined;
    let chunks = 0;
    let contacts = 0;
    const old = list.map((r) => ({ stream: r.stream, entryId: r.entryId }));
    const rewritten: JournalEntry[] = [];
    list.forEach((r, k) => {
      const id = ids[k] ?? null;
      this.#forget(r);
      if (id === null) return;
      // Kept under its new entry: Redis may lose it again.
      r.entryId = id;
      r.epoch = epoch;
      this.#recorded.set(`${r.stream} ${id}`, r);
      this.#recordedContacts += r.body.contacts.length;
      rewritten.push({ stream: r.stream, entryId: id, epoch, body: r.body });
      chunks++;
      contacts += r.body.contacts.length;
    });
    // Their new entries first: a kill between the two writes leaves them twice, never nowhere.
    this.#journalWrite(() => {
      this.#journal?.add(rewritten);
      this.#journal?.done(old);
    });
    this.#d
      .log()
      .warn({ event: 'redis-reset-rebuilt', chunks, contacts, writtenByHolders: list.length - chunks }, 'redis-reset: chunks accepted here and not done written again (their contacts keep their ids)');
  }
}
