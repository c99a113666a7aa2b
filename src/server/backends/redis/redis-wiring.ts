/**
 * The server on Redis, wired (docs/scaling.md), in the two halves buildServer needs:
 *
 * - `redisParts`, made first: the shared queue and this instance's side of it, what the fleet
 *   remembers of its sends (SharedMemory: the notifier's tracked messages and SMS, the channel's
 *   provider ids) and the fleet's campaign statistics (SharedStatistics), which the channel
 *   memory, the notifier and the dispatch worker are built over;
 * - `redisPersistence`, made once those exist: the persistence that writes each step to Redis and
 *   feeds the engine from the shared queue, with the shared webhook configurations, blocklist and
 *   phones.
 *
 * Separate from buildServer because this is the whole difference between one process and an
 * instance of a fleet: buildServer asks for it only when `redis` is set.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../core/clock.js';
import type { Engine } from '../../../core/engine.js';
import type { Persistence, WrittenEvent } from '../../ports/persistence.js';
import type { RandomSource } from '../../../events/random.js';
import type { BlocklistReplica } from '../../ports/blocklist.js';
import type { ChannelMemoryChangesSource, DispatchFeed, NotifierState, SmsQueue } from '../../ports/server-parts.js';
import { ContactIdBlocks } from './contact-ids.js';
import { ContactQueue } from './queue.js';
import { LocalStateFile } from './local-state.js';
import { RedisPersistence } from './redis-persistence.js';
import type { RedisServerOptions } from './options.js';
import { QueueReset } from './reset.js';
import { SharedBlocklist } from './shared-blocklist.js';
import { sharedDeadLetters } from './shared-dead-letters.js';
import { SharedDispatch } from './shared-dispatch.js';
import { SharedMemory, decodeRow, memoryPairs } from './shared-memory.js';
import { SharedIdempotency } from './shared-idempotency.js';
import { SharedPhones } from './shared-phones.js';
import { SharedStatistics } from './shared-statistics.js';
import { SharedWebhooks } from './shared-webhooks.js';

/** The shared queue's parts of an instance of the server on Redis. */
function sharedQueueParts(options: RedisServerOptions, engine: Engine) {
  const root = options.prefix ?? 'sendpool:';
  const prefix = `${root}{queue}:`;
  const queue = new ContactQueue({
    client: options.client,
    consumer: options.consumer ?? randomUUID(),
    prefix,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
  });
  const prefetch = options.prefetchContacts ?? 2_000;
  return { queue, prefetch, root, prefix, shared: new SharedDispatch(queue, engine, { prefetchContacts: prefetch }), ids: new ContactIdBlocks(options.client, `${prefix}contact-id`) };
}

/** ioredis statuses of a connection that was lost (reconnecting) or closed. */
const LOST_STATUSES: ReadonlySet<string> = new Set(['reconnecting', 'close', 'end']);

export interface RedisPartsDeps {
  /** The notifier's bound of tracked messages; the channel's memory holds twice as many ids. */
  readonly maxTracked: number;
  readonly batchIntervalMs: number;
  /** The campaign statistics' failure window (ms). */
  readonly failureWindowMs: number;
  readonly clock: Clock;
  readonly random: RandomSource;
  /** The persistence, once made (`redisPersistence`). */
  readonly durability: () => Persistence | undefined;
  readonly log: () => FastifyBaseLogger;
}

/** What an instance on Redis is built over, made before the parts that use it. */
export function redisParts(options: RedisServerOptions, engine: Engine, deps: RedisPartsDeps) {
  const parts = sharedQueueParts(options, engine);
  // What the server remembers of its sends is the fleet's: written with each step, read back by an
  // instance a provider's event reaches without it (shared-memory.ts).
  const memory = new SharedMemory(options.client, parts.prefix, 2 * deps.maxTracked);
  // Campaign statistics are the fleet's, written with each step (shared-statistics.ts).
  const statistics = new SharedStatistics({
    client: options.client,
    prefix: parts.prefix,
    batchIntervalMs: deps.batchIntervalMs,
    failureWindowMs: deps.failureWindowMs,
    random: deps.random,
    now: () => deps.clock.now(),
    schedule: () => deps.durability()?.schedule(),
    keep: () => deps.durability()!.commit(),
    onError: (e) => deps.log().warn({ err: e }, 'campaign statistics batch not taken: the next period tries again'),
  });
  return {
    ...parts,
    memory,
    statistics,
    /** The channel memory's recall: its keys are kept as `c:` + key. */
    recallChannel: async (keys: readonly string[]) => new Map([...(await memory.read(keys.map((k) => `c:${k}`)))].map(([k, v]) => [k.slice(2), v])),
    /** The channel memory's entries by key prefix, from both generations (read once, at start). */
    scanChannel: async (prefix: string) => new Map([...(await memory.scan(`c:${prefix}`))].map(([k, v]) => [k.slice(2), v])),
    /** The notifier's recall of tracked messages and SMS. */
    recallTracked: async (keys: readonly string[]) => new Map([...(await memory.read(keys))].map(([k, v]) => [k, decodeRow(k, v)])),
  };
}

export type RedisParts = ReturnType<typeof redisParts>;

