/**
 * The server's durable state in an embedded SQLite database (through `libsql`, an optional peer:
 * prebuilt, nothing to compile). WAL journal with `synchronous=FULL`: when `write` returns, the
 * step is on disk, and a crash at any moment leaves every step written before it (a torn last
 * write is rolled back by SQLite itself).
 *
 * What it keeps is the engine's rows (core/rows.ts: one row per live submission with its contacts
 * written once, per number, per template, the last finished submissions) plus the server's own
 * values by key, its webhook outbox, the SMS not answered yet, each company's campaign statistics
 * (a row per campaign, a row per contact with a status), the messages remembered for their
 * later statuses and the activity the period reports read (messages sent, attendances closed,
 * indexed by time for the retention), and the channel's memory of the provider's ids (a row per
 * step's changes, numbered, forgotten by ranges). One `write` is one transaction: a host groups the changes of
 * concurrent requests into one step, so they share one commit (docs/decisions.md, "The server's
 * database"). Each commit is counted, and the count sealed in `sendpool.db.seal` after it; the store
 * is checked against its seal, read-only, before it is opened (store-open.ts: a damaged or
 * incomplete store is refused unless `recover`).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, type Libsql, StoreDamagedError } from './store-check.js';
import { IntakeJournal } from './intake-journal.js';
import { loadPeer } from '../runtime/peers.js';
import { StateFileError } from '../runtime/state-file-error.js';
import { checkStore, type RecoveredLoss, REFUSED_ADVICE, StoreSeal, type StoreRecovery, StoreWriteError } from './store-open.js';
import { FINISHED_KEPT } from '../core/dispatch/dispatcher.js';
import { ArgumentError } from '../core/errors.js';
import type { EngineChanges } from '../core/engine.js';
import { type EngineRows, type PortfolioRow, type SubmissionRow, emptyRows } from '../core/rows.js';

/** Recipients stay in a portfolio's count for a day after their last message. */
const DAY_MS = 86_400_000;
import type { CampaignRow, CampaignStatisticsChanges, ContactRow } from '../events/campaign-stats.js';

/** One step to write: what changed in the engine, server values, outbox events in and out. */
export interface StorageStep {
  readonly engine?: EngineChanges;
  /** Server values by key (JSON-serialisable); `undefined` deletes the key. */
  readonly values?: Readonly<Record<string, unknown>>;
  /** Outbox events to keep, by id (any JSON value). */
  readonly outboxPut?: readonly (readonly [id: string, event: unknown])[];
  /** Outbox events delivered or given up. */
  readonly outboxDelete?: readonly string[];
  /** SMS accepted, by id (any JSON value). */
  readonly smsPut?: readonly (readonly [id: string, sms: unknown])[];
  /** SMS the gateway answered. */
  readonly smsDelete?: readonly string[];
  /** What changed in each company's campaign statistics. */
  readonly statistics?: readonly { readonly companyId: number; readonly changes: CampaignStatisticsChanges }[];
  /** Messages remembered for their later statuses, by message id (any JSON value). */
  readonly trackedPut?: readonly (readonly [id: string, message: unknown])[];
  /** Messages no longer remembered (final status, or the oldest beyond the bound). */
  readonly trackedDelete?: readonly string[];
  /** Phones campaigns took (a row per request), and campaigns whose phones are dropped (applied first). */
  readonly campaignPhones?: {
    readonly added: readonly StoredCampaignPhones[];
    readonly dropped: readonly { readonly companyId: number; readonly campaignId: number }[];
  };
  /**
   * Phones businesses took per template type (`already_sent`): rows in order (a request's phones in
   * a time bucket, or phones given back), then the rows of buckets starting before `before` dropped.
   */
  readonly sentPhones?: {
    readonly rows: readonly StoredSentPhones[];
    readonly before?: number;
  };
  /**
   * Idempotency keys' first answers (src/server/idempotency.ts): rows put, keys deleted (beyond the
   * bound), and the rows kept before `before` dropped (their 24 h passed).
   */
  readonly idempotency?: {
    readonly put: readonly StoredIdempotency[];
    readonly deleted: readonly { readonly companyId: number; readonly key: string }[];
    readonly before?: number;
  };
  /** Blocklist changes, in order: an entry added, or (`entry` null) a phone removed. */
  readonly blocklist?: readonly { readonly companyId: number; readonly phone: string; readonly entry: StoredBlockEntry | null }[];
  /** Activity entries of the period reports: key, time (epoch ms), entry (any JSON value). */
  readonly activityPut?: readonly (readonly [key: string, at: number, row: unknown])[];
  /** Activity entries dropped by the count bound. */
  readonly activityDelete?: readonly string[];
  /** Activity entries with a time before this are dropped (the retention). */
  readonly activityBefore?: number;
  /**
   * The channel's memory (src/server/channels/memory.ts): keys set (a value) or deleted (null) in
   * order, numbered from `firstSeq`, kept as one row (a chunk); the chunks numbered below `before`
   * are forgotten.
   */
  readonly channelMemory?: StoredChannelMemory & { readonly before?: number };
  /**
   * Dead letters kept (a row, any JSON value) or dropped (null), in order: event id, company, the
   * time it was dead-lettered. Written in the step that deletes the event from the outbox (a crash
   * keeps one of the two, never both or neither), and the one that puts a replayed event back.
   */
  readonly deadLetters?: readonly (readonly [id: string, companyId: number, at: number, row: unknown])[];
}

