/** What a command may touch: its output streams, the files it reads and writes, wall time. */
import { readFileSync, writeFileSync } from 'node:fs';

export interface Io {
  /** Standard output (results). */
  out(text: string): void;
  /** Standard error (messages, the progress bar). */
  err(text: string): void;
  /** True when standard error is a terminal: the progress bar is drawn only then. */
  readonly errIsTTY: boolean;
  /** Columns of the terminal on standard error, when known. */
  readonly errColumns: number | undefined;
  readFile(path: string): string;
  writeFile(path: string, data: string): void;
  /** Wall-clock milliseconds, for the progress bar's pace and the run's timing. */
  wallNow(): number;
}

export const processIo: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  errIsTTY: process.stderr.isTTY === true,
  errColumns: process.stderr.columns,
  readFile: (path) => readFileSync(path, 'utf8'),
  writeFile: (path, data) => writeFileSync(path, data),
  wallNow: () => performance.now(),
};
