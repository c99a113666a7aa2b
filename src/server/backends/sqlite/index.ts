/**
 * The sqlite backend: one process, every step written to the embedded database (libsql) before
 * what it made leaves: a 202 waits for its contacts' write, a message for the write of its
 * hand-out. A failed write fails the server closed (durable-step.ts). What the server keeps is
 * its durable components (components/), each restored from what the store kept once the server's
 * parts are made.
 */
import type { Clock } from '../../../core/clock.js';
import type { Engine } from '../../../core/engine.js';
import type { ServerStorage, StoredState } from '../../../storage/sqlite-storage.js';
import { recoverySummary } from '../../../storage/store-open.js';
import { IdempotencyBook } from '../../idempotency.js';
import { Late } from '../../lib/late.js';
import { LocalContactIds } from '../../ports/contact-ids.js';
import { reportLostContacts } from '../../recovered-contacts.js';
import { LocalBackend } from '../local.js';
import type { BackendParts } from '../server-backend.js';
import { restoreComponents } from './components/durable.js';
import { durableComponents } from './components/index.js';
import { storageDurability } from './durable-step.js';
import { StagedWrites } from './staged-writes.js';

export interface SqliteBackendOptions {
  readonly storage: ServerStorage;
  readonly engine: Engine;
  readonly clock: Clock;
  /** What the store kept (read at start). @default none: a new store */
  readonly stored: StoredState | undefined;
  /** The first contact id to give (the store's, or a snapshot's restored into it). */
  readonly nextContactId: number;
  /** The report token key the server made, as text, kept to sign the same links after a restart. @default none: the host's */
  readonly reportTokenKey: string | undefined;
  /** Every step writes everything (`storeEverything`). */
  readonly full: boolean;
}

export function createSqliteBackend(options: SqliteBackendOptions): LocalBackend {
  const { storage, clock, stored } = options;
  const parts = new Late<BackendParts>('the server parts');
  const contactIds = new LocalContactIds(options.nextContactId);
  const idempotency = new IdempotencyBook(true);
  const staged = new StagedWrites();
  // Reports are written with the step after they change, not at every step.
  let reportsChanged = false;
  const components = durableComponents({
    parts: () => parts.get(),
    idempotency,
    contactIds,
    staged,
    takeReportsChanged: () => {
      const changed = reportsChanged;
      reportsChanged = false;
      return changed;
    },
    reportTokenKey: options.reportTokenKey,
  });
  const durability = storageDurability(storage, { parts, engine: options.engine, clock, components, staged, full: options.full });
  return new LocalBackend({
    name: 'sqlite',
    engine: options.engine,
    clock,
    contactIds,
    idempotency,
    persistence: durability,
    durable: true,
    parts,
    // Written back to the outbox table, and out of the dead letters (the book's changes), in one
    // step; the events go into the outbox once it is written (Durability's onWritten).
    replay: async (events) => {
      durability.replay(events);
      await durability.commit();
    },
    reportsChanged: () => {
      reportsChanged = true;
      durability.schedule();
    },
    // What the store kept, into the parts as soon as they are made (before any traffic).
    restore: () => {
      if (stored) restoreComponents(components, stored, clock.now());
    },
    metricsSources: () => (storage.recovery ? { recovery: storage.recovery } : {}),
    start: () => {
      const { log, notifier } = parts.get();
      // A store started with `recover` says what it lost, once, at error level (docs/server.md, "A damaged store").
      if (storage.recovery) log.error({ recovery: storage.recovery }, recoverySummary(storage.recovery));
      // Contacts the intake journal names as lost: reported FAILED, with the first step.
      if (storage.loss) reportLostContacts(storage.loss, { notifier, clock, storedWebhooks: stored?.values.get('webhooks'), log });
    },
  });
}