/** A chunk of the channel's memory: entries numbered from `firstSeq`, a key and a value (null: deleted) each. */
export interface StoredChannelMemory {
  readonly firstSeq: number;
  readonly keys: readonly string[];
  readonly values: readonly (string | null)[];
}

/** Phones one request added to a campaign. */
export interface StoredCampaignPhones {
  readonly companyId: number;
  readonly campaignId: number;
  /** Phones as integers (normalised digits). */
  readonly phones: readonly number[];
}

/** Phones a business took for a template type in one time bucket, or (`released`) gave back. */
export interface StoredSentPhones {
  readonly businessId: number;
  readonly typeId: number;
  /** The bucket's start, epoch ms. */
  readonly bucket: number;
  /** Phones as integers (normalised digits). */
  readonly phones: readonly number[];
  /** The phones were given back (replayed in order at load). @default false */
  readonly released?: boolean;
}

/** An idempotency key's first answer. */
export interface StoredIdempotency {
  readonly companyId: number;
  readonly key: string;
  /** The body's fingerprint. */
  readonly fingerprint: string;
  /** When it was answered (epoch ms). */
  readonly at: number;
  /** The answer (JSON text). */
  readonly answer: string;
}

/** A blocked phone. */
export interface StoredBlockEntry {
  readonly phone: string;
  readonly addedAt: number;
  readonly source: 'reply' | 'operator';
}

/** One company's campaign statistics as rows (for `CampaignStatistics.fromRows`). */
export interface StoredStatistics {
  readonly lastBatchAt: number | null;
  readonly campaigns: readonly CampaignRow[];
  readonly contacts: readonly ContactRow[];
}

/** What a restart finds. */
export interface StoredState {
  readonly rows: EngineRows;
  readonly values: ReadonlyMap<string, unknown>;
  readonly outbox: readonly (readonly [string, unknown])[];
  /** SMS accepted and not answered by the gateway, in the order they were accepted. */
  readonly sms: readonly (readonly [string, unknown])[];
  /** Campaign statistics by company. */
  readonly statistics: ReadonlyMap<number, StoredStatistics>;
  /** Messages remembered for later statuses, oldest first. */
  readonly tracked: readonly (readonly [string, unknown])[];
  /** Phones each campaign took. */
  readonly campaignPhones: readonly StoredCampaignPhones[];
  /** Phones businesses took per template type, in the order written (empty in a database of schema 4 or older). */
  readonly sentPhones: readonly StoredSentPhones[];
  /** Every company's blocked phones. */
  readonly blocklist: readonly { readonly companyId: number; readonly entry: StoredBlockEntry }[];
  /** Activity entries of the period reports, in the order they were first written. */
  readonly activity: readonly (readonly [string, unknown])[];
  /** The channel's memory as the chunks written, in order. */
  readonly channelMemory: readonly StoredChannelMemory[];
  /** Dead letters kept, in the order they were written (absent before schema 5: none). */
  readonly deadLetters?: readonly unknown[];
  /** Idempotency keys' first answers, oldest first (absent before schema 6: none). */
  readonly idempotency?: readonly StoredIdempotency[];
}

