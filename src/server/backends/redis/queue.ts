/**
 * The contact queue shared by every instance of the server on Redis: accepted contacts wait in
 * Redis Streams, a stream per flow (a company's campaign, or a request without one), in chunks of a
 * few dozen contacts; each instance claims chunks through one consumer group, sends them with its
 * own engine, and records, before a message goes to the channel, the hand-out it makes, and, with
 * each final outcome, that outcome and its notifications. A chunk whose every contact is final is
 * acknowledged and deleted.
 *
 * Why this holds what a 202 promised when an instance dies: the chunk stays pending under the dead
 * instance's name; a holder alive renews its chunks every third of the lease, so a chunk idle for
 * the whole lease belongs to nobody and any instance takes it over (`XAUTOCLAIM`) with its progress:
 * final contacts are not sent again, a contact handed out without an outcome goes again under the
 * same message id (its hand-out count was written before it was sent), the rest go as queued.
 *
 * Why a stream per flow: `XREADGROUP` over many streams with `COUNT 1` takes a chunk from each, so
 * a small campaign enqueued after a huge one is claimed in the same round, on any instance, instead
 * of behind it (the engine then serves flows round-robin within the instance).
 *
 * Every key carries the hash tag of the prefix (`{queue}` by default): the scripts are atomic in one
 * Redis Cluster slot. Each is a file of scripts/ with its codec; this class names their arguments.
 * docs/scaling.md ("The server on Redis") has the picture and the failure table.
 *
 * Keys (`<p>` is the prefix with its tag, e.g. `sendpool:{queue}:`):
 *   <p>active             set of the streams that may hold work
 *   <p>s:<flow>           a stream per flow (a campaign of a company, or a request without one);
 *                         an entry is a chunk of contacts, field `b` its JSON body
 *   <p>p:<flow>:<entry>   a chunk's progress hash: `h<i>` hand-outs of contact i written before it
 *                         went to the channel, `e<i>` hand-outs whose attempt ended without a
 *                         final (a retry to come), `f<i>` its final state
 *   <p>outbox, <p>sms     streams of webhook events and of SMS, written with the step that made them
 *   <p>backlog            the contacts of the chunks not done (the intake bound of every instance)
 *   <p>instances          sorted set of the live instances (scripts/instances.ts)
 *   <p>epoch, <p>rb:…     the epoch marker and the rebuilt marks (reset.ts)
 */
import type { RedisScriptClient } from '../../../redis/script-runner.js';
import type { ChunkBody, ChunkProgress, ClaimedChunk, RebuiltChunk } from './chunks.js';
import { stepSections, type QueueStep } from './queue-step.js';
import { callScript } from './scripts/codec.js';
import { INSTANCES } from './scripts/instances.js';
import { QUEUE_EPOCH } from './scripts/queue-epoch.js';
import { REBUILD } from './scripts/rebuild.js';
import { RECLAIM } from './scripts/reclaim.js';
import { RENEW_CHUNKS } from './scripts/renew-chunks.js';
import { RENEW_WORK } from './scripts/renew-work.js';
import type { Pair } from './scripts/sections.js';
import { STEP } from './scripts/step.js';
import { STILL_QUEUED } from './scripts/still-queued.js';
import { ServerOptionsError } from '../../ports/errors.js';
import { problem } from '../../../core/problems.js';

export type { ChunkBody, ChunkProgress, ClaimedChunk, QueuedContact, RebuiltChunk } from './chunks.js';

/** The commands the queue uses (an ioredis `Redis` or `Cluster`). */
export interface QueueClient extends RedisScriptClient {
  smembers(key: string): Promise<string[]>;
  /** Any command (ioredis' `call`): `XREADGROUP`'s typings are too narrow for a variable list of streams. */
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
}

/** A webhook event (or an SMS) an instance holds. */
export interface ClaimedEvent {
  readonly entryId: string;
  readonly json: string;
}

