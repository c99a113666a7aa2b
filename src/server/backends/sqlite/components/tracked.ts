/**
 * The messages and SMS the notifier remembers for their later statuses (tracked-messages.ts; keys
 * `m:` + message id, `s:` + SMS id), in the order first written; dropped at a final status or beyond
 * the bound.
 */
import type { Durable } from './durable.js';
import { keyedRowsTables } from './keyed-rows.js';

export const tracked: Durable<'tracked'> = {
  name: 'tracked',
  tables: keyedRowsTables(
    'tracked',
    `
    CREATE TABLE IF NOT EXISTS tracked (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);`,
    'n',
  ),
  component: ({ parts }) => ({
    takeChanges(full) {
      const { trackedPut, trackedDelete } = parts().notifier.takeTracked(full);
      return trackedPut.length + trackedDelete.length > 0 ? { put: trackedPut, delete: trackedDelete } : undefined;
    },
    restore: (rows) => parts().notifier.restoreTracked(rows),
  }),
};
