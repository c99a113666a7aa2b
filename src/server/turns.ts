/**
 * What the channel reports (a send's answer, a later status, a closed attendance…) handled in
 * turns of the event loop, in the order it came. A channel answers in bursts: the simulated
 * channel's timers, a provider's webhook of hundreds of statuses, a thousand sends answered in one
 * read. Handled where they land, each burst held the loop for tens of milliseconds and every
 * other client of the server waited (docs/benchmarks.md, "The reference server under load").
 *
 * One FIFO per server (`createTurns`): each turn of the loop handles what came for about
 * {@link SLICE_MS} (slices.ts), then lets I/O in. One queue, not one per kind, so a message's later
 * status is never handled before its send's answer. `settled()` resolves once what was queued
 * before it has been handled: the durable server acknowledges a provider's event only then, and
 * not at all when some work threw meanwhile (the provider delivers it again). A throw is a bug: it
 * is told to `onError` (the server logs it) and the queue goes on.
 */
import { SLICE_MS } from './slices.js';

export interface Turns {
  /** Handles `work` in a later turn, after everything queued before it. */
  later(work: () => void): void;
  /**
   * Resolves once everything queued so far has been handled: true when no work threw since the
   * previous `settled` resolved, false otherwise.
   */
  settled(): Promise<boolean>;
  /** Work queued and not handled yet. */
  readonly pending: number;
}

export function createTurns(onError: (e: unknown) => void): Turns {
  let queue: (() => void)[] = [];
  let head = 0;
  let scheduled = false;
  /** A work threw since the last `settled` resolved. */
  let failed = false;

  const turn = () => {
    scheduled = false;
    const started = performance.now();
    while (head < queue.length) {
      const work = queue[head]!;
      queue[head++] = NOOP;
      try {
        work();
      } catch (e) {
        failed = true;
        try {
          onError(e);
        } catch {
          // The report failed too: the queue still goes on.
        }
      }
      if (performance.now() - started >= SLICE_MS) break;
    }
    if (head === queue.length) {
      queue = [];
      head = 0;
    } else {
      // A long backlog: the handled front is dropped now and then, so the array does not only grow.
      if (head > 1024 && head * 2 > queue.length) {
        queue = queue.slice(head);
        head = 0;
      }
      schedule();
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    // setImmediate: after this turn's I/O callbacks (other requests), before the next poll.
    setImmediate(turn);
  };

  return {
    later(work) {
      queue.push(work);
      schedule();
    },
    settled() {
      const done = () => {
        const ok = !failed;
        failed = false;
        return ok;
      };
      if (head === queue.length) return Promise.resolve(done());
      return new Promise<boolean>((resolve) => this.later(() => resolve(done())));
    },
    get pending() {
      return queue.length - head;
    },
  };
}

const NOOP = () => undefined;
