/**
 * The tokens one instance holds for one number: the leases Redis granted it, what of them is left,
 * and what the engine's last reservation took from which lease. Pure bookkeeping (no client, no
 * timers, no clock of its own): `RedisStore` drives it with the times and answers it receives,
 * and the tests check it against a model without Redis (test/redis/number-ledger.test.ts).
 *
 * Why leases are kept one by one rather than as one balance: each expires on its own (its tokens
 * are charged in Redis for its lifetime only), and a give-back must name the lease it returns to.
 */

/** One lease of tokens granted by the lease script. */
export interface Lease {
  readonly id: string;
  readonly granted: number;
  /** Tokens of it not handed to the engine. */
  remaining: number;
  /** Tokens of it given back to Redis so far (the give-back script's idempotent total). */
  returned: number;
  /** Clock time after which the lease may no longer be spent. */
  readonly expiresAt: number;
  /** The same moment in the lease script's time (what the other instances are told). */
  readonly scriptExpiresAt: number;
  /**
   * Clock times of the first and the last take that spent tokens of it (-1 before any): leases are
   * spent in expiry order, so the lease a hand-out's token came from is the one whose span holds its
   * time (a refund finds it there).
   */
  firstTakeAt?: number;
  lastTakeAt?: number;
}

/** What became of a grant offered to {@link NumberLedger.grant}. */
export type GrantResult = 'added' | 'expired' | 'known';

/** Most lease ids remembered to refuse a grant answered twice (a retried call's answer). */
const SEEN_IDS = 8;

export class NumberLedger {
  /** Live leases, the first to expire first (hand-outs spend it first). */
  readonly #leases: Lease[] = [];
  #balance = 0;
  #nextExpiry = Infinity;
  /** What the last reservation took, lease by lease, so a release puts tokens back where they were. */
  readonly #took: Lease[] = [];
  readonly #tookCount: number[] = [];
  readonly #seen: string[] = [];
  /** Leases expired with tokens left, not taken yet by {@link takeExpired}. */
  #expired: Lease[] = [];

  /** Unspent tokens of live leases (call {@link expire} first for an answer at a given time). */
  get balance(): number {
    return this.#balance;
  }

  /**
   * Drops the leases expired at `now`; answers the unspent tokens lost with them. Those with tokens
   * left wait in {@link takeExpired} (each with its new `returned`, the tokens marked given back):
   * never spendable again, so the 24 h counter may have them back.
   */
  expire(now: number): number {
    if (now < this.#nextExpiry) return 0;
    const leases = this.#leases;
    let k = 0;
    let lost = 0;
    while (k < leases.length && leases[k]!.expiresAt <= now) {
      const lease = leases[k++]!;
      lost += lease.remaining;
      if (lease.remaining > 0) {
        lease.returned += lease.remaining;
        lease.remaining = 0;
        this.#expired.push(lease);
      }
    }
    if (k > 0) leases.splice(0, k);
    this.#nextExpiry = leases[0]?.expiresAt ?? Infinity;
    this.#balance -= lost;
    return lost;
  }

  /** Hands out up to `want` tokens at `at`, from the lease that expires first; answers how many. */
  take(want: number, at = -1): number {
    const g = this.#balance < want ? this.#balance : want;
    this.#took.length = 0;
    this.#tookCount.length = 0;
    if (g <= 0) return 0;
    this.#balance -= g;
    let left = g;
    for (const lease of this.#leases) {
      if (lease.remaining === 0) continue;
      const t = lease.remaining < left ? lease.remaining : left;
      lease.remaining -= t;
      if (at >= 0) {
        if (lease.firstTakeAt === undefined) lease.firstTakeAt = at;
        lease.lastTakeAt = at;
      }
      this.#took.push(lease);
      this.#tookCount.push(t);
      left -= t;
      if (left === 0) break;
    }
    return g;
  }

  /**
   * Puts back up to `count` tokens of the last {@link take}, newest first (the engine uses what it
   * reserved in order): each token keeps its own lease's lifetime; tokens of a lease expired
   * meanwhile are gone.
   */
  putBack(count: number, now: number): void {
    let left = count;
    for (let k = this.#took.length - 1; k >= 0 && left > 0; k--) {
      const lease = this.#took[k]!;
      const t = this.#tookCount[k]! < left ? this.#tookCount[k]! : left;
      if (lease.expiresAt <= now) continue;
      lease.remaining += t;
      this.#tookCount[k]! -= t;
      this.#balance += t;
      left -= t;
    }
  }

  /**
   * Gives back `count` tokens taken at `chargedAt` that the provider refused, into the lease they
   * came from: the one live lease whose takes span `chargedAt`, and only tokens it handed out. When
   * no live lease, or more than one, spans it (a take that emptied one lease into the next at that
   * very time), nothing is given back: a token put in another lease would be spent under a charge
   * Redis made for other tokens. Answers the tokens given back.
   */
  refund(count: number, chargedAt: number, now: number): number {
    let found: Lease | undefined;
    for (const lease of this.#leases) {
      if (lease.firstTakeAt === undefined || lease.firstTakeAt > chargedAt || lease.lastTakeAt! < chargedAt) continue;
      if (found !== undefined) return 0;
      found = lease;
    }
    if (found === undefined || found.expiresAt <= now) return 0;
    const spent = found.granted - found.remaining - found.returned;
    const back = count < spent ? count : spent;
    if (back <= 0) return 0;
    found.remaining += back;
    this.#balance += back;
    return back;
  }

  /** The script time the latest lease with tokens left expires at (0 for none): what others are told. */
  heldUntil(): number {
    let until = 0;
    for (const lease of this.#leases) if (lease.remaining > 0 && lease.scriptExpiresAt > until) until = lease.scriptExpiresAt;
    return until;
  }

  /**
   * A grant answered by the lease script: added (spendable until `expiresAt`), expired (it came
   * back after its lifetime: counted as lost), or known (the same lease answered before).
   */
  grant(lease: { readonly id: string; readonly granted: number; readonly expiresAt: number; readonly scriptExpiresAt: number }, now: number): GrantResult {
    if (this.#seen.includes(lease.id)) return 'known';
    this.#seen.push(lease.id);
    if (this.#seen.length > SEEN_IDS) this.#seen.shift();
    if (lease.expiresAt <= now) return 'expired';
    // Kept in expiry order, which is not always the order granted: a number's lease lifetime
    // changes with its limits, and each answer's round trip is taken off its own lease.
    let k = this.#leases.length;
    while (k > 0 && this.#leases[k - 1]!.expiresAt > lease.expiresAt) k--;
    this.#leases.splice(k, 0, { ...lease, remaining: lease.granted, returned: 0 });
    this.#balance += lease.granted;
    this.#nextExpiry = this.#leases[0]!.expiresAt;
    return 'added';
  }

  /** The leases that expired with tokens left since the last call (their `returned` counts them). */
  takeExpired(): Lease[] {
    if (this.#expired.length === 0) return [];
    const out = this.#expired;
    this.#expired = [];
    return out;
  }

  /**
   * Takes every unspent token out for a give-back: answers the leases that had some, newest first
   * (the newest is the one the rate windows can take back exactly), each with its new `returned`.
   */
  drain(): Lease[] {
    const leases = this.#leases.filter((l) => l.remaining > 0);
    this.#balance = 0;
    for (const l of this.#leases) {
      l.returned += l.remaining;
      l.remaining = 0;
    }
    return leases.reverse();
  }
}
