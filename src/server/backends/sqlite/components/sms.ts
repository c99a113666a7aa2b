/**
 * The SMS accepted and not answered by the gateway, in the order accepted: written before their 202
 * (staged-writes.ts), deleted once answered. A restart sends them again (at least once).
 */
import { jsonRows } from '../../../../storage/sqlite-tables.js';
import type { OutgoingSms } from '../../../ports/channel.js';
import type { Durable } from './durable.js';

export const sms: Durable<'sms'> = {
  name: 'sms',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS sms (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);`,
    open(db) {
      const put = db.prepare('INSERT INTO sms (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row');
      const remove = db.prepare('DELETE FROM sms WHERE id = ?');
      return {
        write(changes) {
          for (const [id, item] of changes.put ?? []) put.run(id, JSON.stringify(item));
          for (const id of changes.delete ?? []) remove.run(id);
        },
        load() {
          const rows = jsonRows(db, 'sms', 'n');
          return { rows, found: rows.length > 0 };
        },
      };
    },
  },
  component: ({ staged, parts }) => ({
    takeChanges: () => staged.takeSms(),
    restore: (rows) => parts().sms.restore(rows.map(([, item]) => item as OutgoingSms)),
  }),
};
