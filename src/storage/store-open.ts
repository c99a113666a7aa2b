/**
 * Opening the durable store with its checks (store-check.ts, store-seal.ts): a damaged or
 * incomplete store is refused with what was found and what to do; with `recover` it starts from
 * what is intact and reports what was lost (a file beside the database, and `storage.recovery`,
 * which the server logs and shows in /metrics). Also the seal's upkeep after each commit and the
 * errors of a failed write (a full disk named as such).
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { contactsText, type Database, type DatabaseFacts, inspectDatabase, type Libsql, lostContacts, type LostContacts, sealProblems, StoreDamagedError } from './store-check.js';
import { type HeldByDatabase, journalFiles, journalLoss, type LostSubmission, readJournal } from './intake-journal.js';
import { type LostRows, salvage } from './store-salvage.js';
import { readSeal, type SealFound, type SealState, SealWriter } from './store-seal.js';

/** What a start with `recover` found and reported (docs/server.md, "A damaged store"). */
export interface StoreRecovery {
  /** When the store was recovered (ISO 8601). */
  readonly at: string;
  /** The database file. */
  readonly file: string;
  /** What was found wrong, one line each. */
  readonly problems: readonly string[];
  /** Commits the seal says were written and the database lacked (0 when none or unknown). */
  readonly lostCommits: number;
  /**
   * Contacts answered 202 in the lost commits: how many, and the range of ids given out in them.
   * Which phones and campaigns they were is not known (it was in the lost commits); `undefined`
   * when nothing accepted was lost, or when the seal could not say (then `sealUnreadable`).
   */
  readonly lostContacts?: LostContacts;
  /** The seal was unreadable: what was lost cannot be told. */
  readonly sealUnreadable: boolean;
  /** Rows of a damaged database file that could not be copied, per table. */
  readonly lostRows: readonly LostRows[];
  /**
   * What the intake journal (intake-journal.ts) said of the lost contacts, when the store had one:
   * those reported FAILED (`lost in a damaged store`), by count and id range. Absent for a store
   * without a journal (made by an older sendpool): then only `lostContacts` counts them.
   */
  readonly journal?: JournalReport;
  /** Copies of the files as found (kept for a closer look; delete them when done). */
  readonly keptAs: readonly string[];
  /** This report as a JSON file beside the database. */
  readonly reportFile: string;
}

/** What the intake journal told of a recovered store's loss. */
export interface JournalReport {
  /** Contacts reported FAILED: accepted in lost commits or in rows left out, and not sent or ended before. */
  readonly failed: number;
  /** The lowest and highest id among them (absent when none). */
  readonly firstId?: number;
  readonly lastId?: number;
  /** Submissions they were in. */
  readonly submissions: number;
  /** Submissions that ended in a lost commit: their contacts were sent or notified then, which the store cannot tell; not reported again. */
  readonly endedUnknown: number;
  /** The journal held the companies' webhook configurations (used for companies the database lost). */
  readonly webhooks: boolean;
  /** Journal segments whose tail was cut or damaged (ignored from there). */
  readonly cut: readonly { readonly file: string; readonly ignored: number }[];
}

/** What a recovered store's journal gives the server: the contacts to report FAILED, the webhook configurations. */
export interface RecoveredLoss {
  readonly submissions: readonly LostSubmission[];
  /** The latest webhook configurations the journal recorded (the server's `webhooks` value). */
  readonly webhooks?: unknown;
}

/** What to do about a refused store. */
export const REFUSED_ADVICE =
  'Nothing was started and nothing was changed. Restore the data directory from a backup (all its files), or start with --recover ' +
  '(runServer / openSqliteStorage option `recover: true`): the server keeps what is intact and reports what was lost (log, /metrics, a report file beside the database).';

export interface Checked {
  readonly seal: SealFound;
  readonly facts: DatabaseFacts;
  readonly recovery?: StoreRecovery;
  readonly loss?: RecoveredLoss;
}

/**
 * Checks the database and its seal before the database is opened for writing. Refuses (throws
 * StoreDamagedError) when they disagree or the file is damaged, unless `recover`: then the files
 * are copied aside, a damaged file is replaced by a copy of its readable rows, and the loss reported.
 */
