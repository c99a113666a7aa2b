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
 * It also feeds the instance: chunks into the engine (SharedDispatch.feed), webhook events from
 * the shared outbox into the local delivery queue, and it renews what the instance holds, every
 * third of the lease.
 */
import { randomUUID } from 'node:crypto';
import type { OutboxEvent } from '../../../events/outbox.js';
import type { DeadLetter } from '../../ports/dead-letters.js';
import { storedRun, writtenId, type EnqueuedRun, type Persistence, type WrittenEvent } from '../../ports/persistence.js';
import type { OutgoingSms } from '../../ports/channel.js';
import type { ChunkBody, ClaimedChunk, ClaimedEvent, ContactQueue, QueueStep, WorkKind } from './queue.js';
import { fairHold, type SharedDispatch } from './shared-dispatch.js';
import type { SharedStatistics } from './shared-statistics.js';
import type { CampaignReport } from './scripts/step.js';
import { isResetError } from './reset.js';

/** What the persistence asks of the reset path (reset.ts). */
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

/**
 * What a request with a 202 adds to a step besides its chunks: its ENQUEUED run and its statistics
 * admissions, and the answer kept under its idempotency record. Written with its commit mark, or
 * (the request was voided: shared-phones.ts) not at all.
 */
interface RequestPart {
  readonly id: string;
  readonly key?: string;
  readonly answer?: string;
  readonly events: readonly string[];
  readonly reports: readonly CampaignReport[];
}

/** A step as taken, and the requests' parts composed into it (taken out again if voided). */
interface TakenStep {
  readonly base: QueueStep;
  readonly requests: readonly RequestPart[];
}

function compose(taken: TakenStep): QueueStep {
  const { base, requests } = taken;
  if (requests.length === 0) return base;
  return {
    ...base,
    requests: requests.map((r) => ({ id: r.id, ...(r.key !== undefined ? { key: r.key, answer: r.answer ?? '' } : {}) })),
    events: [...(base.events ?? []), ...requests.flatMap((r) => r.events)],
    statistics: { reports: [...(base.statistics?.reports ?? []), ...requests.flatMap((r) => r.reports)], at: base.statistics?.at ?? 0 },
  };
}

/** Longest wait of a release for the feed under way (ms). */
const RELEASE_FEED_WAIT_MS = 5_000;

/** Pause before a failed step is written again, growing to the last. */
const RETRY_MS = [50, 100, 250, 500, 1000];

export class RedisPersistence implements Persistence {
  readonly #deps: Deps;
  #waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  #writing = false;
  #lazy: NodeJS.Timeout | undefined;
  #scheduled = false;
  #writes = 0;
  #failures = 0;
  /** A step that failed, written again (the same step, same id) before anything newer, with its waiters. */
  #retry: { step: TakenStep; waiters: { resolve: () => void; reject: (e: unknown) => void }[] } | undefined;
  #chunks: ChunkBody[] = [];
  /** Requests with a 202 waiting for the next step (their parts besides chunks). */
  #requests: RequestPart[] = [];
  /** The request whose intake runs now: what it stages is its part. */
  #capturing: { events: string[] } | undefined;
  /** Requests a step found voided (the fence): their 202 is not given. */
  readonly #voided = new Set<string>();
  #delivered: string[] = [];
  /** Dead letters to write with the step that acknowledges their events. */
  #deadLetters: DeadLetter[] = [];
  /** The contact whose notifications are being staged (tied to its chunk). */
  #about: object | undefined;
  /** Webhook events and SMS held: event id (SMS id) -> stream entry id. */
  readonly #held: Record<WorkKind, Map<string, string>> = { events: new Map(), sms: new Map() };
  #sms: string[] = [];
  /** The fleet's backlog as last read (every renewal period), plus what this instance staged since. */
  #backlog = 0;
  #smsAnswered: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  #feeding = false;
  /** The feed under way: a release waits for it, so chunks it claimed are released too. */
  #feedDone: Promise<void> | undefined;
  #again = false;
  #closed = false;
  #lastRenew = 0;
  /** Feeds that failed in a row (Redis away). */
  #feedFailures = 0;
  #lastReclaim = 0;

