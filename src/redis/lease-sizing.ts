/**
 * How many tokens one lease asks for. A lease should serve many assignments (one Redis round trip
 * for a long run of the hot path) yet hold little that others could have used, and never more than
 * a fair share of the number's burst.
 *
 *   size = clamp(ceil(demand × horizonMs), minLease, min(maxLease, max(minLease, ceil(burst / instances))))
 *
 * - `demand`: tokens per ms this instance asked for the number lately (EWMA of what the engine's
 *   `reserve` calls wanted between two leases), so a busy number leases a horizon's worth at once;
 * - `burst`: the most the number may send at once (least of its per-hour and per-second capacity
 *   and its 24 h limit): an instance never leases more than its share of it, so the others are not
 *   starved by one instance's stock;
 * - `instances`: active instances of the fleet (from the fleet sync's heartbeats, 1 without it).
 */

/** What a lease size depends on. */
export interface LeaseSizingInput {
  readonly perHour: number;
  readonly per24h: number;
  /** 0 without a per-second window. */
  readonly perSecond: number;
  /** Tokens per millisecond this instance asked for lately. */
  readonly demandPerMs: number;
  readonly instances: number;
  readonly horizonMs: number;
  readonly minLease: number;
  readonly maxLease: number;
}

/** The burst of a number: what it may send at once with full windows. */
export function burstOf(perHour: number, perSecond: number, per24h: number): number {
  let b = Math.min(perHour, per24h);
  if (perSecond > 0 && perSecond < b) b = perSecond;
  return b;
}

/** The lease size rule of the module comment. */
export function leaseSize(input: LeaseSizingInput): number {
  const burst = burstOf(input.perHour, input.perSecond, input.per24h);
  const share = Math.max(input.minLease, Math.ceil(burst / Math.max(1, input.instances)));
  const cap = Math.min(input.maxLease, share);
  const wanted = Math.ceil(Math.max(0, input.demandPerMs) * input.horizonMs);
  return Math.max(input.minLease, Math.min(wanted, cap));
}
