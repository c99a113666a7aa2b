/**
 * The options of {@link RedisStore}, checked once into the settings the store runs on: every
 * option's meaning and default is here, so the store's own file holds only what it does with them.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { ArgumentError } from '../core/errors.js';
import type { StoreSnapshot } from '../core/limits/store.js';
import { describeValue } from '../core/problems.js';
import { systemClock } from '../runtime/system-clock.js';
import type { RedisCapacityEvent } from './health.js';
import type { RedisScriptClient } from './script-runner.js';

/** The client `RedisStore` needs: an ioredis `Redis` or `Cluster` satisfies it. */
export interface RedisStoreClient extends RedisScriptClient {
  /** ioredis' connection status; calls are not sent while it is 'reconnecting', 'close' or 'end'. */
  readonly status?: string;
  /** True for an ioredis `Cluster`: a lease call then carries numbers of one slot only. */
  readonly isCluster?: boolean;
}

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** An ioredis client (the host owns it: `close()` does not quit it). */
  readonly client: RedisStoreClient;
  /**
   * Prefix of every key. A number's keys are `<prefix>{<phone>}:…`: the hash tag keeps them in one
   * Redis Cluster slot.
   * @default 'sendpool:'
   */
  readonly prefix?: string;
  /**
   * The engine's clock (pass the same one to `createEngine`): lease expiry and `availableAt` are
   * answered in its time.
   * @default the system clock
   */
  readonly clock?: Clock;
  /**
   * Where the lease script reads time: 'redis' (`TIME`, one clock for the whole fleet) or 'clock'
   * (the `clock` option's reading, sent with each call: for simulations and tests whose instances
   * share one simulated clock).
   * @default 'redis'
   */
  readonly timeSource?: 'redis' | 'clock';
  /**
   * How fast the clock runs against real time (clock ms per real ms), for the store's own timers.
   * 1 with the system clock; a simulation running an hour in 12 s passes 300.
   * @default 1
   */
  readonly clockRate?: number;
  /**
   * Lease lifetime in clock ms: tokens of a lease are spent within this time of the charge or never.
   * The windows are charged as if every token went at the worst moment of that lifetime, so a
   * short lifetime wastes less of a window that was idle (see docs/decisions.md (many instances on Redis)).
   * @default 10_000
   */
  readonly leaseTtlMs?: number;
  /**
   * Lease lifetime for numbers with a per-second window (it must be well under a second, or the
   * worst-case charge would eat the window's refill).
   * @default 250
   */
  readonly leaseTtlPerSecondMs?: number;
  /**
   * A lease aims to cover this much of a number's recent demand (clock ms).
   * @default 1_000
   */
  readonly leaseHorizonMs?: number;
  /** Smallest lease asked for. @default 1 */
  readonly minLease?: number;
  /** Largest lease asked for. @default 100_000 */
  readonly maxLease?: number;
  /**
   * Active instances sharing the numbers (lease size is at most the burst divided by it).
   * `FleetSync.activeInstances` gives the live count.
   * @default () => 1
   */
  readonly instances?: () => number;
  /**
   * After Redis answered "not before t" for a number, wait at least this long (clock ms) before
   * asking again, so a saturated number costs a few calls per horizon, not one per token.
   * @default 250
   */
  readonly minRetryMs?: number;
  /**
   * How old (clock ms) Redis's "tokens left" may be when `available` reads it for `output`; older,
   * the number is asked again (a peek when nothing is wanted), so each instance's output follows
   * what every instance sent.
   * @default 1_000
   */
  readonly viewMaxAgeMs?: number;
  /**
   * What `availableAt` answers (from now, clock ms) while a lease for the number is on its way.
   * `onCapacity` wakes the engine sooner.
   * @default 20
   */
  readonly refillWaitMs?: number;
  /**
   * After a failed call, wait this long (clock ms) before trying Redis again.
   * @default 1_000
   */
  readonly downRetryMs?: number;
  /**
   * A call not answered within this many real ms counts as failed (its lease id is reused on the
   * next try, so if it did run, it is not charged twice).
   * @default 2_000
   */
  readonly callTimeoutMs?: number;
  /**
   * Numbers per lease call. On Redis Cluster a call carries only numbers whose keys share a slot
   * (see `cluster`), so this is rarely reached there.
   * @default 64
   */
  readonly numbersPerCall?: number;
  /**
   * The client is a Redis Cluster: every lease call carries numbers of one hash slot (a script's
   * keys must live in one slot).
   * @default `client.isCluster === true` (an ioredis `Cluster`)
   */
  readonly cluster?: boolean;
  /**
   * Fair shares of a saturated number: instances that ask for more than they get share what is
   * available in even parts (docs/scaling.md, "Fair shares"). `false` serves the first to ask.
   * @default true
   */
  readonly fairShares?: boolean;
  /**
   * How long (clock ms) after the moment it said it would ask again an instance still counts as
   * competing for a number: cover the timer's lateness and one round trip. An instance that died
   * holds its share this long at most.
   * @default 1_000
   */
  readonly fairGraceMs?: number;
  /**
   * The fleet's epoch id this host saw last (the `epoch` event's `epoch`, kept in the host's own
   * database): a Redis that comes back empty is then noticed even when every instance restarted
   * with it. Without it a marker missing at start is taken as a new Redis.
   * @default none
   */
  readonly knownEpoch?: string;
  /**
   * The fleet's epoch marker is read again before a lease call once this long (clock ms) has passed
   * since the last read; a number whose state is missing is checked at once regardless.
   * @default 1_000
   */
  readonly epochCheckMs?: number;
  /** How long a lease record is kept for idempotent retries and give-backs (clock ms). @default 60_000 */
  readonly leaseRecordMs?: number;
  /** Width of the 24 h counter's buckets in minutes; must divide 1,440. @default 60 */
  readonly bucketMinutes?: number;
  /** This instance's id, in lease ids. @default a random UUID */
  readonly instanceId?: string;
  /** Receives every event (data, never thrown). @default none */
  readonly onEvent?: (event: RedisCapacityEvent) => void;
  /**
   * Called with the phones of numbers that had run dry (the engine parked them) when tokens for
   * them arrived: wire it to something that makes the engine look again (`connectEngine`).
   * @default none
   */
  readonly onCapacity?: (phones: readonly string[]) => void;
}

