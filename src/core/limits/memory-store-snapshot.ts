/**
 * The plain-JSON form of a {@link MemoryStore}'s state (`snapshot`, `restore`), and the move of a
 * 24 h counter saved with another bucket width onto the store's own.
 */
import type { StoreSnapshot } from './store.js';

/** One number's state in a {@link MemoryStoreSnapshot}. */
export interface MemoryStoreNumberState {
  /** [tat, rem, capacity] of the hourly window. */
  readonly hour: readonly [number, number, number];
  /** [tat, rem, capacity] of the per-second window, or null without one. */
  readonly second: readonly [number, number, number] | null;
  /** Non-empty buckets of the 24 h counter as [bucket index, count]. */
  readonly day: readonly (readonly [number, number])[];
}

/** Plain-JSON state of a {@link MemoryStore}. */
export interface MemoryStoreSnapshot extends StoreSnapshot {
  readonly kind: 'memory';
  readonly bucketMinutes: number;
  readonly numbers: Readonly<Record<string, MemoryStoreNumberState>>;
}

/**
 * Moves counts taken with buckets of `fromMinutes` onto buckets of `bucketMs`, rounding times up:
 * a send is counted at the end of its old bucket, so it weighs on the limit at least as long as it
 * did (conservative).
 */
export function rebucket(state: MemoryStoreNumberState, fromMinutes: number, bucketMs: number): MemoryStoreNumberState {
  const merged = new Map<number, number>();
  for (const [k, c] of state.day) {
    const end = (k + 1) * fromMinutes * 60_000 - 1;
    const nk = Math.floor(end / bucketMs);
    merged.set(nk, (merged.get(nk) ?? 0) + c);
  }
  return { ...state, day: [...merged] };
}
