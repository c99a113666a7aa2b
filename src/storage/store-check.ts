/**
 * What the durable store checks before it is opened for writing (docs/server.md, "Durable state",
 * "A damaged store"): the database is opened read-only (nothing is written, checkpointed or
 * deleted, so a refused store stays as it was found), `PRAGMA quick_check` runs, every TEXT value
 * is checked to be UTF-8 (libsql aborts the whole process, a Rust panic no `catch` stops, when it
 * reads a TEXT value that is not: the check reads them as BLOBs, which it never converts), and what
 * the database says it holds is compared with the seal (store-seal.ts).
 */
import { isUtf8 } from 'node:buffer';
import { existsSync, statSync } from 'node:fs';
import type { SealFound } from './store-seal.js';

export interface Statement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Record<string, unknown>[];
  iterate(...params: unknown[]): IterableIterator<Record<string, unknown>>;
  raw(raw?: boolean): Statement;
}
export interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  readonly inTransaction: boolean;
  close(): void;
}
export type Libsql = new (path: string) => Database;

/** The durable store's files are damaged or disagree: refused at open (unless recovering). */
export class StoreDamagedError extends Error {
  /** The database file. */
  readonly file: string;
  /** What was found, one line each. */
  readonly problems: readonly string[];

  constructor(file: string, problems: readonly string[], advice: string) {
    super(`the durable store ${file} cannot be trusted:\n${problems.map((p) => `  - ${p}`).join('\n')}\n${advice}`);
    this.name = 'StoreDamagedError';
    this.file = file;
    this.problems = problems;
  }
}

/** What the database says of itself, read without writing. */
export interface DatabaseFacts {
  /** Bytes of the database file (0: missing or emptied). */
  readonly size: number;
  /** Bytes of its WAL (0: none). */
  readonly walSize: number;
  /** Structural damage and values that are not UTF-8 (empty: none found). */
  readonly damage: readonly string[];
  readonly storeId?: string;
  /** Commits the database holds (0 when it holds nothing). */
  readonly commit: number;
  readonly nextContactId?: number;
  readonly nextSeq?: number;
  readonly submitted?: number;
}

const strict = new TextDecoder('utf-8', { fatal: true });

function text(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  const bytes = value instanceof ArrayBuffer ? new Uint8Array(value) : (value as Uint8Array);
  try {
    return strict.decode(bytes);
  } catch {
    // Not UTF-8: the caller reports the value as damaged.
    return undefined;
  }
}

