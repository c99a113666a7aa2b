/**
 * A durable step of the server on the embedded database: its group commit (durability.ts) writes
 * the engine's changes and every durable component's (components/: one file each, asked in turn,
 * never by name). A failed write fails the server closed.
 */
import type { Clock } from '../../../core/clock.js';
import type { Engine } from '../../../core/engine.js';
import type { ServerStorage } from '../../../storage/sqlite-storage.js';
import type { Late } from '../../lib/late.js';
import { notWrittenBecause } from '../../lib/not-written.js';
import type { BackendParts } from '../server-backend.js';
import { collectChanges, type NamedComponent } from './components/durable.js';
import { Durability } from './durability.js';
import type { StagedWrites } from './staged-writes.js';

export interface DurableStepDeps {
  /** The server's parts, once made: the outcomes taken, what is written delivered, a failure said. */
  readonly parts: Late<BackendParts>;
  readonly engine: Engine;
  readonly clock: Clock;
  /** Every durable component: each step asks each for its changes. */
  readonly components: readonly NamedComponent[];
  /** Where events and SMS wait for the next step (the outbox and SMS components take them). */
  readonly staged: StagedWrites;
  /** Every step writes everything (`storeEverything`). */
  readonly full: boolean;
}

export function storageDurability(storage: ServerStorage, deps: DurableStepDeps): Durability {
  const parts = () => deps.parts.get();
  return new Durability({
    storage,
    engine: deps.engine,
    staged: deps.staged,
    takeOutcomes: () => parts().dispatch.takeOutcomes(),
    collect: (full) => collectChanges(deps.components, full, deps.clock.now()),
    onWritten: (records) => parts().deliver(records),
    onError: (e) => {
      // Fail closed: nothing more is answered 202 or sent; a restart resumes from what was written.
      parts().failClosed(`The server stopped taking requests: its durable writes fail${notWrittenBecause(e)}; nothing was accepted. Send it again to another instance or later.`);
      // The cause in the line itself (a full disk says so: store-open.ts, StoreWriteError).
      parts().log.fatal({ err: e }, `durable write failed: ${e instanceof Error ? e.message : String(e)}; intake and sending stopped; restart once the store is fixed`);
    },
    onJournalLost: (why) =>
      parts().log.warn(
        { event: 'intake-journal-lost', error: why },
        `the intake journal beside the store could not be written (${why}) and was deleted: a recovery of a damaged store until the next start reports lost contacts as a count and id range, without their FAILED notifications`,
      ),
    full: deps.full,
  });
}
