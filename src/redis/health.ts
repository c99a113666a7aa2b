/**
 * Events of the Redis-backed capacity, as data: a host logs them, counts them in its metrics, or
 * alerts on `redis-down`. The library never logs.
 */

/** An event of {@link RedisStore} (and the fleet sync). `at` is the store's clock time. */
export type RedisCapacityEvent =
  /** A lease call failed (error, timeout, Redis unreachable): no new tokens for these numbers. */
  | { readonly type: 'lease-failed'; readonly at: number; readonly numbers: number; readonly error: string }
  /** The first failure after success: the fleet fails closed (only tokens already held are spent). */
  | { readonly type: 'redis-down'; readonly at: number; readonly error: string }
  /** The first success after `redis-down`: leasing resumes. */
  | { readonly type: 'redis-up'; readonly at: number; readonly downForMs: number }
  /** A lease was granted (also a retried call answered from its record). */
  | { readonly type: 'lease'; readonly at: number; readonly phone: string; readonly leaseId: string; readonly granted: number; readonly grantedAt: number }
  /** Tokens of a lease reached its expiry unspent: they stay charged and refill with time. */
  | { readonly type: 'lease-expired'; readonly at: number; readonly phone: string; readonly tokens: number }
  /** Unspent tokens went back to Redis (close, or a number given up). */
  | { readonly type: 'returned'; readonly at: number; readonly phone: string; readonly tokens: number }
  /** A snapshot of another kind was given to `restore`: Redis holds the state, it was not loaded. */
  | { readonly type: 'snapshot-ignored'; readonly at: number; readonly kind: string }
  /**
   * The store read the fleet's epoch marker for the first time, or found it changed. A host that
   * keeps `epoch` (in its own database) and passes it back as `knownEpoch` after a restart notices
   * a Redis that lost its state even when every instance restarted with it.
   */
  | { readonly type: 'epoch'; readonly at: number; readonly epoch: string; readonly since: number; readonly lostAt: number | undefined }
  /**
   * Redis lost state the fleet had written (restarted empty, went back to an older copy, evicted
   * keys). Usage before `lostAt` (Redis time) is unknown: every window of the numbers concerned is
   * taken as fully used at that time (plus one lease lifetime), so the fleet fails closed until
   * the windows have passed. Scope 'fleet': the epoch marker is gone or new, every number is
   * concerned; 'numbers': these numbers' states are gone ('missing') or older than this instance
   * saw ('rolled-back').
   */
  | { readonly type: 'redis-reset'; readonly at: number; readonly scope: 'fleet'; readonly epoch: string; readonly previousEpoch: string; readonly lostAt: number }
  | { readonly type: 'redis-reset'; readonly at: number; readonly scope: 'numbers'; readonly phones: readonly string[]; readonly reason: 'missing' | 'rolled-back'; readonly lostAt: number };

/** Counters of a {@link RedisStore}, for metrics. */
export interface RedisStoreMetrics {
  /** Script calls sent (each one Redis round trip; a call serves up to `numbersPerCall` numbers). */
  roundTrips: number;
  /** Leases granted with at least one token. */
  leases: number;
  tokensLeased: number;
  tokensReturned: number;
  tokensExpired: number;
  failures: number;
  /** Host callbacks (`onEvent`, `onCapacity`) that threw; leasing goes on regardless. */
  callbackErrors: number;
  /** False while Redis is considered unreachable. */
  up: boolean;
  /** Losses of Redis state noticed (`redis-reset` events: the fleet's, and numbers'). */
  resets: number;
}

/**
 * Where a store stands with Redis: 'connecting' until a call first succeeds, then 'ready', or
 * 'lost' while calls fail (it fails closed then: only tokens already held are spent).
 */
export type RedisStoreState = 'connecting' | 'ready' | 'lost';

/** Tracks up/down from call outcomes and reports each transition once. */
export class Health {
  #up = true;
  #ever = false;
  #downSince = 0;
  readonly #emit: (e: RedisCapacityEvent) => void;

  constructor(emit: (e: RedisCapacityEvent) => void) {
    this.#emit = emit;
  }

  get up(): boolean {
    return this.#up;
  }

  get state(): RedisStoreState {
    if (!this.#ever) return 'connecting';
    return this.#up ? 'ready' : 'lost';
  }

  failed(at: number, error: string): void {
    if (!this.#up) return;
    this.#up = false;
    this.#downSince = at;
    this.#emit({ type: 'redis-down', at, error });
  }

  succeeded(at: number): void {
    this.#ever = true;
    if (this.#up) return;
    this.#up = true;
    this.#emit({ type: 'redis-up', at, downForMs: at - this.#downSince });
  }
}

/** Message of an unknown thrown value. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
