/**
 * Makes the engine look again at numbers whose tokens arrived after it parked them.
 *
 * The engine parks a number that ran dry until the store's `availableAt`; a lease can arrive
 * earlier. The waker calls `engine.capacityChanged(phone)` for each number the store refilled
 * (the number goes back to its pools' rings and the dispatch loop looks again) and wakes the
 * host's sleep.
 */
import type { Engine } from '../core/engine.js';

/** Wires {@link RedisStore}'s `onCapacity` to an engine and to the host's loop. */
export interface CapacityWaker {
  /** Pass as `RedisStoreOptions.onCapacity`. */
  readonly onCapacity: (phones: readonly string[]) => void;
  /** The engine to wake (created after the store, which it takes as an option). */
  attach(engine: Engine): void;
  /**
   * Resolves at the next capacity arrival or after `ms` real milliseconds, whichever is first:
   * the host's loop sleeps on it instead of a plain timer.
   */
  sleep(ms: number): Promise<void>;
}

/** Creates a {@link CapacityWaker}. */
export function createCapacityWaker(): CapacityWaker {
  let engine: Engine | undefined;
  // Sleepers waiting now: each leaves the set when it wakes, by capacity or by its own timer.
  const sleepers = new Set<() => void>();
  return {
    onCapacity(phones) {
      if (engine !== undefined) {
        for (const phone of phones) engine.capacityChanged(phone);
      }
      const waking = [...sleepers];
      sleepers.clear();
      for (const wake of waking) wake();
    },
    attach(e) {
      engine = e;
    },
    sleep(ms) {
      return new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          sleepers.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, ms));
        sleepers.add(done);
      });
    },
  };
}
