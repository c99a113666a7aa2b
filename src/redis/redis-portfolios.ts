/**
 * `RedisPortfolios`: the engine's {@link PortfolioSource} over portfolio limits shared by many
 * instances in Redis (docs/scaling.md, "Portfolios on Redis").
 *
 * The engine never awaits, so `admit` answers from what this instance holds:
 * - a recipient this instance knows is covered in Redis until a later time (it recorded a message
 *   to it, or asked and found it counting) costs nothing;
 * - any other message takes one slot (room for one new recipient) of a lease granted beforehand;
 *   without a slot it is refused (the queue waits, `portfolio-limit`), and the recipient joins the
 *   next lease call, which grants slots and extends recipients that already count.
 * Spent slots are recorded in the background (scripts/portfolio.ts, record script): a slot spent
 * on a recipient that already counted comes back as room; one spent on a new recipient becomes it.
 * Unspent slots are given back when their lease ends here. Capacity that arrives after a refusal
 * wakes the engine through `onCapacity` (engine.portfolioCapacityChanged).
 *
 * Exact: slots are charged in Redis before they are handed out, and an instance that dies leaves
 * its slots charged for 24 h after their lease's end (the safe side: Redis cannot know what it sent).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { ArgumentError } from '../core/errors.js';
import type { PortfolioSource } from '../core/portfolio-types.js';
import { describeValue } from '../core/problems.js';
import { systemClock } from '../runtime/system-clock.js';
import type { RedisStoreClient } from './redis-store-options.js';
import { runScript, script } from './script-runner.js';
import {
  PORTFOLIO_LEASE_SCRIPT,
  PORTFOLIO_RECORD_SCRIPT,
  decodePortfolioLease,
  decodePortfolioRecord,
  encodePortfolioLease,
  encodePortfolioRecord,
  portfolioKeys,
  type PortfolioRecordItem,
} from './scripts/portfolio.js';
import { withTimeout } from './with-timeout.js';

const LEASE = script(PORTFOLIO_LEASE_SCRIPT);
const RECORD = script(PORTFOLIO_RECORD_SCRIPT);

/** Options of {@link RedisPortfolios}. */
export interface RedisPortfoliosOptions {
  /** An ioredis client (the host owns it: `close()` does not quit it). */
  readonly client: RedisStoreClient;
  /** Prefix of every key: a portfolio's keys are `<prefix>{pf:<id>}:…`. @default 'sendpool:' */
  readonly prefix?: string;
  /** The engine's clock (pass the same one to `createEngine`). @default the system clock */
  readonly clock?: Clock;
  /** Where the scripts read time: 'redis' (`TIME`) or 'clock' (the `clock` option's, for tests and simulations). @default 'redis' */
  readonly timeSource?: 'redis' | 'clock';
  /** How fast the clock runs against real time (clock ms per real ms), for the timers. @default 1 */
  readonly clockRate?: number;
  /** This instance's id, part of every lease id. @default a random UUID */
  readonly instanceId?: string;
  /** How long a lease's slots may be spent, in clock ms; unspent ones are given back then. @default 30_000 */
  readonly leaseTtlMs?: number;
  /** Slots asked for per lease call (fewer when the portfolio has less room). @default 10 */
  readonly slotsPerLease?: number;
  /**
   * How long, in clock ms, a recipient recorded (or found counting) stays free for this instance's
   * next messages: it counts that much longer than its 24 h in Redis (the price of messaging it
   * again without asking Redis first). @default 600_000 (10 minutes)
   */
  readonly coverMs?: number;
  /** Shortest wait between two lease calls for a portfolio that found no room, or after a failed call, in clock ms. @default 1_000 */
  readonly retryMs?: number;
  /** A call not answered within this many real ms counts as failed. @default 5_000 */
  readonly callTimeoutMs?: number;
  /** Called with the ids of portfolios that got slots or covered recipients after a refusal: wake the engine (`portfolioCapacityChanged`). */
  readonly onCapacity?: (portfolioIds: readonly string[]) => void;
  /** Called with each failed call's error (the call is retried). */
  readonly onError?: (error: unknown) => void;
}

interface Lease {
  readonly id: string;
  readonly granted: number;
  /** Next unspent slot (1-based); above `granted`: all spent. */
  next: number;
  /** Local time the slots stop being spendable. */
  readonly expiresAt: number;
}

