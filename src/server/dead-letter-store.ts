/**
 * Where the server keeps its dead letters, whatever keeps its state: the book in this process
 * (memory, and on the durable server written with each step), or Redis (shared by every instance:
 * backends/redis/shared-dead-letters.ts). The routes (features/dead-letters.ts) and the delivery worker's
 * outcomes go through this interface only.
 *
 * A replay puts the event back into the outbox under its event id (`Outbox.replay`: due at once,
 * whatever the outbox remembers of that id) and takes it out of the dead letters in the same step:
 * on the durable server and on Redis the replay is kept before it is answered.
 */
import type { Clock } from '../core/clock.js';
import type { OutboxEvent } from '../events/outbox.js';
import type { DeadLetterBook } from './dead-letters.js';
import type { DeadLetter, DeadLetterStore } from './ports/dead-letters.js';

export type { DeadLetterStore } from './ports/dead-letters.js';

interface LocalDeps {
  readonly book: DeadLetterBook;
  readonly clock: Clock;
  /**
   * Puts replayed events back into the outbox: in memory at once; on the durable server written
   * back to the outbox table and out of the dead letters in one step, which this resolves after.
   */
  readonly replay: (events: readonly OutboxEvent[]) => Promise<void>;
}

/** The dead letters of one process: in memory, or on the durable server written with each step. */
export function localDeadLetters(deps: LocalDeps): DeadLetterStore {
  const { book, clock } = deps;
  const replay = async (letters: readonly DeadLetter[]) => {
    if (letters.length === 0) return;
    await deps.replay(letters.map((d) => d.event));
  };
  return {
    deadLettered: (d) => book.add(d, clock.now()),
    list: async (scope, query) => book.list(scope, query, clock.now()),
    replay: async (scope, eventId) => {
      const d = book.take(scope, eventId);
      if (d) await replay([d]);
      return d;
    },
    replayAll: async (scope, family) => {
      const letters = book.takeAll(scope, family);
      await replay(letters);
      return letters.length;
    },
    counts: async () => book.counts(),
    rows: () => book.rows(),
  };
}
