/**
 * The engine's rows (core/rows.ts) in the server's database: a row per live submission with its
 * contacts written once, per finished submission (the last {@link FINISHED_KEPT}), per number, per
 * template, per portfolio and per recipient counting in a portfolio's 24 h; the totals in `meta`.
 */
import { FINISHED_KEPT } from '../core/dispatch/dispatcher.js';
import { ArgumentError } from '../core/errors.js';
import type { EngineChanges } from '../core/engine.js';
import { type EngineRows, type PortfolioRow, type SubmissionRow, emptyRows } from '../core/rows.js';
import type { Database } from './store-check.js';
import type { Meta, OpenTables, StepNotes } from './sqlite-tables.js';

/** Recipients stay in a portfolio's count for a day after their last message. */
const DAY_MS = 86_400_000;

/** The value type of one of the engine's row maps (a row read back from its JSON). */
type RowOf<M> = M extends Map<unknown, infer V> ? V : never;

/** A live submission as the intake journal reconciles with it: number, campaign, its contacts' text (read when needed), state digits. */
export type LiveSubmission = readonly [seq: number, campaignId: number, contacts: () => string, state: string];

export interface EngineTables extends OpenTables<EngineChanges, EngineRows> {
  load(meta: ReadonlyMap<string, string>): { readonly rows: EngineRows; readonly found: boolean; readonly live: LiveSubmission[] };
}

export const engineTables: { readonly schema: string; open(db: Database, meta: Meta): EngineTables } = {
  schema: `
    CREATE TABLE IF NOT EXISTS submissions (seq INTEGER PRIMARY KEY, contacts TEXT NOT NULL, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS finished (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS numbers (phone TEXT PRIMARY KEY, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS templates (id INTEGER PRIMARY KEY, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS portfolios (id TEXT PRIMARY KEY, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS portfolio_recipients (portfolio TEXT NOT NULL, recipient TEXT NOT NULL, at INTEGER NOT NULL, made_new INTEGER NOT NULL, PRIMARY KEY (portfolio, recipient)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS portfolio_recipients_at ON portfolio_recipients (at);`,

  open(db: Database, meta: Meta): EngineTables {
    const q = {
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
    };

    const writeSubmissions = (e: EngineChanges, notes: StepNotes): void => {
      for (const c of e.submissions) {
        const { contacts, ...row } = c;
        notes.states.push([c.seq, c.state]);
        const text = JSON.stringify(row);
        if (contacts !== undefined) {
          const contactsText = JSON.stringify(contacts);
          q.insertSubmission.run(c.seq, contactsText, text);
          notes.accepted.push([c.seq, c.campaignId ?? 0, contactsText]);
        } else if ((q.updateSubmission.run(text, c.seq) as { changes?: number }).changes === 0) {
          throw new ArgumentError('write(step.engine.submissions)', `a change with its contacts (submission s${c.seq} was never written)`, 'a change without contacts');
        }
      }
      for (const f of e.finished) {
        const seq = Number(f.submissionId.slice(1));
        notes.ended.push(seq);
        q.deleteSubmission.run(seq);
        q.putFinished.run(f.submissionId, JSON.stringify(f));
      }
      if (e.finished.length > 0) q.pruneFinished.run(FINISHED_KEPT);
    };

    // A row per recipient, written when charged; rows a day older than the step go.
    const writePortfolios = (e: EngineChanges): void => {
      const portfolios = e.portfolios ?? [];
      for (const p of portfolios) {
        q.putPortfolio.run(p.id, JSON.stringify({ id: p.id, limit: p.limit, anonymous: p.anonymous }));
        if (p.full) q.clearRecipients.run(p.id);
        for (const key of p.removed) q.deleteRecipient.run(p.id, key);
        for (const [key, at, madeNew] of p.recipients) q.putRecipient.run(p.id, key, at, madeNew ? 1 : 0);
      }
      if (portfolios.length > 0) q.pruneRecipients.run(e.takenAt - DAY_MS);
    };

    return {
      write(e, notes) {
        meta.put('engine.totals', JSON.stringify({ nextSeq: e.nextSeq, counts: e.counts, store: e.store }));
        writeSubmissions(e, notes);
        for (const n of e.numbers) q.putNumber.run(n.phone, JSON.stringify(n));
        for (const t of e.templates) q.putTemplate.run(t.id, JSON.stringify(t));
        writePortfolios(e);
      },
      load(metaRows) {
        const rows = emptyRows();
        const totals = metaRows.get('engine.totals');
        if (totals !== undefined) {
          const t = JSON.parse(totals) as Pick<EngineRows, 'nextSeq' | 'counts' | 'store'>;
          rows.nextSeq = t.nextSeq;
          rows.counts = t.counts;
          rows.store = t.store;
        }
        const live: LiveSubmission[] = [];
        for (const r of db.prepare('SELECT contacts, row FROM submissions ORDER BY seq').all()) {
          const row = JSON.parse(String(r['row'])) as Omit<SubmissionRow, 'contacts'>;
          rows.submissions.set(row.seq, { ...row, contacts: JSON.parse(String(r['contacts'])) as SubmissionRow['contacts'] });
          live.push([row.seq, row.campaignId ?? 0, () => String(r['contacts']), row.state]);
        }
        for (const r of db.prepare('SELECT id, row FROM finished ORDER BY n').all()) rows.finished.set(String(r['id']), JSON.parse(String(r['row'])) as RowOf<EngineRows['finished']>);
        for (const r of db.prepare('SELECT row FROM numbers').all()) {
          const n = JSON.parse(String(r['row'])) as RowOf<EngineRows['numbers']>;
          rows.numbers.set(n.phone, n);
        }
        for (const r of db.prepare('SELECT row FROM templates').all()) {
          const t = JSON.parse(String(r['row'])) as RowOf<EngineRows['templates']>;
          rows.templates.set(t.id, t);
        }
        loadPortfolios(db, rows);
        return { rows, found: totals !== undefined, live };
      },
    };
  },
};

function loadPortfolios(db: Database, rows: EngineRows): void {
  for (const r of db.prepare('SELECT row FROM portfolios').all()) {
    const p = JSON.parse(String(r['row'])) as Omit<PortfolioRow, 'recipients'>;
    rows.portfolios?.set(p.id, { ...p, recipients: new Map() });
  }
  for (const r of db.prepare('SELECT portfolio, recipient, at, made_new FROM portfolio_recipients').all()) {
    rows.portfolios?.get(String(r['portfolio']))?.recipients.set(String(r['recipient']), [Number(r['at']), Number(r['made_new']) === 1]);
  }
}
