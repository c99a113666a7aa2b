/**
 * The dead letters (dead-letters.ts): kept in the step that deletes the event from the outbox (a
 * crash keeps one of the two, never both or neither), dropped when replayed, in the order written.
 */
import type { DeadLetter } from '../../../dead-letters.js';
import type { Durable } from './durable.js';

export const deadLetters: Durable<'deadLetters'> = {
  name: 'deadLetters',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS dead_letters (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, company INTEGER NOT NULL, at INTEGER NOT NULL, row TEXT NOT NULL);`,
    open(db) {
      // A dead letter kept again (replayed and dead-lettered again) goes to the end of the order.
      const put = db.prepare('INSERT OR REPLACE INTO dead_letters (id, company, at, row) VALUES (?, ?, ?, ?)');
      const remove = db.prepare('DELETE FROM dead_letters WHERE id = ?');
      return {
        write(changes) {
          for (const [id, companyId, at, row] of changes) {
            if (row === null) remove.run(id);
            else put.run(id, companyId, at, JSON.stringify(row));
          }
        },
        load() {
          const rows = db
            .prepare('SELECT row FROM dead_letters ORDER BY n')
            .all()
            .map((r) => JSON.parse(String(r['row'])) as unknown);
          return { rows, found: rows.length > 0 };
        },
      };
    },
  },
  component: ({ parts }) => ({
    takeChanges() {
      const changes = parts().deadLetterBook.takeChanges();
      return changes.length > 0 ? changes.map((c) => [c.id, c.companyId, c.row?.deadLetteredAt ?? 0, c.row] as const) : undefined;
    },
    restore: (rows) => parts().deadLetterBook.load((rows ?? []) as readonly DeadLetter[]),
  }),
};
