/**
 * Rows of a durable host, kept from `engine.takeChanges()`: one per live submission, per number, per
 * template, plus a few totals. Applying every change in order and assembling the rows gives an
 * engine snapshot of the state as of the last change taken, so a host that writes each change set
 * in one commit restarts from its rows with `createEngine(fleet, { snapshot: snapshotFromRows(rows) })`.
 *
 * This is the reference of what the rows mean (a database-backed host keeps the same rows as
 * tables); tests restart engines from it.
 */
import { FINISHED_KEPT, type DispatchChanges } from './dispatch/dispatcher.js';
import { SnapshotError } from './errors.js';
import type { SubmissionChange, SubmissionSnapshot } from './dispatch/dispatch-snapshot.js';
import type { DispatchCounts, SubmissionStatus } from './dispatch/types.js';
import type { EngineChanges, NumberChange } from './engine.js';
import type { StoreSnapshot } from './limits/store.js';
import type { PortfolioChange, PortfolioSnapshot } from './portfolio-types.js';
import { type EngineSnapshot, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, type TemplateStatusSnapshot } from './snapshot.js';

/** A live submission's row: its snapshot and the retry timers of its waiting contacts. */
export type SubmissionRow = SubmissionSnapshot & Pick<SubmissionChange, 'timers'>;

export interface EngineRows {
  nextSeq: number;
  counts: DispatchCounts;
  store: StoreSnapshot;
  readonly submissions: Map<number, SubmissionRow>;
  /** Final counts of finished submissions, oldest first (the engine keeps the last 10,000). */
  readonly finished: Map<string, SubmissionStatus>;
  readonly numbers: Map<string, NumberChange>;
  readonly templates: Map<number, TemplateStatusSnapshot>;
  /** Each portfolio's limit and recipients (optional: rows kept before portfolios). */
  readonly portfolios?: Map<string, PortfolioRow>;
}

/**
 * A portfolio as rows keep it: its limit and a row per recipient, the time of its last message and
 * whether that message made it new. Rows older than 24 h before the last change are dropped.
 */
export interface PortfolioRow {
  readonly id: string;
  limit: number;
  anonymous: number;
  readonly recipients: Map<string, readonly [number, boolean]>;
}

const DAY = 86_400_000;

/** Merges a portfolio's change into its row (a full change replaces it); recipients 24 h old by `takenAt` go. */
export function mergePortfolio(row: PortfolioRow | undefined, change: PortfolioChange, takenAt: number | undefined): PortfolioRow {
  const kept: PortfolioRow = row === undefined || change.full ? { id: change.id, limit: change.limit, anonymous: change.anonymous, recipients: new Map() } : row;
  kept.limit = change.limit;
  kept.anonymous = change.anonymous;
  for (const key of change.removed) kept.recipients.delete(key);
  for (const [key, at, madeNew] of change.recipients) kept.recipients.set(key, [at, madeNew]);
  // Pruned when the rows hold twice what the limit lets into the span: linear, so once in a while.
  if (takenAt !== undefined && kept.recipients.size > 2 * kept.limit + 16) {
    for (const [key, [at]] of kept.recipients) if (at <= takenAt - DAY) kept.recipients.delete(key);
  }
  return kept;
}

export function emptyRows(): EngineRows {
  return {
    nextSeq: 1,
    counts: { submitted: 0, queued: 0, waitingRetry: 0, inFlight: 0, sent: 0, failed: 0, expired: 0, rejected: 0 },
    store: { kind: 'memory' },
    submissions: new Map(),
    finished: new Map(),
    numbers: new Map(),
    templates: new Map(),
    portfolios: new Map(),
  };
}

/**
 * Merges a submission change into its row: contacts come with the first change only. A later change
 * of a submission whose row was never kept is a {@link SnapshotError}: the rows could not make a
 * snapshot of it (a change set skipped, or applied out of order).
 */
export function mergeSubmission(row: SubmissionRow | undefined, change: SubmissionChange): SubmissionRow {
  const contacts = change.contacts ?? row?.contacts;
  if (contacts === undefined) throw new SnapshotError(`rows: submission s${change.seq} changed before its contacts were kept`);
  return { ...change, contacts };
}

/** Applies one change set to the rows, in the order the engine gave them. */
export function applyChanges(rows: EngineRows, changes: EngineChanges | (DispatchChanges & Partial<EngineChanges>)): void {
  rows.nextSeq = changes.nextSeq;
  rows.counts = changes.counts;
  if (changes.store) rows.store = changes.store;
  for (const c of changes.submissions) rows.submissions.set(c.seq, mergeSubmission(rows.submissions.get(c.seq), c));
  for (const f of changes.finished) {
    rows.submissions.delete(Number(f.submissionId.slice(1)));
    rows.finished.set(f.submissionId, f);
    if (rows.finished.size > FINISHED_KEPT) rows.finished.delete(rows.finished.keys().next().value!);
  }
  for (const n of changes.numbers ?? []) rows.numbers.set(n.phone, n);
  for (const t of changes.templates ?? []) rows.templates.set(t.id, t);
  if (rows.portfolios !== undefined) for (const p of changes.portfolios ?? []) rows.portfolios.set(p.id, mergePortfolio(rows.portfolios.get(p.id), p, changes.takenAt));
}

/** A portfolio's snapshot from its row: recipients oldest first (the restore drops those out of the span). */
function portfolioSnapshotOf(row: PortfolioRow): PortfolioSnapshot {
  const recipients = [...row.recipients].map(([key, [at, madeNew]]) => [key, at, madeNew] as const).sort((a, b) => a[1] - b[1]);
  return { id: row.id, window: { limit: row.limit, anonymous: row.anonymous, recipients } };
}

/** The engine snapshot the rows stand for: restore it with `createEngine(fleet, { snapshot })`. */
export function snapshotFromRows(rows: EngineRows, takenAt: number): EngineSnapshot {
  const submissions = [...rows.submissions.values()].sort((a, b) => a.seq - b.seq);
  const usage: Record<string, unknown> = {};
  for (const n of rows.numbers.values()) if (n.usage !== null && n.usage !== undefined) usage[n.phone] = n.usage;
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    takenAt,
    store: { ...rows.store, numbers: usage },
    numbers: [...rows.numbers.values()].map(({ phone, status, pausedUntil }) => ({ phone, status, ...(pausedUntil !== undefined ? { pausedUntil } : {}) })),
    templates: [...rows.templates.values()],
    pools: [],
    ...(rows.portfolios !== undefined && rows.portfolios.size > 0 ? { portfolios: [...rows.portfolios.values()].map(portfolioSnapshotOf) } : {}),
    dispatch: {
      nextSeq: rows.nextSeq,
      counts: rows.counts,
      submissions: submissions.map(({ timers: _t, ...s }) => s),
      queues: [],
      retries: submissions.flatMap((s) => s.timers.map(([index, handout, at]) => [s.seq, index, handout, at] as const)),
      outcomes: [],
      finished: [...rows.finished.values()],
    },
  };
}
