/**
 * Reading one JSON document field by field: each reader checks a value's type and bounds and, when
 * it does not fit, records a problem with its JSON path, the expected and the actual value, and
 * answers undefined, so the caller goes on and every problem of the document is reported at once.
 * The fleet validator (fleet-validate.ts) reads with it.
 */
import { pathKey, problem, type Problem } from './problems.js';

/** A JSON object as read: its fields not checked yet. */
export type Obj = Record<string, unknown>;

/** Collects problems while reading one document. */
export class Reader {
  readonly problems: Problem[] = [];

  report(path: string, expected: string, value: unknown): void {
    this.problems.push(problem(path, expected, value));
  }

  object(value: unknown, path: string, known: readonly string[]): Obj | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.report(path, 'an object', value);
      return undefined;
    }
    for (const key of Object.keys(value)) {
      if (!known.includes(key)) this.report(pathKey(path, key), `no such field (known: ${known.join(', ')})`, (value as Obj)[key]);
    }
    return value as Obj;
  }

  array(value: unknown, path: string): readonly unknown[] | undefined {
    if (!Array.isArray(value)) {
      this.report(path, 'an array', value);
      return undefined;
    }
    return value as unknown[];
  }

  integer(value: unknown, path: string, min: number, max: number, what: string): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.report(path, what, value);
      return undefined;
    }
    return value;
  }

  id(value: unknown, path: string): number | undefined {
    return this.integer(value, path, 1, Number.MAX_SAFE_INTEGER, 'a positive integer id');
  }

  string(value: unknown, path: string, what = 'a non-empty string'): string | undefined {
    if (typeof value !== 'string' || value.length === 0) {
      this.report(path, what, value);
      return undefined;
    }
    return value;
  }

  optionalString(value: unknown, path: string): string | undefined {
    return value === undefined ? undefined : this.string(value, path);
  }

  oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[], fallback: T): T | undefined {
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
      this.report(path, `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`, value);
      return undefined;
    }
    return value as T;
  }

  /** A string matching `pattern`, or a problem saying `what` was expected. */
  matching(value: unknown, path: string, pattern: RegExp, what: string): string | undefined {
    if (typeof value !== 'string' || !pattern.test(value)) {
      this.report(path, what, value);
      return undefined;
    }
    return value;
  }

  /** A pause end: milliseconds, or an ISO 8601 date-time with an offset. */
  time(value: unknown, path: string): number | undefined {
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
    if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:\d{2})$/.test(value)) {
      const ms = Date.parse(value);
      if (Number.isFinite(ms) && ms >= 0) return ms;
    }
    this.report(path, 'a clock time: milliseconds (0 or more) or an ISO 8601 date-time with offset', value);
    return undefined;
  }
}
