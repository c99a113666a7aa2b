/**
 * Time for the engine: milliseconds on some epoch, read through this port only, so tests and
 * simulations drive time by hand and the core never touches the system clock.
 */
import { ArgumentError } from './errors.js';
import { describeValue } from './problems.js';

/** The engine's only source of time. */
export interface Clock {
  /** Current time in whole milliseconds; never less than an earlier answer of the same clock. */
  now(): number;
}

function checkTime(argument: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ArgumentError(argument, 'a whole number of milliseconds, 0 or more', describeValue(value));
  }
}

/**
 * A clock that moves only when told to: for tests, simulations and capacity forecasts.
 *
 * @example
 * const clock = new ManualClock(0);
 * clock.advance(60_000); // one minute later
 */
export class ManualClock implements Clock {
  #now: number;

  /** @param start first reading, in milliseconds. @default 0 */
  constructor(start = 0) {
    checkTime('new ManualClock(start)', start);
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** Moves time forward by `ms` (0 or more) and returns the new time. */
  advance(ms: number): number {
    checkTime('ManualClock.advance(ms)', ms);
    this.#now += ms;
    return this.#now;
  }

  /** Sets the time; refuses to go back, because limits already charged cannot be un-spent. */
  set(ms: number): number {
    checkTime('ManualClock.set(ms)', ms);
    if (ms < this.#now) {
      throw new ArgumentError('ManualClock.set(ms)', `a time not before the current ${this.#now}`, describeValue(ms));
    }
    this.#now = ms;
    return this.#now;
  }
}