  constructor(deps: Deps) {
    this.#deps = deps;
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
    if (this.#failures > 0 || this.#feedFailures > 0 || this.#deps.connected?.() === false) return 'down';
    return undefined;
  }

  /** The old streams' entries held here are gone with Redis: forgotten (delivered and sent from memory still). */
  forgetHeldWork(): void {
    this.#held.events.clear();
    this.#held.sms.clear();
  }

  /** Webhook events held here for delivery. */
  get heldEvents(): number {
    return this.#held.events.size + this.#held.sms.size;
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
    this.#requests.push({ id, events: part.events, reports: part.reports, ...(idempotency ?? {}) });
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
      this.#chunks.push(c);
      this.#backlog += c.contacts.length;
    }
  }

  /**
   * Contacts accepted by every instance and not finished, as last read from Redis (at most one
   * renewal period old) plus what this instance accepted since: the intake bound's measure.
   */
  get backlog(): number {
    return this.#backlog;
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
    for (const s of items) this.#sms.push(JSON.stringify(s));
  }

  smsAnswered(smsId: string): void {
    const entry = this.#held.sms.get(smsId);
    if (entry === undefined) return;
    this.#held.sms.delete(smsId);
    this.#smsAnswered.push(entry);
    this.schedule();
    this.kick();
  }

