/**
 * Errors and exit codes of the command line. A `UsageError` is the user's to fix (a bad flag, a bad
 * file, an unknown business): one message, exit code 2, nothing written. Anything else is a bug:
 * exit 1. A forecast or simulation that ran but did not send every message exits 3, its output
 * written in full, so a script can tell "not done by the horizon" from "done".
 */

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_INCOMPLETE = 3;

const USAGE = Symbol.for('sendpool.cli.UsageError');

/** Input the user must fix; `message` is complete (file, JSON path, value) and printed as is. */
export class UsageError extends Error {
  readonly [USAGE] = true;
  readonly exitCode = EXIT_USAGE;

  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function isUsageError(e: unknown): e is UsageError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[USAGE] === true;
}

/** Several problems of one file as one message: a count, then one line per problem. */
export function fileProblems(file: string, lines: readonly string[]): string {
  if (lines.length === 1) return lines[0]!;
  const shown = lines.slice(0, 30);
  if (lines.length > 30) shown.push(`… and ${lines.length - 30} more`);
  return `${file}: ${lines.length} problems\n${shown.map((l) => `  ${l}`).join('\n')}`;
}
