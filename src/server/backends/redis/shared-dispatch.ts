/**
 * An instance's side of the shared queue (queue.ts): it claims chunks into its own engine (which is
 * not durable itself: the queue is), names each message for the channel by its contact's global id,
 * and gathers what must be written before it is acted on — hand-outs before the channel sees them,
 * finals with their notifications, chunks done — into one queue step.
 *
 * Message ids: the engine names a message `<submission>.<index>.<hand-out>` in this process only.
 * The channel sees `<contact id>.<hand-out>`, where the contact id is the 202's (global) and the
 * hand-out counts across instances: a chunk taken over after a crash continues from the hand-outs
 * written for it, and a contact handed out without an outcome goes again under the id it had
 * (the provider's idempotency key), so a crash sends at most what was in flight, twice.
 */
import type { Engine } from '../../../core/engine.js';
import type { ContactOutcome, OutgoingMessage } from '../../../core/dispatch/types.js';
import { CHUNK_CONTACTS, type ChunkBody, type ClaimedChunk, type QueuedContact, type RebuiltChunk } from './chunks.js';
import type { ContactQueue } from './queue.js';
import type { QueueStep } from './queue-step.js';

/** Where a contact of the engine came from. */
interface Origin {
  readonly held: Held;
  readonly index: number;
  /** Global hand-out of the engine's first hand-out of it here. */
  readonly base: number;
  /** Retries it used before it came here (the engine here counts from 0). */
  readonly used: number;
}

/** A chunk this instance holds. */
interface Held {
  readonly chunk: ClaimedChunk;
  /** Contacts not final yet. */
  open: number;
  /** Another instance took it over: its messages are not sent from here any more. */
  lost: boolean;
  /**
   * Its progress as this instance knows it (what it claimed with, and what it recorded since):
   * written with the chunk again if Redis loses it (`rebuild`).
   */
  readonly handouts: Map<number, number>;
  readonly ended: Map<number, number>;
  readonly finals: Map<number, string>;
}

/** How long a chunk done here is remembered, so that its acceptor does not write it again after a reset (ms). */
const RECENT_DONE_MS = 120_000;

/** Options of {@link SharedDispatch}. */
export interface SharedDispatchOptions {
  /**
   * Contacts this instance keeps claimed (queued, in flight or waiting for a retry in its engine);
   * it claims more when it holds fewer (and fewer than its fair hold, {@link fairHold}). Small
   * keeps work in Redis for any instance; large keeps the engine fed between claims.
   * @default 2_000
   */
  readonly prefetchContacts?: number;
}

/**
 * How many contacts an instance holds at most: an even part of the fleet's backlog (the contacts of
 * chunks not done, held or not) among the live instances, rounded up to whole chunks and never less
 * than one. An instance that took more than its part would be the only one asking its numbers for
 * them: the others, holding nothing, would leave their fair share of the numbers' capacity unasked
 * (an hourly number's opening burst went 149 / 150 / 2 between three instances), and a dead
 * instance's contacts would wait behind a survivor's whole prefetch.
 */
export function fairHold(backlog: number, instances: number): number {
  const part = Math.ceil(Math.max(0, backlog) / Math.max(1, instances));
  return Math.max(1, Math.ceil(part / CHUNK_CONTACTS)) * CHUNK_CONTACTS;
}

export class SharedDispatch {
  readonly #queue: ContactQueue;
  readonly #engine: Engine;
  readonly #prefetch: number;
  /**
   * Where each contact of the engine came from, by the contact object the engine hands back: the
   * server's contacts carry fields of their own (ids), so the engine never packs them into new
   * objects (core/dispatch/contact-list.ts `packable`).
   */
  readonly #origins = new WeakMap<object, Origin>();
  readonly #held = new Map<string, Held>();
  #handouts: { chunk: ClaimedChunk; index: number; count: number }[] = [];
  #ended: { chunk: ClaimedChunk; index: number; count: number }[] = [];
  #finals: { chunk: ClaimedChunk; index: number; state: string }[] = [];
  #done: ClaimedChunk[] = [];
  #events: string[] = [];
  #chunkEvents: { chunk: ClaimedChunk; json: string }[] = [];
  /** Contacts claimed and not final: what the prefetch bound counts. */
  #open = 0;
  #lost = 0;
  /** Each chunk's holding, also once done (until its step is written). */
  readonly #heldOf = new WeakMap<ClaimedChunk, Held>();
  /** Chunks done in the step being written (moved to `#recent` once it is). */
  #inStep: ClaimedChunk[] = [];
  /** Chunks done and written lately, with when (Date.now()). */
  #recent: { chunk: ClaimedChunk; at: number }[] = [];