interface PortfolioState {
  readonly id: string;
  readonly keys: ReturnType<typeof portfolioKeys>;
  limit: number;
  readonly leases: Lease[];
  /** Recipients free to message until a local time. */
  readonly covered: Map<string, number>;
  sweepAt: number;
  /** Spent and unspent slots to record. */
  records: PortfolioRecordItem[];
  recording: boolean;
  /** Recipients refused for want of a slot: the next lease call extends those that count. */
  readonly wanted: Set<string>;
  call: 'idle' | 'queued' | 'in-flight';
  short: boolean;
  /** A message asked for room since the last call: the next call may lease ahead (a view only peeks). */
  wants: boolean;
  answered: boolean;
  /** Local time of the last answer: a view older than a retry period is asked again. */
  answeredAt: number;
  /** Local time before which no lease call is made. */
  notBefore: number;
  used: number;
  retryId: string | undefined;
}

function positive(where: string, value: number | undefined, fallback: number, zero = false): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < 0 || (!zero && v === 0)) throw new ArgumentError(`new RedisPortfolios(options.${where})`, zero ? 'a number, 0 or more' : 'a number above 0', describeValue(value));
  return v;
}

export class RedisPortfolios implements PortfolioSource {
  readonly prefix: string;
  readonly instanceId: string;
  readonly #client: RedisStoreClient;
  readonly #clock: Clock;
  readonly #clockTime: boolean;
  readonly #clockRate: number;
  readonly #ttl: number;
  readonly #size: number;
  readonly #cover: number;
  readonly #retry: number;
  readonly #timeout: number;
  readonly #onCapacity: ((ids: readonly string[]) => void) | undefined;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #states = new Map<string, PortfolioState>();
  readonly #boot = randomUUID().slice(0, 8);
  #seq = 0;
  #closed = false;
  readonly #inFlight = new Set<Promise<void>>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;

  constructor(options: RedisPortfoliosOptions) {
    if (options?.client === undefined || typeof options.client.evalsha !== 'function')
      throw new ArgumentError('new RedisPortfolios(options.client)', 'an ioredis client', describeValue(options?.client));
    const source = options.timeSource ?? 'redis';
    if (source !== 'redis' && source !== 'clock') throw new ArgumentError('new RedisPortfolios(options.timeSource)', 'one of "redis", "clock"', describeValue(source));
    this.#client = options.client;
    this.prefix = options.prefix ?? 'sendpool:';
    this.instanceId = options.instanceId ?? randomUUID();
    this.#clock = options.clock ?? systemClock;
    this.#clockTime = source === 'clock';
    this.#clockRate = positive('clockRate', options.clockRate, 1);
    this.#ttl = positive('leaseTtlMs', options.leaseTtlMs, 30_000);
    this.#size = Math.max(1, Math.floor(positive('slotsPerLease', options.slotsPerLease, 10)));
    this.#cover = positive('coverMs', options.coverMs, 600_000, true);
    this.#retry = positive('retryMs', options.retryMs, 1_000);
    this.#timeout = positive('callTimeoutMs', options.callTimeoutMs, 5_000);
    this.#onCapacity = options.onCapacity;
    this.#onError = options.onError;
  }

  // ---------------------------------------------------------------- the PortfolioSource port

  admit(id: string, limit: number, uniqueRecipients: boolean, recipient: string | undefined, now: number): boolean {
    const p = this.#state(id, limit, now);
    const known = uniqueRecipients && recipient !== undefined;
    if (known) {
      const until = p.covered.get(recipient);
      if (until !== undefined && now < until) return true;
    }
    const lease = p.leases.find((l) => l.next <= l.granted && l.expiresAt > now);
    if (lease === undefined) {
      p.short = true;
      if (known && p.wanted.size < 1000) p.wanted.add(recipient);
      p.wants = true;
      this.#enqueue(p, now);
      return false;
    }
    const slot = `~${lease.id}:${lease.next++}`;
    if (known) {
      // The slot covers messages until its lease's end; the record makes the recipient cover them after.
      p.covered.set(recipient, Math.max(p.covered.get(recipient) ?? 0, lease.expiresAt));
      this.#record(p, [recipient, slot]);
    }
    if (this.#balance(p, now) * 2 < this.#size) {
      p.wants = true;
      this.#enqueue(p, now);
    }
    return true;
  }

