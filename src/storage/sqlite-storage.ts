/**
 * The server's durable state in an embedded SQLite database (through `libsql`, an optional peer:
 * prebuilt, nothing to compile). WAL journal with `synchronous=FULL`: when `write` returns, the
 * step is on disk, and a crash at any moment leaves every step written before it (a torn last
 * write is rolled back by SQLite itself).
 *
 * What it keeps is in parts, each with its own tables, statements, writes and loads
 * (sqlite-tables.ts): the engine's rows (sqlite-engine-tables.ts: one row per live submission with
 * its contacts written once, per number, per template, the last finished submissions), and the
 * parts it is given, one per durable component of the server (the server's values,
 * sqlite-values.ts, and the tables the server registers: src/server/backends/sqlite/components/);
 * this file opens them in one database. One `write` is one transaction: a host groups the changes
 * of concurrent requests into one step, so they share one commit (docs/decisions.md, "The server's
 * database"). Each commit is counted, and the count sealed in `sendpool.db.seal` after it; the store
 * is checked against its seal, read-only, before it is opened (store-open.ts: a damaged or
 * incomplete store is refused unless `recover`).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadPeer } from '../runtime/peers.js';
import { StateFileError } from '../runtime/state-file-error.js';
import { IntakeJournal } from './intake-journal.js';
import type { ServerStorage, StorageStep, StoredState } from './server-storage.js';
import { engineTables } from './sqlite-engine-tables.js';
import type { Meta, StepNotes, StorePart } from './sqlite-tables.js';
import { type Database, type Libsql, StoreDamagedError } from './store-check.js';
import { checkStore, REFUSED_ADVICE, StoreSeal, StoreWriteError } from './store-open.js';

export type {
  ServerStorage,
  StorageStep,
  StoredBlockEntry,
  StoredCampaignPhones,
  StoredChannelMemory,
  StoredIdempotency,
  StoredRowChanges,
  StoredSentPhones,
  StoredState,
  StoredStatistics,
} from './server-storage.js';

/** Options of {@link openSqliteStorage}. */
export interface SqliteStorageOptions {
  /**
   * `FULL` syncs every commit (power-safe); `NORMAL` syncs at checkpoints only: a process crash
   * loses nothing, a power cut can lose the last commits.
   * @default 'FULL'
   */
  readonly synchronous?: 'FULL' | 'NORMAL';
  /**
   * Start from what is intact when the store is damaged or incomplete (its WAL cut, damaged or
   * deleted, the database file emptied or damaged): the files are copied aside, a damaged file is
   * replaced by a copy of its readable rows, and what was lost is reported (`storage.recovery`, a
   * report file beside the database; the contacts the intake journal names, `storage.loss`).
   * Without it such a store is refused (StoreDamagedError).
   * @default false
   */
  readonly recover?: boolean;
}

/**
 * 2 added campaign statistics and tracked messages, 3 the activity of the period reports, 4 the
 * channel's memory, 5 the dead letters, a campaign contact's stage and failure window end, and the
 * phones businesses took per template type, 6 the idempotency keys' first answers (older databases
 * are upgraded in place: they lack only tables that are created at open, and those two columns,
 * added at open; a contact row without a stage keeps the count it had).
 */
const SCHEMA_VERSION = 6;
const FILE = 'sendpool.db';

/**
 * Every table of the store and of its parts, created if missing (at each open: how an older
 * database gains the tables of later schemas).
 */
function tablesOf(parts: readonly StorePart[]): (db: Database) => void {
  const schema = `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);${engineTables.schema}${parts.map((p) => p.schema).join('')}`;
  return (db) => db.exec(schema);
}

/** libsql is loaded when a database is opened, so hosts without one do not need the package. */
async function loadLibsql(): Promise<Libsql> {
  return (await loadPeer<{ default: Libsql }>('libsql', 'The durable server')).default;
}

/**
 * Opens (creating if needed) the database in `dir` (`<dir>/sendpool.db`, with its WAL files and
 * its seal `sendpool.db.seal`) with the engine's tables and `parts`, checked first
 * (store-check.ts): a damaged or incomplete store is refused unless `recover`. The server's
 * `openSqliteStorage` gives it the server's parts (src/server/backends/sqlite/open-storage.ts).
 * @throws StoreDamagedError when the store is damaged or holds less than its seal says (and not `recover`)
 * @throws when the directory cannot be created or the file is not a sendpool database of a known schema
 */
