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
 * before it has been handled: the durable server acknowledges a provider's event only then.
 */
import { SLICE_MS } from './slices.js';

export interface Turns {
  /** Handles `work` in a later turn, after everything queued before it. */
  later(work: () => void): void;
  /** Resolves once everything queued so far has been handled. */
  settled(): Promise<void>;
  /** Work queued and not handled yet. */
  readonly pending: number;
}

export function createTurns(onError: (e: unknown) => void): Turns {
  let queue: (() => void)[] = [];
  let head = 0;
  let scheduled = false;

  const turn = () => {
    scheduled = false;
    const started = performance.now();
    while (head < queue.length) {
      const work = queue[head]!;
      queue[head++] = NOOP;
      try {
        work();
      } catch (e) {
        onError(e);
      }
      if (performance.now() - started >= SLICE_MS) break;
    }
    if (head === queue.length) {
      queue = [];
      head = 0;
    } else schedule();
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
      if (head === queue.length) return Promise.resolve();
      return new Promise<void>((resolve) => this.later(resolve));
    },
    get pending() {
      return queue.length - head;
    },
  };
}

const NOOP = () => undefined;
