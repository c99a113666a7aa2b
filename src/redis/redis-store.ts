/**
 * `RedisStore`: the engine's {@link Store} port over capacity shared by many instances in Redis.
 *
 * The engine's hot path never awaits, so `reserve` answers from tokens this instance leased
 * beforehand (a local balance per number, made of leases that expire). Leases are refilled in the
 * background: when a number's balance falls under half its lease size, or the engine asked for
 * more than it holds, the number joins the next lease call, which charges every window of every
 * number it carries in one Lua script at Redis' time (scripts/lease.ts). Tokens are charged before
 * they are spent, so the instances together never exceed a window.
 *
 * Every lease call also checks that Redis still holds what the fleet wrote (epoch.ts), and
 * instances competing for a saturated number get fair shares of it (the lease script's water level).
 *
 * Decisions (lease size, expiry, time, failure) are in docs/decisions.md (many instances on Redis).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { ArgumentError } from '../core/errors.js';
import type { NumberLimits, Store, StoreSnapshot } from '../core/limits/store.js';
import { describeValue } from '../core/problems.js';
import { systemClock } from '../runtime/system-clock.js';
import { EpochGuard, type RedisEpoch } from './epoch.js';
import { Health, errorText, type RedisCapacityEvent, type RedisStoreMetrics, type RedisStoreState } from './health.js';
import { keySlot } from './key-slot.js';
import { leaseSize } from './lease-sizing.js';
import { runScript, script, type RedisScriptClient } from './script-runner.js';
import { GIVE_BACK_SCRIPT } from './scripts/give-back.js';
import { LEASE_SCRIPT } from './scripts/lease.js';
import { withTimeout } from './with-timeout.js';

const LEASE = script(LEASE_SCRIPT);
const GIVE_BACK = script(GIVE_BACK_SCRIPT);

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

interface Lease {
  readonly id: string;
  readonly granted: number;
  remaining: number;
  returned: number;
  /** Clock time after which the lease may no longer be spent. */
  readonly expiresAt: number;
  /** The same moment in the lease script's time (what the other instances are told). */
  readonly scriptExpiresAt: number;
}

interface NumberState {
  readonly phone: string;
  readonly stateKey: string;
  perHour: number;
  per24h: number;
  perSecond: number;
  /** Live leases, oldest first (oldest expires first). */
  readonly leases: Lease[];
  bal: number;
  nextExpiry: number;
  /** Tokens the engine asked for since the last lease call. */
  asked: number;
  /** Redis Cluster slot of the number's keys. */
  readonly slot: number;
  /** The latest grantedAt Redis answered for the number (-1 before): a state older than it was rolled back. */
  seenT: number;
  /** What the last answer said about the state (lease script code): 0 fine, else check the epoch first. */
  check: number;
  /** The lease script's `confirm` argument: '' until an epoch check allowed creating or adopting the state. */
  confirm: string;
  /** Clock time of the latest answer that found the state, and of the latest register refresh for it. */
  aliveAt: number;
  registeredAt: number;
  demand: number;
  lastCallAt: number;
  size: number;
  queued: boolean;
  inFlight: boolean;
  /** Lease id of a call that failed: reused so a call that did run is not charged twice. */
  retryId: string | undefined;
  /** Do not call for this number before this clock time (Redis said so, or Redis is down). */
  notBefore: number;
  /** Redis' answer "tokens left" at the last call. */
  left: number;
  /** Unspent tokens the other instances said they hold, at the last call. */
  others: number;
  /** What this instance told Redis it holds at its last call (its balance then, with the grant). */
  told: number;
  answered: boolean;
  /** The engine was told to wait: tell `onCapacity` when tokens arrive. */
  parked: boolean;
  /** The engine wanted more than the balance since the last call. */
  short: boolean;
  /** The balance sent with the call on its way (`told` once answered, with the grant). */
  telling: number;
  readonly seen: string[];
  /** What the last `reserve` took, lease by lease, so `release` puts tokens back where they were. */
  readonly took: Lease[];
  readonly tookCount: number[];
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

export class RedisStore implements Store {
  readonly prefix: string;
  readonly instanceId: string;
  readonly #client: RedisStoreClient;
  readonly #clock: Clock;
  readonly #clockTime: boolean;
  readonly #clockRate: number;
  readonly #ttl: number;
  readonly #ttlSecond: number;
  readonly #horizon: number;
  readonly #viewMaxAge: number;
  readonly #minLease: number;
  readonly #maxLease: number;
  readonly #instances: () => number;
  readonly #minRetry: number;
  readonly #refillWait: number;
  readonly #downRetry: number;
  readonly #callTimeout: number;
  readonly #perCall: number;
  readonly #keep: number;
  readonly #bucketMs: number;
  readonly #cluster: boolean;
  readonly #fair: boolean;
  readonly #fairGrace: number;
  readonly #epochCheck: number;
  readonly #epoch: EpochGuard;
  readonly #onEvent: ((e: RedisCapacityEvent) => void) | undefined;
  readonly #onCapacity: ((phones: readonly string[]) => void) | undefined;
  readonly #health: Health;
  readonly #states: NumberState[] = [];
  readonly #handles = new Map<string, number>();
  readonly #queue: NumberState[] = [];
  #flushScheduled = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;
  #tellTimer: ReturnType<typeof setTimeout> | undefined;
  #leaseSeq = 0;
  /**
   * Part of every lease id that changes with each process: a restarted instance with the same
   * `instanceId` must not reuse ids, or Redis would answer it with its previous life's grants.
   */
  readonly #boot = randomUUID().slice(0, 8);
  #closed = false;
  #inFlightCalls = new Set<Promise<void>>();
  readonly #metrics: RedisStoreMetrics = { roundTrips: 0, leases: 0, tokensLeased: 0, tokensReturned: 0, tokensExpired: 0, failures: 0, callbackErrors: 0, up: true, resets: 0 };

