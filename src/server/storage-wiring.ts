/**
 * The server on the embedded database (`storage`), wired: its group commit (durability.ts) and
 * what each step writes besides the engine's changes: the next contact id, the companies' webhook
 * configurations, the reports (only when they changed), the report token key the server made, the
 * notifier's campaign statistics and tracked messages, campaign phones, the phones businesses took
 * per template type (already_sent), the blocklist, the activity
 * log and the channel's memory. A failed write fails the server closed.
 *
 * Separate from buildServer, which asks for it only when `storage` is set, as it asks
 * redis/redis-wiring.ts for the server on Redis: this is what one process keeps on disk.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { WrittenEvent } from './enqueued-runs.js';
import type { ServerStorage, StorageStep } from '../storage/sqlite-storage.js';
import type { DeadLetterBook } from './dead-letters.js';
import type { ActivityLog } from './activity-log.js';
import type { ChannelMemoryChanges, ChannelMemoryStore } from './channels/memory.js';
import type { ServerContext } from './context.js';
import { Durability } from './durability.js';
import { notWrittenBecause } from './routes/written.js';

export interface StorageWiringParts {
  readonly ctx: ServerContext;
  readonly activity: ActivityLog;
  readonly channelMemory: ChannelMemoryStore;
  /** Whether the reports changed since the last step; asking forgets it. */
  readonly takeReportsChanged: () => boolean;
  /** The report token key the server made, as text, to sign the same links after a restart. @default none: the host's */
  readonly reportTokenKey: string | undefined;
  /** Puts written webhook events in the outbox (runs to the notifier) and kicks the delivery worker. */
  readonly deliver: (events: readonly WrittenEvent[]) => void;
  readonly log: FastifyBaseLogger;
  /** Every step writes everything (`storeEverything`). */
  readonly full: boolean;
  /** The dead letters: their changes go with each step (the one that deletes their events from the outbox). */
  readonly deadLetters: DeadLetterBook;
}

export function storageDurability(storage: ServerStorage, parts: StorageWiringParts): Durability {
  const { ctx, activity, channelMemory, reportTokenKey } = parts;
  const { notifier, campaignPhones, blocklist } = ctx;
  return new Durability({
    storage,
    engine: ctx.engine,
    takeOutcomes: () => ctx.dispatch.takeOutcomes(),
    collect: (full) => {
      const reports = parts.takeReportsChanged() || full ? { reports: ctx.reports.snapshot() } : {};
      const changes = notifier.takeChanges(full);
      return {
        values: { nextContactId: ctx.contactIds.next, webhooks: notifier.webhooks(), ...reports, ...(reportTokenKey !== undefined ? { reportTokenKey } : {}) },
        ...(changes.statistics.length > 0 ? { statistics: changes.statistics } : {}),
        ...(changes.trackedPut.length > 0 ? { trackedPut: changes.trackedPut } : {}),
        ...(changes.trackedDelete.length > 0 ? { trackedDelete: changes.trackedDelete } : {}),
        campaignPhones: campaignPhones.takeChanges(full),
        // A 202's answer under its idempotency key: in the transaction that writes its contacts.
        idempotency: ctx.idempotency.takeChanges(ctx.clock.now(), full),
        sentPhones: ctx.sentPhones.takeChanges(full),
        blocklist: blocklist.takeChanges(full),
        ...activity.takeChanges(full),
        ...channelMemoryStep(channelMemory),
        ...deadLetterStep(parts.deadLetters),
      };
    },
    onWritten: parts.deliver,
    onError: (e) => {
      // Fail closed: nothing more is answered 202 or sent; a restart resumes from what was written.
      ctx.closing = true;
      ctx.closedBecause = `The server stopped taking requests: its durable writes fail${notWrittenBecause(e)}; nothing was accepted. Send it again to another instance or later.`;
      // The cause in the line itself (a full disk says so: store-open.ts, StoreWriteError).
      parts.log.fatal({ err: e }, `durable write failed: ${e instanceof Error ? e.message : String(e)}; intake and sending stopped; restart once the store is fixed`);
    },
    onJournalLost: (why) =>
      parts.log.warn(
        { event: 'intake-journal-lost', error: why },
        `the intake journal beside the store could not be written (${why}) and was deleted: a recovery of a damaged store until the next start reports lost contacts as a count and id range, without their FAILED notifications`,
      ),
    full: parts.full,
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
