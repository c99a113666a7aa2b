/**
 * A file of sendpool's own state that this version cannot read: the durable store's database, the
 * state file and the accepted journal of a server on Redis. Shared by the backends that keep such
 * files, so a host tells them apart from every other failure at start with one guard.
 */

const STATE_FILE = Symbol.for('sendpool.StateFileError');

/** What is wrong in the file. */
export interface StateFileProblem {
  /** Where in the file: a JSON path (`$.version`), a key of its own (`meta.schema`); none for the whole file. */
  readonly field?: string;
  readonly expected: string;
  readonly actual: string;
  /** What to do about it, when there is more to say than the problem. */
  readonly advice?: string;
}

/** A file of sendpool's state written by another version, or not by sendpool: nothing was started. */
export class StateFileError extends Error {
  readonly [STATE_FILE] = true;
  /** The file at fault. */
  readonly file: string;
  /** Where in it (empty: the whole file). */
  readonly field: string;
  readonly expected: string;
  readonly actual: string;

  /**
   * @param what the kind of file, as the message starts (`accepted journal`, `redis.stateFile`)
   * @param file its path
   * @param problem what is wrong in it
   * @param cause the error that found it (a JSON parse error)
   */
  constructor(what: string, file: string, problem: StateFileProblem, cause?: unknown) {
    const at = problem.field === undefined ? '' : `${problem.field}: `;
    const advice = problem.advice === undefined ? '' : ` (${problem.advice})`;
    super(`${what} ${file}: ${at}expected ${problem.expected}, got ${problem.actual}${advice}`, cause === undefined ? {} : { cause });
    this.name = 'StateFileError';
    this.file = file;
    this.field = problem.field ?? '';
    this.expected = problem.expected;
    this.actual = problem.actual;
  }
}

/** True when `e` is a {@link StateFileError}, from this copy of sendpool or another. */
export function isStateFileError(e: unknown): e is StateFileError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[STATE_FILE] === true;
}
