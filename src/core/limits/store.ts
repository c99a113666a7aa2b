/**
 * The `Store` port: where a number's limit state lives. The engine reserves capacity from it once
 * per number per call and never awaits. A store shared by many processes (Redis) implements the
 * same port by leasing tokens in the background and answering from what it holds, so the hot path
 * stays synchronous (src/redis).
 */

/** The windows of one number. */
export interface NumberLimits {
  /** Token bucket of this many messages, refilling at this many per hour. */
  readonly perHour: number;
  /** At most this many messages in any rolling 24 hours. */
  readonly per24h: number;
  /** Optional token bucket per second. */
  readonly perSecond?: number | undefined;
}

/** One window of a number: messages counting against it now, and its size. */
export interface WindowUsage {
  /** Messages weighing on the window now (a token bucket's debt, rounded up; the 24 h count). */
  readonly used: number;
  /** The window's size: the bucket's capacity, or the 24 h limit. */
  readonly limit: number;
}

/** Every window of one number, for inspection (dashboards, reports). */
export interface NumberWindows {
  /** Present when the number has a per-second window. */
  readonly second?: WindowUsage;
  readonly hour: WindowUsage;
  readonly day: WindowUsage;
}

/** Limit state of a whole store, as plain JSON. */
export interface StoreSnapshot {
  readonly kind: string;
  readonly [key: string]: unknown;
}

/**
 * Limit state for numbers, addressed by a handle from {@link Store.open}.
 *
 * Capacity is taken by reservation: the engine reserves, at a number's first use in a call, as many
 * messages as round-robin will give it, and releases what it did not use before the call ends. A
 * store shared between processes answers both from tokens it leased beforehand.
 */
export interface Store {
  /**
   * Returns the handle of the number `key` (its phone), creating its state on first use and
   * updating its limits otherwise: messages already charged keep counting, as of `now`.
   */
  open(key: string, limits: NumberLimits, now: number): number;
  /** Messages the number may send at `now` under every window together. */
  available(handle: number, now: number): number;
  /**
   * Charges up to `want` messages at `now` under every window at once, all or nothing for each
   * message, and answers how many were granted (0 when none may go).
   */
  reserve(handle: number, want: number, now: number): number;
  /**
   * Optional short path for one message, for the engine's loop over a call that gives each number
   * one turn: charges one message and answers 1, answers 0 when none may go, or -1 when it cannot
   * tell without more work (the engine then calls `reserve`). It must call nothing and do no I/O:
   * it is there to be inlined. Without it, every such turn calls `reserve(handle, 1, now)`.
   */
  reserveOne?(handle: number, now: number): number;
  /** Gives back `count` messages of a reservation made at the same `now`, unused. */
  release(handle: number, count: number, now: number): void;
  /**
   * Optional: gives back `count` messages charged at `chargedAt` (at or before `now`) that the
   * provider refused, as if they had not been charged: each window gets them back where it counted
   * them (the 24 h bucket of `chargedAt`, if still in the window), and no window goes above full.
   * Without it the engine gives back only a charge made at `now` (through `release`).
   */
  refund?(handle: number, count: number, chargedAt: number, now: number): void;
  /** Earliest time at which `count` messages become available (`now` if they are), Infinity if never. */
  availableAt(handle: number, count: number, now: number): number;
  /**
   * Optional, for inspection only: how full each window of the number is at `now`. A store that
   * cannot tell cheaply (one that leases from elsewhere) leaves it out.
   */
  windows?(handle: number, now: number): NumberWindows;
  /** Optional hint: about this many numbers will be open, so storage is sized once. */
  sizeFor?(numbers: number): void;
  /** The state of every number, as plain JSON. */
  snapshot(): StoreSnapshot;
  /**
   * Optional: a snapshot of only these numbers, in the same form (numbers under `numbers[key]`), for
   * a durable host that writes what changed (`engine.takeChanges()` needs it).
   */
  snapshotNumbers?(handles: readonly number[]): StoreSnapshot;
  /** Loads a snapshot's usage, at `now`, into numbers opened or opened later under the same keys. */
  restore(snapshot: StoreSnapshot, now: number): void;
}
