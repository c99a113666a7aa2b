/**
 * The tables of a feature kept as JSON rows by id (the outbox, SMS, tracked messages): one table of
 * `(id, row)`, a put written as an upsert, a delete by id, the rows loaded back in `order`. Its
 * `schema` stays the feature's own, since the tables of existing stores differ (the outbox keys by
 * `id`, the others keep an insertion order `n`).
 */
import type { StoredRowChanges } from '../../../../storage/server-storage.js';
import { jsonRows, type PartTables } from '../../../../storage/sqlite-tables.js';

/** Rows found at a restart, in order: [id, the row parsed]. */
type KeyedRows = readonly (readonly [string, unknown])[];

export function keyedRowsTables(table: string, schema: string, order = ''): PartTables<StoredRowChanges, KeyedRows> {
  return {
    schema,
    open(db) {
      const put = db.prepare(`INSERT INTO ${table} (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row`);
      const remove = db.prepare(`DELETE FROM ${table} WHERE id = ?`);
      return {
        write(changes) {
          for (const [id, row] of changes.put ?? []) put.run(id, JSON.stringify(row));
          for (const id of changes.delete ?? []) remove.run(id);
        },
        load() {
          const rows = jsonRows(db, table, order);
          return { rows, found: rows.length > 0 };
        },
      };
    },
  };
}
