/**
 * Rate windows as GCRA (the generic cell rate algorithm): a token bucket of `capacity` messages
 * refilling continuously at `capacity` per `period`, kept as one "theoretical arrival time" (TAT).
 *
 * The arithmetic is exact. TAT is held as `tat + rem / capacity` milliseconds with integer `tat`
 * and `0 <= rem < capacity`, so one message costs exactly `period / capacity` ms with no rounding
 * drift. Every product stays below 2^53 for capacity <= 1e9 and period <= 3,600,000 ms.
 *
 * Guarantee: for any interval [a, b] the messages charged in it number at most
 * `capacity + floor((b - a) * capacity / period)`; at full bucket `capacity` may go at once.
 */

/** Messages that may go at `now` (0..capacity). `tat`/`rem` are the window's state. */
export function gcraAvailable(tat: number, rem: number, capacity: number, period: number, now: number): number {
  if (tat < now || (tat === now && rem === 0)) return capacity;
  // Debt in messages = (TAT - now) * capacity / period, rounded up: a partly refilled token is not a token.
  const debt = Math.ceil(((tat - now) * capacity + rem) / period);
  return debt >= capacity ? 0 : capacity - debt;
}

/**
 * Charges `count` messages at `now` and returns the new state as [tat, rem] through `out`.
 * The caller has checked `count <= gcraAvailable(...)`.
 */
export function gcraTake(tat: number, rem: number, capacity: number, period: number, now: number, count: number, out: Float64Array, at: number): void {
  if (tat < now || (tat === now && rem === 0)) {
    tat = now;
    rem = 0;
  }
  const numer = rem + count * period;
  const whole = Math.floor(numer / capacity);
  out[at] = tat + whole;
  out[at + 1] = numer - whole * capacity;
}

/**
 * Gives back `count` messages charged at `now` (a release of an unused reservation): the exact
 * inverse of {@link gcraTake} at the same `now`.
 */
export function gcraGiveBack(tat: number, rem: number, capacity: number, period: number, count: number, out: Float64Array, at: number): void {
  // TAT - count * period / capacity, with the remainder kept in 0..capacity-1.
  let numer = rem - count * period;
  const whole = Math.floor(numer / capacity);
  numer -= whole * capacity;
  out[at] = tat + whole;
  out[at + 1] = numer;
}

/** Earliest clock time at which `count` messages may go (`now` if already), Infinity if never. */
export function gcraAvailableAt(tat: number, rem: number, capacity: number, period: number, now: number, count: number): number {
  if (count > capacity) return Infinity;
  // Need (TAT - t) * capacity / period <= capacity - count, i.e. t >= TAT - (capacity - count) * period / capacity.
  const t = tat + Math.ceil((rem - (capacity - count) * period) / capacity);
  return t > now ? t : now;
}

/**
 * Re-expresses a window state for a new capacity at `now`: the messages still weighing on the
 * bucket stay the same number of messages, now refilling at the new rate. Exact: with
 * X = (tat - now) * oldCapacity + rem, the new TAT is now + X / newCapacity.
 */
export function gcraRescale(tat: number, rem: number, oldCapacity: number, newCapacity: number, now: number, out: Float64Array, at: number): void {
  if (tat < now || (tat === now && rem === 0)) {
    out[at] = 0;
    out[at + 1] = 0;
    return;
  }
  const x = (tat - now) * oldCapacity + rem;
  const whole = Math.floor(x / newCapacity);
  out[at] = now + whole;
  out[at + 1] = x - whole * newCapacity;
}
