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
 *
 * The tokens of a number are kept by number-ledger.ts (pure), the rest of its state by
 * number-state.ts, the options by redis-store-options.ts, the epoch checks by epoch-checks.ts.
 * Why this file is still over 400 lines: it is the call cycle (enqueue, flush by slot, send,
 * answer, fail, give back) with the Store port's methods that start it, one piece of I/O a reader
 * follows from a reservation to Redis and back.
 */
import { randomUUID } from 'node:crypto';
import type { NumberLimits, Store, StoreSnapshot } from '../core/limits/store.js';
import { EpochChecks } from './epoch-checks.js';
import { EpochGuard, type RedisEpoch } from './epoch.js';
import { Health, errorText, type RedisCapacityEvent, type RedisStoreMetrics, type RedisStoreState } from './health.js';
import { leaseSize } from './lease-sizing.js';
import { RedisUnavailableError } from './errors.js';
import { EXPECTED, afterAnswer, confirmArgument, fellShort, numberState, park, type NumberState } from './number-state.js';
import { storeSettings, type RedisStoreOptions, type RedisStoreSnapshot, type StoreSettings } from './redis-store-options.js';
import { runScript, script } from './script-runner.js';
import { GIVE_BACK_SCRIPT } from './scripts/give-back.js';
import { decodeLeaseReply, LEASE_SCRIPT } from './scripts/lease.js';
import { withTimeout } from './with-timeout.js';

const LEASE = script(LEASE_SCRIPT);
const GIVE_BACK = script(GIVE_BACK_SCRIPT);

