/** Runtime guards for values the types cannot constrain (integers, non-negative, non-empty). */
import { ArgumentError } from '../core/errors.js';
import { describeValue } from '../core/problems.js';

/** Throws {@link ArgumentError} unless `value` is a safe integer (at least `min` when given). */
export function requireInteger(argument: string, value: number, min?: number): void {
  if (!Number.isSafeInteger(value) || (min !== undefined && value < min)) {
    throw new ArgumentError(argument, min === undefined ? 'an integer' : `an integer from ${min} up`, describeValue(value));
  }
}

/** Throws {@link ArgumentError} unless `value` is a non-empty string. */
export function requireText(argument: string, value: string): void {
  if (typeof value !== 'string' || value.length === 0) {
    throw new ArgumentError(argument, 'a non-empty string', describeValue(value));
  }
}
