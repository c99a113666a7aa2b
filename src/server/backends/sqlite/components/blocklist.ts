/** Each company's blocked phones (blocklist.ts): a row per phone, added or removed in order. */
import type { StoredBlockEntry } from '../../../../storage/server-storage.js';
import type { Durable } from './durable.js';

export const blocklist: Durable<'blocklist'> = {
  name: 'blocklist',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS blocklist (company INTEGER NOT NULL, phone TEXT NOT NULL, added_at INTEGER NOT NULL, source TEXT NOT NULL, PRIMARY KEY (company, phone)) WITHOUT ROWID;`,
    open(db) {
      const put = db.prepare(
        'INSERT INTO blocklist (company, phone, added_at, source) VALUES (?, ?, ?, ?) ON CONFLICT(company, phone) DO UPDATE SET added_at = excluded.added_at, source = excluded.source',
      );
      const remove = db.prepare('DELETE FROM blocklist WHERE company = ? AND phone = ?');
      return {
        write(changes) {
          for (const b of changes) {
            if (b.entry === null) remove.run(b.companyId, b.phone);
            else put.run(b.companyId, b.phone, b.entry.addedAt, b.entry.source);
          }
        },
        load() {
          const rows = db
            .prepare('SELECT company, phone, added_at, source FROM blocklist')
            .all()
            .map((r) => ({
              companyId: Number(r['company']),
              entry: { phone: String(r['phone']), addedAt: Number(r['added_at']), source: String(r['source']) as StoredBlockEntry['source'] },
            }));
          return { rows, found: rows.length > 0 };
        },
      };
    },
  },
  component: ({ parts }) => ({
    takeChanges(full) {
      const changes = parts().blocklist.takeChanges(full);
      return changes.length > 0 ? changes : undefined;
    },
    restore: (rows) => parts().blocklist.load(rows),
  }),
};
