import type { Io } from '../io.js';

/** One `sendpool` command. */
export interface Command {
  readonly name: string;
  /** One line for `sendpool --help`. */
  readonly summary: string;
  /** The whole `--help` text. */
  readonly help: string;
  /** Runs with the arguments after the command name; resolves to the exit code. */
  run(argv: readonly string[], io: Io): number | Promise<number>;
}