export function checkStore(Libsql: Libsql, file: string, recover: boolean, createTables: (db: Database) => void): Checked {
  const sealFile = `${file}.seal`;
  const seal = readSeal(sealFile);
  const walExisted = existsSync(`${file}-wal`);
  const facts = inspectDatabase(Libsql, file, true);
  const problems = [...facts.damage, ...sealProblems(file, facts, sealFile, seal)];
  if (problems.length === 0) return { seal, facts };
  if (!recover) {
    // Refused as found: the empty WAL a read-only open makes where there was none goes again.
    if (!walExisted && existsSync(`${file}-wal`) && statSync(`${file}-wal`).size === 0) rmSync(`${file}-wal`);
    throw new StoreDamagedError(file, problems, REFUSED_ADVICE);
  }
  const at = new Date().toISOString();
  const stamp = at.replace(/[:.]/g, '-');
  const keptAs: string[] = [];
  for (const suffix of ['', '-wal', '.seal']) {
    if (!existsSync(`${file}${suffix}`)) continue;
    const copy = `${file}.damaged-${stamp}${suffix}`;
    copyFileSync(`${file}${suffix}`, copy);
    keptAs.push(copy);
  }
  let lostRows: LostRows[] = [];
  if (facts.damage.length > 0) {
    const target = `${file}.salvage-${stamp}`;
    lostRows = salvage(Libsql, file, target, createTables);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    renameSync(target, file);
  }
  const lost = seal.kind === 'ok' ? lostContacts(facts, seal.seal) : undefined;
  const fromJournal = journalFiles(file).length > 0 ? lossFromJournal(Libsql, file, facts.commit, stamp, keptAs) : undefined;
  const recovery: StoreRecovery = {
    at,
    file,
    problems,
    lostCommits: seal.kind === 'ok' ? Math.max(0, seal.seal.commit - facts.commit) : 0,
    ...(lost !== undefined && lost.count > 0 ? { lostContacts: lost } : {}),
    sealUnreadable: seal.kind === 'damaged',
    lostRows,
    ...(fromJournal ? { journal: fromJournal.report } : {}),
    keptAs,
    reportFile: `${file}.recovery-${stamp}.json`,
  };
  writeFileSync(recovery.reportFile, `${JSON.stringify(recovery, null, 2)}\n`);
  return { seal, facts, recovery, ...(fromJournal ? { loss: fromJournal.loss } : {}) };
}

/**
 * The journal read against what the (recovered) database holds: the contacts to report FAILED.
 * Its segments are then moved aside (kept with the damaged files): the journal starts again with
 * the database's live submissions (recorded at load).
 */
function lossFromJournal(Libsql: Libsql, file: string, commit: number, stamp: string, keptAs: string[]): { report: JournalReport; loss: RecoveredLoss } {
  const journal = readJournal(file);
  const held = heldByDatabase(Libsql, file, commit);
  const { lost, endedUnknown } = journalLoss(journal, held);
  let failed = 0;
  let firstId = Number.POSITIVE_INFINITY;
  let lastId = Number.NEGATIVE_INFINITY;
  for (const s of lost)
    for (const c of s.contacts) {
      const id = Number((c as { id?: unknown }).id);
      failed++;
      firstId = Math.min(firstId, id);
      lastId = Math.max(lastId, id);
    }
  for (const f of journal.files) {
    const copy = `${file}.damaged-${stamp}${f.slice(file.length)}`;
    renameSync(f, copy);
    keptAs.push(copy);
  }
  const webhooks = journal.webhooks === undefined ? undefined : (JSON.parse(journal.webhooks) as unknown);
  return {
    report: { failed, ...(failed > 0 ? { firstId, lastId } : {}), submissions: lost.length, endedUnknown, webhooks: webhooks !== undefined, cut: journal.cut },
    loss: { submissions: lost, ...(webhooks !== undefined ? { webhooks } : {}) },
  };
}

