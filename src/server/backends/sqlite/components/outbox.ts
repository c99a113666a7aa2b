/**
 * The webhook events still to deliver (the outbox, by id): written with the step that made them
 * (staged-writes.ts), deleted in a later step once delivered or given up. A restart delivers again
 * those not known delivered (at least once, deduplicable by id).
 */
import type { WrittenEvent } from '../../../ports/persistence.js';
import type { Durable } from './durable.js';
import { keyedRowsTables } from './keyed-rows.js';

export const outbox: Durable<'outbox'> = {
  name: 'outbox',
  tables: keyedRowsTables(
    'outbox',
    `
    CREATE TABLE IF NOT EXISTS outbox (id TEXT PRIMARY KEY, row TEXT NOT NULL);`,
  ),
  component: ({ staged, parts }) => ({
    takeChanges: () => staged.takeOutbox(),
    restore: (rows) => parts().deliver(rows.map(([, record]) => record as WrittenEvent)),
  }),
};