  constructor(queue: ContactQueue, engine: Engine, options: SharedDispatchOptions = {}) {
    this.#queue = queue;
    this.#engine = engine;
    this.#prefetch = options.prefetchContacts ?? 2_000;
  }

  /** Contacts claimed here and not final. */
  get open(): number {
    return this.#open;
  }

  /** Chunks held here. */
  get held(): number {
    return this.#held.size;
  }

  /**
   * Takes work into the engine: with `reclaim`, chunks whose holder stopped renewing them first
   * (a scan of every active stream: the caller does it about once a second, not at every feed),
   * then new chunks (one a flow per round) while fewer than `hold` are open (its share of the
   * fleet's backlog: {@link fairHold}; `prefetchContacts` at most). `prepare` readies what their
   * companies need before they go into the engine. Answers the contacts taken.
   *
   * Chunks taken over go ahead of the contacts of their flow this instance holds and has not handed
   * out (`Submission.ahead`): they were claimed before them, and a dead instance's contacts would
   * otherwise wait behind the whole of a survivor's prefetch.
   */
  async feed(prepare?: (companyIds: readonly number[]) => Promise<void>, reclaim = true, hold = this.#prefetch): Promise<number> {
    let taken = 0;
    const take = async (chunks: readonly ClaimedChunk[], ahead: boolean) => {
      if (chunks.length > 0) await prepare?.(chunks.map((c) => c.body.companyId));
      // Each goes to the front of its flow: the last taken first, so they keep their order there.
      for (const c of ahead ? [...chunks].reverse() : chunks) taken += this.#take(c, ahead);
    };
    if (reclaim) await take(await this.#queue.reclaim(), true);
    const most = Math.min(hold, this.#prefetch);
    while (this.#open < most) {
      const chunks = await this.#queue.claim();
      if (chunks.length === 0) break;
      await take(chunks, false);
    }
    return taken;
  }

  #take(chunk: ClaimedChunk, ahead: boolean): number {
    // Held here, or done here with its step still to be written: taking it again would send it again.
    if (this.#held.has(chunk.entryId) || this.#awaitingStep().some((c) => c.entryId === chunk.entryId)) return 0;
    const held: Held = { chunk, open: 0, lost: false, handouts: new Map(chunk.handouts), ended: new Map(chunk.ended), finals: new Map(chunk.finals) };
    this.#heldOf.set(chunk, held);
    // Contacts grouped by the retries they used: a submission per group, with what is left of them.
    const groups = new Map<number, { contacts: QueuedContact[]; base: number[] }>();
    chunk.body.contacts.forEach((contact, index) => {
      if (chunk.finals.has(index)) return;
      // A contact sent again after a later failure starts after the failed message's hand-out.
      const first = chunk.body.handoutBase ?? 0;
      const written = chunk.handouts.get(index) ?? first;
      // The last hand-out written may have reached the provider (no answer recorded for it): it
      // goes again under its id. One whose attempt ended (a failure with a retry to come) does not.
      const base = (chunk.ended.get(index) ?? first) >= written ? written : written - 1;
      const used = Math.min((chunk.body.retriesUsed ?? 0) + base - first, chunk.body.maxRetries);
      let g = groups.get(used);
      if (!g) groups.set(used, (g = { contacts: [], base: [] }));
      // A copy per claim: the engine's contact object is this instance's handle on the origin.
      const own = { ...contact };
      this.#origins.set(own, { held, index, base, used });
      g.contacts.push(own);
      held.open++;
    });
    if (held.open === 0) {
      // Everything was final (a holder died between its finals and its acknowledgement).
      this.#done.push(chunk);
      return 0;
    }
    this.#held.set(chunk.entryId, held);
    this.#open += held.open;
    for (const [used, g] of groups) this.#engine.submit(submissionOf(chunk.body, g.contacts, chunk.body.maxRetries - used, ahead));
    return held.open;
  }

  /**
   * The message as the channel sees it: its contact's global id and hand-out. Undefined when the
   * chunk was taken over by another instance (it is not sent from here).
   */
  forChannel(m: OutgoingMessage): OutgoingMessage | undefined {
    const origin = this.#origins.get(m.contact);
    if (!origin) return m;
    if (origin.held.lost) return undefined;
    const handout = origin.base + localHandout(m.messageId);
    // The request's retry rules, not what is left of them here: a failure reported later counts from them.
    return { ...m, messageId: `${(m.contact as QueuedContact).id}.${handout}`, retryIndex: globalRetry(m.retryIndex, origin.used), maxRetries: origin.held.chunk.body.maxRetries };
  }

  /** An outcome's attempt as counted across instances. */
  retryIndexOf(o: ContactOutcome): number | null {
    const origin = this.#origins.get(o.contact);
    return origin ? globalRetry(o.retryIndex, origin.used) : o.retryIndex;
  }

  /**
   * An attempt ended without a final (a failure with a retry to come, a failover): recorded, so a
   * takeover does not repeat its id. `m` is the channel's message (`forChannel`).
   */
  ended(m: OutgoingMessage): void {
    const origin = this.#origins.get(m.contact);
    if (!origin || origin.held.lost) return;
    const count = localHandout(m.messageId) + 1;
    this.#ended.push({ chunk: origin.held.chunk, index: origin.index, count });
    origin.held.ended.set(origin.index, count);
  }

  /** Messages handed out: their hand-out counts go in the next step (before they are sent). */
  handedOut(messages: readonly OutgoingMessage[]): void {
    for (const m of messages) {
      const origin = this.#origins.get(m.contact);
      if (!origin || origin.held.lost) continue;
      const count = origin.base + localHandout(m.messageId) + 1;
      this.#handouts.push({ chunk: origin.held.chunk, index: origin.index, count });
      origin.held.handouts.set(origin.index, count);
    }
  }

  /** Final outcomes: recorded with the step; a chunk whose contacts are all final is done. */
  outcomes(outcomes: readonly ContactOutcome[]): void {
    for (const o of outcomes) {
      const origin = this.#origins.get(o.contact);
      if (!origin) continue;
      const { held } = origin;
      // A chunk another instance took over: its new holder records the contact's final.
      if (!held.lost) {
        this.#finals.push({ chunk: held.chunk, index: origin.index, state: o.state });
        held.finals.set(origin.index, o.state);
      }
      this.#open--;
      if (--held.open === 0) {
        this.#held.delete(held.chunk.entryId);
        if (!held.lost) this.#done.push(held.chunk);
      }
    }
  }

  /**
   * A webhook event (JSON) to write with the next step. An event about a contact of a chunk held
   * here is written only while this instance holds the chunk (with the contact's final), so a
   * contact taken over is notified by its new holder alone.
   */
  stage(event: string, contact?: object): void {
    const origin = contact === undefined ? undefined : this.#origins.get(contact);
    if (!origin) this.#events.push(event);
    else if (!origin.held.lost) this.#chunkEvents.push({ chunk: origin.held.chunk, json: event });
  }

  /** Whether a contact's chunk was taken over by another instance (nothing of it is recorded here). */
  isLost(contact: object): boolean {
    return this.#origins.get(contact)?.held.lost === true;
  }

  /** Whether a step has something to write. */
  get dirty(): boolean {
    return this.#handouts.length + this.#ended.length + this.#finals.length + this.#done.length + this.#events.length + this.#chunkEvents.length > 0;
  }

  /** Takes what was gathered for one step (the caller writes it, then hands the answer to `settle`). */
  takeStep(): QueueStep {
    const step = { handouts: this.#handouts, ended: this.#ended, finals: this.#finals, done: this.#done, events: this.#events, chunkEvents: this.#chunkEvents };
    this.#inStep.push(...this.#done);
    this.#handouts = [];
    this.#ended = [];
    this.#finals = [];
    this.#done = [];
    this.#events = [];
    this.#chunkEvents = [];
    return step;
  }

  /** A step was written: chunks it found taken over are not sent from here any more. */
  settle(lost: readonly string[]): void {
    this.#lose(lost);
    this.#written();
  }

  /** The step of the chunks done in it was written: they are remembered a while (`rebuild`'s marks). */
  #written(): void {
    const now = Date.now();
    for (const chunk of this.#inStep) this.#recent.push({ chunk, at: now });
    this.#inStep = [];
    let old = 0;
    while (old < this.#recent.length && now - this.#recent[old]!.at > RECENT_DONE_MS) old++;
    if (old > 0) this.#recent.splice(0, old);
  }

  /**
   * Redis lost the queue (reset.ts): writes again, as entries held by this instance, every chunk it
   * holds (and those done whose step is not written yet), with the progress it knows, so it keeps
   * sending them and records their finals and notifications; marks the chunks it finished lately
   * (their acceptor must not write them again). Chunks another instance wrote first (it held them
   * too: this one stalled past the lease) are not sent from here. Answers the chunks written.
   */
  async rebuild(epoch: string): Promise<number> {
    const chunks = new Set<ClaimedChunk>();
    for (const h of this.#held.values()) if (!h.lost) chunks.add(h.chunk);
    for (const c of [...this.#inStep, ...this.#done]) chunks.add(c);
    const list = [...chunks];
    const rebuilt: RebuiltChunk[] = list.map((chunk) => {
      const held = this.#heldOf.get(chunk);
      return { stream: chunk.stream, entryId: chunk.entryId, body: chunk.body, open: held?.open ?? 0, hold: true, progress: held ?? chunk };
    });
    const ids = await this.#queue.rebuild(
      epoch,
      rebuilt,
      this.#recent.map((r) => r.chunk),
    );
    let written = 0;
    list.forEach((chunk, k) => {
      const id = ids[k] ?? null;
      const held = this.#held.get(chunk.entryId);
      if (id === null) {
        if (held && held.chunk === chunk) this.#lose([chunk.entryId]);
        return;
      }
      if (held && held.chunk === chunk) {
        this.#held.delete(chunk.entryId);
        this.#held.set(id, held);
      }
      chunk.entryId = id;
      written++;
    });
    this.#recent = [];
    return written;
  }

  /** Writes what was gathered in one step. */
  async flush(): Promise<void> {
    if (!this.dirty) return;
    const { lost } = await this.#queue.step(this.takeStep());
    this.#lose(lost);
    this.#written();
  }

  #lose(entryIds: readonly string[]): void {
    for (const id of entryIds) {
      const held = this.#held.get(id);
      if (!held || held.lost) continue;
      held.lost = true;
      this.#lost++;
    }
  }

  /** Chunks done here whose step is not written yet (gathered, or in the step being written). */
  #awaitingStep(): ClaimedChunk[] {
    return this.#inStep.length + this.#done.length === 0 ? [] : [...this.#inStep, ...this.#done];
  }

  /** Chunks this instance lost to another (it stalled past the lease): they are not sent from here. */
  get lost(): number {
    return this.#lost;
  }

  /**
   * Renews the chunks held; those another instance took over are not sent from here any more. With
   * `release` (shutdown, after the last sends were answered and written) gives them up to the others.
   */
  async renew(release = false): Promise<number> {
    // Chunks done whose step is not written yet are renewed too: a step held back past the lease
    // (Redis away, a reset being handled) would otherwise let another instance, or this one, take
    // them over without their finals and send them again.
    const chunks = [...[...this.#held.values()].filter((h) => !h.lost).map((h) => h.chunk), ...this.#awaitingStep()];
    if (chunks.length === 0) return 0;
    const lost = await this.#queue.renew(chunks, release);
    this.#lose(lost.map((c) => c.entryId));
    return lost.length;
  }
}

/** The engine's retry index here, counted with the retries used before the contact came here. */
function globalRetry(local: number | null, used: number): number | null {
  if (local !== null) return local + used;
  return used > 0 ? used - 1 : null;
}

/** The engine's hand-out number: the last part of its message id `<submission>.<index>.<hand-out>`. */
function localHandout(messageId: string): number {
  return Number(messageId.slice(messageId.lastIndexOf('.') + 1));
}

function submissionOf(body: ChunkBody, contacts: QueuedContact[], maxRetries: number, ahead: boolean) {
  return {
    businessId: body.businessId,
    typeId: body.typeId,
    ...(body.campaignId !== undefined ? { campaignId: body.campaignId } : {}),
    ...(body.queueId !== undefined ? { queueId: body.queueId } : {}),
    ...(body.botId !== undefined ? { botId: body.botId } : {}),
    maxRetries,
    retryInterval: body.retryInterval,
    ...(body.deadline !== undefined ? { deadline: body.deadline } : {}),
    ...(body.notBefore !== undefined ? { notBefore: body.notBefore } : {}),
    ...(ahead ? { ahead } : {}),
    contacts,
  };
}
