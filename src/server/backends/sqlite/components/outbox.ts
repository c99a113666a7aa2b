/**
 * The webhook events still to deliver (the outbox, by id): written with the step that made them
 * (staged-writes.ts), deleted in a later step once delivered or given up. A restart delivers again
 * those not known delivered (at least once, deduplicable by id).
 */
import { jsonRows } from '../../../../storage/sqlite-tables.js';
import type { WrittenEvent } from '../../../ports/persistence.js';
import type { Durable } from './durable.js';

export const outbox: Durable<'outbox'> = {
  name: 'outbox',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS outbox (id TEXT PRIMARY KEY, row TEXT NOT NULL);`,
    open(db) {
      const put = db.prepare('INSERT INTO outbox (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row');
      const remove = db.prepare('DELETE FROM outbox WHERE id = ?');
      return {
        write(changes) {
          for (const [id, event] of changes.put ?? []) put.run(id, JSON.stringify(event));
          for (const id of changes.delete ?? []) remove.run(id);
        },
        load() {
          const rows = jsonRows(db, 'outbox');
          return { rows, found: rows.length > 0 };
        },
      };
    },
  },
  component: ({ staged, parts }) => ({
    takeChanges: () => staged.takeOutbox(),
    restore: (rows) => parts().deliver(rows.map(([, record]) => record as WrittenEvent)),
  }),
};
