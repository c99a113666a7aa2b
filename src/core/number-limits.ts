/**
 * The limits of one number (hourly throughput, 24 h messaging limit, optional per-second rate):
 * one check for a fleet description's numbers and for `engine.setNumberLimits`, so both say the
 * same thing about the same value, at their own JSON path.
 */
import { MAX_MESSAGES_PER_SECOND, MAX_MESSAGING_LIMIT_24H, MAX_THROUGHPUT_PER_HOUR } from './fleet.js';
import { type Problem, problem } from './problems.js';
import type { NumberLimits } from './limits/store.js';

/** A number's limits as a fleet description or a limits change gives them. */
export interface NumberLimitValues {
  readonly throughputPerHour: unknown;
  readonly messagingLimit24h: unknown;
  /** Absent (undefined) when the number has no per-second window. */
  readonly messagesPerSecond?: unknown;
}

function integerIn(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max;
}

/**
 * Every problem of a number's limits, each at `path` + the field (`$.throughputPerHour` for
 * `path` `$`); empty when they are valid.
 */
export function validateNumberLimits(limits: NumberLimitValues, path = '$'): Problem[] {
  const problems: Problem[] = [];
  const check = (key: keyof NumberLimitValues, max: number, optional: boolean): void => {
    const value = limits[key];
    if (optional && value === undefined) return;
    if (!integerIn(value, max)) problems.push(problem(`${path}.${key}`, `an integer from 1 to ${max}`, value));
  };
  check('throughputPerHour', MAX_THROUGHPUT_PER_HOUR, false);
  check('messagingLimit24h', MAX_MESSAGING_LIMIT_24H, false);
  check('messagesPerSecond', MAX_MESSAGES_PER_SECOND, true);
  return problems;
}

/** The store's view of valid limits; a per-second rate of 0 means none. */
export function limitsOf(perHour: number, per24h: number, perSecond: number): NumberLimits {
  return perSecond > 0 ? { perHour, per24h, perSecond } : { perHour, per24h };
}