/** Reads (read-only) which submissions the database holds, and which contacts its statistics saw sent or ended. */
function heldByDatabase(Libsql: Libsql, file: string, commit: number): HeldByDatabase {
  const live = new Set<number>();
  const finished = new Set<number>();
  const reported = new Set<string>();
  if (!existsSync(file) || statSync(file).size === 0) return { commit, live, finished, reported };
  const db = new Libsql(`file:${file}?mode=ro`);
  const table = (name: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
  try {
    if (table('submissions')) for (const r of db.prepare('SELECT seq FROM submissions').raw().iterate() as IterableIterator<unknown[]>) live.add(Number(r[0]));
    if (table('finished'))
      for (const r of db.prepare('SELECT CAST(id AS BLOB) FROM finished').raw().iterate() as IterableIterator<unknown[]>)
        finished.add(
          Number(
            Buffer.from(r[0] as ArrayBuffer)
              .toString('latin1')
              .slice(1),
          ),
        );
    // A SENT (open with its failure window) or a final stage: the contact was sent or notified.
    if (table('campaign_contacts'))
      for (const r of db.prepare('SELECT company, CAST(contact AS BLOB) FROM campaign_contacts WHERE stage > 0 OR settle_at > 0').raw().iterate() as IterableIterator<unknown[]>)
        reported.add(`${Number(r[0])}:${Buffer.from(r[1] as ArrayBuffer).toString('latin1')}`);
  } catch {
    // A stretch the checks let through and this read does not: what was read so far is what is known.
  } finally {
    db.close();
  }
  return { commit, live, finished, reported };
}

/** One line of a recovery's loss, for the log and the command line. */
export function recoverySummary(r: StoreRecovery): string {
  const parts: string[] = [];
  if (r.lostCommits > 0) parts.push(`${r.lostCommits} commit${r.lostCommits === 1 ? '' : 's'} missing`);
  if (r.lostContacts) parts.push(contactsText(r.lostContacts));
  if (r.sealUnreadable) parts.push('the seal was unreadable: what was lost cannot be told');
  for (const l of r.lostRows) parts.push(`table ${l.table}: ${l.detail}`);
  if (r.journal) {
    const j = r.journal;
    parts.push(
      j.failed > 0
        ? `${j.failed} contact${j.failed === 1 ? '' : 's'} reported FAILED (lost in a damaged store), ids ${j.firstId} to ${j.lastId}, from the intake journal`
        : 'the intake journal names no contact to report FAILED',
    );
    if (j.endedUnknown > 0) parts.push(`${j.endedUnknown} submission${j.endedUnknown === 1 ? '' : 's'} ended in the lost commits (their outcome was notified then, not again)`);
  }
  if (parts.length === 0) parts.push('nothing accepted was lost');
  return `${r.file} recovered: ${parts.join('; ')}; report ${r.reportFile}`;
}

/** The seal kept in step with the database: its state now, and the writer of the next commits. */
export class StoreSeal {
  #state: SealState;
  readonly #writer: SealWriter;

  /**
   * After the database is open for writing: the store's id and commit count are read from it (made
   * when new); after a recovery the database is made to agree with the seal (its commit count, and
   * the next contact id and submission number never go back: ids given out are not given again).
   */
  constructor(db: Database, file: string, checked: Checked) {
    const meta = (key: string): unknown => {
      const r = db.prepare('SELECT CAST(value AS BLOB) AS v FROM meta WHERE key = ?').get(key);
      if (r === undefined || r['v'] === null) return undefined;
      return JSON.parse(Buffer.from(r['v'] as ArrayBuffer).toString('utf8'));
    };
    const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
    const sealed = checked.seal.kind === 'ok' ? checked.seal.seal : undefined;
    let storeId = meta('store.id');
    let commit = Number(meta('store.commit') ?? 0);
    const totals = meta('engine.totals') as { nextSeq: number; counts: { submitted: number } } | undefined;
    let nextContactId = Number(meta('server.nextContactId') ?? 1);
    if (typeof storeId !== 'string') storeId = sealed?.storeId ?? randomBytes(16).toString('hex');
    if (checked.recovery !== undefined && sealed !== undefined) {
      commit = Math.max(commit, sealed.commit);
      nextContactId = Math.max(nextContactId, sealed.nextContactId);
      if (totals !== undefined) totals.nextSeq = Math.max(totals.nextSeq, sealed.nextSeq);
    }
    db.exec('BEGIN');
    put.run('store.id', JSON.stringify(storeId));
    put.run('store.commit', JSON.stringify(commit));
    if (checked.recovery !== undefined) {
      put.run('server.nextContactId', JSON.stringify(nextContactId));
      if (totals !== undefined) put.run('engine.totals', JSON.stringify(totals));
    }
    db.exec('COMMIT');
    this.#state = { storeId: storeId as string, commit, nextContactId, nextSeq: totals?.nextSeq ?? 1, submitted: totals?.counts.submitted ?? 0 };
    this.#writer = new SealWriter(`${file}.seal`);
    this.#writer.reset(this.#state);
  }

  /** The commit count the next write records. */
  get next(): number {
    return this.#state.commit + 1;
  }

  /** After a commit: its count and what the step said of the contact ids and submissions. */
  committed(nextContactId: number | undefined, engine: { readonly nextSeq: number; readonly counts: { readonly submitted: number } } | undefined): void {
    this.#state = {
      storeId: this.#state.storeId,
      commit: this.#state.commit + 1,
      nextContactId: nextContactId ?? this.#state.nextContactId,
      nextSeq: engine?.nextSeq ?? this.#state.nextSeq,
      submitted: engine?.counts.submitted ?? this.#state.submitted,
    };
    this.#writer.write(this.#state);
  }

  close(): void {
    this.#writer.close();
  }
}

/** A failed durable write; `diskFull` when the file system is out of space (SQLITE_FULL, ENOSPC). */
export class StoreWriteError extends Error {
  readonly diskFull: boolean;

  constructor(file: string, cause: unknown) {
    const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
    const text = cause instanceof Error ? cause.message : String(cause);
    const diskFull = code === 'SQLITE_FULL' || code === 'ENOSPC' || /database or disk is full|no space left on device|ENOSPC/i.test(text);
    super(
      diskFull
        ? `disk full: cannot write ${file} (${typeof code === 'string' ? code : 'ENOSPC'}: ${text}); nothing of this step was written: free space on its file system and restart`
        : `cannot write ${file}: ${text}`,
      { cause },
    );
    this.name = 'StoreWriteError';
    this.diskFull = diskFull;
  }
}