  /**
   * What this instance holds plus the room Redis last reported. The other instances spend room
   * without telling: a view older than a retry period asks Redis again (a peek: it leases nothing,
   * so an idle instance whose view is read, by `output` say, takes no slot from one that sends).
   */
  room(id: string, limit: number, now: number): number {
    const p = this.#state(id, limit, now);
    if (!p.answered || now - p.answeredAt >= this.#retry) this.#enqueue(p, now);
    return Math.max(0, limit - p.used) + this.#balance(p, now);
  }

  used(id: string, now: number): number {
    const p = this.#states.get(id);
    if (p === undefined) return 0;
    this.#expire(p, now);
    return p.used;
  }

  /**
   * Now with a slot in hand; else a retry period ahead: room comes back by time, and also when
   * another instance gives slots back or records a recipient that already counted, which Redis
   * cannot announce. The engine's retry asks again (one lease call per retry period at most).
   */
  nextRoomAt(id: string, limit: number, now: number): number {
    const p = this.#state(id, limit, now);
    if (limit < 1) return Infinity;
    if (this.#balance(p, now) > 0) return now;
    return Math.max(now + this.#retry, p.notBefore);
  }

  // ---------------------------------------------------------------- beyond the port

  /** Unspent slots this instance holds for portfolio `id` now. */
  held(id: string): number {
    const p = this.#states.get(id);
    return p === undefined ? 0 : this.#balance(p, this.#clock.now());
  }

  /** Resolves when no call is queued or on its way (tests, orderly shutdown). */
  async settle(): Promise<void> {
    // Calls queued for a microtask start before the first look.
    await Promise.resolve();
    for (let i = 0; i < 100 && this.#inFlight.size > 0; i++) {
      await Promise.all([...this.#inFlight]);
      await new Promise<void>((r) => setImmediate(r));
    }
  }

  /** Stops leasing, records what was handed out and gives every unspent slot back. Does not quit the client. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.settle();
    for (const p of this.#states.values()) {
      for (const l of p.leases.splice(0)) for (let i = l.next; i <= l.granted; i++) p.records.push(['', `~${l.id}:${i}`]);
      if (p.records.length > 0) this.#flushRecords(p);
    }
    await this.settle();
  }

  // ---------------------------------------------------------------- internals

  #state(id: string, limit: number, now: number): PortfolioState {
    let p = this.#states.get(id);
    if (p === undefined) {
      p = {
        id,
        keys: portfolioKeys(this.prefix, id),
        limit,
        leases: [],
        covered: new Map(),
        sweepAt: 0,
        records: [],
        recording: false,
        wanted: new Set(),
        call: 'idle',
        short: false,
        wants: false,
        answered: false,
        answeredAt: 0,
        notBefore: 0,
        used: 0,
        retryId: undefined,
      };
      this.#states.set(id, p);
    } else if (p.limit !== limit) {
      // A new limit may open room at once: Redis is asked again rather than waited for.
      p.limit = limit;
      p.notBefore = 0;
    }
    this.#expire(p, now);
    return p;
  }

  #balance(p: PortfolioState, now: number): number {
    let n = 0;
    for (const l of p.leases) if (l.expiresAt > now) n += l.granted - l.next + 1;
    return n;
  }

  /** Leases that ended here give their unspent slots back. */
  #expire(p: PortfolioState, now: number): void {
    let ended = false;
    for (let i = p.leases.length - 1; i >= 0; i--) {
      const l = p.leases[i]!;
      if (l.expiresAt > now) continue;
      p.leases.splice(i, 1);
      for (let k = l.next; k <= l.granted; k++) p.records.push(['', `~${l.id}:${k}`]);
      ended = ended || l.next <= l.granted;
    }
    if (ended) this.#flushRecords(p);
  }

  #toRedisTime(): number | undefined {
    return this.#clockTime ? this.#clock.now() : undefined;
  }

  #track(done: Promise<void>): void {
    this.#inFlight.add(done);
    void done.finally(() => this.#inFlight.delete(done));
  }

  #error(error: unknown): void {
    try {
      this.#onError?.(error);
    } catch {
      // A host listener's bug must not stop the calls.
    }
  }

  #record(p: PortfolioState, item: PortfolioRecordItem): void {
    p.records.push(item);
    if (p.records.length === 1 && !p.recording) queueMicrotask(() => this.#flushRecords(p));
  }

  #flushRecords(p: PortfolioState): void {
    if (p.recording || p.records.length === 0) return;
    const items = p.records.splice(0);
    p.recording = true;
    const sentAt = this.#clock.now();
    const done = withTimeout(runScript(this.#client, RECORD, [p.keys.recipients, p.keys.state], encodePortfolioRecord(this.#toRedisTime(), this.#cover, items)), this.#timeout)
      .then((reply) => {
        const { now: redisNow, covered } = decodePortfolioRecord(reply);
        const toLocal = this.#toLocal(sentAt, redisNow);
        items.forEach(([who], i) => {
          const c = covered[i] ?? 0;
          if (who !== '' && c > 0) p.covered.set(who, Math.max(p.covered.get(who) ?? 0, toLocal(c)));
        });
        this.#sweep(p);
      })
      .catch((error: unknown) => {
        // Recording again changes nothing more: the items go back in front, tried at the next flush.
        p.records = [...items, ...p.records];
        this.#error(error);
        this.#arm(this.#clock.now() + this.#retry);
      })
      .finally(() => {
        p.recording = false;
        if (p.records.length > 0 && !this.#closed) queueMicrotask(() => this.#flushRecords(p));
      });
    this.#track(done);
  }

  /** Redis time of an answer to local time, less the round trip (expiries and covers only shrink). */
  #toLocal(sentAt: number, redisNow: number): (t: number) => number {
    if (this.#clockTime) return (t) => t;
    const recv = this.#clock.now();
    const rtt = recv - sentAt;
    return (t) => recv + (t - redisNow) - rtt;
  }

  /** Drops recipients no longer covered, once the map has doubled since the last sweep. */
  #sweep(p: PortfolioState): void {
    if (p.covered.size < Math.max(1024, p.sweepAt * 2)) return;
    const now = this.#clock.now();
    for (const [who, until] of p.covered) if (until <= now) p.covered.delete(who);
    p.sweepAt = p.covered.size;
  }

  #enqueue(p: PortfolioState, now: number): void {
    if (p.call !== 'idle' || this.#closed) return;
    // Too soon after the last call: the engine's retry (`nextRoomAt`) asks again.
    if (p.notBefore > now) return;
    p.call = 'queued';
    queueMicrotask(() => this.#call(p));
  }

  #arm(at: number): void {
    if (this.#closed || at >= this.#timerAt) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, (at - this.#clock.now()) / this.#clockRate));
    this.#timer.unref?.();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.#clock.now();
    for (const p of this.#states.values()) {
      this.#expire(p, now);
      if (p.records.length > 0) this.#flushRecords(p);
    }
  }

  #call(p: PortfolioState): void {
    if (this.#closed) {
      p.call = 'idle';
      return;
    }
    p.call = 'in-flight';
    const sentAt = this.#clock.now();
    this.#expire(p, sentAt);
    const balance = this.#balance(p, sentAt);
    const want = p.short || (p.wants && balance * 2 < this.#size) ? Math.max(1, this.#size - balance) : 0;
    p.wants = false;
    const leaseId = want > 0 ? (p.retryId ?? `${this.instanceId}:${this.#boot}:${++this.#seq}`) : `${this.instanceId}:${this.#boot}:peek`;
    p.retryId = want > 0 ? leaseId : undefined;
    const extend = [...p.wanted];
    const args = encodePortfolioLease({ time: this.#toRedisTime(), limit: p.limit, want, leaseId, ttl: this.#ttl, keep: this.#ttl + 60_000, cover: this.#ttl + this.#cover, extend });
    const done = withTimeout(runScript(this.#client, LEASE, [p.keys.recipients, p.keys.state, p.keys.lease(leaseId)], args), this.#timeout)
      .then((reply) => {
        const r = decodePortfolioLease(reply);
        const recv = this.#clock.now();
        const toLocal = this.#toLocal(sentAt, r.now);
        p.call = 'idle';
        p.answered = true;
        p.answeredAt = recv;
        p.retryId = undefined;
        p.used = r.used;
        let woke = false;
        if (r.granted > 0) {
          p.leases.push({ id: leaseId, granted: r.granted, next: 1, expiresAt: toLocal(r.grantedAt + this.#ttl) });
          woke = true;
        }
        extend.forEach((who, i) => {
          p.wanted.delete(who);
          const c = r.covered[i] ?? 0;
          if (c > 0) {
            p.covered.set(who, Math.max(p.covered.get(who) ?? 0, toLocal(c)));
            woke = true;
          }
        });
        // Short or not, the next call waits for the engine to ask again (its retry, `nextRoomAt`).
        p.notBefore = r.granted < want ? recv + this.#retry : 0;
        p.short = false;
        if (woke && this.#onCapacity !== undefined) {
          try {
            this.#onCapacity([p.id]);
          } catch (error) {
            this.#error(error);
          }
        }
      })
      .catch((error: unknown) => {
        p.call = 'idle';
        // The demand stays: the retry asks for the slots again, under the same lease id.
        if (want > 0) p.wants = true;
        p.notBefore = this.#clock.now() + this.#retry;
        this.#error(error);
      });
    this.#track(done);
  }
}
