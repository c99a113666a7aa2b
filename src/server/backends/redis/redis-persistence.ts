/**
 * The server's persistence on Redis (persistence.ts): every instance writes to the shared queue
 * (queue.ts) instead of a database of its own. A step is one script: the chunks of the 202s waiting
 * for it, the hand-outs of the messages waiting to be sent, finals with their notifications, the
 * chunks done, the events delivered. Steps go one at a time; whoever waits (`commit`) shares the
 * next one.
 *
 * Redis unreachable is an outage, not the end: a step that fails is kept and written again (with
 * what gathered meanwhile) after a pause; 202s and sends wait for it; the step's id makes a step
 * whose reply was lost count once. Nothing is answered or sent that is not in Redis.
 *
 * What the next step takes is gathered apart (staged-step.ts). The instance is fed from the fleet,
 * and what it holds renewed, by its feed (instance-feed.ts), which this starts, kicks and stops.
 */
import { randomUUID } from 'node:crypto';
import type { OutboxEvent } from '../../../events/outbox.js';
import type { OutgoingSms } from '../../ports/channel.js';
import type { DeadLetter } from '../../ports/dead-letters.js';
import { storedRun, type EnqueuedRun, type Persistence, type WrittenEvent } from '../../ports/persistence.js';
import type { ChunkBody } from './chunks.js';
import { InstanceFeed } from './instance-feed.js';
import type { ContactQueue } from './queue.js';
import type { QueueStep } from './queue-step.js';
import { isResetError, type ResetGuard } from './reset.js';
import type { CampaignReport } from './scripts/step.js';
import type { SharedDispatch } from './shared-dispatch.js';
import type { SharedStatistics } from './shared-statistics.js';
import { composeStep, deadLetterStep, StagedStep, withoutVoided, type TakenStep } from './staged-step.js';

interface Deps {
  readonly queue: ContactQueue;
  readonly shared: SharedDispatch;
  /** Campaign statistics reports, written with each step. */
  readonly statistics: SharedStatistics;
  /** Handles the engine's outcomes due so far (the dispatch worker's), before a step is taken. */
  readonly takeOutcomes: () => void;
  /** Readies what notifying and signing for these companies needs (before their chunks and events are taken). */
  readonly prepare?: (companyIds: readonly number[]) => Promise<void>;
  /** Runs with the renewals, every third of the lease (at most every second). */
  readonly periodic?: () => Promise<void>;
  /**
   * What the step writes of the shared memory (shared-memory.ts): tracked messages, SMS and the
   * channel's ids changed since the last step; `pending` tells whether there are any.
   * @default none
   */
  readonly memory?: { readonly take: () => QueueStep['memory']; readonly pending: () => boolean };
  /** Events (and runs of ENQUEUED notifications) claimed from the shared outbox: deliver them. */
  readonly deliver: (events: readonly WrittenEvent[]) => void;
  /** SMS claimed from the shared queue: send them. */
  readonly sendSms: (items: readonly OutgoingSms[]) => void;
  /** SMS this instance may take now (its SMS queue's room). */
  readonly smsRoom: () => number;
  /** Work was taken into the engine: dispatch it. */
  readonly onFed: () => void;
  /** A step could not be written (it is written again later). */
  readonly onWriteError: (error: unknown) => void;
  /**
   * Most webhook events this instance holds for delivery at once.
   * @default 1_000
   */
  readonly maxHeldEvents?: number;
  /** How long changes nobody waits for may gather, in ms. @default 25 */
  readonly lazyMs?: number;
  /** The bounds of the shared dead letters (the server's `deadLetters` option, resolved: dead-letters.ts). */
  readonly deadLetters: { readonly maxPerCompany: number; readonly maxAgeMs: number };
  /**
   * Whether the connection to Redis is up now (ioredis' `status` is 'ready'): while it is not,
   * commands wait for the reconnection, and intake refuses rather than wait with them.
   * @default always
   */
  readonly connected?: () => boolean;
  /** The reset path (reset.ts), once made. @default none */
  readonly reset?: () => ResetGuard | undefined;
}

