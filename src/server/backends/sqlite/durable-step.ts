/**
 * A durable step of the server on the embedded database: its group commit (durability.ts) and
 * what each step writes besides the engine's changes: the next contact id, the companies' webhook
 * configurations, the reports (only when they changed), the report token key the server made, the
 * notifier's campaign statistics and tracked messages, campaign phones, the phones businesses took
 * per template type (already_sent), the blocklist, the activity log and the channel's memory. A
 * failed write fails the server closed.
 */
import type { Clock } from '../../../core/clock.js';
import type { Engine } from '../../../core/engine.js';
import type { ServerStorage, StorageStep } from '../../../storage/sqlite-storage.js';
import type { DeadLetterBook } from '../../dead-letters.js';
import type { ChannelMemoryChanges, ChannelMemoryStore } from '../../channels/memory.js';
import type { IdempotencyBook } from '../../idempotency.js';
import type { Late } from '../../lib/late.js';
import type { LocalContactIds } from '../../ports/contact-ids.js';
import { notWrittenBecause } from '../../lib/not-written.js';
import type { BackendParts } from '../server-backend.js';
import { Durability } from './durability.js';

export interface DurableStepDeps {
  /** The server's parts, once made: what each step collects from. */
  readonly parts: Late<BackendParts>;
  readonly engine: Engine;
  readonly clock: Clock;
  readonly idempotency: IdempotencyBook;
  readonly contactIds: LocalContactIds;
  /** Whether the reports changed since the last step; asking forgets it. */
  readonly takeReportsChanged: () => boolean;
  /** The report token key the server made, as text, to sign the same links after a restart. @default none: the host's */
  readonly reportTokenKey: string | undefined;
  /** Every step writes everything (`storeEverything`). */
  readonly full: boolean;
}

export function storageDurability(storage: ServerStorage, deps: DurableStepDeps): Durability {
  const { reportTokenKey } = deps;
  const parts = () => deps.parts.get();
  return new Durability({
    storage,
    engine: deps.engine,
    takeOutcomes: () => parts().dispatch.takeOutcomes(),
    collect: (full) => {
      const { notifier, campaignPhones, blocklist, sentPhones, activity, reports, channelMemory, deadLetterBook } = parts();
      const reportRows = deps.takeReportsChanged() || full ? { reports: reports.snapshot() } : {};
      const changes = notifier.takeChanges(full);
      return {
        values: { nextContactId: deps.contactIds.next, webhooks: notifier.webhooks(), ...reportRows, ...(reportTokenKey !== undefined ? { reportTokenKey } : {}) },
        ...(changes.statistics.length > 0 ? { statistics: changes.statistics } : {}),
        ...(changes.trackedPut.length > 0 ? { trackedPut: changes.trackedPut } : {}),
        ...(changes.trackedDelete.length > 0 ? { trackedDelete: changes.trackedDelete } : {}),
        campaignPhones: campaignPhones.takeChanges(full),
        // A 202's answer under its idempotency key: in the transaction that writes its contacts.
        idempotency: deps.idempotency.takeChanges(deps.clock.now(), full),
        sentPhones: sentPhones.takeChanges(full),
        blocklist: blocklist.takeChanges(full),
        ...activity.takeChanges(full),
        ...channelMemoryStep(channelMemory),
        ...deadLetterStep(deadLetterBook),
      };
    },
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

/** The dead letters' part of a durable step: kept and dropped since the last one, in order. */
function deadLetterStep(book: DeadLetterBook): Pick<StorageStep, 'deadLetters'> {
  const changes = book.takeChanges();
  return changes.length > 0 ? { deadLetters: changes.map((c) => [c.id, c.companyId, c.row?.deadLetteredAt ?? 0, c.row] as const) } : {};
}

/** The channel memory's part of a durable step: its rows since the last one, if any. */
function channelMemoryStep(memory: ChannelMemoryStore): { channelMemory?: ChannelMemoryChanges } {
  const changes = memory.takeChanges();
  return changes ? { channelMemory: changes } : {};
}