  constructor(options: RedisStoreOptions) {
    if (options === null || typeof options !== 'object' || options.client === undefined) {
      throw new ArgumentError('new RedisStore(options.client)', 'an ioredis client', describeValue(options?.client));
    }
    this.#client = options.client;
    this.prefix = options.prefix ?? 'sendpool:';
    this.instanceId = options.instanceId ?? randomUUID();
    this.#clock = options.clock ?? systemClock;
    const source = options.timeSource ?? 'redis';
    if (source !== 'redis' && source !== 'clock') {
      throw new ArgumentError('new RedisStore(options.timeSource)', 'one of "redis", "clock"', describeValue(source));
    }
    this.#clockTime = source === 'clock';
    this.#clockRate = positive('new RedisStore(options.clockRate)', options.clockRate ?? 1, false);
    this.#ttl = positive('new RedisStore(options.leaseTtlMs)', options.leaseTtlMs ?? 10_000);
    this.#ttlSecond = positive('new RedisStore(options.leaseTtlPerSecondMs)', options.leaseTtlPerSecondMs ?? 250);
    this.#horizon = positive('new RedisStore(options.leaseHorizonMs)', options.leaseHorizonMs ?? 1_000);
    this.#viewMaxAge = positive('new RedisStore(options.viewMaxAgeMs)', options.viewMaxAgeMs ?? 1_000);
    this.#minLease = positive('new RedisStore(options.minLease)', options.minLease ?? 1);
    this.#maxLease = positive('new RedisStore(options.maxLease)', options.maxLease ?? 100_000);
    this.#instances = options.instances ?? (() => 1);
    this.#minRetry = positive('new RedisStore(options.minRetryMs)', options.minRetryMs ?? 250);
    this.#refillWait = positive('new RedisStore(options.refillWaitMs)', options.refillWaitMs ?? 20);
    this.#downRetry = positive('new RedisStore(options.downRetryMs)', options.downRetryMs ?? 1_000);
    this.#callTimeout = positive('new RedisStore(options.callTimeoutMs)', options.callTimeoutMs ?? 2_000);
    this.#perCall = positive('new RedisStore(options.numbersPerCall)', options.numbersPerCall ?? 64);
    this.#keep = Math.max(this.#ttl, positive('new RedisStore(options.leaseRecordMs)', options.leaseRecordMs ?? 60_000));
    const minutes = options.bucketMinutes ?? 60;
    if (!Number.isInteger(minutes) || minutes < 1 || 1440 % minutes !== 0) {
      throw new ArgumentError('new RedisStore(options.bucketMinutes)', 'a whole number of minutes dividing 1440', describeValue(minutes));
    }
    this.#bucketMs = minutes * 60_000;
    this.#cluster = options.cluster ?? options.client.isCluster === true;
    this.#fair = options.fairShares ?? true;
    this.#fairGrace = positive('new RedisStore(options.fairGraceMs)', options.fairGraceMs ?? 1_000);
    this.#epochCheck = positive('new RedisStore(options.epochCheckMs)', options.epochCheckMs ?? 1_000);
    if (options.knownEpoch !== undefined && (typeof options.knownEpoch !== 'string' || options.knownEpoch === '')) {
      throw new ArgumentError('new RedisStore(options.knownEpoch)', 'an epoch id (a non-empty string)', describeValue(options.knownEpoch));
    }
    this.#onEvent = options.onEvent;
    this.#onCapacity = options.onCapacity;
    this.#health = new Health((e) => {
      this.#metrics.up = e.type === 'redis-up';
      this.#emit(e);
    });
    // A state lives a day and two buckets after its last call, plus the lease record time.
    this.#epoch = new EpochGuard(this.#client, this.prefix, options.knownEpoch ?? '', 86_400_000 + 2 * this.#bucketMs + this.#keep, (e) =>
      e.type === 'redis-reset' ? this.#emitReset(e) : this.#emit(e),
    );
  }

  // ---------------------------------------------------------------- the Store port

  open(key: string, limits: NumberLimits, now: number): number {
    const perSecond = limits.perSecond ?? 0;
    let h = this.#handles.get(key);
    if (h !== undefined) {
      const st = this.#states[h]!;
      // New limits may open capacity at once: Redis is asked again rather than waited for.
      if (st.perHour !== limits.perHour || st.per24h !== limits.per24h || st.perSecond !== perSecond) st.notBefore = 0;
      st.perHour = limits.perHour;
      st.per24h = limits.per24h;
      st.perSecond = perSecond;
      return h;
    }
    h = this.#states.length;
    this.#handles.set(key, h);
    this.#states.push({
      phone: key,
      stateKey: `${this.prefix}{${key}}:s`,
      perHour: limits.perHour,
      per24h: limits.per24h,
      perSecond,
      leases: [],
      bal: 0,
      nextExpiry: Infinity,
      asked: 0,
      demand: 0,
      lastCallAt: now,
      size: 0,
      queued: false,
      inFlight: false,
      retryId: undefined,
      notBefore: 0,
      left: 0,
      others: 0,
      told: 0,
      telling: 0,
      answered: false,
      parked: false,
      short: false,
      seen: [],
      took: [],
      tookCount: [],
      slot: keySlot(`{${key}}`),
      seenT: -1,
      check: 0,
      confirm: '',
      aliveAt: -Infinity,
      registeredAt: -Infinity,
    });
    return h;
  }

  /**
   * What the fleet can send now: tokens this instance holds for the number, what Redis had left for
   * everyone at the last answer, and what the other instances said they hold unspent (a view for
   * `output`; the first call asks Redis in the background).
   */
  available(handle: number, now: number): number {
    const st = this.#states[handle]!;
    if (now >= st.nextExpiry) this.#expire(st, now);
    // Redis's "left" moves with every instance's sends: asked again once it is older than the view's
    // bound, so every instance's output follows the fleet's (a peek, nothing charged).
    if (!st.answered || now - st.aliveAt >= this.#viewMaxAge) this.#enqueue(st, now);
    return st.bal + st.left + st.others;
  }

  reserve(handle: number, want: number, now: number): number {
    const st = this.#states[handle]!;
    if (now >= st.nextExpiry) this.#expire(st, now);
    st.asked += want;
    let g = st.bal < want ? st.bal : want;
    st.took.length = 0;
    st.tookCount.length = 0;
    if (g > 0) {
      st.bal -= g;
      let left = g;
      for (const lease of st.leases) {
        if (lease.remaining === 0) continue;
        const t = lease.remaining < left ? lease.remaining : left;
        lease.remaining -= t;
        st.took.push(lease);
        st.tookCount.push(t);
        left -= t;
        if (left === 0) break;
      }
    } else {
      g = 0;
    }
    if (g < want) st.short = true;
    if (st.short || st.bal * 2 < st.size) this.#enqueue(st, now);
    else if (g > 0 && this.#tellTimer === undefined) this.#armTell();
    return g;
  }

  release(handle: number, count: number, now: number): void {
    if (count <= 0) return;
    const st = this.#states[handle]!;
    if (now >= st.nextExpiry) this.#expire(st, now);
    // Back into the leases the last reservation took them from, newest first (the engine uses
    // what it reserved in order): each token keeps its own lease's lifetime and 24 h bucket.
    let left = count;
    for (let k = st.took.length - 1; k >= 0 && left > 0; k--) {
      const lease = st.took[k]!;
      const t = st.tookCount[k]! < left ? st.tookCount[k]! : left;
      if (lease.expiresAt <= now) continue;
      lease.remaining += t;
      st.tookCount[k]! -= t;
      st.bal += t;
      left -= t;
    }
  }

  availableAt(handle: number, count: number, now: number): number {
    const st = this.#states[handle]!;
    if (now >= st.nextExpiry) this.#expire(st, now);
    if (st.bal >= count) return now;
    if (count > Math.min(st.perHour, st.per24h) || (st.perSecond > 0 && count > st.perSecond)) return Infinity;
    st.parked = true;
    st.short = true;
    if (st.notBefore > now) {
      this.#arm(st.notBefore);
      return st.notBefore + this.#refillWait;
    }
    this.#enqueue(st, now);
    return now + this.#refillWait;
  }

  snapshot(): RedisStoreSnapshot {
    const held: Record<string, number> = {};
    for (const st of this.#states) if (st.bal > 0) held[st.phone] = st.bal;
    return { kind: 'redis', prefix: this.prefix, held };
  }

  /** Nothing to load: the state lives in Redis. A snapshot of another kind is reported, not loaded. */
  restore(snapshot: StoreSnapshot, now: number): void {
    if (snapshot?.kind !== 'redis') this.#emit({ type: 'snapshot-ignored', at: now, kind: String(snapshot?.kind) });
  }

  // ---------------------------------------------------------------- beyond the port

  /** Counters for metrics (a copy). */
  metrics(): RedisStoreMetrics {
    return { ...this.#metrics };
  }

  /**
   * Where the store stands with Redis, for the host's health check: 'connecting' until a call first
   * succeeds, 'ready', or 'lost' while calls fail (no new tokens: it fails closed).
   */
  get state(): RedisStoreState {
    return this.#health.state;
  }

  /**
   * The fleet's epoch as last read (undefined before the first lease call answered). `lostAt` set:
   * Redis lost state, and every number fails closed until its windows have passed that time.
   */
  get epoch(): RedisEpoch | undefined {
    return this.#epoch.epoch;
  }

  /** Tokens this instance holds for `phone` now (unspent, unexpired). */
  held(phone: string): number {
    const h = this.#handles.get(phone);
    if (h === undefined) return 0;
    const st = this.#states[h]!;
    const now = this.#clock.now();
    if (now >= st.nextExpiry) this.#expire(st, now);
    return st.bal;
  }

  /**
   * Tells Redis, for every number whose unspent tokens changed since its last call, what this
   * instance holds now (a peek, nothing charged), so the other instances' output counts it. A timer
   * calls it a view's age (`viewMaxAgeMs`) after the instance spent without calling Redis.
   */
  tell(): void {
    const now = this.#clock.now();
    let later = false;
    for (const st of this.#states) {
      if (!st.answered) continue;
      if (now >= st.nextExpiry) this.#expire(st, now);
      if (st.bal === st.told) continue;
      // A number Redis asked to wait for is told with its next call; look again then.
      if (st.notBefore > now) later = true;
      else this.#enqueue(st, now);
    }
    if (later && this.#tellTimer === undefined) this.#armTell();
  }

  /** Resolves when no lease call is queued or on its way (tests, benchmarks, orderly shutdown). */
  async settle(): Promise<void> {
    for (let i = 0; i < 100 && (this.#flushScheduled || this.#inFlightCalls.size > 0); i++) {
      if (this.#flushScheduled) await Promise.resolve();
      await Promise.all([...this.#inFlightCalls]);
      await new Promise<void>((r) => setImmediate(r));
    }
  }

  /**
   * Gives the unspent tokens of `phone` back to Redis (e.g. the number was paused here) and stops
   * leasing for it until the engine asks again.
   */
  async giveBack(phone: string): Promise<number> {
    const h = this.#handles.get(phone);
    if (h === undefined) return 0;
    const st = this.#states[h]!;
    st.short = false;
    st.parked = false;
    return this.#giveBackNumber(st);
  }

  /**
   * Stops leasing and gives every unspent token back to Redis. Does not quit the client.
   * Resolves with the tokens given back.
   */
  async close(): Promise<number> {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#tellTimer !== undefined) clearTimeout(this.#tellTimer);
    this.#timer = undefined;
    this.#tellTimer = undefined;
    await this.settle();
    const counts = await Promise.all(this.#states.map((st) => this.#giveBackNumber(st)));
    return counts.reduce((a, b) => a + b, 0);
  }

  // ---------------------------------------------------------------- leasing

  #ttlOf(st: NumberState): number {
    return st.perSecond > 0 ? Math.min(this.#ttl, this.#ttlSecond) : this.#ttl;
  }

  #emit(e: RedisCapacityEvent): void {
    try {
      this.#onEvent?.(e);
    } catch {
      // A host listener's bug must not stop leasing (nor escape as an unhandled rejection).
      this.#metrics.callbackErrors++;
    }
  }

  #wakeHost(phones: string[]): void {
    try {
      this.#onCapacity?.(phones);
    } catch {
      this.#metrics.callbackErrors++;
    }
  }

  #expire(st: NumberState, now: number): void {
    const leases = st.leases;
    let k = 0;
    let lost = 0;
    while (k < leases.length && leases[k]!.expiresAt <= now) lost += leases[k++]!.remaining;
    if (k > 0) leases.splice(0, k);
    st.nextExpiry = leases[0]?.expiresAt ?? Infinity;
    if (lost > 0) {
      st.bal -= lost;
      this.#metrics.tokensExpired += lost;
      this.#emit({ type: 'lease-expired', at: now, phone: st.phone, tokens: lost });
    }
  }

  #enqueue(st: NumberState, now: number): void {
    if (st.queued || st.inFlight || this.#closed) return;
    if (st.notBefore > now) {
      this.#arm(st.notBefore);
      return;
    }
    st.queued = true;
    this.#queue.push(st);
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      queueMicrotask(() => this.#flush());
    }
  }

  /** One timer for the store: fires at the earliest `notBefore` of a number that wants tokens. */
  #arm(at: number): void {
    if (this.#closed || at >= this.#timerAt) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = at;
    const delay = Math.max(0, (at - this.#clock.now()) / this.#clockRate);
    this.#timer = setTimeout(() => this.#fire(), delay);
    this.#timer.unref?.();
  }

  /** A view's age after spending, tell Redis what is left (the other instances' output counts it). */
  #armTell(): void {
    if (this.#closed) return;
    this.#tellTimer = setTimeout(() => {
      this.#tellTimer = undefined;
      this.tell();
    }, this.#viewMaxAge / this.#clockRate);
    this.#tellTimer.unref?.();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.#clock.now();
    // Numbers due within half a retry period go in the same call: one round trip for many.
    const soon = now + this.#minRetry / 2;
    let next = Infinity;
    for (const st of this.#states) {
      if (!st.short && !(st.answered && st.bal * 2 < st.size && st.asked > 0)) continue;
      if (st.notBefore <= soon) {
        st.notBefore = 0;
        this.#enqueue(st, now);
      } else if (st.notBefore < next) next = st.notBefore;
    }
    if (next < Infinity) this.#arm(next);
  }

  #flush(): void {
    this.#flushScheduled = false;
    const batch = this.#queue.splice(0);
    if (!this.#cluster) {
      for (let i = 0; i < batch.length; i += this.#perCall) this.#call(batch.slice(i, i + this.#perCall));
      return;
    }
    // On a cluster a script's keys must share a slot: one call per slot (each call its own node).
    const bySlot = new Map<number, NumberState[]>();
    for (const st of batch) {
      const group = bySlot.get(st.slot);
      if (group === undefined) bySlot.set(st.slot, [st]);
      else group.push(st);
    }
    for (const group of bySlot.values()) {
      for (let i = 0; i < group.length; i += this.#perCall) this.#call(group.slice(i, i + this.#perCall));
    }
  }

  #call(numbers: NumberState[]): void {
    const now = this.#clock.now();
    const ids: string[] = [];
    const wants: number[] = [];
    const instances = Math.max(1, this.#instances());
    for (const st of numbers) {
      st.queued = false;
      st.inFlight = true;
      const elapsed = Math.max(1, now - st.lastCallAt);
      const rate = st.asked / elapsed;
      st.demand = st.demand === 0 ? rate : (st.demand + rate) / 2;
      st.lastCallAt = now;
      const wantsTokens = st.short || (st.asked > 0 && st.bal * 2 < st.size) || st.parked;
      st.asked = 0;
      const size = leaseSize({
        perHour: st.perHour,
        per24h: st.per24h,
        perSecond: st.perSecond,
        demandPerMs: st.demand,
        instances,
        horizonMs: this.#horizon,
        minLease: this.#minLease,
        maxLease: this.#maxLease,
      });
      st.size = size;
      const want = wantsTokens ? Math.max(0, size - st.bal) || this.#minLease : 0;
      const id = want > 0 ? (st.retryId ?? `${this.instanceId}:${this.#boot}:${++this.#leaseSeq}`) : 'peek';
      st.retryId = want > 0 ? id : undefined;
      ids.push(id);
      wants.push(want);
    }
    const done = this.#send(numbers, ids, wants)
      .then(
        ({ reply, sentAt }) => this.#answered(numbers, ids, wants, reply, sentAt),
        (error: unknown) => this.#failed(numbers, error),
      )
      // A malformed reply (or any bug answering one) counts as a failed call; the promise kept
      // in #inFlightCalls never rejects, so close() and settle() never throw for it.
      .catch((error: unknown) => this.#failed(numbers, error));
    this.#inFlightCalls.add(done);
    void done.finally(() => this.#inFlightCalls.delete(done));
  }

  /** Checks the epoch when due (or asked for by the last answer), then sends the lease call. */
  async #send(numbers: NumberState[], ids: string[], wants: number[]): Promise<{ reply: number[]; sentAt: number }> {
    const status = this.#client.status;
    if (status === 'reconnecting' || status === 'close' || status === 'end') throw new Error(`Redis connection is ${status}`);
    if (this.#epoch.due(this.#clock.now(), this.#epochCheck) || numbers.some((st) => st.check !== 0)) await this.#checkEpoch(numbers);
    const now = this.#clock.now();
    const keys: string[] = [];
    const fleet = Math.max(1, Math.floor(this.#instances()));
    const args: (string | number)[] = [
      this.#clockTime ? now : '',
      this.#epoch.id,
      this.#bucketMs,
      this.#keep,
      this.#epoch.lostAt,
      this.instanceId,
      this.#fairGrace,
      this.#minRetry,
      fleet,
      this.#fair ? '1' : '',
    ];
    numbers.forEach((st, i) => {
      if (now >= st.nextExpiry) this.#expire(st, now);
      // What this instance holds unspent, so the others' output counts it.
      let until = 0;
      for (const lease of st.leases) if (lease.remaining > 0 && lease.scriptExpiresAt > until) until = lease.scriptExpiresAt;
      st.telling = st.bal;
      keys.push(st.stateKey, `${this.prefix}{${st.phone}}:l:${ids[i]!}`);
      args.push(wants[i]!, st.perHour, st.perSecond, st.per24h, ids[i]!, this.#ttlOf(st), Math.max(0, st.seenT), st.confirm, st.bal, until);
    });
    this.#metrics.roundTrips++;
    const reply = (await withTimeout(runScript(this.#client, LEASE, keys, args), this.#callTimeout)) as number[];
    return { reply, sentAt: now };
  }

  /**
   * Reads the epoch marker; for numbers whose state the last answer found missing, of another epoch,
   * or older than this instance saw, decides how the next call may create or adopt it.
   */
  async #checkEpoch(numbers: NumberState[]): Promise<void> {
    const ask = numbers.filter((st) => st.check === 1);
    const r = await withTimeout(this.#epochCheckFor(ask), this.#callTimeout);
    const at = this.#clock.now();
    const missing: string[] = [];
    const rolledBack: string[] = [];
    const since = this.#epoch.epoch?.since ?? Infinity;
    for (const st of numbers) {
      if (st.check === 1) {
        // Lost when seen alive in this epoch within a state's lifetime: by any instance (the
        // register), or by this one (a state written after Redis' last snapshot is in no register).
        const lost = r.lost.get(st.phone) === true || (st.seenT >= 0 && st.seenT >= since && r.now - st.seenT < this.#epoch.life);
        if (lost) missing.push(st.phone);
        st.confirm = lost ? String(r.now) : '0';
      } else if (st.check === 2) {
        st.confirm = '0';
      } else if (st.check === 3) {
        rolledBack.push(st.phone);
        st.confirm = String(r.now);
      }
      st.check = 0;
    }
    if (missing.length > 0) this.#emitReset({ type: 'redis-reset', at, scope: 'numbers', phones: missing, reason: 'missing', lostAt: r.now });
    if (rolledBack.length > 0) this.#emitReset({ type: 'redis-reset', at, scope: 'numbers', phones: rolledBack, reason: 'rolled-back', lostAt: r.now });
  }

  #emitReset(e: RedisCapacityEvent): void {
    this.#metrics.resets++;
    this.#emit(e);
  }

  /** The check being gathered: the calls of one flush (one per slot on a cluster) share one. */
  #epochBatch: { readonly ask: Set<NumberState>; done: Promise<{ now: number; lost: Map<string, boolean> }> } | undefined;
  #epochRunning: Promise<unknown> = Promise.resolve();

  /** One epoch check for `ask` and the calls that join it before it is sent (after the check on its way, if any). */
  #epochCheckFor(ask: readonly NumberState[]): Promise<{ now: number; lost: Map<string, boolean> }> {
    let batch = this.#epochBatch;
    if (batch === undefined) {
      const created = { ask: new Set<NumberState>(), done: undefined as unknown as Promise<{ now: number; lost: Map<string, boolean> }> };
      created.done = this.#epochRunning.then(() => {
        if (this.#epochBatch === created) this.#epochBatch = undefined;
        return this.#runEpochCheck([...created.ask]);
      });
      this.#epochRunning = created.done.catch(() => undefined);
      this.#epochBatch = batch = created;
    }
    for (const st of ask) batch.ask.add(st);
    return batch.done;
  }

  async #runEpochCheck(ask: readonly NumberState[]): Promise<{ now: number; lost: Map<string, boolean> }> {
    const at = this.#clock.now();
    // The register learns which numbers' states exist, at most twice a bucket for each.
    const alive: NumberState[] = [];
    for (const st of this.#states) {
      if (st.aliveAt > st.registeredAt + this.#bucketMs / 2) alive.push(st);
      if (alive.length === 1000) break;
    }
    this.#metrics.roundTrips++;
    const r = await this.#epoch.check(
      this.#clockTime ? at : '',
      at,
      ask.map((st) => st.phone),
      alive.map((st) => [st.phone, st.seenT] as const),
    );
    for (const st of alive) st.registeredAt = st.aliveAt;
    return { now: r.now, lost: new Map(ask.map((st, k) => [st.phone, r.lost[k] === true])) };
  }

  #answered(numbers: NumberState[], ids: string[], wants: number[], reply: number[], sentAt: number): void {
    const recv = this.#clock.now();
    this.#health.succeeded(recv);
    const redisNow = Number(reply[0]);
    // Map Redis time to the clock: with 'clock' time they are the same; with 'redis' time the
    // answer's moment is known to within the round trip, which is taken off lease lifetimes.
    const rtt = this.#clockTime ? 0 : recv - sentAt;
    const toLocal = (t: number): number => (this.#clockTime ? t : recv + (t - redisNow));
    const woken: string[] = [];
    const again: NumberState[] = [];
    for (let i = 0; i < numbers.length; i++) {
      const st = numbers[i]!;
      const id = ids[i]!;
      const granted = Number(reply[1 + 6 * i]);
      const grantedAt = Number(reply[2 + 6 * i]);
      const retryAt = Number(reply[3 + 6 * i]);
      const code = Number(reply[5 + 6 * i]);
      st.inFlight = false;
      if (code !== 0) {
        // Nothing was read nor written: check the epoch, then ask again (same lease id).
        st.check = code;
        again.push(st);
        continue;
      }
      st.left = Number(reply[4 + 6 * i]);
      st.others = Number(reply[6 + 6 * i]);
      st.told = st.telling + granted;
      st.retryId = undefined;
      st.answered = true;
      st.confirm = '';
      st.aliveAt = recv;
      if (grantedAt > st.seenT) st.seenT = grantedAt;
      if (granted > 0 && !st.seen.includes(id)) {
        st.seen.push(id);
        if (st.seen.length > 8) st.seen.shift();
        const expiresAt = toLocal(grantedAt + this.#ttlOf(st)) - rtt;
        this.#metrics.leases++;
        this.#metrics.tokensLeased += granted;
        this.#emit({ type: 'lease', at: recv, phone: st.phone, leaseId: id, granted, grantedAt });
        if (expiresAt > recv) {
          st.leases.push({ id, granted, remaining: granted, returned: 0, expiresAt, scriptExpiresAt: grantedAt + this.#ttlOf(st) });
          st.bal += granted;
          if (st.nextExpiry === Infinity) st.nextExpiry = expiresAt;
        } else {
          this.#metrics.tokensExpired += granted;
          this.#emit({ type: 'lease-expired', at: recv, phone: st.phone, tokens: granted });
        }
      }
      if (granted < wants[i]!) {
        st.notBefore = retryAt < 0 ? Infinity : Math.max(toLocal(retryAt), recv + this.#minRetry);
      } else {
        st.notBefore = 0;
        st.short = false;
      }
      if (st.bal > 0) {
        st.short = st.short && granted < wants[i]!;
        if (st.parked) {
          st.parked = false;
          woken.push(st.phone);
        }
      }
      if ((st.short || st.parked) && st.notBefore < Infinity) this.#arm(st.notBefore);
    }
    for (const st of again) {
      st.notBefore = 0;
      this.#enqueue(st, recv);
    }
    if (woken.length > 0) this.#wakeHost(woken);
  }

  #failed(numbers: NumberState[], error: unknown): void {
    const now = this.#clock.now();
    const text = errorText(error);
    this.#metrics.failures++;
    this.#emit({ type: 'lease-failed', at: now, numbers: numbers.length, error: text });
    this.#health.failed(now, text);
    for (const st of numbers) {
      st.inFlight = false;
      st.notBefore = now + this.#downRetry;
      if (st.short || st.parked) this.#arm(st.notBefore);
    }
  }

  async #giveBackNumber(st: NumberState): Promise<number> {
    const now = this.#clock.now();
    if (now >= st.nextExpiry) this.#expire(st, now);
    const leases = st.leases.filter((l) => l.remaining > 0);
    st.bal = 0;
    for (const l of st.leases) {
      l.returned += l.remaining;
      l.remaining = 0;
    }
    let total = 0;
    // Newest first: the newest lease is the one the rate windows can take back exactly.
    for (const lease of leases.reverse()) {
      try {
        const back = Number(
          await withTimeout(
            runScript(
              this.#client,
              GIVE_BACK,
              [st.stateKey, `${this.prefix}{${st.phone}}:l:${lease.id}`],
              [this.#clockTime ? this.#clock.now() : '', this.#ttlOf(st), lease.returned, lease.id, this.#epoch.id, this.instanceId],
            ),
            this.#callTimeout,
          ),
        );
        this.#metrics.roundTrips++;
        total += back;
      } catch (error) {
        this.#emit({ type: 'lease-failed', at: this.#clock.now(), numbers: 1, error: errorText(error) });
      }
    }
    if (total > 0) {
      this.#metrics.tokensReturned += total;
      this.#emit({ type: 'returned', at: this.#clock.now(), phone: st.phone, tokens: total });
    }
    return total;
  }
}