/** Options of {@link ContactQueue}. */
export interface ContactQueueOptions {
  readonly client: QueueClient;
  /** This instance's consumer name (unique per process). */
  readonly consumer: string;
  /**
   * Key prefix; must contain the hash tag every queue key shares.
   * @default 'sendpool:{queue}:'
   */
  readonly prefix?: string;
  /**
   * How long a chunk may go without its holder renewing it before another instance takes it over,
   * in ms. Holders renew every third of it.
   * @default 30_000
   */
  readonly leaseMs?: number;
  /** Most streams read by one claim. @default 64 */
  readonly streamsPerClaim?: number;
}

const GROUP = 'dispatch';
const OUTBOX_GROUP = 'webhooks';
const SMS_GROUP = 'sms';

/** The shared work besides contacts: webhook events to deliver, SMS to send. */
export type WorkKind = 'events' | 'sms';

export class ContactQueue {
  readonly #client: QueueClient;
  readonly #prefix: string;
  #instances = 1;
  readonly #consumer: string;
  readonly leaseMs: number;
  readonly #streamsPerClaim: number;
  /** Where the next claim starts in the active streams (rotates, so every flow gets its turn). */
  #offset = 0;
  /**
   * The queue's epoch id this instance knows ('' before its first look: reset.ts): steps and
   * renewals carry it, and Redis refuses them (`RESET`) when its marker is gone or another.
   */
  epoch = '';

