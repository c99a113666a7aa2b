/**
 * The server's database in parts (sqlite-storage.ts opens those it is given in one database and
 * writes a step in one transaction). The engine's rows (sqlite-engine-tables.ts) and the server's
 * values (sqlite-values.ts) are the store's own; every other part is the tables of one durable
 * component of the server, which registers them (src/server/backends/sqlite/components/). A part
 * owns its tables and statements, writes its component's changes, and loads its rows: a new
 * durable feature is a new part, not a change to the others.
 */
import type { Database } from './store-check.js';
import type { StorageStep, StoredState } from './server-storage.js';

/**
 * What the seal and the intake journal beside the database (store-seal.ts, intake-journal.ts) take
 * of a step as its parts write it: the texts written, not made twice.
 */
export interface StepNotes {
  readonly accepted: [seq: number, campaignId: number, contacts: string][];
  readonly ended: number[];
  readonly states: [seq: number, state: string][];
  /** The webhook configurations' text, when the step wrote them. */
  webhooks: string | undefined;
  /** The next contact id, when the step wrote it (the seal records it). */
  nextContactId: number | undefined;
}

/**
 * The `meta` table: JSON texts by key, shared by the parts under their own prefixes (`engine.`,
 * `server.`, `statistics.`) and by the store itself (`schema`, `store.commit`).
 */
export interface Meta {
  put(key: string, text: string): void;
  delete(key: string): void;
}

/** A part's tables opened on the database: what it writes of a step, what it loads at a restart. */
export interface OpenTables<Changes, Rows> {
  /** Writes its changes, inside the step's transaction. */
  write(changes: Changes, notes: StepNotes): void;
  /** Its rows, from its tables and the `meta` rows (key to text); `found`: it holds anything. */
  load(meta: ReadonlyMap<string, string>): { readonly rows: Rows; readonly found: boolean };
}

/** A part of the database: its tables, and its statements prepared on an open database. */
export interface PartTables<Changes, Rows> {
  /** CREATE … IF NOT EXISTS: run at every open, which is how a database of an older schema gains the part's tables. */
  readonly schema: string;
  /** Columns an older schema lacks, added after the tables are created. */
  upgrade?(db: Database): void;
  open(db: Database, meta: Meta): OpenTables<Changes, Rows>;
}

/** A part as the store opens it: it takes its own field of a step, and gives its own field of what a restart finds. */
export type StorePart = PartTables<StorageStep, Partial<StoredState>>;

/** The rows of a table of (id, JSON row), in the order `order` gives: [id, the row parsed]. */
export function jsonRows(db: Database, table: string, order = ''): (readonly [string, unknown])[] {
  return db
    .prepare(`SELECT id, row FROM ${table}${order === '' ? '' : ` ORDER BY ${order}`}`)
    .all()
    .map((r) => [String(r['id']), JSON.parse(String(r['row']))] as const);
}

/** Phones as a BLOB of doubles: 8 bytes a phone (the rows are read back only at a restart). */
export function phonesBlob(phones: readonly number[]): Buffer {
  return Buffer.from(Float64Array.from(phones).buffer);
}

/** Phones kept as a BLOB of doubles. A BLOB comes back as an ArrayBuffer or a Buffer, depending on the binding: copied aligned. */
export function phonesOf(blob: unknown): number[] {
  const b = blob as ArrayBuffer | Uint8Array;
  const bytes = b instanceof Uint8Array ? b : new Uint8Array(b);
  return [...new Float64Array(new Uint8Array(bytes).buffer)];
}