/** Pause before a failed step is written again, growing to the last. */
const RETRY_MS = [50, 100, 250, 500, 1000];

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

/** A step being written, with whoever waits for it (`step` loses the requests voided meanwhile). */
interface Attempt {
  step: TakenStep;
  readonly waiters: Waiter[];
}

export class RedisPersistence implements Persistence {
  readonly #deps: Deps;
  readonly #feed: InstanceFeed;
  /** What the next step takes. */
  readonly #staged = new StagedStep();
  #waiters: Waiter[] = [];
  #writing = false;
  #lazy: NodeJS.Timeout | undefined;
  #scheduled = false;
  #writes = 0;
  #failures = 0;
  /** A step that failed, written again (the same step, same id) before anything newer, with its waiters. */
  #retry: Attempt | undefined;
  /** The request whose intake runs now: what it stages is its part. */
  #capturing: { events: string[] } | undefined;
  /** Requests a step found voided (the fence): their 202 is not given. */
  readonly #voided = new Set<string>();
  /** The contact whose notifications are being staged (tied to its chunk). */
  #about: object | undefined;
  #closed = false;

  constructor(deps: Deps) {
    this.#deps = deps;
    this.#feed = new InstanceFeed({ ...deps, onError: deps.onWriteError });
  }

  get writes(): number {
    return this.#writes;
  }

  /** Never set: a failed write is written again, not the end of the server. */
  get failed(): boolean {
    return false;
  }

  /** Consecutive failed writes (0 when Redis answers). */
  get failures(): number {
    return this.#failures;
  }

  /**
   * Why intake cannot queue now, if it cannot: `reset` while a reset of Redis is handled, `down`
   * while writes or reads of Redis fail (a step waiting to be written again).
   */
  get refusal(): 'reset' | 'down' | undefined {
    if (this.#deps.reset?.()?.handling === true) return 'reset';
    if (this.#failures > 0 || this.#feed.failures > 0 || this.#deps.connected?.() === false) return 'down';
    return undefined;
  }

  /** The old streams' entries held here are gone with Redis: forgotten (delivered and sent from memory still). */
  forgetHeldWork(): void {
    this.#feed.forgetHeld();
  }

  /** Webhook events held here for delivery. */
  get heldEvents(): number {
    return this.#feed.held;
  }

  commit(): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => void this.#write());
    }
    return done;
  }

  schedule(): void {
    if (this.#scheduled || this.#lazy !== undefined) return;
    this.#lazy = setTimeout(() => {
      this.#lazy = undefined;
      void this.#write();
    }, this.#deps.lazyMs ?? 25);
  }

  /**
   * Runs a request's intake (`fn`): the ENQUEUED run and statistics admissions it stages are the
   * request's part, staged with {@link stageRequest} when it answers 202.
   */
  capture<T>(fn: () => T): { readonly value: T; readonly events: string[]; readonly reports: CampaignReport[] } {
    const capturing = { events: [] as string[] };
    this.#capturing = capturing;
    try {
      const { value, reports } = this.#deps.statistics.capture(fn);
      return { value, events: capturing.events, reports };
    } finally {
      this.#capturing = undefined;
    }
  }

  /**
   * A request answered 202: its commit mark, its captured part and (with an idempotency key: the
   * record's Redis key) its answer, written with the next step with its chunks. Then
   * {@link commitRequest} says whether it was committed.
   */
  stageRequest(id: string, part: { readonly events: readonly string[]; readonly reports: readonly CampaignReport[] }, idempotency?: { readonly key: string; readonly answer: string }): void {
    this.#staged.request({ id, events: part.events, reports: part.reports, ...(idempotency ?? {}) });
  }

  /**
   * Writes what is staged (as {@link commit}); answers false when the request was voided by
   * another instance meanwhile (the fence): nothing of it was written, and it must not answer 202.
   */
  async commitRequest(id: string): Promise<boolean> {
    await this.commit();
    return !this.#voided.delete(id);
  }

  /** A 202's contacts, written with the next step. */
  stageChunks(chunks: readonly ChunkBody[]): void {
    for (const c of chunks) {
      this.#staged.chunk(c);
      this.#feed.counted(c.contacts.length);
    }
  }