  constructor(options: ContactQueueOptions) {
    this.#client = options.client;
    this.#prefix = options.prefix ?? 'sendpool:{queue}:';
    if (!/\{[^}]+\}/.test(this.#prefix)) {
      throw new ServerOptionsError([problem('redis.prefix', 'a prefix with a hash tag ({…}): every queue key must share one Redis Cluster slot', this.#prefix)]);
    }
    this.#consumer = options.consumer;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.#streamsPerClaim = options.streamsPerClaim ?? 64;
  }

  get activeKey(): string {
    return `${this.#prefix}active`;
  }

  get outboxKey(): string {
    return `${this.#prefix}outbox`;
  }

  /** The shared outbox's consumer group. */
  get outboxGroup(): string {
    return OUTBOX_GROUP;
  }

  /** The queue's epoch marker (reset.ts, scripts/queue-epoch.ts). */
  get epochKey(): string {
    return `${this.#prefix}epoch`;
  }

  /** The key prefix (with its hash tag). */
  get prefix(): string {
    return this.#prefix;
  }

  get smsKey(): string {
    return `${this.#prefix}sms`;
  }

  #work(kind: WorkKind): { key: string; group: string } {
    return kind === 'events' ? { key: this.outboxKey, group: OUTBOX_GROUP } : { key: this.smsKey, group: SMS_GROUP };
  }

  /** The stream of a flow: a campaign of a company, or a request without a campaign. */
  streamOf(body: Pick<ChunkBody, 'companyId' | 'campaignId' | 'requestId'>): string {
    return `${this.#prefix}s:${body.campaignId !== undefined ? `c${body.companyId}.${body.campaignId}` : `r${body.requestId}`}`;
  }

  progressKey(chunk: Pick<ClaimedChunk, 'stream' | 'entryId'>): string {
    return `${this.#prefix}p:${this.#flowOf(chunk.stream)}:${chunk.entryId}`;
  }

  /** Writes chunks and their events in one script: all of them, or (it throws) none. */
  async enqueue(chunks: readonly ChunkBody[], events: readonly string[] = []): Promise<string[]> {
    return (await this.step({ chunks, events })).ids;
  }

  /** Contacts accepted fleet-wide whose chunks are not done yet. */
  async backlog(): Promise<number> {
    return Number((await this.#client.call('GET', `${this.#prefix}backlog`)) ?? 0);
  }

  /** Claims new chunks: at most one from each of up to `streamsPerClaim` flows, in rotation. */
  async claim(): Promise<ClaimedChunk[]> {
    const active = (await this.#client.smembers(this.activeKey)).sort();
    if (active.length === 0) return [];
    const n = Math.min(active.length, this.#streamsPerClaim);
    const start = this.#offset % active.length;
    this.#offset = start + n;
    const picked: string[] = [];
    for (let i = 0; i < n; i++) picked.push(active[(start + i) % active.length]!);
    let reply: unknown;
    try {
      reply = await this.#client.call('XREADGROUP', 'GROUP', GROUP, this.#consumer, 'COUNT', 1, 'STREAMS', ...picked, ...picked.map(() => '>'));
    } catch (e) {
      // A stream deleted between SMEMBERS and here lost its group with it: nothing to claim there.
      if (e instanceof Error && e.message.startsWith('NOGROUP')) return [];
      throw e;
    }
    const out: ClaimedChunk[] = [];
    for (const [stream, entries] of streamsOf(reply)) {
      for (const [entryId, fields] of entries) out.push(chunkOf(stream, entryId, fields[1]!, []));
    }
    return out;
  }

  /** Takes over chunks whose holder stopped renewing them for the lease, with their progress. */
  async reclaim(max = 64): Promise<ClaimedChunk[]> {
    const active = await this.#client.smembers(this.activeKey);
    if (active.length === 0) return [];
    const entries = await callScript(this.#client, RECLAIM, { streams: active, group: GROUP, consumer: this.#consumer, leaseMs: this.leaseMs, max, progressPrefix: this.#prefix });
    return entries.map((e) => chunkOf(e.stream, e.entryId, e.body, e.progress));
  }

  /**
   * Renews the chunks held (by stream); answers those another instance took over meanwhile. With
   * `release`, gives them up instead: they look idle for the whole lease, so the next instance that
   * looks takes them over (an orderly shutdown).
   */
  async renew(held: readonly ClaimedChunk[], release = false): Promise<ClaimedChunk[]> {
    const byStream = new Map<string, ClaimedChunk[]>();
    for (const c of held) {
      const list = byStream.get(c.stream);
      if (list) list.push(c);
      else byStream.set(c.stream, [c]);
    }
    const lost: ClaimedChunk[] = [];
    await Promise.all(
      [...byStream].map(async ([stream, chunks]) => {
        const args = { stream, group: GROUP, consumer: this.#consumer, idleMs: release ? this.leaseMs : 0, epochKey: this.epochKey, epochId: this.epoch, entryIds: chunks.map((c) => c.entryId) };
        const ids = new Set(await callScript(this.#client, RENEW_CHUNKS, args));
        for (const c of chunks) if (ids.has(c.entryId)) lost.push(c);
      }),
    );
    return lost;
  }

  /**
   * Records one step in one script: all of it, or (it throws) nothing. Progress of a chunk this
   * instance no longer holds is not recorded (its new holder finishes it): such chunks are answered
   * in `lost`, with the new chunks' entry ids, and `chunkJson`: the JSON each chunk was written as
   * (the accepted journal writes the same, reset.ts).
   */
  async step(step: QueueStep): Promise<{ readonly ids: string[]; readonly lost: string[]; readonly voided?: string[]; readonly chunkJson?: readonly string[] }> {
    const args = stepSections(step, {
      prefix: this.#prefix,
      activeKey: this.activeKey,
      outboxKey: this.outboxKey,
      smsKey: this.smsKey,
      epochKey: this.epochKey,
      epochId: this.epoch,
      groups: { dispatch: GROUP, outbox: OUTBOX_GROUP, sms: SMS_GROUP },
      consumer: this.#consumer,
      streamOf: (body) => this.streamOf(body),
      progressKey: (chunk) => this.progressKey(chunk),
    });
    const empty = [args.requests, args.chunks, args.progress, args.delivered, args.smsAccepted, args.smsAnswered, args.reports, args.memory, args.deadLetters, args.events];
    if (empty.every((list) => list.length === 0)) return { ids: [], lost: [] };
    const result = await callScript(this.#client, STEP, args);
    if (result.outcome === 'voided') return { ids: [], lost: [], voided: [...result.requests] };
    const written = result.outcome === 'applied' ? result : { ids: [], lost: [] };
    return { ids: [...written.ids], lost: [...written.lost], chunkJson: args.chunks.map((c) => c.body) };
  }

  /** Reads the queue's epoch marker, creating it with `candidate` when missing. */
  async readEpoch(candidate: string): Promise<{ readonly id: string; readonly created: boolean }> {
    return callScript(this.#client, QUEUE_EPOCH, { key: this.epochKey, candidate });
  }

  /**
   * Writes chunks again after a reset (scripts/rebuild.ts), each once fleet-wide: `hold` ones stay
   * pending under this instance (it keeps sending them), the others wait for any instance. `marks`:
   * chunks that need no writing (done here) but must not be written by their acceptor either.
   * Answers the new entry id of each chunk, null when another instance wrote it already. `epoch`: the
   * new marker's id (the queue's `epoch` is set only once the chunks held here carry their new ids,
   * so no step names an old entry under the new epoch).
   */
  async rebuild(epoch: string, chunks: readonly RebuiltChunk[], marks: readonly Pick<ClaimedChunk, 'stream' | 'entryId'>[] = []): Promise<(string | null)[]> {
    const ids = await callScript(this.#client, REBUILD, {
      prefix: this.#prefix,
      active: this.activeKey,
      epoch: this.epochKey,
      epochId: epoch,
      group: GROUP,
      consumer: this.#consumer,
      leaseMs: this.leaseMs,
      chunks: chunks.map((c) => ({
        stream: c.stream,
        mark: this.#markOf(c),
        progressHead: `p:${this.#flowOf(c.stream)}:`,
        hold: c.hold,
        open: c.open,
        body: JSON.stringify(c.body),
        fields: c.progress === undefined ? [] : progressFields(c.progress),
      })),
      marks: marks.map((m) => this.#markOf(m)),
    });
    return [...ids];
  }

  #markOf(c: Pick<ClaimedChunk, 'stream' | 'entryId'>): string {
    return `rb:${this.#flowOf(c.stream)}:${c.entryId}`;
  }

  /** A stream's flow: its key after `<p>s:`. */
  #flowOf(stream: string): string {
    return stream.slice(this.#prefix.length + 2);
  }

  /** Which of these entries are still in their streams (fenced by the epoch: `RESET` when Redis lost them). */
  async stillQueued(entries: readonly Pick<ClaimedChunk, 'stream' | 'entryId'>[]): Promise<boolean[]> {
    if (entries.length === 0) return [];
    return callScript(this.#client, STILL_QUEUED, { epochKey: this.epochKey, epochId: this.epoch, entries });
  }

  /**
   * The instances whose heartbeat had not lapsed at this one's last (itself included; 1 before
   * its first): what a fair share of the backlog divides by.
   */
  get instances(): number {
    return this.#instances;
  }

  /** This instance's consumer name. */
  get consumer(): string {
    return this.#consumer;
  }

  /**
   * This instance's heartbeat `<p>alive:<consumer>`, renewed every renewal period for a lease
   * (a phone reservation of a dead instance is taken over once it lapses: shared-phones.ts);
   * `stop` deletes it (an orderly shutdown).
   */
  async heartbeat(stop = false): Promise<void> {
    const key = `${this.#prefix}alive:${this.#consumer}`;
    this.#instances = Math.max(1, await callScript(this.#client, INSTANCES, { key: `${this.#prefix}instances`, consumer: this.#consumer, leaseMs: this.leaseMs, stop }));
    if (stop) return void (await this.#client.call('DEL', key));
    // On one Redis the heartbeat says this instance's connection (its CLIENT ID): another instance
    // sees this one dead as soon as that connection is gone (shared-phones.ts, deadInstances). A
    // Cluster has a connection per node: its heartbeat says none (alive until it lapses).
    let beat = '1';
    if ((this.#client as { isCluster?: boolean }).isCluster !== true) {
      try {
        beat = `id:${String(await this.#client.call('CLIENT', 'ID'))}`;
      } catch {
        // CLIENT refused (a managed Redis): the heartbeat alone says it lives.
      }
    }
    await this.#client.call('SET', key, beat, 'PX', this.leaseMs);
  }

  /** Claims up to `count` webhook events (or SMS) not claimed by anyone yet. */
  async claimWork(kind: WorkKind, count: number): Promise<ClaimedEvent[]> {
    const { key, group } = this.#work(kind);
    let reply: unknown;
    try {
      reply = await this.#client.call('XREADGROUP', 'GROUP', group, this.#consumer, 'COUNT', count, 'STREAMS', key, '>');
    } catch (e) {
      // Nothing was ever written there: no stream, no group.
      if (e instanceof Error && e.message.startsWith('NOGROUP')) return [];
      throw e;
    }
    return streamsOf(reply).flatMap(([, entries]) => entries.map(([entryId, fields]) => ({ entryId, json: fields[1]! })));
  }

  /** Takes over events (or SMS) whose holder stopped renewing them for the lease. */
  async reclaimWork(kind: WorkKind, max = 1000): Promise<ClaimedEvent[]> {
    if (max <= 0) return [];
    const { key, group } = this.#work(kind);
    const entries = await callScript(this.#client, RECLAIM, { streams: [key], group, consumer: this.#consumer, leaseMs: this.leaseMs, max });
    return entries.map((e) => ({ entryId: e.entryId, json: e.body }));
  }

  /** Renews (or, with `release`, gives up) the events or SMS held; answers the entry ids another instance took over meanwhile. */
  async renewWork(kind: WorkKind, entryIds: readonly string[], release = false): Promise<string[]> {
    if (entryIds.length === 0) return [];
    const { key, group } = this.#work(kind);
    return callScript(this.#client, RENEW_WORK, { stream: key, group, consumer: this.#consumer, idleMs: release ? this.leaseMs : 0, entryIds });
  }
}

type StreamEntries = [string, [string, string[]][]];

/** A stream read's answer (`XREAD`, `XREADGROUP`): a list of [stream, entries] (RESP2), or a map given flat as stream, entries, … (RESP3). */
export function streamsOf(reply: unknown): StreamEntries[] {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  if (Array.isArray(reply[0])) return reply as StreamEntries[];
  const out: StreamEntries[] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) out.push([reply[i] as string, reply[i + 1] as StreamEntries[1]]);
  return out;
}

function chunkOf(stream: string, entryId: string, body: string, progress: readonly Pair[]): ClaimedChunk {
  const handouts = new Map<number, number>();
  const ended = new Map<number, number>();
  const finals = new Map<number, string>();
  for (const [field, value] of progress) {
    const index = Number(field.slice(1));
    if (field[0] === 'h') handouts.set(index, Number(value));
    else if (field[0] === 'e') ended.set(index, Number(value));
    else if (field[0] === 'f') finals.set(index, value);
  }
  return { stream, entryId, body: JSON.parse(body) as ChunkBody, handouts, ended, finals };
}

/** A chunk's progress as its hash's fields (the inverse of `chunkOf`'s reading). */
export function progressFields(p: ChunkProgress): Pair[] {
  const fields: Pair[] = [];
  for (const [i, n] of p.handouts) fields.push([`h${i}`, String(n)]);
  for (const [i, n] of p.ended) fields.push([`e${i}`, String(n)]);
  for (const [i, f] of p.finals) fields.push([`f${i}`, f]);
  return fields;
}