/** Plain-JSON state of a {@link RedisStore}: the state lives in Redis; this is what was held. */
export interface RedisStoreSnapshot extends StoreSnapshot {
  readonly kind: 'redis';
  readonly prefix: string;
  /** Unspent leased tokens per phone at the time of the snapshot (informative). */
  readonly held: Readonly<Record<string, number>>;
}

function positive(api: string, value: number, integer = true): number {
  if (!(typeof value === 'number' && value > 0 && (!integer || Number.isInteger(value)))) {
    throw new ArgumentError(api, integer ? 'a whole number from 1 up' : 'a number above 0', describeValue(value));
  }
  return value;
}

/** The options checked, with their defaults applied (what `RedisStore` runs on). */
export interface StoreSettings {
  readonly client: RedisStoreClient;
  readonly prefix: string;
  readonly instanceId: string;
  readonly clock: Clock;
  /** The lease script reads the clock's time (sent with each call) rather than Redis `TIME`. */
  readonly clockTime: boolean;
  readonly clockRate: number;
  readonly ttl: number;
  readonly ttlSecond: number;
  readonly horizon: number;
  readonly viewMaxAge: number;
  readonly minLease: number;
  readonly maxLease: number;
  readonly instances: () => number;
  readonly minRetry: number;
  readonly refillWait: number;
  readonly downRetry: number;
  readonly callTimeout: number;
  readonly perCall: number;
  /** How long a lease record is kept (at least a lease's lifetime). */
  readonly keep: number;
  readonly bucketMs: number;
  readonly cluster: boolean;
  readonly fair: boolean;
  readonly fairGrace: number;
  readonly epochCheck: number;
  readonly knownEpoch: string;
  readonly onEvent: ((event: RedisCapacityEvent) => void) | undefined;
  readonly onCapacity: ((phones: readonly string[]) => void) | undefined;
}

