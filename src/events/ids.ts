/**
 * Runtime guards for values the types cannot constrain (integers, non-negative, non-empty, formats),
 * and for JavaScript callers that bypass the types (an unknown enum value, a number for a string).
 * The payload builders run them before building, so a builder either returns a payload that passes
 * its own schema or throws {@link ArgumentError} naming the argument, never the first.
 */
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

/** Throws {@link ArgumentError} unless `value` is a string (empty allowed). */
export function requireString(argument: string, value: string): void {
  if (typeof value !== 'string') throw new ArgumentError(argument, 'a string', describeValue(value));
}

/** Throws {@link ArgumentError} unless `value` is a string or null. */
export function requireStringOrNull(argument: string, value: string | null): void {
  if (value !== null && typeof value !== 'string') throw new ArgumentError(argument, 'a string or null', describeValue(value));
}

/** Throws {@link ArgumentError} unless `value` is a boolean. */
export function requireBoolean(argument: string, value: boolean): void {
  if (typeof value !== 'boolean') throw new ArgumentError(argument, 'true or false', describeValue(value));
}

/** Throws {@link ArgumentError} unless `value` is one of `allowed`. */
export function requireOneOf<T extends string>(argument: string, value: T, allowed: readonly T[]): void {
  if (!allowed.includes(value)) {
    throw new ArgumentError(argument, `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`, describeValue(value));
  }
}

/** Throws {@link ArgumentError} unless `value` is null, undefined, or an object of string values. */
export function requireStringRecord(argument: string, value: Readonly<Record<string, string>> | null | undefined): void {
  if (value === null || value === undefined) return;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ArgumentError(argument, 'an object of string values, or null', describeValue(value));
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new ArgumentError(`${argument}[${JSON.stringify(key)}]`, 'a string', describeValue(v));
  }
}