/** Where the server keeps what must survive it. */
export interface ServerStorage {
  /**
   * Everything kept; undefined when nothing was ever written (a first start).
   * @throws StoreDamagedError when a row cannot be read back
   */
  load(): StoredState | undefined;
  /** Writes one step in one transaction, durably; throws (and writes nothing) when it cannot. */
  write(step: StorageStep): void;
  close(): void;
  /**
   * Why the intake journal beside the store could not be written and was deleted (until the next
   * open); undefined while it is kept. A recovery then reports lost contacts as a count and an id
   * range only. @default none (a store without a journal)
   */
  journalLost?(): string | undefined;
  /** What a start with `recover` found and reported; undefined when the store was intact. */
  readonly recovery?: StoreRecovery;
  /**
   * With `recovery`, when the store had an intake journal: the contacts it lost, for their FAILED
   * notifications, and the webhook configurations the journal recorded. @default none
   */
  readonly loss?: RecoveredLoss;
}

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

/** The value type of one of the engine's row maps (a row read back from its JSON). */
type RowOf<M> = M extends Map<unknown, infer V> ? V : never;

/** libsql is loaded when a database is opened, so hosts without one do not need the package. */
async function loadLibsql(): Promise<Libsql> {
  return (await loadPeer<{ default: Libsql }>('libsql', 'The durable server')).default;
}

/**
 * Opens (creating if needed) the database in `dir` (`<dir>/sendpool.db`, with its WAL files and
 * its seal `sendpool.db.seal`), checked first (store-check.ts): a damaged or incomplete store is
 * refused unless `recover`.
 * @throws StoreDamagedError when the store is damaged or holds less than its seal says (and not `recover`)
 * @throws when the directory cannot be created or the file is not a sendpool database of a known schema
 */