/** Checks every option (an error names the first bad one) and applies the defaults. */
export function storeSettings(options: RedisStoreOptions): StoreSettings {
  if (options === null || typeof options !== 'object' || options.client === undefined) {
    throw new ArgumentError('new RedisStore(options.client)', 'an ioredis client', describeValue(options?.client));
  }
  const o = options;
  const clockTime = timeSourceOf(o) === 'clock';
  const clockRate = positiveOption(o, 'clockRate', 1, false);
  const ttl = positiveOption(o, 'leaseTtlMs', 10_000);
  return {
    client: o.client,
    prefix: o.prefix ?? 'sendpool:',
    instanceId: o.instanceId ?? randomUUID(),
    clock: o.clock ?? systemClock,
    clockTime,
    clockRate,
    ttl,
    ttlSecond: positiveOption(o, 'leaseTtlPerSecondMs', 250),
    horizon: positiveOption(o, 'leaseHorizonMs', 1_000),
    viewMaxAge: positiveOption(o, 'viewMaxAgeMs', 1_000),
    minLease: positiveOption(o, 'minLease', 1),
    maxLease: positiveOption(o, 'maxLease', 100_000),
    instances: o.instances ?? (() => 1),
    minRetry: positiveOption(o, 'minRetryMs', 250),
    refillWait: positiveOption(o, 'refillWaitMs', 20),
    downRetry: positiveOption(o, 'downRetryMs', 1_000),
    callTimeout: positiveOption(o, 'callTimeoutMs', 2_000),
    perCall: positiveOption(o, 'numbersPerCall', 64),
    keep: Math.max(ttl, positiveOption(o, 'leaseRecordMs', 60_000)),
    bucketMs: bucketMsOf(o),
    cluster: o.cluster ?? o.client.isCluster === true,
    fair: o.fairShares ?? true,
    fairGrace: positiveOption(o, 'fairGraceMs', 1_000),
    epochCheck: positiveOption(o, 'epochCheckMs', 1_000),
    knownEpoch: knownEpochOf(o),
    onEvent: o.onEvent,
    onCapacity: o.onCapacity,
  };
}

/** The options that are numbers. */
type NumberOption = { [K in keyof RedisStoreOptions]-?: NonNullable<RedisStoreOptions[K]> extends number ? K : never }[keyof RedisStoreOptions];

/** A number option above 0 (a whole number unless `integer` is false), `fallback` when not given. */
function positiveOption(options: RedisStoreOptions, key: NumberOption, fallback: number, integer = true): number {
  return positive(`new RedisStore(options.${key})`, options[key] ?? fallback, integer);
}

function timeSourceOf(options: RedisStoreOptions): 'redis' | 'clock' {
  const source = options.timeSource ?? 'redis';
  if (source !== 'redis' && source !== 'clock') {
    throw new ArgumentError('new RedisStore(options.timeSource)', 'one of "redis", "clock"', describeValue(source));
  }
  return source;
}

/** The 24 h window's bucket, in ms: a whole number of minutes dividing a day. */
function bucketMsOf(options: RedisStoreOptions): number {
  const minutes = options.bucketMinutes ?? 60;
  if (!Number.isInteger(minutes) || minutes < 1 || 1440 % minutes !== 0) {
    throw new ArgumentError('new RedisStore(options.bucketMinutes)', 'a whole number of minutes dividing 1440', describeValue(minutes));
  }
  return minutes * 60_000;
}

function knownEpochOf(options: RedisStoreOptions): string {
  if (options.knownEpoch !== undefined && (typeof options.knownEpoch !== 'string' || options.knownEpoch === '')) {
    throw new ArgumentError('new RedisStore(options.knownEpoch)', 'an epoch id (a non-empty string)', describeValue(options.knownEpoch));
  }
  return options.knownEpoch ?? '';
}
