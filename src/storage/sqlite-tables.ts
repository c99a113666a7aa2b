/**
 * The server's database in parts, one per kind of state it keeps (sqlite-storage.ts opens them all
 * in one database and writes a step in one transaction). A part owns its tables and statements,
 * writes its fields of a step, and loads its part of what a restart finds: a new durable feature is
 * a new part, not a change to the others.
 */
import type { Database } from './store-check.js';
import type { StorageStep, StoredState } from './server-storage.js';

/** What the intake journal beside the database (intake-journal.ts) takes of a step: the texts written, not made twice. */
export interface JournalNotes {
  readonly accepted: [seq: number, campaignId: number, contacts: string][];
  readonly ended: number[];
  readonly states: [seq: number, state: string][];
  /** The webhook configurations' text, when the step wrote them. */
  webhooks: string | undefined;
}

/**
 * The `meta` table: JSON texts by key, shared by the parts under their own prefixes (`engine.`,
 * `server.`, `statistics.`) and by the store itself (`schema`, `store.commit`).
 */
export interface Meta {
  put(key: string, text: string): void;
  delete(key: string): void;
}

/** A part opened on the database. */
export interface TablePart<K extends keyof StoredState> {
  write(step: StorageStep, notes: JournalNotes): void;
  /** Its part of what a restart finds, from its tables and the `meta` rows (key to text); `found`: it holds anything. */
  load(meta: ReadonlyMap<string, string>): { readonly part: Pick<StoredState, K>; readonly found: boolean };
}

/** A part of the database: its tables, and its statements prepared on an open database. */
export interface TableSet<K extends keyof StoredState> {
  /** CREATE … IF NOT EXISTS: run at every open, which is how a database of an older schema gains the part's tables. */
  readonly schema: string;
  /** Columns an older schema lacks, added after the tables are created. */
  upgrade?(db: Database): void;
  open(db: Database, meta: Meta): TablePart<K>;
}

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
