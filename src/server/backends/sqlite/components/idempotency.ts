/**
 * Idempotency keys' first answers (idempotency.ts), by company and key: written with the request's
 * contacts, dropped after their 24 h (every step drops those older).
 */
import type { StoredIdempotency } from '../../../../storage/server-storage.js';
import type { Durable } from './durable.js';

export const idempotency: Durable<'idempotency'> = {
  name: 'idempotency',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS idempotency (company INTEGER NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, at INTEGER NOT NULL, answer TEXT NOT NULL, PRIMARY KEY (company, key)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS idempotency_at ON idempotency (at);`,
    open(db) {
      const put = db.prepare(
        'INSERT INTO idempotency (company, key, fingerprint, at, answer) VALUES (?, ?, ?, ?, ?) ON CONFLICT(company, key) DO UPDATE SET fingerprint = excluded.fingerprint, at = excluded.at, answer = excluded.answer',
      );
      const remove = db.prepare('DELETE FROM idempotency WHERE company = ? AND key = ?');
      const prune = db.prepare('DELETE FROM idempotency WHERE at < ?');
      return {
        write(changes) {
          for (const d of changes.deleted) remove.run(d.companyId, d.key);
          for (const r of changes.put) put.run(r.companyId, r.key, r.fingerprint, r.at, r.answer);
          if (changes.before !== undefined) prune.run(changes.before);
        },
        load() {
          const rows = db
            .prepare('SELECT company, key, fingerprint, at, answer FROM idempotency ORDER BY at')
            .all()
            .map((r): StoredIdempotency => ({ companyId: Number(r['company']), key: String(r['key']), fingerprint: String(r['fingerprint']), at: Number(r['at']), answer: String(r['answer']) }));
          return { rows, found: rows.length > 0 };
        },
      };
    },
  },
  // A 202's answer under its key: in the transaction that writes its contacts.
  component: ({ idempotency: book }) => ({
    takeChanges: (full, now) => book.takeChanges(now, full),
    restore: (rows, now) => book.load(rows ?? [], now),
  }),
};
