/**
 * Makes the engine look again at numbers whose tokens arrived after it parked them.
 *
 * The engine parks a number that ran dry at `availableAt`, and nothing in the `Store` port lets a
 * store say "capacity arrived" earlier. Until the engine has such a hook, the waker uses
 * `engine.setNumberLimits(phone, {})`: with unchanged limits it only re-queues the number in its
 * pools and pokes the dispatch loop (see docs/decisions-redis.md, "Engine hook").
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
  let wake: (() => void) | undefined;
  return {
    onCapacity(phones) {
      if (engine !== undefined) {
        for (const phone of phones) {
          try {
            engine.setNumberLimits(phone, {});
          } catch {
            // A phone no longer in the fleet: nothing to wake.
          }
        }
      }
      const w = wake;
      wake = undefined;
      w?.();
    },
    attach(e) {
      engine = e;
    },
    sleep(ms) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(0, ms));
        function done(): void {
          clearTimeout(timer);
          if (wake === done) wake = undefined;
          resolve();
        }
        const previous = wake;
        wake = () => {
          previous?.();
          done();
        };
      });
    },
  };
}