export async function openSqliteStore(dir: string, parts: readonly StorePart[], options: SqliteStorageOptions = {}): Promise<ServerStorage> {
  const Libsql = await loadLibsql();
  mkdirSync(dir, { recursive: true });
  const file = join(dir, FILE);
  const createTables = tablesOf(parts);
  // Checked read-only before anything is written (a refused store stays as it was found).
  const checked = checkStore(Libsql, file, options.recover === true, createTables);
  const db = openDatabase(Libsql, file, options, parts, createTables);
  const putMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
  const deleteMeta = db.prepare('DELETE FROM meta WHERE key = ?');
  const meta: Meta = { put: (key, text) => putMeta.run(key, text), delete: (key) => deleteMeta.run(key) };
  const engine = engineTables.open(db, meta);
  const opened = parts.map((p) => p.open(db, meta));

  // The seal (store-seal.ts): the store's commit count, written after each commit, checked at open.
  const seal = new StoreSeal(db, file, checked);
  // The intake journal (intake-journal.ts): what a FAILED notification of contacts lost with a commit needs.
  const journal = new IntakeJournal(file);

  const load = (): StoredState | undefined => {
    const metaRows = new Map(
      db
        .prepare('SELECT key, value FROM meta')
        .all()
        .map((m) => [String(m['key']), String(m['value'])] as const),
    );
    const e = engine.load(metaRows);
    const loaded = opened.map((p) => p.load(metaRows));
    if (!e.found && !loaded.some((p) => p.found)) return undefined;
    // The journal made to hold every live submission, and only those (a store older than it, a stop before an append).
    journal.reconcile(seal.next - 1, e.live);
    // Each part gives its own field: together with the engine's rows, all of them.
    const state: Partial<StoredState> = {};
    for (const p of loaded) Object.assign(state, p.rows);
    return { ...state, rows: e.rows } as StoredState;
  };

  const write = (step: StorageStep): void => {
    // One transaction; a failed one is rolled back only if SQLite has not done so already (a full
    // disk ends it: a ROLLBACK then would hide the cause behind "no transaction is active").
    const commit = seal.next;
    const notes: StepNotes = { accepted: [], ended: [], states: [], webhooks: undefined, nextContactId: undefined };
    try {
      db.exec('BEGIN');
      if (step.engine) engine.write(step.engine, notes);
      for (const p of opened) p.write(step, notes);
      meta.put('store.commit', String(seal.next));
      db.exec('COMMIT');
    } catch (e) {
      rollback(db);
      throw new StoreWriteError(file, e);
    }
    try {
      seal.committed(notes.nextContactId, step.engine);
    } catch (e) {
      throw new StoreWriteError(`${file}.seal`, e);
    }
    // Never throws: a journal that cannot be written (a full disk) is deleted, the commit stands.
    const { webhooks, nextContactId: _sealed, ...journaled } = notes;
    journal.committed({ commit, ...journaled, ...(webhooks !== undefined ? { webhooks } : {}) });
  };

  return {
    load(): StoredState | undefined {
      try {
        return load();
      } catch (e) {
        throw new StoreDamagedError(file, [`its rows cannot be read back: ${e instanceof Error ? e.message : String(e)}`], REFUSED_ADVICE);
      }
    },
    write,
    journalLost: () => journal.abandonedBecause,
    close(): void {
      // Everything into the database file: a copy of it alone is then the whole store.
      try {
        db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      } catch {
        // the WAL stays, and is replayed at the next open
      }
      db.close();
      seal.close();
      journal.close();
    },
    ...(checked.recovery !== undefined ? { recovery: checked.recovery } : {}),
    ...(checked.loss !== undefined ? { loss: checked.loss } : {}),
  };
}

/** The database opened for writing: WAL, the sync mode asked, every table there, its schema recorded (or refused when unknown). */
function openDatabase(Libsql: Libsql, file: string, options: SqliteStorageOptions, parts: readonly StorePart[], createTables: (db: Database) => void): Database {
  const db = new Libsql(file);
  db.exec('PRAGMA journal_mode=WAL');
  db.exec(`PRAGMA synchronous=${options.synchronous ?? 'FULL'}`);
  createTables(db);
  const schema = db.prepare("SELECT value FROM meta WHERE key = 'schema'").get();
  for (const p of parts) p.upgrade?.(db);
  // Schemas 1 to 5 lack only tables and columns that were just created: upgrading is recording the new version.
  if (schema === undefined || [1, 2, 3, 4, 5].includes(Number(schema['value'])))
    db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(String(SCHEMA_VERSION));
  else if (Number(schema['value']) !== SCHEMA_VERSION) {
    db.close();
    throw new StateFileError('durable store', file, {
      field: 'meta.schema',
      expected: `a schema from 1 to ${SCHEMA_VERSION}`,
      actual: JSON.stringify(schema['value']),
      advice: 'written by another sendpool version: start that version',
    });
  }
  return db;
}

/** Ends a failed transaction, unless SQLite ended it already; the write's own error is the one reported. */
function rollback(db: Database): void {
  if (!db.inTransaction) return;
  try {
    db.exec('ROLLBACK');
  } catch {
    // the write's own error is the one to report
  }
}