export class RedisStore implements Store {
  readonly prefix: string;
  readonly instanceId: string;
  /** The options, checked, with their defaults. */
  readonly #s: StoreSettings;
  readonly #epoch: EpochGuard;
  readonly #epochChecks: EpochChecks;
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
    const s = storeSettings(options);
    this.#s = s;
    this.prefix = s.prefix;
    this.instanceId = s.instanceId;
    this.#health = new Health((e) => {
      this.#metrics.up = e.type === 'redis-up';
      this.#emit(e);
    });
    // A state lives a day and two buckets after its last call, plus the lease record time.
    this.#epoch = new EpochGuard(this.#s.client, this.prefix, s.knownEpoch, 86_400_000 + 2 * this.#s.bucketMs + this.#s.keep, (e) => (e.type === 'redis-reset' ? this.#emitReset(e) : this.#emit(e)));
    this.#epochChecks = new EpochChecks({
      guard: this.#epoch,
      settings: s,
      states: this.#states,
      onRoundTrip: () => {
        this.#metrics.roundTrips++;
      },
      onReset: (e) => this.#emitReset(e),
    });
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
    this.#states.push(numberState(key, `${this.prefix}{${key}}:s`, limits, now));
    return h;
  }

  /**
   * What the fleet can send now: tokens this instance holds for the number, what Redis had left for
   * everyone at the last answer, and what the other instances said they hold unspent (a view for
   * `output`; the first call asks Redis in the background).
   */
  available(handle: number, now: number): number {
    const st = this.#states[handle]!;
    this.#expire(st, now);
    // Redis's "left" moves with every instance's sends: asked again once it is older than the view's
    // bound, so every instance's output follows the fleet's (a peek, nothing charged).
    const heard = st.heard;
    if (heard === undefined || now - heard.at >= this.#s.viewMaxAge) this.#enqueue(st, now);
    return heard === undefined ? st.tokens.balance : st.tokens.balance + heard.left + heard.others;
  }

  reserve(handle: number, want: number, now: number): number {
    const st = this.#states[handle]!;
    this.#expire(st, now);
    st.asked += want;
    const g = st.tokens.take(want, now);
    if (g < want) fellShort(st);
    if (st.need !== 'none' || st.tokens.balance * 2 < st.size) this.#enqueue(st, now);
    else if (g > 0 && this.#tellTimer === undefined) this.#armTell();
    return g;
  }

  release(handle: number, count: number, now: number): void {
    if (count <= 0) return;
    const st = this.#states[handle]!;
    this.#expire(st, now);
    // Back into the leases the last reservation took them from: each token keeps its own lease's
    // lifetime and 24 h bucket.
    st.tokens.putBack(count, now);
  }

  /**
   * A refused message's token goes back into the lease it came from, while that lease lives: it is
   * spent later under the charge Redis made for it, so the fleet's windows stay exact. A token whose
   * lease is gone (expired, or returned) stays spent: the safe side.
   */
  refund(handle: number, count: number, chargedAt: number, now: number): void {
    if (count <= 0) return;
    const st = this.#states[handle]!;
    this.#expire(st, now);
    st.tokens.refund(count, chargedAt, now);
  }

  availableAt(handle: number, count: number, now: number): number {
    const st = this.#states[handle]!;
    this.#expire(st, now);
    if (st.tokens.balance >= count) return now;
    if (count > Math.min(st.perHour, st.per24h) || (st.perSecond > 0 && count > st.perSecond)) return Infinity;
    park(st);
    if (st.notBefore > now) {
      this.#arm(st.notBefore);
      return st.notBefore + this.#s.refillWait;
    }
    this.#enqueue(st, now);
    return now + this.#s.refillWait;
  }

  snapshot(): RedisStoreSnapshot {
    const held: Record<string, number> = {};
    for (const st of this.#states) if (st.tokens.balance > 0) held[st.phone] = st.tokens.balance;
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
    const now = this.#s.clock.now();
    this.#expire(st, now);
    return st.tokens.balance;
  }

  /**
   * Tells Redis, for every number whose unspent tokens changed since its last call, what this
   * instance holds now (a peek, nothing charged), so the other instances' output counts it. A timer
   * calls it a view's age (`viewMaxAgeMs`) after the instance spent without calling Redis.
   */
  tell(): void {
    const now = this.#s.clock.now();
    let later = false;
    for (const st of this.#states) {
      if (st.heard === undefined) continue;
      this.#expire(st, now);
      if (st.tokens.balance === st.heard.told) continue;
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
    st.need = 'none';
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
    return st.perSecond > 0 ? Math.min(this.#s.ttl, this.#s.ttlSecond) : this.#s.ttl;
  }

  #emit(e: RedisCapacityEvent): void {
    try {
      this.#s.onEvent?.(e);
    } catch {
      // A host listener's bug must not stop leasing (nor escape as an unhandled rejection).
      this.#metrics.callbackErrors++;
    }
  }

  #wakeHost(phones: string[]): void {
    try {
      this.#s.onCapacity?.(phones);
    } catch {
      this.#metrics.callbackErrors++;
    }
  }

  #expire(st: NumberState, now: number): void {
    const lost = st.tokens.expire(now);
    if (lost > 0) {
      this.#metrics.tokensExpired += lost;
      this.#emit({ type: 'lease-expired', at: now, phone: st.phone, tokens: lost });
      this.#giveBackExpired(st, st.tokens.takeExpired());
    }
  }

  /**
   * Gives the tokens of leases that expired unspent back to the 24 h counter: a process too busy to
   * spend its leases in time (a per-second number's live 250 ms) would otherwise burn its number's
   * day on tokens it never sent (a 500/24 h number stopped at 271 sends on a loaded machine).
   */
  #giveBackExpired(st: NumberState, leases: readonly { readonly id: string; readonly returned: number }[]): void {
    if (this.#closed) return;
    for (const lease of leases) {
      const done = runScript(
        this.#s.client,
        GIVE_BACK,
        [st.stateKey, `${this.prefix}{${st.phone}}:l:${lease.id}`],
        [this.#s.clockTime ? this.#s.clock.now() : '', this.#ttlOf(st), lease.returned, lease.id, this.#epoch.id, '', '1'],
      ).then(
        (back) => {
          this.#metrics.roundTrips++;
          const tokens = Number(back);
          if (tokens <= 0) return;
          this.#metrics.tokensReturned += tokens;
          this.#emit({ type: 'returned', at: this.#s.clock.now(), phone: st.phone, tokens });
        },
        // Not given back: the tokens stay charged until the day's window passes them (the safe side); said.
        (error: unknown) => this.#emit({ type: 'lease-failed', at: this.#s.clock.now(), numbers: 1, error: errorText(error) }),
      );
      this.#inFlightCalls.add(done);
      void done.finally(() => this.#inFlightCalls.delete(done));
    }
  }

  #enqueue(st: NumberState, now: number): void {
    if (st.call !== 'idle' || this.#closed) return;
    if (st.notBefore > now) {
      this.#arm(st.notBefore);
      return;
    }
    st.call = 'queued';
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
    const delay = Math.max(0, (at - this.#s.clock.now()) / this.#s.clockRate);
    this.#timer = setTimeout(() => this.#fire(), delay);
    this.#timer.unref?.();
  }

  /** A view's age after spending, tell Redis what is left (the other instances' output counts it). */
  #armTell(): void {
    if (this.#closed) return;
    this.#tellTimer = setTimeout(() => {
      this.#tellTimer = undefined;
      this.tell();
    }, this.#s.viewMaxAge / this.#s.clockRate);
    this.#tellTimer.unref?.();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.#s.clock.now();
    // Numbers due within half a retry period go in the same call: one round trip for many.
    const soon = now + this.#s.minRetry / 2;
    let next = Infinity;
    for (const st of this.#states) {
      if (st.need === 'none' && !(st.heard !== undefined && st.tokens.balance * 2 < st.size && st.asked > 0)) continue;
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
    if (!this.#s.cluster) {
      for (let i = 0; i < batch.length; i += this.#s.perCall) this.#call(batch.slice(i, i + this.#s.perCall));
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
      for (let i = 0; i < group.length; i += this.#s.perCall) this.#call(group.slice(i, i + this.#s.perCall));
    }
  }

  #call(numbers: NumberState[]): void {
    const now = this.#s.clock.now();
    const ids: string[] = [];
    const wants: number[] = [];
    const instances = Math.max(1, this.#s.instances());
    for (const st of numbers) {
      st.call = 'in-flight';
      const elapsed = Math.max(1, now - st.lastCallAt);
      const rate = st.asked / elapsed;
      st.demand = st.demand === 0 ? rate : (st.demand + rate) / 2;
      st.lastCallAt = now;
      const wantsTokens = st.need !== 'none' || (st.asked > 0 && st.tokens.balance * 2 < st.size);
      st.asked = 0;
      const size = leaseSize({
        perHour: st.perHour,
        per24h: st.per24h,
        perSecond: st.perSecond,
        demandPerMs: st.demand,
        instances,
        horizonMs: this.#s.horizon,
        minLease: this.#s.minLease,
        maxLease: this.#s.maxLease,
      });
      st.size = size;
      const want = wantsTokens ? Math.max(0, size - st.tokens.balance) || this.#s.minLease : 0;
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
  async #send(numbers: NumberState[], ids: string[], wants: number[]): Promise<{ reply: unknown; sentAt: number }> {
    const status = this.#s.client.status;
    if (status === 'reconnecting' || status === 'close' || status === 'end') throw new RedisUnavailableError('client', status);
    if (this.#epoch.due(this.#s.clock.now(), this.#s.epochCheck) || numbers.some((st) => st.check.kind === 'to-check')) await this.#epochChecks.before(numbers);
    const now = this.#s.clock.now();
    const keys: string[] = [];
    const fleet = Math.max(1, Math.floor(this.#s.instances()));
    const args: (string | number)[] = [
      this.#s.clockTime ? now : '',
      this.#epoch.id,
      this.#s.bucketMs,
      this.#s.keep,
      this.#epoch.lostAt,
      this.instanceId,
      this.#s.fairGrace,
      this.#s.minRetry,
      fleet,
      this.#s.fair ? '1' : '',
    ];
    numbers.forEach((st, i) => {
      this.#expire(st, now);
      // What this instance holds unspent, so the others' output counts it.
      st.telling = st.tokens.balance;
      keys.push(st.stateKey, `${this.prefix}{${st.phone}}:l:${ids[i]!}`);
      args.push(wants[i]!, st.perHour, st.perSecond, st.per24h, ids[i]!, this.#ttlOf(st), Math.max(0, st.seenT), confirmArgument(st.check), st.telling, st.tokens.heldUntil());
    });
    this.#metrics.roundTrips++;
    const reply = await withTimeout(runScript(this.#s.client, LEASE, keys, args), this.#s.callTimeout);
    return { reply, sentAt: now };
  }

  #emitReset(e: RedisCapacityEvent): void {
    this.#metrics.resets++;
    this.#emit(e);
  }

  #answered(numbers: NumberState[], ids: string[], wants: number[], reply: unknown, sentAt: number): void {
    const { now: redisNow, answers } = decodeLeaseReply(reply, numbers.length);
    const recv = this.#s.clock.now();
    this.#health.succeeded(recv);
    // Map Redis time to the clock: with 'clock' time they are the same; with 'redis' time the
    // answer's moment is known to within the round trip, which is taken off lease lifetimes.
    const rtt = this.#s.clockTime ? 0 : recv - sentAt;
    const toLocal = (t: number): number => (this.#s.clockTime ? t : recv + (t - redisNow));
    const woken: string[] = [];
    const again: NumberState[] = [];
    for (let i = 0; i < numbers.length; i++) {
      const st = numbers[i]!;
      const id = ids[i]!;
      const answer = answers[i]!;
      st.call = 'idle';
      if (answer.kind === 'refused') {
        // Nothing was read nor written: check the epoch, then ask again (same lease id).
        st.check = { kind: 'to-check', found: answer.found };
        again.push(st);
        continue;
      }
      const { granted, grantedAt, retryAt } = answer;
      st.heard = { at: recv, left: answer.left, others: answer.others, told: st.telling + granted };
      st.retryId = undefined;
      st.check = EXPECTED;
      if (grantedAt > st.seenT) st.seenT = grantedAt;
      const result = granted > 0 ? st.tokens.grant({ id, granted, expiresAt: toLocal(grantedAt + this.#ttlOf(st)) - rtt, scriptExpiresAt: grantedAt + this.#ttlOf(st) }, recv) : 'known';
      if (result !== 'known') {
        this.#metrics.leases++;
        this.#metrics.tokensLeased += granted;
        this.#emit({ type: 'lease', at: recv, phone: st.phone, leaseId: id, granted, grantedAt });
        if (result === 'expired') {
          this.#metrics.tokensExpired += granted;
          this.#emit({ type: 'lease-expired', at: recv, phone: st.phone, tokens: granted });
          this.#giveBackExpired(st, [{ id, returned: granted }]);
        }
      }
      const met = granted >= wants[i]!;
      st.notBefore = met ? 0 : retryAt < 0 ? Infinity : Math.max(toLocal(retryAt), recv + this.#s.minRetry);
      if (afterAnswer(st, met)) woken.push(st.phone);
      if (st.need !== 'none' && st.notBefore < Infinity) this.#arm(st.notBefore);
    }
    for (const st of again) {
      st.notBefore = 0;
      this.#enqueue(st, recv);
    }
    if (woken.length > 0) this.#wakeHost(woken);
  }

  #failed(numbers: NumberState[], error: unknown): void {
    const now = this.#s.clock.now();
    const text = errorText(error);
    this.#metrics.failures++;
    this.#emit({ type: 'lease-failed', at: now, numbers: numbers.length, error: text });
    this.#health.failed(now, text);
    for (const st of numbers) {
      st.call = 'idle';
      st.notBefore = now + this.#s.downRetry;
      if (st.need !== 'none') this.#arm(st.notBefore);
    }
  }

  async #giveBackNumber(st: NumberState): Promise<number> {
    const now = this.#s.clock.now();
    this.#expire(st, now);
    let total = 0;
    // Newest first: the newest lease is the one the rate windows can take back exactly.
    for (const lease of st.tokens.drain()) {
      try {
        const back = Number(
          await withTimeout(
            runScript(
              this.#s.client,
              GIVE_BACK,
              [st.stateKey, `${this.prefix}{${st.phone}}:l:${lease.id}`],
              [this.#s.clockTime ? this.#s.clock.now() : '', this.#ttlOf(st), lease.returned, lease.id, this.#epoch.id, this.instanceId, ''],
            ),
            this.#s.callTimeout,
          ),
        );
        this.#metrics.roundTrips++;
        total += back;
      } catch (error) {
        this.#emit({ type: 'lease-failed', at: this.#s.clock.now(), numbers: 1, error: errorText(error) });
      }
    }
    if (total > 0) {
      this.#metrics.tokensReturned += total;
      this.#emit({ type: 'returned', at: this.#s.clock.now(), phone: st.phone, tokens: total });
    }
    return total;
  }
}
