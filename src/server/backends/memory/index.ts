/**
 * The memory backend: one process, its state in memory (a snapshot file on close is the host's
 * choice: `snapshotFile`). Nothing waits for a write.
 */
import type { Clock } from '../../../core/clock.js';
import type { Engine } from '../../../core/engine.js';
import { IdempotencyBook } from '../../idempotency.js';
import { Late } from '../../lib/late.js';
import { LocalContactIds } from '../../ports/contact-ids.js';
import { LocalBackend } from '../local.js';
import type { BackendParts } from '../server-backend.js';
import { MemoryPersistence } from './memory-persistence.js';

export interface MemoryBackendOptions {
  readonly engine: Engine;
  readonly clock: Clock;
  /** The first contact id to give (1, or a snapshot's). */
  readonly nextContactId: number;
}

export function createMemoryBackend(options: MemoryBackendOptions): LocalBackend {
  const parts = new Late<BackendParts>('the server parts');
  const deliver = (records: Parameters<BackendParts['deliver']>[0]) => parts.get().deliver(records);
  return new LocalBackend({
    name: 'memory',
    engine: options.engine,
    clock: options.clock,
    contactIds: new LocalContactIds(options.nextContactId),
    idempotency: new IdempotencyBook(false),
    persistence: new MemoryPersistence(deliver),
    durable: false,
    parts,
    // Replayed dead letters go back into the outbox at once.
    replay: async (events) => deliver(events.map((replay) => ({ replay }))),
  });
}
