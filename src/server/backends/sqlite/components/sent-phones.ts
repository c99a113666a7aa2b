/**
 * The phones businesses took per template type (`already_sent`, sent-phones.ts): a row per
 * request's phones in a time bucket, or per phones given back, replayed in order at load; the
 * buckets past the window dropped.
 */
import type { StoredSentPhones } from '../../../../storage/server-storage.js';
import { phonesBlob, phonesOf } from '../../../../storage/sqlite-tables.js';
import type { Durable } from './durable.js';

export const sentPhones: Durable<'sentPhones'> = {
  name: 'sentPhones',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS sent_phones (n INTEGER PRIMARY KEY AUTOINCREMENT, business INTEGER NOT NULL, type INTEGER NOT NULL, bucket INTEGER NOT NULL, released INTEGER NOT NULL, phones BLOB NOT NULL);
    CREATE INDEX IF NOT EXISTS sent_phones_bucket ON sent_phones (bucket);`,
    open(db) {
      const put = db.prepare('INSERT INTO sent_phones (business, type, bucket, released, phones) VALUES (?, ?, ?, ?, ?)');
      const prune = db.prepare('DELETE FROM sent_phones WHERE bucket < ?');
      return {
        write(changes) {
          for (const r of changes.rows) put.run(r.businessId, r.typeId, r.bucket, r.released === true ? 1 : 0, phonesBlob(r.phones));
          if (changes.before !== undefined) prune.run(changes.before);
        },
        load() {
          const rows = db
            .prepare('SELECT business, type, bucket, released, phones FROM sent_phones ORDER BY n')
            .all()
            .map((r): StoredSentPhones => ({
              businessId: Number(r['business']),
              typeId: Number(r['type']),
              bucket: Number(r['bucket']),
              phones: phonesOf(r['phones']),
              ...(Number(r['released']) === 1 ? { released: true } : {}),
            }));
          return { rows, found: rows.length > 0 };
        },
      };
    },
  },
  component: ({ parts }) => ({
    takeChanges(full) {
      const changes = parts().sentPhones.takeChanges(full);
      return changes.rows.length > 0 || changes.before !== undefined ? changes : undefined;
    },
    restore: (rows, now) => parts().sentPhones.load(rows, now),
  }),
};
