/**
 * `--recover` on a damaged database file: every row that can still be read is copied into a new
 * database of the same tables, and what could not be is counted per table. Rows are read in key
 * order until the damage stops the read, then from the other end back to it, so a damaged page in
 * the middle of a table costs the rows on it only. TEXT values are read as BLOBs (libsql aborts the
 * process on a TEXT value that is not UTF-8) and a row whose text is not UTF-8, or whose JSON does
 * not parse, is left out.
 */
import type { Database, Libsql } from './store-check.js';

/** Rows of one table that could not be copied. */
export interface LostRows {
  readonly table: string;
  /** How many, when known (rows left out); null when a damaged stretch hid them (their number is unknown). */
  readonly rows: number | null;
  /** Which: the keys around the damaged stretch, or why rows were left out. */
  readonly detail: string;
}

/** Columns whose text is JSON (the rows' values). */
const JSON_COLUMNS = new Set(['value', 'row', 'contacts', 'entries']);
const strict = new TextDecoder('utf-8', { fatal: true });

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

interface Column {
  readonly name: string;
  readonly text: boolean;
  readonly pk: number;
}

/**
 * Copies what `source` (opened read-only) holds into `target` (a new file, its tables created by
 * `createSchema`); returns what was lost.
 */
export function salvage(Libsql: Libsql, source: string, target: string, createSchema: (db: Database) => void): LostRows[] {
  const lost: LostRows[] = [];
  const from = new Libsql(`file:${source}?mode=ro`);
  const to = new Libsql(target);
  try {
    to.exec('PRAGMA journal_mode=DELETE');
    createSchema(to);
    const tables = to
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all()
      .map((r) => String(r['name']));
    to.exec('BEGIN');
    for (const table of tables) {
      let columns: Column[];
      try {
        columns = from
          .prepare(`PRAGMA table_info(${table})`)
          .all()
          .map((c) => ({ name: String(c['name']), text: String(c['type']).toUpperCase() === 'TEXT', pk: Number(c['pk']) }));
      } catch (e) {
        lost.push({ table, rows: null, detail: `its definition cannot be read: ${message(e)}` });
        continue;
      }
      if (columns.length === 0) continue; // not in the damaged file (an older schema)
      const wanted = new Set(
        to
          .prepare(`PRAGMA table_info(${table})`)
          .all()
          .map((c) => String(c['name'])),
      );
      columns = columns.filter((c) => wanted.has(c.name));
      const keyColumns = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
      // A rowid table is read by rowid; one WITHOUT ROWID by its primary key.
      let rowid = true;
      try {
        from.prepare(`SELECT rowid FROM ${table} LIMIT 0`);
      } catch {
        rowid = false;
      }
      const order = rowid ? ['rowid'] : keyColumns.map((c) => c.name);
      const select = `SELECT ${rowid ? 'rowid AS _key, ' : ''}${columns.map((c) => (c.text ? `CAST(${c.name} AS BLOB) AS ${c.name}` : c.name)).join(', ')} FROM ${table}`;
      const insert = to.prepare(`INSERT OR IGNORE INTO ${table} (${columns.map((c) => c.name).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
      const part = (v: unknown) => (v instanceof ArrayBuffer || v instanceof Uint8Array ? Buffer.from(v as ArrayBuffer).toString('latin1') : String(v));
      const keyOf = (r: Record<string, unknown>) => (rowid ? String(r['_key']) : JSON.stringify(keyColumns.map((c) => part(r[c.name]))));
      const seen = new Set<string>();
      let bad = 0;
      const badKeys: string[] = [];
      const copy = (r: Record<string, unknown>): void => {
        const values: unknown[] = [];
        for (const c of columns) {
          const v = r[c.name];
          if (!c.text || v === null || v === undefined) {
            // A BLOB comes back as an ArrayBuffer, and is bound as a Buffer.
            values.push(v instanceof ArrayBuffer ? Buffer.from(v) : (v ?? null));
            continue;
          }
          let s: string;
          try {
            s = strict.decode(v instanceof ArrayBuffer ? new Uint8Array(v) : (v as Uint8Array));
            if (JSON_COLUMNS.has(c.name)) JSON.parse(s);
          } catch {
            bad++;
            if (badKeys.length < 10) badKeys.push(keyOf(r));
            return;
          }
          values.push(s);
        }
        insert.run(...values);
      };
      const read = (direction: 'ASC' | 'DESC'): { last?: string; error?: string } => {
        let last: string | undefined;
        try {
          for (const r of from.prepare(`${select} ORDER BY ${order.map((o) => `${o} ${direction}`).join(', ')}`).iterate()) {
            const key = keyOf(r);
            if (seen.has(key)) return { ...(last !== undefined ? { last } : {}) };
            seen.add(key);
            last = key;
            copy(r);
          }
          return { ...(last !== undefined ? { last } : {}) };
        } catch (e) {
          return { ...(last !== undefined ? { last } : {}), error: message(e) };
        }
      };
      const forward = read('ASC');
      if (forward.error !== undefined) {
        const backward = read('DESC');
        lost.push({
          table,
          rows: null,
          detail: `a damaged stretch after key ${forward.last ?? '(the first)'} and before key ${backward.last ?? '(the end)'} could not be read (${forward.error})`,
        });
      }
      if (bad > 0) {
        const keys = `${badKeys.join(', ')}${bad > badKeys.length ? ', …' : ''}`;
        lost.push({ table, rows: bad, detail: `${bad} row${bad === 1 ? '' : 's'} with damaged text (not UTF-8, or JSON that does not parse) left out, key${bad === 1 ? '' : 's'} ${keys}` });
      }
    }
    to.exec('COMMIT');
  } finally {
    from.close();
    to.close();
  }
  return lost;
}
