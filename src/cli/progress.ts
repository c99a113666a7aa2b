/**
 * The progress bar of `simulate`, drawn on standard error only when it is a terminal and the
 * output is not --json. Redrawn at most every 100 ms of wall time, erased when done.
 */
import type { Io } from './io.js';
import { formatDuration } from './duration.js';
import { count } from './format.js';

const REDRAW_MS = 100;

export interface Progress {
  update(done: number, simulatedMs: number): void;
  finish(): void;
}

export const noProgress: Progress = { update() {}, finish() {} };

export function progressBar(io: Io, total: number): Progress {
  let last = -Infinity;
  let drawn = false;
  return {
    update(done, simulatedMs) {
      const now = io.wallNow();
      if (now - last < REDRAW_MS) return;
      last = now;
      const width = Math.max(10, Math.min(40, (io.errColumns ?? 80) - 60));
      const ratio = total > 0 ? Math.min(1, done / total) : 1;
      const filled = Math.round(ratio * width);
      const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
      io.err(`\r\x1b[2Ksimulating [${bar}] ${(ratio * 100).toFixed(0).padStart(3)} %  ${count(done)}/${count(total)}  at ${formatDuration(simulatedMs)}`);
      drawn = true;
    },
    finish() {
      if (drawn) io.err('\r\x1b[2K');
    },
  };
}
