/**
 * `p-queue`: one queue per number with an interval cap (messages per hour), round-robin over the
 * queues, templates round-robin. Each assignment is a task added to its number's queue; a batch
 * resolves when every task has run.
 */
import PQueue from 'p-queue';
import type { AsyncPeer } from './rate-limiter-flexible.js';

export function makePQueuePeer(n: number, templateCount: number, perHour: number): AsyncPeer & { close(): void } {
  const queues = Array.from({ length: n }, () => new PQueue({ intervalCap: perHour, interval: 3_600_000 }));
  const templateIds = Array.from({ length: templateCount }, (_, k) => 100 + k);
  let rr = 0;
  let cursor = 0;
  return {
    async run(count, numbers, templates) {
      const pending: Promise<void>[] = new Array<Promise<void>>(count);
      for (let i = 0; i < count; i++) {
        const m = rr;
        rr = rr + 1 === n ? 0 : rr + 1;
        const template = templateIds[cursor]!;
        cursor = cursor + 1 === templateCount ? 0 : cursor + 1;
        pending[i] = queues[m]!.add(() => {
          numbers[i] = m;
          templates[i] = template;
        });
      }
      await Promise.all(pending);
      return count;
    },
    close() {
      for (const q of queues) {
        q.clear();
        q.pause();
      }
    },
  };
}