  /**
   * Contacts accepted by every instance and not finished, as last read from Redis (at most one
   * renewal period old) plus what this instance accepted since: the intake bound's measure.
   */
  get backlog(): number {
    return this.#feed.backlog;
  }

  /** Runs `fn` with the notifications it stages tied to `contact`'s chunk. */
  about<T>(contact: object, fn: () => T): T {
    this.#about = contact;
    try {
      return fn();
    } finally {
      this.#about = undefined;
    }
  }

  stage(event: OutboxEvent): void {
    if (this.#capturing && this.#about === undefined) this.#capturing.events.push(JSON.stringify(event));
    else this.#deps.shared.stage(JSON.stringify(event), this.#about);
    this.schedule();
  }

  /**
   * A request's ENQUEUED notifications: one entry of the shared outbox, written with the step that
   * made them; the instance that claims it builds and delivers them all (it holds it as one).
   */
  stageRun(run: EnqueuedRun): void {
    const json = JSON.stringify({ run: storedRun(run) });
    if (this.#capturing) this.#capturing.events.push(json);
    else this.#deps.shared.stage(json);
    this.schedule();
  }

  /**
   * Not written: an entry of the shared outbox is not rewritten. A run taken over after a crash
   * builds its dead-lettered notifications again (a contact's notifications have no order across
   * instances anyway: docs/scaling.md).
   */
  runChanged(): void {}

  /** SMS accepted: written with the next step (their 202 waits for it); any instance sends them. */
  stageSms(items: readonly OutgoingSms[]): void {
    for (const s of items) this.#staged.sms(JSON.stringify(s));
  }

  smsAnswered(smsId: string): void {
    const entry = this.#feed.done('sms', smsId);
    if (entry === undefined) return;
    this.#staged.smsAnswered(entry);
    this.schedule();
    this.kick();
  }

  delivered(ids: readonly string[]): void {
    for (const id of ids) {
      const entry = this.#feed.done('events', id);
      if (entry !== undefined) this.#staged.delivered(entry);
    }
    this.schedule();
    // Room for more events.
    this.kick();
  }

  /**
   * A dead-lettered event: written to the shared dead letters with the next step, the one that
   * acknowledges the event (`delivered`, called in the same turn).
   */
  stageDeadLetter(d: DeadLetter): void {
    this.#staged.deadLetter(d);
    this.schedule();
  }

  flush(): Promise<void> {
    return this.commit();
  }

  async #write(): Promise<void> {
    if (this.#writing) return; // the running write starts another when it ends
    this.#scheduled = false;
    if (this.#lazy !== undefined) clearTimeout(this.#lazy);
    this.#lazy = undefined;
    this.#writing = true;
    const attempt = this.#retry ?? this.#take();
    this.#retry = undefined;
    let written = false;
    let recovering: Promise<boolean> | undefined;
    try {
      await this.#apply(attempt);
      written = true;
    } catch (e) {
      // Written again as it is (a 202 is answered only once it is in Redis); what gathers meanwhile
      // goes in the step after it.
      this.#retry = attempt;
      recovering = this.#failed(e);
    }
    this.#writing = false;
    if (recovering) this.#afterRecovery(recovering);
    else if (written) this.#afterWritten(attempt);
    else this.#retryLater(attempt);
  }

  /** A new step: the engine's outcomes due so far handled, then everything staged taken into it. */
  #take(): Attempt {
    const waiters = this.#waiters;
    this.#waiters = [];
    this.#deps.takeOutcomes();
    const { chunks, requests, delivered, sms, smsAnswered, deadLetters } = this.#staged.take();
    const base: QueueStep = {
      id: randomUUID(),
      ...this.#deps.shared.takeStep(),
      chunks,
      delivered,
      sms,
      smsAnswered,
      statistics: this.#deps.statistics.take(),
      memory: this.#deps.memory?.take(),
      ...(deadLetters.length > 0 ? { deadLetters: deadLetterStep(deadLetters, this.#deps.deadLetters) } : {}),
    };
    return { step: { base, requests }, waiters };
  }

  /** Writes the step (without the requests the fence voided meanwhile) and settles what it wrote. */
  async #apply(attempt: Attempt): Promise<void> {
    const { queue, shared } = this.#deps;
    const epoch = queue.epoch;
    let result = await queue.step(composeStep(attempt.step));
    // The fence: requests voided meanwhile (another instance took over their phones) are taken
    // out, chunks and parts, and the rest written (nothing was).
    while (result.voided !== undefined && result.voided.length > 0) {
      const voided = new Set(result.voided);
      for (const id of voided) this.#voided.add(id);
      for (const c of attempt.step.base.chunks ?? []) if (voided.has(c.requestId)) this.#feed.counted(-c.contacts.length);
      attempt.step = withoutVoided(attempt.step, voided);
      result = await queue.step(composeStep(attempt.step));
    }
    const { ids, lost } = result;
    const reset = this.#deps.reset?.();
    const written = attempt.step.base.chunks ?? [];
    if (written.length > 0) reset?.accepted(written, ids, epoch, result.chunkJson);
    // Done here (not lost to another holder): those accepted here are forgotten now, not at the next look.
    const done = attempt.step.base.done ?? [];
    if (done.length > 0) {
      const gone = new Set(lost);
      reset?.finished(done.filter((c) => !gone.has(c.entryId)));
    }
    shared.settle(lost);
    this.#writes++;
    this.#failures = 0;
  }

  /** A write failed; answers the reset's recovery when Redis lost the queue, else counts and logs it. */
  #failed(e: unknown): Promise<boolean> | undefined {
    const reset = this.#deps.reset?.();
    // Redis lost the queue: written again once the reset is handled (the chunks it names carry their new entries).
    if (reset && isResetError(e)) return reset.recover(e);
    this.#failures++;
    this.#deps.onWriteError(e);
    return undefined;
  }

  #afterRecovery(recovering: Promise<boolean>): void {
    void recovering.then(
      () => this.#write(),
      (e: unknown) => {
        this.#failures++;
        this.#deps.onWriteError(e);
        setTimeout(() => void this.#write(), RETRY_MS[Math.min(this.#failures, RETRY_MS.length) - 1]).unref();
      },
    );
  }

  #afterWritten(attempt: Attempt): void {
    for (const w of attempt.waiters) w.resolve();
    const written = composeStep(attempt.step);
    if ((written.events?.length ?? 0) + (written.chunkEvents?.length ?? 0) + (written.sms?.length ?? 0) > 0) this.kick();
    if (this.#waiters.length > 0) void this.#write();
    else if (this.#pending) this.schedule();
  }

  /** Something waits for a step besides its waiters. */
  get #pending(): boolean {
    return this.#staged.pending || this.#deps.shared.dirty || this.#deps.statistics.dirty || this.#deps.memory?.pending() === true;
  }

  #retryLater(attempt: Attempt): void {
    if (this.#closed && this.#failures > RETRY_MS.length) {
      const error = new Error('Redis unreachable at shutdown: the last steps were not written');
      for (const w of [...attempt.waiters, ...this.#waiters.splice(0)]) w.reject(error);
      this.#retry = undefined;
      return;
    }
    const pause = RETRY_MS[Math.min(this.#failures, RETRY_MS.length) - 1]!;
    setTimeout(() => void this.#write(), pause).unref();
  }

  /** Starts feeding the instance (and renewing what it holds). */
  start(): void {
    this.kick();
  }

  /** Feeds now (after a step with events, a finished send, room in the engine). Feeds coalesce. */
  kick(): void {
    this.#feed.kick();
  }

  /** Stops feeding; the last step is written by `flush`, then `release` gives up what is held. */
  stop(): void {
    this.#closed = true;
    this.#feed.stop();
  }

  /**
   * Gives up what this instance still holds (contacts not sent yet, events not delivered, SMS not
   * sent) so the others take it at once rather than after the lease: an orderly shutdown, after
   * the last step is written. Best effort: if Redis does not answer, the lease hands them over.
   */
  release(): Promise<void> {
    return this.#feed.release();
  }
}
