/**
 * The activity the period reports read (activity-log.ts: messages sent, attendances closed), in the
 * order first written, indexed by time for the retention.
 */
import { jsonRows } from '../../../../storage/sqlite-tables.js';
import type { Durable } from './durable.js';

export const activity: Durable<'activity'> = {
  name: 'activity',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS activity (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, at INTEGER NOT NULL, row TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS activity_at ON activity (at);`,
    open(db) {
      const put = db.prepare('INSERT INTO activity (id, at, row) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row');
      const remove = db.prepare('DELETE FROM activity WHERE id = ?');
      const prune = db.prepare('DELETE FROM activity WHERE at < ?');
      return {
        write(changes) {
          for (const [id, at, row] of changes.put ?? []) put.run(id, at, JSON.stringify(row));
          for (const id of changes.delete ?? []) remove.run(id);
          if (changes.before !== undefined) prune.run(changes.before);
        },
        load() {
          const rows = jsonRows(db, 'activity', 'n');
          return { rows, found: rows.length > 0 };
        },
      };
    },
  },
  component: ({ parts }) => ({
    takeChanges(full) {
      const { activityPut: put, activityDelete: dropped, activityBefore: before } = parts().activity.takeChanges(full);
      if (put === undefined && dropped === undefined && before === undefined) return undefined;
      return { ...(put ? { put } : {}), ...(dropped ? { delete: dropped } : {}), ...(before !== undefined ? { before } : {}) };
    },
    restore: (rows) => parts().activity.load(rows),
  }),
};
