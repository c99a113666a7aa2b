/**
 * The query strings of the dashboard's data endpoints: a page (`offset`, `limit`) and a few
 * filters. Bad values are refused with every problem at once, each naming `$.query.<name>`, what
 * was expected and what came, as everywhere in the server.
 */
import { problem, type Problem } from '../../core/problems.js';

export interface Page {
  readonly offset: number;
  readonly limit: number;
}

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** Reads and checks a query string; `problems` collects what is wrong. */
export class QueryReader {
  readonly problems: Problem[] = [];
  readonly #query: Query;

  constructor(query: unknown, known: readonly string[]) {
    this.#query = (typeof query === 'object' && query !== null ? query : {}) as Query;
    for (const name of Object.keys(this.#query)) {
      if (!known.includes(name)) this.problems.push(problem(`$.query.${name}`, `no such parameter (known: ${known.join(', ')})`, this.#query[name]));
    }
  }

  #text(name: string): string | undefined {
    const v = this.#query[name];
    if (Array.isArray(v)) {
      this.problems.push(problem(`$.query.${name}`, 'one value', v));
      return undefined;
    }
    return v;
  }

  /** An integer from `min` to `max`, or `fallback` when absent. */
  integer(name: string, min: number, max: number, fallback: number): number {
    const text = this.#text(name);
    if (text === undefined) return fallback;
    const n = /^(0|[1-9][0-9]{0,15})$/.test(text) ? Number(text) : Number.NaN;
    if (!(n >= min && n <= max)) {
      this.problems.push(problem(`$.query.${name}`, `an integer from ${min} to ${max}`, text));
      return fallback;
    }
    return n;
  }

  /** An optional positive integer id. */
  id(name: string): number | undefined {
    if (this.#text(name) === undefined) return undefined;
    return this.integer(name, 1, Number.MAX_SAFE_INTEGER, 0) || undefined;
  }

  /** One of `values`, or undefined when absent. */
  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const text = this.#text(name);
    if (text === undefined) return undefined;
    if ((values as readonly string[]).includes(text)) return text as T;
    this.problems.push(problem(`$.query.${name}`, `one of ${values.join(', ')}`, text));
    return undefined;
  }

  /** Free text of at most `max` characters, or undefined when absent or empty. */
  text(name: string, max: number): string | undefined {
    const text = this.#text(name);
    if (text === undefined || text === '') return undefined;
    if (text.length > max) {
      this.problems.push(problem(`$.query.${name}`, `at most ${max} characters`, `${text.length} characters`));
      return undefined;
    }
    return text;
  }

  /** `offset` and `limit`, `limit` from 1 to `maxLimit`. */
  page(defaultLimit: number, maxLimit: number): Page {
    return { offset: this.integer('offset', 0, 10_000_000, 0), limit: this.integer('limit', 1, maxLimit, defaultLimit) };
  }
}
