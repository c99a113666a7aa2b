/**
 * The messages and SMS the notifier remembers for their later statuses (tracked-messages.ts; keys
 * `m:` + message id, `s:` + SMS id), in the order first written; dropped at a final status or beyond
 * the bound.
 */
import { jsonRows } from '../../../../storage/sqlite-tables.js';
import type { Durable } from './durable.js';

export const tracked: Durable<'tracked'> = {
  name: 'tracked',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS tracked (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);`,
    open(db) {
      const put = db.prepare('INSERT INTO tracked (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row');
      const remove = db.prepare('DELETE FROM tracked WHERE id = ?');
      return {
        write(changes) {
          for (const [id, message] of changes.put ?? []) put.run(id, JSON.stringify(message));
          for (const id of changes.delete ?? []) remove.run(id);
        },
        load() {
          const rows = jsonRows(db, 'tracked', 'n');
          return { rows, found: rows.length > 0 };
        },
      };
    },
  },
  component: ({ parts }) => ({
    takeChanges(full) {
      const { trackedPut, trackedDelete } = parts().notifier.takeTracked(full);
      return trackedPut.length + trackedDelete.length > 0 ? { put: trackedPut, delete: trackedDelete } : undefined;
    },
    restore: (rows) => parts().notifier.restoreTracked(rows),
  }),
};
