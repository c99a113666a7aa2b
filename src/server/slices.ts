/**
 * Long work of a request in slices, so other requests are answered in between: decoding and
 * checking a 10,000-contact body is about 35 ms of work (docs/benchmarks.md, "Large requests and
 * the event loop"), and while it runs in one piece every other client of the server waits.
 *
 * One queue for the whole process, because the event loop is the process's: each turn of the loop
 * runs one slice of one piece of work, for about {@link SLICE_MS}, then the next piece's slice on
 * the next turn, round-robin. So however many large requests are in progress, the loop is never
 * held longer than one slice between two turns, and each request keeps moving.
 */

/** Time one slice may run before the loop gets its turn (a unit of work is never cut). */
export const SLICE_MS = 2;

/**
 * One unit of a piece of work: does a little (well under {@link SLICE_MS}) and answers true when the
 * work is finished. A throw ends the work with that error.
 */
export type SliceUnit = () => boolean;

interface Job {
  readonly unit: SliceUnit;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

const jobs: Job[] = [];
let scheduled = false;

function turn(): void {
  scheduled = false;
  const job = jobs.shift();
  if (job === undefined) return;
  const started = performance.now();
  let done: boolean;
  try {
    do done = job.unit();
    while (!done && performance.now() - started < SLICE_MS);
  } catch (e) {
    // Settled on the next turn, like a finished piece: see below.
    setImmediate(job.reject, e);
    schedule();
    return;
  }
  // What awaits a finished piece (the rest of the request) runs on the next turn, not in the
  // microtasks right after this slice, so the slice and what follows do not make one long block.
  if (done) setImmediate(job.resolve);
  else jobs.push(job);
  schedule();
}

function schedule(): void {
  if (scheduled || jobs.length === 0) return;
  scheduled = true;
  // setImmediate: after the I/O of this turn (other requests' callbacks), before the next poll.
  setImmediate(turn);
}

/** Runs `unit` until it answers true, a slice per turn of the event loop shared with every other piece of work. */
export function runInSlices(unit: SliceUnit): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    jobs.push({ unit, resolve, reject });
    schedule();
  });
}