function fileSize(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Opens `file` read-only and reports what it holds. Nothing here reads a TEXT value as text.
 * `scanText`: check every TEXT value of every table (the cost of a full read: docs/server.md).
 */
export function inspectDatabase(Libsql: Libsql, file: string, scanText: boolean): DatabaseFacts {
  const size = fileSize(file);
  const walSize = fileSize(`${file}-wal`);
  if (size === 0) return { size, walSize, damage: [], commit: 0 };
  let db: Database;
  try {
    db = new Libsql(`file:${file}?mode=ro`);
  } catch (e) {
    return { size, walSize, damage: [`cannot be opened: ${message(e)}`], commit: 0 };
  }
  try {
    const damage = quickCheck(db);
    const values = metaValues(db, damage);
    if (scanText && damage.length === 0) damage.push(...textDamage(db));
    return { size, walSize, damage, ...metaFacts(values, damage) };
  } finally {
    db.close();
  }
}

/** SQLite's own structural check (the first 20 problems it finds). */
function quickCheck(db: Database): string[] {
  try {
    const found = (db.prepare('PRAGMA quick_check(20)').raw().all() as unknown as unknown[][]).map((r) => String(r[0]));
    return found.length === 1 && found[0] === 'ok' ? [] : [`PRAGMA quick_check: ${found.join('; ')}`];
  } catch (e) {
    return [`PRAGMA quick_check failed: ${message(e)}`];
  }
}

/** The `meta` values the checks read, as text (read as BLOBs: nothing here reads a TEXT value as text); `damage` gets why they cannot be read. */
function metaValues(db: Database, damage: string[]): Map<string, string> {
  const values = new Map<string, string>();
  try {
    const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
    if (hasMeta)
      for (const r of db.prepare("SELECT CAST(key AS BLOB) AS k, CAST(value AS BLOB) AS v FROM meta WHERE key IN ('store.id', 'store.commit', 'server.nextContactId', 'engine.totals')").all()) {
        const k = text(r['k']);
        const v = text(r['v']);
        if (k !== undefined && v !== undefined) values.set(k, v);
      }
  } catch (e) {
    damage.push(`its meta table cannot be read: ${message(e)}`);
  }
  return values;
}

/** What the `meta` values say of the store: its id, commits, next contact id, next submission number and contacts submitted; `damage` gets a value that is not JSON. */
function metaFacts(values: ReadonlyMap<string, string>, damage: string[]): Pick<DatabaseFacts, 'commit' | 'storeId' | 'nextContactId' | 'nextSeq' | 'submitted'> {
  const json = (key: string): unknown => {
    const v = values.get(key);
    try {
      return v === undefined ? undefined : JSON.parse(v);
    } catch {
      damage.push(`meta ${key}: not JSON`);
      return undefined;
    }
  };
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const totals = json('engine.totals') as { nextSeq?: unknown; counts?: { submitted?: unknown } } | undefined;
  const storeId = json('store.id');
  const nextContactId = num(json('server.nextContactId'));
  const nextSeq = num(totals?.nextSeq);
  const submitted = num(totals?.counts?.submitted);
  return {
    commit: num(json('store.commit')) ?? 0,
    ...(typeof storeId === 'string' ? { storeId } : {}),
    ...(nextContactId !== undefined ? { nextContactId } : {}),
    ...(nextSeq !== undefined ? { nextSeq } : {}),
    ...(submitted !== undefined ? { submitted } : {}),
  };
}

/** TEXT values that are not UTF-8, per table (read as BLOBs: never converted by libsql). */
function textDamage(db: Database): string[] {
  const damage: string[] = [];
  const tables = db
    .prepare("SELECT CAST(name AS BLOB) AS name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all()
    .map((r) => text(r['name']));
  for (const table of tables) {
    if (table === undefined || !/^[a-z_]+$/.test(table)) {
      damage.push(`a table name is not readable (${JSON.stringify(table ?? '?')})`);
      continue;
    }
    const columns = db
      .prepare(`PRAGMA table_info(${table})`)
      .all()
      .filter((c) => String(c['type']).toUpperCase() === 'TEXT')
      .map((c) => String(c['name']));
    if (columns.length === 0) continue;
    let bad = 0;
    let rows = 0;
    try {
      const statement = db.prepare(`SELECT ${columns.map((c) => `CAST(${c} AS BLOB)`).join(', ')} FROM ${table}`).raw();
      for (const row of statement.iterate() as IterableIterator<unknown[]>) {
        rows++;
        for (const v of row) if (v !== null && !isUtf8(v as ArrayBuffer)) bad++;
      }
    } catch (e) {
      damage.push(`table ${table}: cannot be read past row ${rows}: ${message(e)}`);
      continue;
    }
    if (bad > 0) damage.push(`table ${table}: ${bad} value${bad === 1 ? '' : 's'} not UTF-8 (damaged bytes)`);
  }
  return damage;
}

/** A seal and the database compared: what the database lacks, one line each (empty: they agree). */
export function sealProblems(file: string, facts: DatabaseFacts, sealFile: string, found: SealFound): string[] {
  if (found.kind === 'absent') return [];
  if (found.kind === 'damaged') return [`${sealFile} (${found.size} bytes) cannot be read (both of its copies fail their checksum): what the database should hold is unknown`];
  const seal = found.seal;
  if (facts.storeId !== undefined && facts.storeId !== seal.storeId) {
    return [`${file} is store ${facts.storeId} but ${sealFile} is the seal of store ${seal.storeId}: the database file was replaced by another`];
  }
  if (facts.commit >= seal.commit) return [];
  const held = facts.size === 0 ? `${file} is ${existsSync(file) ? 'empty (0 bytes)' : 'missing'}` : `${file} holds ${facts.commit} commit${facts.commit === 1 ? '' : 's'}`;
  const wal = facts.walSize === 0 ? `its WAL ${file}-wal is missing or empty` : `its WAL ${file}-wal (${facts.walSize} bytes) was cut or damaged (SQLite replays a WAL up to its last intact commit)`;
  const contacts = lostContacts(facts, seal);
  return [
    `${held}, but ${sealFile} says ${seal.commit} were written: the last ${seal.commit - facts.commit} are missing${contacts ? ` (${contactsText(contacts)})` : ''}; ${facts.size === 0 ? 'the database file was deleted or emptied' : wal}`,
  ];
}

/** Contacts accepted in commits the database lacks: their count and the range of their ids. */
export interface LostContacts {
  readonly count: number;
  readonly firstId: number;
  readonly lastId: number;
}

export function lostContacts(facts: Pick<DatabaseFacts, 'nextContactId' | 'submitted'>, seal: { readonly nextContactId: number; readonly submitted: number }): LostContacts | undefined {
  const first = facts.nextContactId ?? 1;
  if (seal.nextContactId <= first) return undefined;
  return { count: Math.max(0, seal.submitted - (facts.submitted ?? 0)), firstId: first, lastId: seal.nextContactId - 1 };
}

export function contactsText(c: LostContacts): string {
  if (c.count === 0) return `no contact was accepted in them (ids ${c.firstId} to ${c.lastId} went to rejected ones)`;
  return `${c.count} contact${c.count === 1 ? '' : 's'} answered 202 and lost, ids ${c.firstId} to ${c.lastId}`;
}
