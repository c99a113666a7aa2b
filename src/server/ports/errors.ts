/**
 * Options of `buildServer` / `runServer` that can never work (a negative timeout, a metrics port out
 * of range, a key too short to be a secret): thrown before anything listens, with every problem at
 * once, each naming the option, the expected and the actual value.
 */
import type { Problem } from '../../core/problems.js';

const OPTIONS = Symbol.for('sendpool.ServerOptionsError');

/** Bad options of the reference server; nothing was started. */
export class ServerOptionsError extends Error {
  readonly [OPTIONS] = true;
  /** Every problem, each with the option's path (`connections.headersTimeoutMs`), expected and actual. */
  readonly problems: readonly Problem[];

  constructor(problems: readonly Problem[]) {
    super(`Invalid server options: ${problems.map((p) => p.message).join('; ')}`);
    this.name = 'ServerOptionsError';
    this.problems = problems;
  }
}

/** One option that conflicts with another: the problem, its actual value said in words (`both given`). */
export function optionConflict(path: string, expected: string, actual: string): Problem {
  return { path, expected, actual, message: `${path}: expected ${expected}, got ${actual}` };
}

/** True when `e` is a {@link ServerOptionsError}, from this copy of sendpool or another. */
export function isServerOptionsError(e: unknown): e is ServerOptionsError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[OPTIONS] === true;
}