export interface RedisPersistenceDeps {
  readonly notifier: NotifierState;
  readonly blocklist: BlocklistReplica;
  readonly channelMemory: ChannelMemoryChangesSource;
  readonly dispatch: DispatchFeed;
  readonly sms: SmsQueue;
  /** Webhook signing secrets the host set, by company id. */
  readonly secrets: Readonly<Record<number, string>>;
  /** Puts written webhook events in the outbox (runs to the notifier) and kicks the delivery worker. */
  readonly deliver: (events: readonly WrittenEvent[]) => void;
  readonly log: FastifyBaseLogger;
  /** Bounds of the fleet's dead letters. */
  readonly deadLetters: { readonly maxPerCompany: number; readonly maxAgeMs: number };
  /** The server's clock (what dead letters are aged by). */
  readonly now: () => number;
  /** `alreadySentWindowMs`: how long the fleet keeps a business's phones per type (0: not at all). */
  readonly alreadySentWindowMs: number;
}

/** The persistence of an instance on Redis, and what the routes read of the fleet's state. */
export function redisPersistence(options: RedisServerOptions, parts: RedisParts, deps: RedisPersistenceDeps) {
  const { notifier, channelMemory, dispatch, sms, log } = deps;
  const webhooks = new SharedWebhooks(options.client, `${parts.root}{config}:`, notifier, deps.secrets);
  // A Redis that comes back without the queue: noticed, counted, and what this instance holds,
  // accepted or configured written again (reset.ts).
  let reset: QueueReset | undefined;
  const sharedBlocklist = new SharedBlocklist(options.client, `${parts.root}{config}:`, deps.blocklist);
  // Every second: other instances' blocklist changes (one XREAD when there are none).
  const blocklistTimer = setInterval(() => void sharedBlocklist.sync().catch((e: unknown) => log.warn({ err: e }, 'blocklist not synchronised with Redis: trying again')), 1000);
  blocklistTimer.unref();
  // The first sync at once; a failure is the timer's to retry and log a second later.
  void sharedBlocklist.sync().catch(() => {});
  const persistence = new RedisPersistence({
    queue: parts.queue,
    shared: parts.shared,
    statistics: parts.statistics,
    memory: {
      take: () => {
        const pairs = memoryPairs(notifier.takeChanges(), channelMemory.takeChanges());
        return pairs.length > 0 ? { pairs, generation: parts.memory.generation } : undefined;
      },
      pending: () => notifier.changesPending || channelMemory.changed,
    },
    // Notifications for a company go to its shared configuration, signed with its shared secret.
    prepare: (companyIds) => webhooks.ensure(companyIds),
    periodic: () => webhooks.refresh(),
    takeOutcomes: () => dispatch.takeOutcomes(),
    deliver: deps.deliver,
    onFed: () => dispatch.kick(),
    sendSms: (items) => sms.enqueue(items),
    smsRoom: () => Math.max(0, Math.min(1000, sms.maxQueued - sms.queued - sms.inFlight)),
    onWriteError: (e) => log.warn({ err: e }, 'Redis step not written: trying again (intake and sending wait)'),
    deadLetters: deps.deadLetters,
    reset: () => reset,
    // Lost, not yet made: a client still making its first connection queues commands (start-up).
    connected: () => {
      const status = (options.client as { status?: unknown }).status;
      return typeof status !== 'string' || !LOST_STATUSES.has(status);
    },
  });
  reset = new QueueReset({
    queue: parts.queue,
    shared: parts.shared,
    webhooks,
    log: () => log,
    ...(options.stateFile !== undefined ? { state: new LocalStateFile(options.stateFile) } : {}),
    forgetHeldWork: () => persistence.forgetHeldWork(),
    ...(options.onReset ? { onReset: options.onReset } : {}),
  });
  // The fleet's dead letters: written with the step that acknowledges their events, replayed by any instance.
  const deadLetters = sharedDeadLetters({
    client: options.client,
    prefix: parts.prefix,
    outboxKey: parts.queue.outboxKey,
    outboxGroup: parts.queue.outboxGroup,
    ...deps.deadLetters,
    now: deps.now,
    stage: (d) => persistence.stageDeadLetter(d),
    kick: () => persistence.kick(),
  });
  const phones = new SharedPhones(options.client, parts.prefix, parts.queue.consumer, deps.alreadySentWindowMs);
  const context = {
    persistence,
    webhooks,
    blocklist: sharedBlocklist,
    phones,
    // Idempotency keys are the fleet's; a key a dead instance's request holds is taken over through the fence.
    idempotency: new SharedIdempotency(options.client, parts.prefix, parts.queue.consumer, (requests) => phones.void(requests)),
  };
  return {
    persistence,
    context,
    deadLetters,
    /** The fleet's gauges in /metrics. */
    metrics: {
      ...(options.syncState ? { syncState: options.syncState } : {}),
      stepFailures: () => persistence.failures,
      backlog: () => persistence.backlog,
      heldContacts: () => parts.shared.open,
      resets: () => reset.resets,
    },
    /** Nothing held here waits: no contact claimed and not final, no event not written. */
    idle: () => parts.shared.open === 0 && persistence.heldEvents === 0,
    /** Stops stepping and synchronising the blocklist (the last step is the host's `flush`). */
    stop: () => {
      persistence.stop();
      clearInterval(blocklistTimer);
    },
    /** Gives the work this instance holds back to the fleet (on close, after the last step). */
    release: () => persistence.release(),
  };
}