export async function openSqliteStorage(dir: string, options: SqliteStorageOptions = {}): Promise<ServerStorage> {
  const Libsql = await loadLibsql();
  mkdirSync(dir, { recursive: true });
  const file = join(dir, FILE);
  const createTables = (db: Database): void =>
    db.exec(`
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS submissions (seq INTEGER PRIMARY KEY, contacts TEXT NOT NULL, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS finished (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS numbers (phone TEXT PRIMARY KEY, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS templates (id INTEGER PRIMARY KEY, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS portfolios (id TEXT PRIMARY KEY, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS portfolio_recipients (portfolio TEXT NOT NULL, recipient TEXT NOT NULL, at INTEGER NOT NULL, made_new INTEGER NOT NULL, PRIMARY KEY (portfolio, recipient)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS portfolio_recipients_at ON portfolio_recipients (at);
    CREATE TABLE IF NOT EXISTS outbox (id TEXT PRIMARY KEY, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS sms (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS campaigns (company INTEGER NOT NULL, campaign INTEGER NOT NULL, row TEXT NOT NULL, PRIMARY KEY (company, campaign)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS campaign_contacts (
      company INTEGER NOT NULL, campaign INTEGER NOT NULL, contact TEXT NOT NULL,
      admissions INTEGER NOT NULL, attempt INTEGER NOT NULL, progress INTEGER NOT NULL,
      stage INTEGER, settle_at INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (company, campaign, contact)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS tracked (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS campaign_phones (n INTEGER PRIMARY KEY AUTOINCREMENT, company INTEGER NOT NULL, campaign INTEGER NOT NULL, phones BLOB NOT NULL);
    CREATE INDEX IF NOT EXISTS campaign_phones_campaign ON campaign_phones (company, campaign);
    CREATE TABLE IF NOT EXISTS blocklist (company INTEGER NOT NULL, phone TEXT NOT NULL, added_at INTEGER NOT NULL, source TEXT NOT NULL, PRIMARY KEY (company, phone)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS activity (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, at INTEGER NOT NULL, row TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS activity_at ON activity (at);
    CREATE TABLE IF NOT EXISTS channel_memory (seq INTEGER PRIMARY KEY, entries TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS sent_phones (n INTEGER PRIMARY KEY AUTOINCREMENT, business INTEGER NOT NULL, type INTEGER NOT NULL, bucket INTEGER NOT NULL, released INTEGER NOT NULL, phones BLOB NOT NULL);
    CREATE INDEX IF NOT EXISTS sent_phones_bucket ON sent_phones (bucket);
    CREATE TABLE IF NOT EXISTS dead_letters (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, company INTEGER NOT NULL, at INTEGER NOT NULL, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS idempotency (company INTEGER NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, at INTEGER NOT NULL, answer TEXT NOT NULL, PRIMARY KEY (company, key)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS idempotency_at ON idempotency (at);
  `);
  // Checked read-only before anything is written (a refused store stays as it was found).
  const checked = checkStore(Libsql, file, options.recover === true, createTables);
  const db = new Libsql(file);
  db.exec('PRAGMA journal_mode=WAL');
  db.exec(`PRAGMA synchronous=${options.synchronous ?? 'FULL'}`);
  createTables(db);
  const schema = db.prepare("SELECT value FROM meta WHERE key = 'schema'").get();
  // Schemas 2 to 4 have campaign contacts without a stage: the columns are added (NULL: the stage
  // the row's progress was counted as then, campaign-rows.ts).
  const contactColumns = new Set(
    db
      .prepare('PRAGMA table_info(campaign_contacts)')
      .all()
      .map((c) => String(c['name'])),
  );
  if (!contactColumns.has('stage')) db.exec('ALTER TABLE campaign_contacts ADD COLUMN stage INTEGER');
  if (!contactColumns.has('settle_at')) db.exec('ALTER TABLE campaign_contacts ADD COLUMN settle_at INTEGER NOT NULL DEFAULT 0');
  // Schemas 1 to 5 lack only tables and columns that were just created: upgrading is recording the new version.
  if (schema === undefined || [1, 2, 3, 4, 5].includes(Number(schema['value'])))
    db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(String(SCHEMA_VERSION));
  else if (Number(schema['value']) !== SCHEMA_VERSION) {
    db.close();
    throw new StateFileError('durable store', join(dir, FILE), {
      field: 'meta.schema',
      expected: `a schema from 1 to ${SCHEMA_VERSION}`,
      actual: JSON.stringify(schema['value']),
      advice: 'written by another sendpool version: start that version',
    });
  }
  const q = {
    putMeta: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
    deleteMeta: db.prepare('DELETE FROM meta WHERE key = ?'),
    insertSubmission: db.prepare('INSERT INTO submissions (seq, contacts, row) VALUES (?, ?, ?) ON CONFLICT(seq) DO UPDATE SET contacts = excluded.contacts, row = excluded.row'),
    updateSubmission: db.prepare('UPDATE submissions SET row = ? WHERE seq = ?'),
    deleteSubmission: db.prepare('DELETE FROM submissions WHERE seq = ?'),
    putFinished: db.prepare('INSERT INTO finished (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
    pruneFinished: db.prepare('DELETE FROM finished WHERE n <= (SELECT MAX(n) FROM finished) - ?'),
    putNumber: db.prepare('INSERT INTO numbers (phone, row) VALUES (?, ?) ON CONFLICT(phone) DO UPDATE SET row = excluded.row'),
    putTemplate: db.prepare('INSERT INTO templates (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
    putPortfolio: db.prepare('INSERT INTO portfolios (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
    putRecipient: db.prepare(
      'INSERT INTO portfolio_recipients (portfolio, recipient, at, made_new) VALUES (?, ?, ?, ?) ON CONFLICT(portfolio, recipient) DO UPDATE SET at = excluded.at, made_new = excluded.made_new',
    ),
    deleteRecipient: db.prepare('DELETE FROM portfolio_recipients WHERE portfolio = ? AND recipient = ?'),
    clearRecipients: db.prepare('DELETE FROM portfolio_recipients WHERE portfolio = ?'),
    pruneRecipients: db.prepare('DELETE FROM portfolio_recipients WHERE at <= ?'),
    putOutbox: db.prepare('INSERT INTO outbox (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
    deleteOutbox: db.prepare('DELETE FROM outbox WHERE id = ?'),
    putSms: db.prepare('INSERT INTO sms (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
    deleteSms: db.prepare('DELETE FROM sms WHERE id = ?'),
    putCampaign: db.prepare('INSERT INTO campaigns (company, campaign, row) VALUES (?, ?, ?) ON CONFLICT(company, campaign) DO UPDATE SET row = excluded.row'),
    putContact: db.prepare(
      'INSERT INTO campaign_contacts (company, campaign, contact, admissions, attempt, progress, stage, settle_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ' +
        'ON CONFLICT(company, campaign, contact) DO UPDATE SET admissions = excluded.admissions, attempt = excluded.attempt, progress = excluded.progress, stage = excluded.stage, settle_at = excluded.settle_at',
    ),
    deleteContacts: db.prepare('DELETE FROM campaign_contacts WHERE company = ? AND campaign = ?'),
    putTracked: db.prepare('INSERT INTO tracked (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
    deleteTracked: db.prepare('DELETE FROM tracked WHERE id = ?'),
    putPhones: db.prepare('INSERT INTO campaign_phones (company, campaign, phones) VALUES (?, ?, ?)'),
    dropPhones: db.prepare('DELETE FROM campaign_phones WHERE company = ? AND campaign = ?'),
    putSent: db.prepare('INSERT INTO sent_phones (business, type, bucket, released, phones) VALUES (?, ?, ?, ?, ?)'),
    pruneSent: db.prepare('DELETE FROM sent_phones WHERE bucket < ?'),
    putBlock: db.prepare(
      'INSERT INTO blocklist (company, phone, added_at, source) VALUES (?, ?, ?, ?) ON CONFLICT(company, phone) DO UPDATE SET added_at = excluded.added_at, source = excluded.source',
    ),
    deleteBlock: db.prepare('DELETE FROM blocklist WHERE company = ? AND phone = ?'),
    putActivity: db.prepare('INSERT INTO activity (id, at, row) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
    deleteActivity: db.prepare('DELETE FROM activity WHERE id = ?'),
    pruneActivity: db.prepare('DELETE FROM activity WHERE at < ?'),
    // A step's entries in one row (JSON [keys, values]): never looked up by key, loading replays them in order.
    putMemory: db.prepare('INSERT OR REPLACE INTO channel_memory (seq, entries) VALUES (?, ?)'),
    pruneMemory: db.prepare('DELETE FROM channel_memory WHERE seq < ?'),
    // A dead letter kept again (replayed and dead-lettered again) goes to the end of the order.
    putDeadLetter: db.prepare('INSERT OR REPLACE INTO dead_letters (id, company, at, row) VALUES (?, ?, ?, ?)'),
    deleteDeadLetter: db.prepare('DELETE FROM dead_letters WHERE id = ?'),
    putIdempotency: db.prepare(
      'INSERT INTO idempotency (company, key, fingerprint, at, answer) VALUES (?, ?, ?, ?, ?) ON CONFLICT(company, key) DO UPDATE SET fingerprint = excluded.fingerprint, at = excluded.at, answer = excluded.answer',
    ),
    deleteIdempotency: db.prepare('DELETE FROM idempotency WHERE company = ? AND key = ?'),
    pruneIdempotency: db.prepare('DELETE FROM idempotency WHERE at < ?'),
  };

  // The seal (store-seal.ts): the store's commit count, written after each commit, checked at open.
  const seal = new StoreSeal(db, file, checked);
  // The intake journal (intake-journal.ts): what a FAILED notification of contacts lost with a commit needs.
  const journal = new IntakeJournal(file);
  /** What the step being written gives the journal (the texts written to the database, not made twice). */
  let accepted: [seq: number, campaignId: number, contacts: string][] = [];
  let ended: number[] = [];
  let states: [seq: number, state: string][] = [];
  let webhooks: string | undefined;
  const writeStep = (step: StorageStep): void => {
    const e = step.engine;
    if (e) {
      q.putMeta.run('engine.totals', JSON.stringify({ nextSeq: e.nextSeq, counts: e.counts, store: e.store }));
      for (const c of e.submissions) {
        const { contacts, ...row } = c;
        states.push([c.seq, c.state]);
        const text = JSON.stringify(row);
        if (contacts !== undefined) {
          const contactsText = JSON.stringify(contacts);
          q.insertSubmission.run(c.seq, contactsText, text);
          accepted.push([c.seq, c.campaignId ?? 0, contactsText]);
        } else if ((q.updateSubmission.run(text, c.seq) as { changes?: number }).changes === 0) {
          throw new ArgumentError('write(step.engine.submissions)', `a change with its contacts (submission s${c.seq} was never written)`, 'a change without contacts');
        }
      }
      for (const f of e.finished) {
        const seq = Number(f.submissionId.slice(1));
        ended.push(seq);
        q.deleteSubmission.run(seq);
        q.putFinished.run(f.submissionId, JSON.stringify(f));
      }
      if (e.finished.length > 0) q.pruneFinished.run(FINISHED_KEPT);
      for (const n of e.numbers) q.putNumber.run(n.phone, JSON.stringify(n));
      for (const t of e.templates) q.putTemplate.run(t.id, JSON.stringify(t));
      // A row per recipient, written when charged; rows a day older than the step go.
      for (const p of e.portfolios ?? []) {
        q.putPortfolio.run(p.id, JSON.stringify({ id: p.id, limit: p.limit, anonymous: p.anonymous }));
        if (p.full) q.clearRecipients.run(p.id);
        for (const key of p.removed) q.deleteRecipient.run(p.id, key);
        for (const [key, at, madeNew] of p.recipients) q.putRecipient.run(p.id, key, at, madeNew ? 1 : 0);
      }
      if ((e.portfolios ?? []).length > 0) q.pruneRecipients.run(e.takenAt - DAY_MS);
    }
    for (const [key, value] of Object.entries(step.values ?? {})) {
      if (value === undefined) q.deleteMeta.run(`server.${key}`);
      else {
        const text = JSON.stringify(value);
        if (key === 'webhooks') webhooks = text;
        q.putMeta.run(`server.${key}`, text);
      }
    }
    for (const [id, event] of step.outboxPut ?? []) q.putOutbox.run(id, JSON.stringify(event));
    for (const id of step.outboxDelete ?? []) q.deleteOutbox.run(id);
    for (const [id, sms] of step.smsPut ?? []) q.putSms.run(id, JSON.stringify(sms));
    for (const id of step.smsDelete ?? []) q.deleteSms.run(id);
    for (const { companyId, changes } of step.statistics ?? []) {
      q.putMeta.run(`statistics.${companyId}`, JSON.stringify({ lastBatchAt: changes.lastBatchAt }));
      // Settled first: a settled campaign keeps its counts in its row and no contact rows.
      for (const campaignId of changes.settled) q.deleteContacts.run(companyId, campaignId);
      for (const row of changes.campaigns) q.putCampaign.run(companyId, row.campaignId, JSON.stringify(row));
      for (const [campaignId, contact, admissions, attempt, progress, stage, settleAt] of changes.contacts) {
        q.putContact.run(companyId, campaignId, contact, admissions, attempt, progress, stage ?? null, settleAt ?? 0);
      }
    }
    for (const [id, message] of step.trackedPut ?? []) q.putTracked.run(id, JSON.stringify(message));
    for (const id of step.trackedDelete ?? []) q.deleteTracked.run(id);
    for (const d of step.campaignPhones?.dropped ?? []) q.dropPhones.run(d.companyId, d.campaignId);
    // 8 bytes a phone: the rows are read back only at a restart.
    for (const a of step.campaignPhones?.added ?? []) q.putPhones.run(a.companyId, a.campaignId, Buffer.from(Float64Array.from(a.phones).buffer));
    for (const r of step.sentPhones?.rows ?? []) q.putSent.run(r.businessId, r.typeId, r.bucket, r.released === true ? 1 : 0, Buffer.from(Float64Array.from(r.phones).buffer));
    if (step.sentPhones?.before !== undefined) q.pruneSent.run(step.sentPhones.before);
    for (const b of step.blocklist ?? []) {
      if (b.entry === null) q.deleteBlock.run(b.companyId, b.phone);
      else q.putBlock.run(b.companyId, b.phone, b.entry.addedAt, b.entry.source);
    }
    for (const [id, at, row] of step.activityPut ?? []) q.putActivity.run(id, at, JSON.stringify(row));
    for (const id of step.activityDelete ?? []) q.deleteActivity.run(id);
    if (step.activityBefore !== undefined) q.pruneActivity.run(step.activityBefore);
    const memory = step.channelMemory;
    if (memory) {
      if (memory.keys.length > 0) q.putMemory.run(memory.firstSeq, JSON.stringify([memory.keys, memory.values]));
      if (memory.before !== undefined) q.pruneMemory.run(memory.before);
    }
    for (const [id, companyId, at, row] of step.deadLetters ?? []) {
      if (row === null) q.deleteDeadLetter.run(id);
      else q.putDeadLetter.run(id, companyId, at, JSON.stringify(row));
    }
    const idem = step.idempotency;
    if (idem) {
      for (const d of idem.deleted) q.deleteIdempotency.run(d.companyId, d.key);
      for (const r of idem.put) q.putIdempotency.run(r.companyId, r.key, r.fingerprint, r.at, r.answer);
      if (idem.before !== undefined) q.pruneIdempotency.run(idem.before);
    }
  };

  const storage: ServerStorage = {
    load(): StoredState | undefined {
      const meta = db.prepare('SELECT key, value FROM meta').all();
      const totals = meta.find((m) => m['key'] === 'engine.totals');
      const values = new Map<string, unknown>();
      for (const m of meta) {
        const key = String(m['key']);
        if (key.startsWith('server.')) values.set(key.slice(7), JSON.parse(String(m['value'])));
      }
      const outbox = db
        .prepare('SELECT id, row FROM outbox')
        .all()
        .map((r) => [String(r['id']), JSON.parse(String(r['row']))] as const);
      const sms = db
        .prepare('SELECT id, row FROM sms ORDER BY n')
        .all()
        .map((r) => [String(r['id']), JSON.parse(String(r['row']))] as const);
      const tracked = db
        .prepare('SELECT id, row FROM tracked ORDER BY n')
        .all()
        .map((r) => [String(r['id']), JSON.parse(String(r['row']))] as const);
      const activity = db
        .prepare('SELECT id, row FROM activity ORDER BY n')
        .all()
        .map((r) => [String(r['id']), JSON.parse(String(r['row']))] as const);
      const channelMemory = db
        .prepare('SELECT seq, entries FROM channel_memory ORDER BY seq')
        .all()
        .map((r) => {
          const [keys, values] = JSON.parse(String(r['entries'])) as [string[], (string | null)[]];
          return { firstSeq: Number(r['seq']), keys, values };
        });
      const deadLetters = db
        .prepare('SELECT row FROM dead_letters ORDER BY n')
        .all()
        .map((r) => JSON.parse(String(r['row'])) as unknown);
      const idempotency = db
        .prepare('SELECT company, key, fingerprint, at, answer FROM idempotency ORDER BY at')
        .all()
        .map((r): StoredIdempotency => ({ companyId: Number(r['company']), key: String(r['key']), fingerprint: String(r['fingerprint']), at: Number(r['at']), answer: String(r['answer']) }));
      const statistics = new Map<number, { lastBatchAt: number | null; campaigns: CampaignRow[]; contacts: ContactRow[] }>();
      const company = (id: number) => {
        let s = statistics.get(id);
        if (!s) statistics.set(id, (s = { lastBatchAt: null, campaigns: [], contacts: [] }));
        return s;
      };
      for (const m of meta) {
        const key = String(m['key']);
        if (key.startsWith('statistics.')) company(Number(key.slice(11))).lastBatchAt = (JSON.parse(String(m['value'])) as { lastBatchAt: number | null }).lastBatchAt;
      }
      for (const r of db.prepare('SELECT company, row FROM campaigns').all()) company(Number(r['company'])).campaigns.push(JSON.parse(String(r['row'])) as CampaignRow);
      for (const r of db.prepare('SELECT company, campaign, contact, admissions, attempt, progress, stage, settle_at FROM campaign_contacts').all()) {
        const row = [Number(r['campaign']), String(r['contact']), Number(r['admissions']), Number(r['attempt']), Number(r['progress'])] as const;
        // A row of an older schema has no stage: it is read as such (campaign-rows.ts).
        company(Number(r['company'])).contacts.push(r['stage'] === null || r['stage'] === undefined ? row : [...row, Number(r['stage']), Number(r['settle_at'] ?? 0)]);
      }
      const campaignPhones = db
        .prepare('SELECT company, campaign, phones FROM campaign_phones ORDER BY n')
        .all()
        .map((r) => ({ companyId: Number(r['company']), campaignId: Number(r['campaign']), phones: phonesOf(r['phones']) }));
      const sentPhones = db
        .prepare('SELECT business, type, bucket, released, phones FROM sent_phones ORDER BY n')
        .all()
        .map((r): StoredSentPhones => ({
          businessId: Number(r['business']),
          typeId: Number(r['type']),
          bucket: Number(r['bucket']),
          phones: phonesOf(r['phones']),
          ...(Number(r['released']) === 1 ? { released: true } : {}),
        }));
      const blocklist = db
        .prepare('SELECT company, phone, added_at, source FROM blocklist')
        .all()
        .map((r) => ({
          companyId: Number(r['company']),
          entry: { phone: String(r['phone']), addedAt: Number(r['added_at']), source: String(r['source']) as StoredBlockEntry['source'] },
        }));
      const nothing = [outbox, sms, tracked, campaignPhones, sentPhones, blocklist, activity, channelMemory, deadLetters, idempotency].every((list) => list.length === 0);
      if (totals === undefined && values.size === 0 && statistics.size === 0 && nothing) return undefined;
      const rows = emptyRows();
      if (totals !== undefined) {
        const t = JSON.parse(String(totals['value'])) as Pick<EngineRows, 'nextSeq' | 'counts' | 'store'>;
        rows.nextSeq = t.nextSeq;
        rows.counts = t.counts;
        rows.store = t.store;
      }
      const live: [number, number, () => string, string][] = [];
      for (const r of db.prepare('SELECT contacts, row FROM submissions ORDER BY seq').all()) {
        const row = JSON.parse(String(r['row'])) as Omit<SubmissionRow, 'contacts'>;
        rows.submissions.set(row.seq, { ...row, contacts: JSON.parse(String(r['contacts'])) as SubmissionRow['contacts'] });
        live.push([row.seq, row.campaignId ?? 0, () => String(r['contacts']), row.state]);
      }
      // The journal made to hold every live submission, and only those (a store older than it, a stop before an append).
      journal.reconcile(seal.next - 1, live);
      for (const r of db.prepare('SELECT id, row FROM finished ORDER BY n').all()) rows.finished.set(String(r['id']), JSON.parse(String(r['row'])) as RowOf<EngineRows['finished']>);
      for (const r of db.prepare('SELECT row FROM numbers').all()) {
        const n = JSON.parse(String(r['row'])) as RowOf<EngineRows['numbers']>;
        rows.numbers.set(n.phone, n);
      }
      for (const r of db.prepare('SELECT row FROM templates').all()) {
        const t = JSON.parse(String(r['row'])) as RowOf<EngineRows['templates']>;
        rows.templates.set(t.id, t);
      }
      for (const r of db.prepare('SELECT row FROM portfolios').all()) {
        const p = JSON.parse(String(r['row'])) as Omit<PortfolioRow, 'recipients'>;
        rows.portfolios?.set(p.id, { ...p, recipients: new Map() });
      }
      for (const r of db.prepare('SELECT portfolio, recipient, at, made_new FROM portfolio_recipients').all()) {
        rows.portfolios?.get(String(r['portfolio']))?.recipients.set(String(r['recipient']), [Number(r['at']), Number(r['made_new']) === 1]);
      }
      return { rows, values, outbox, sms, statistics, tracked, campaignPhones, sentPhones, blocklist, activity, channelMemory, deadLetters, idempotency };
    },
    write(step: StorageStep): void {
      // One transaction; a failed one is rolled back only if SQLite has not done so already (a full
      // disk ends it: a ROLLBACK then would hide the cause behind "no transaction is active").
      const commit = seal.next;
      accepted = [];
      ended = [];
      states = [];
      webhooks = undefined;
      try {
        db.exec('BEGIN');
        writeStep(step);
        q.putMeta.run('store.commit', String(seal.next));
        db.exec('COMMIT');
      } catch (e) {
        if (db.inTransaction) {
          try {
            db.exec('ROLLBACK');
          } catch {
            // the write's own error is the one to report
          }
        }
        throw new StoreWriteError(file, e);
      }
      const next = step.values?.['nextContactId'];
      try {
        seal.committed(typeof next === 'number' ? next : undefined, step.engine);
      } catch (e) {
        throw new StoreWriteError(`${file}.seal`, e);
      }
      // Never throws: a journal that cannot be written (a full disk) is deleted, the commit stands.
      journal.committed({ commit, accepted, ended, states, ...(webhooks !== undefined ? { webhooks } : {}) });
    },
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
  const load = storage.load.bind(storage);
  return {
    ...storage,
    load(): StoredState | undefined {
      try {
        return load();
      } catch (e) {
        throw new StoreDamagedError(file, [`its rows cannot be read back: ${e instanceof Error ? e.message : String(e)}`], REFUSED_ADVICE);
      }
    },
  };
}

/** Phones kept as a BLOB of doubles. A BLOB comes back as an ArrayBuffer or a Buffer, depending on the binding: copied aligned. */
function phonesOf(blob: unknown): number[] {
  const b = blob as ArrayBuffer | Uint8Array;
  const bytes = b instanceof Uint8Array ? b : new Uint8Array(b);
  return [...new Float64Array(new Uint8Array(bytes).buffer)];
}