  delivered(ids: readonly string[]): void {
    for (const id of ids) {
      const entry = this.#held.events.get(id);
      if (entry === undefined) continue;
      this.#held.events.delete(id);
      this.#delivered.push(entry);
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
    this.#deadLetters.push(d);
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
    let step: TakenStep;
    let waiters: { resolve: () => void; reject: (e: unknown) => void }[];
    if (this.#retry) {
      ({ step, waiters } = this.#retry);
      this.#retry = undefined;
    } else {
      waiters = this.#waiters;
      this.#waiters = [];
      this.#deps.takeOutcomes();
      const chunks = this.#chunks;
      const delivered = this.#delivered;
      const sms = this.#sms;
      const smsAnswered = this.#smsAnswered;
      const dead = this.#deadLetters;
      const requests = this.#requests;
      this.#requests = [];
      this.#deadLetters = [];
      this.#chunks = [];
      this.#delivered = [];
      this.#sms = [];
      this.#smsAnswered = [];
      step = {
        base: {
          id: randomUUID(),
          ...this.#deps.shared.takeStep(),
          chunks,
          delivered,
          sms,
          smsAnswered,
          statistics: this.#deps.statistics.take(),
          memory: this.#deps.memory?.take(),
          ...(dead.length > 0 ? { deadLetters: this.#deadLetterStep(dead) } : {}),
        },
        requests,
      };
    }
    let ok = false;
    let recovering: Promise<boolean> | undefined;
    try {
      const epoch = this.#deps.queue.epoch;
      let result = await this.#deps.queue.step(compose(step));
      // The fence: requests voided meanwhile (another instance took over their phones) are taken
      // out, chunks and parts, and the rest written (nothing was).
      while (result.voided !== undefined && result.voided.length > 0) {
        const voided = new Set(result.voided);
        for (const id of voided) this.#voided.add(id);
        const chunksLeft = (step.base.chunks ?? []).filter((c) => !voided.has(c.requestId));
        for (const c of step.base.chunks ?? []) if (voided.has(c.requestId)) this.#backlog -= c.contacts.length;
        step = { base: { ...step.base, chunks: chunksLeft }, requests: step.requests.filter((r) => !voided.has(r.id)) };
        result = await this.#deps.queue.step(compose(step));
      }
      const { ids, lost } = result;
      const written = step.base.chunks ?? [];
      if (written.length > 0) this.#deps.reset?.()?.accepted(written, ids, epoch, result.chunkJson);
      // Done here (not lost to another holder): those accepted here are forgotten now, not at the next look.
      if ((step.base.done?.length ?? 0) > 0) {
        const gone = new Set(lost);
        this.#deps.reset?.()?.finished((step.base.done ?? []).filter((c) => !gone.has(c.entryId)));
      }
      this.#deps.shared.settle(lost);
      this.#writes++;
      this.#failures = 0;
      ok = true;
    } catch (e) {
      // Written again as it is (a 202 is answered only once it is in Redis); what gathers meanwhile
      // goes in the step after it.
      this.#retry = { step, waiters };
      const reset = this.#deps.reset?.();
      // Redis lost the queue: written again once the reset is handled (the chunks it names carry their new entries).
      if (reset && isResetError(e)) recovering = reset.recover(e);
      else {
        this.#failures++;
        this.#deps.onWriteError(e);
      }
    }
    this.#writing = false;
    if (recovering) {
      void recovering.then(
        () => this.#write(),
        (e: unknown) => {
          this.#failures++;
          this.#deps.onWriteError(e);
          setTimeout(() => void this.#write(), RETRY_MS[Math.min(this.#failures, RETRY_MS.length) - 1]).unref();
        },
      );
      return;
    }
    if (ok) {
      for (const w of waiters) w.resolve();
      const written = compose(step);
      if ((written.events?.length ?? 0) + (written.chunkEvents?.length ?? 0) + (written.sms?.length ?? 0) > 0) this.kick();
      if (
        this.#waiters.length > 0 ||
        this.#chunks.length > 0 ||
        this.#requests.length > 0 ||
        this.#deps.shared.dirty ||
        this.#deps.statistics.dirty ||
        this.#deps.memory?.pending() === true ||
        this.#delivered.length + this.#sms.length + this.#smsAnswered.length + this.#deadLetters.length > 0
      ) {
        if (this.#waiters.length > 0) void this.#write();
        else this.schedule();
      }
      return;
    }
    if (this.#closed && this.#failures > RETRY_MS.length) {
      const error = new Error('Redis unreachable at shutdown: the last steps were not written');
      for (const w of [...waiters, ...this.#waiters.splice(0)]) w.reject(error);
      this.#retry = undefined;
      return;
    }
    const pause = RETRY_MS[Math.min(this.#failures, RETRY_MS.length) - 1]!;
    setTimeout(() => void this.#write(), pause).unref();
  }

  #deadLetterStep(dead: readonly DeadLetter[]): NonNullable<QueueStep['deadLetters']> {
    const bounds = this.#deps.deadLetters;
    const newest = Math.max(...dead.map((d) => d.deadLetteredAt));
    return {
      letters: dead.map((d) => ({ companyId: d.event.companyId, id: d.event.id, at: d.deadLetteredAt, family: d.event.family, json: JSON.stringify(d) })),
      keep: bounds.maxPerCompany,
      // By the server's clock (the time of the newest): the one the dead letters' times are of.
      oldest: newest - bounds.maxAgeMs,
    };
  }

  /** Starts feeding the instance (and renewing what it holds). */
  start(): void {
    this.kick();
  }

  /** Feeds now (after a step with events, a finished send, room in the engine). Feeds coalesce. */
  kick(): void {
    if (this.#closed) return;
    if (this.#feeding) {
      this.#again = true;
      return;
    }
    this.#feeding = true;
    this.#again = false;
    this.#feedDone = this.#feed().finally(() => {
      this.#feeding = false;
      if (this.#closed) return;
      // Asked again while feeding: feed again at once.
      if (this.#again) return this.kick();
      if (this.#timer) clearTimeout(this.#timer);
      // Renewals and takeovers run every third of the lease; a feed also looks for new work then.
      this.#timer = setTimeout(() => this.kick(), Math.max(10, Math.min(1000, Math.floor(this.#deps.queue.leaseMs / 3))));
      this.#timer.unref();
    });
  }

  async #feed(): Promise<void> {
    const { queue, shared } = this.#deps;
    try {
      const now = Date.now();
      // Renewals and takeovers once a renewal period; new work at every feed.
      const periodic = now - this.#lastRenew >= queue.leaseMs / 3;
      if (periodic) {
        this.#lastRenew = now;
        // Redis lost the queue: handled before anything is renewed or claimed.
        const reset = this.#deps.reset?.();
        if (reset) {
          await reset.tick();
          if (reset.handling) return;
        }
        await queue.heartbeat();
        await shared.renew();
        await this.#deps.periodic?.();
        this.#backlog = await queue.backlog();
        for (const kind of ['events', 'sms'] as const) {
          const held = this.#held[kind];
          const lost = new Set(await queue.renewWork(kind, [...held.values()]));
          if (lost.size > 0) for (const [id, entry] of held) if (lost.has(entry)) held.delete(id);
          await this.#take(kind, await queue.reclaimWork(kind, this.#room(kind)));
        }
      }
      // A dead instance's chunks are looked for about once a second (a third of the lease when that
      // is shorter), not once a renewal period: taken over at most that long after its lease lapses.
      const reclaim = now - this.#lastReclaim >= Math.min(1000, queue.leaseMs / 3);
      if (reclaim) this.#lastReclaim = now;
      // No more than an even part of the fleet's backlog: the other instances take the rest, and
      // so ask their share of the numbers for it.
      if ((await shared.feed(this.#deps.prepare, reclaim, fairHold(this.#backlog, queue.instances))) > 0) this.#deps.onFed();
      for (const kind of ['events', 'sms'] as const) {
        const room = this.#room(kind);
        if (room > 0) await this.#take(kind, await queue.claimWork(kind, room));
      }
      this.#feedFailures = 0;
    } catch (e) {
      // A renewal refused with RESET: the reset is handled, and the next feed renews under the new epoch.
      if (
        await this.#deps
          .reset?.()
          ?.recover(e)
          .catch(() => false)
      ) {
        this.#lastRenew = 0;
        return;
      }
      // Redis away: the next feed tries again.
      this.#feedFailures++;
      this.#deps.onWriteError(e);
    }
  }

  #room(kind: WorkKind): number {
    return kind === 'events' ? (this.#deps.maxHeldEvents ?? 1000) - this.#held.events.size : this.#deps.smsRoom();
  }

  async #take(kind: WorkKind, claimed: readonly ClaimedEvent[]): Promise<void> {
    if (claimed.length === 0) return;
    const held = this.#held[kind];
    const items: (WrittenEvent | OutgoingSms)[] = [];
    for (const c of claimed) {
      const item = JSON.parse(c.json) as WrittenEvent | OutgoingSms;
      const id = 'smsId' in item ? item.smsId : writtenId(item);
      if (held.has(id)) continue;
      held.set(id, c.entryId);
      items.push(item);
    }
    if (items.length === 0) return;
    // Their notifications and callbacks are signed with the companies' shared secrets.
    await this.#deps.prepare?.(items.map((e) => ('run' in e ? e.run.companyId : 'replay' in e ? e.replay.companyId : e.companyId)));
    if (kind === 'events') this.#deps.deliver(items as WrittenEvent[]);
    else this.#deps.sendSms(items as OutgoingSms[]);
  }

  /** Stops feeding; the last step is written by `flush`, then `release` gives up what is held. */
  stop(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
  }

  /**
   * Gives up what this instance still holds (contacts not sent yet, events not delivered, SMS not
   * sent) so the others take it at once rather than after the lease: an orderly shutdown, after
   * the last step is written. Best effort: if Redis does not answer, the lease hands them over.
   */
  async release(): Promise<void> {
    // A feed under way may have claimed chunks in Redis that it has not added to what is held yet:
    // they are released too once it ends (at most RELEASE_FEED_WAIT_MS; the lease does the rest).
    if (this.#feeding && this.#feedDone) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.#feedDone, new Promise<void>((r) => (timer = setTimeout(r, RELEASE_FEED_WAIT_MS)))]);
      clearTimeout(timer);
    }
    try {
      await this.#deps.shared.renew(true);
      await this.#deps.queue.heartbeat(true);
      for (const kind of ['events', 'sms'] as const) await this.#deps.queue.renewWork(kind, [...this.#held[kind].values()], true);
    } catch {
      // The lease does it.
    }
  }
}
