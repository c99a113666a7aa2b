/**
 * The dispatch section of an engine snapshot: its shape, its check, and the conversions of records
 * and queues to it. Plain JSON, so a deployment can be moved with it.
 *
 * Version 2 (written now) keeps each submission's place in its queue (`fresh`, `back`) and each
 * queue's flows in service order with the order of their records, plus the final counts of recently
 * finished submissions. Version 1 kept one [submission, index] entry per queued contact; it is still
 * read: its queued contacts go in index order, ahead of nothing (see `restore`).
 */
import { type Problem, problem } from '../problems.js';
import type { SubmissionContact } from '../submission.js';
import { ENGINE_MAX_RETRIES, MAX_WEIGHT } from './check-submission.js';
import type { PoolQueue } from './pool-queue.js';
import { QUEUED, REJECTED, type RetryTimer, type SubmissionRecord, WAITING, retryStands } from './record.js';
import type { ContactOutcome, DispatchCounts, SubmissionStatus } from './types.js';

export interface SubmissionSnapshot {
  readonly seq: number;
  readonly businessId: number;
  readonly typeId: number;
  readonly campaignId?: number;
  readonly queueId?: number;
  readonly botId?: number;
  readonly maxRetries: number;
  readonly retryInterval: number;
  readonly deadline?: number;
  readonly weight: number;
  readonly contacts: readonly SubmissionContact[];
  /** One digit a contact: 0 queued, 1 waiting retry, 2 in flight, 3 sent, 4 failed, 5 expired, 6 rejected. */
  readonly state: string;
  readonly retries: readonly number[];
  readonly handouts: readonly number[];
  /** Version 2: queued contacts from this index on were never handed out. */
  readonly fresh?: number;
  /** Version 2: queued contacts that came back, in the order they go (all below `fresh`). */
  readonly back?: readonly number[];
  /** Queued contacts that were in flight at a restart: their next hand-out repeats their last message id. */
  readonly resend?: readonly number[];
}

/**
 * A submission as a durable host keeps it between writes (`engine.takeChanges()`): its snapshot
 * without the contacts once the host has had them, plus the retry timers of its waiting contacts.
 */
export interface SubmissionChange extends Omit<SubmissionSnapshot, 'contacts'> {
  /** Present the first time the submission is in the changes (they never change afterwards). */
  readonly contacts?: readonly SubmissionContact[];
  /** Waiting contacts' retries as [index, hand-outs when set, due time]. */
  readonly timers: readonly (readonly [number, number, number])[];
}

export interface FlowSnapshot {
  readonly key: string;
  readonly weight: number;
  /** Version 2: seqs of the flow's records with contacts that came back, in service order. */
  readonly returning?: readonly number[];
  /** Version 2: seqs of the flow's records with fresh contacts, in service order. */
  readonly fresh?: readonly number[];
  /** Version 1: queued contacts as [seq, index], in service order. */
  readonly entries?: readonly (readonly [number, number])[];
}

export interface QueueSnapshot {
  readonly businessId: number;
  readonly typeId: number;
  /** Flows with queued contacts, from the one served next. */
  readonly flows: readonly FlowSnapshot[];
}

/** The dispatch section of an engine snapshot. */
export interface DispatchSnapshot {
  readonly nextSeq: number;
  readonly counts: DispatchCounts;
  readonly submissions: readonly SubmissionSnapshot[];
  readonly queues: readonly QueueSnapshot[];
  /** Retry timers as [seq, index, hand-out count when set, due time]. */
  readonly retries: readonly (readonly [number, number, number, number])[];
  /** Outcomes not taken yet by `takeOutcomes()`. */
  readonly outcomes: readonly ContactOutcome[];
  /** Version 2: final counts of the most recently finished submissions, oldest first. */
  readonly finished?: readonly SubmissionStatus[];
}

export function recordToSnapshot(r: SubmissionRecord): SubmissionSnapshot {
  return { ...recordState(r), contacts: r.contacts.all() };
}

/** A record as a snapshot keeps it, but for its contacts. */
function recordState(r: SubmissionRecord): Omit<SubmissionSnapshot, 'contacts'> {
  return {
    seq: r.seq,
    businessId: r.businessId,
    typeId: r.typeId,
    ...(r.campaignId !== undefined ? { campaignId: r.campaignId } : {}),
    ...(r.queueId !== undefined ? { queueId: r.queueId } : {}),
    ...(r.botId !== undefined ? { botId: r.botId } : {}),
    maxRetries: r.maxRetries,
    retryInterval: r.retryInterval,
    ...(r.deadline !== undefined ? { deadline: r.deadline } : {}),
    weight: r.weight,
    state: Array.from(r.state, String).join(''),
    retries: Array.from(r.retries),
    handouts: Array.from(r.handouts),
    fresh: r.fresh,
    // Only the entries still to go that are queued (skipped ones are final).
    back: r.back === undefined ? [] : r.back.slice(r.backHead).filter((i) => r.state[i] === QUEUED),
    ...(r.resend === undefined ? {} : resendOf(r.resend, r.state)),
  };
}

function resendOf(resend: Uint8Array, state: Uint8Array): { resend?: number[] } {
  const out: number[] = [];
  for (let i = 0; i < resend.length; i++) if (resend[i] === 1 && state[i] === QUEUED) out.push(i);
  return out.length > 0 ? { resend: out } : {};
}

export function queueToSnapshot(q: PoolQueue): QueueSnapshot {
  return {
    businessId: q.businessId,
    typeId: q.typeId,
    flows: q.exportOrder().map((f) => ({ key: f.key, weight: f.weight, returning: f.returning.map((r) => r.seq), fresh: f.fresh.map((r) => r.seq) })),
  };
}

/** The retry timers of a record's waiting contacts. */
export function recordTimers(r: SubmissionRecord): [number, number, number][] {
  const timers: [number, number, number][] = [];
  if (r.retryAt === undefined || r.counts[WAITING] === 0) return timers;
  for (let i = 0; i < r.state.length; i++) if (r.state[i] === WAITING) timers.push([i, r.handouts[i]!, r.retryAt[i]!]);
  return timers;
}

/** A record as the changes give it: without its contacts unless `withContacts`. */
export function recordToChange(r: SubmissionRecord, withContacts: boolean): SubmissionChange {
  return { ...recordState(r), ...(withContacts ? { contacts: r.contacts.all() } : {}), timers: recordTimers(r) };
}

/** What the dispatcher's snapshot is made of. */
export interface SnapshotParts {
  readonly nextSeq: number;
  readonly counts: DispatchCounts;
  readonly records: ReadonlyMap<number, SubmissionRecord>;
  readonly queues: readonly PoolQueue[];
  readonly retries: readonly RetryTimer[];
  readonly outcomes: readonly ContactOutcome[];
  readonly finished: ReadonlyMap<string, SubmissionStatus>;
}

/** The dispatch section of a snapshot: live records, queues in service order, standing retry timers. */
export function dispatchSnapshot(d: SnapshotParts): DispatchSnapshot {
  const retries = d.retries
    .filter((t) => retryStands(d.records.get(t.seq), t))
    .sort((a, b) => a.at - b.at || a.seq - b.seq || a.index - b.index)
    .map((t) => [t.seq, t.index, t.handout, t.at] as const);
  return {
    nextSeq: d.nextSeq,
    counts: d.counts,
    submissions: [...d.records.values()].map(recordToSnapshot),
    queues: d.queues.filter((q) => q.ready > 0).map(queueToSnapshot),
    retries,
    outcomes: [...d.outcomes],
    finished: [...d.finished.values()],
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** Records a problem at a path below the section's. */
type Bad = (at: string, expected: string, value: unknown) => void;

/**
 * Checks the dispatch section (at `path`) well enough that restoring it cannot throw or corrupt
 * the queue: every problem with its JSON path.
 */
export function checkDispatchSnapshot(input: unknown, path: string): Problem[] {
  const problems: Problem[] = [];
  const bad: Bad = (p, expected, v) => {
    problems.push(problem(`${path}${p}`, expected, v));
  };
  if (!isObject(input)) return [problem(path, 'a dispatch snapshot object', input)];
  if (!isInt(input['nextSeq'], 1)) bad('.nextSeq', 'a positive integer', input['nextSeq']);
  const nextSeq = isInt(input['nextSeq'], 1) ? input['nextSeq'] : Number.MAX_SAFE_INTEGER;
  if (!isObject(input['counts'])) bad('.counts', 'an object of counts', input['counts']);
  /** Contacts of each submission of the section, by number. */
  const seqs = new Map<number, number>();
  const subs = input['submissions'];
  if (!Array.isArray(subs)) bad('.submissions', 'an array', subs);
  else subs.forEach((s: unknown, i) => checkSubmissionSnapshot(s, `.submissions[${i}]`, nextSeq, seqs, bad));
  const queues = input['queues'];
  if (!Array.isArray(queues)) bad('.queues', 'an array', queues);
  else queues.forEach((q: unknown, i) => checkQueueSnapshot(q, `.queues[${i}]`, seqs, bad));
  const retries = input['retries'];
  if (!Array.isArray(retries)) bad('.retries', 'an array', retries);
  else
    retries.forEach((t: unknown, i) => {
      const ok = Array.isArray(t) && t.length === 4 && seqs.has(t[0] as number) && isInt(t[1], 0, (seqs.get(t[0] as number) ?? 0) - 1) && isInt(t[2], 0) && isInt(t[3], 0);
      if (!ok) bad(`.retries[${i}]`, '[submission, contact index, hand-outs, due time] of a submission of this snapshot', t);
    });
  if (!Array.isArray(input['outcomes'])) bad('.outcomes', 'an array', input['outcomes']);
  const finished = input['finished'];
  if (finished !== undefined && (!Array.isArray(finished) || !finished.every((f) => isObject(f) && typeof f['submissionId'] === 'string'))) {
    bad('.finished', 'an array of submission statuses', finished);
  }
  return problems;
}

/** A submission of the section (at `at`): its number (recorded in `seqs` with its contact count), its options and its per-contact arrays. */
function checkSubmissionSnapshot(s: unknown, at: string, nextSeq: number, seqs: Map<number, number>, bad: Bad): void {
  if (!isObject(s)) return bad(at, 'a submission object', s);
  if (!isInt(s['seq'], 1, nextSeq - 1) || seqs.has(s['seq'])) return bad(`${at}.seq`, `a unique submission number below nextSeq (${nextSeq})`, s['seq']);
  for (const k of ['businessId', 'typeId'] as const) if (!isInt(s[k], 1)) bad(`${at}.${k}`, 'a positive integer', s[k]);
  for (const k of ['campaignId', 'queueId', 'botId', 'deadline'] as const) if (s[k] !== undefined && !isInt(s[k], 0)) bad(`${at}.${k}`, 'an integer, 0 or more', s[k]);
  if (!isInt(s['maxRetries'], 0, ENGINE_MAX_RETRIES)) bad(`${at}.maxRetries`, `an integer from 0 to ${ENGINE_MAX_RETRIES}`, s['maxRetries']);
  if (!isInt(s['retryInterval'], 0)) bad(`${at}.retryInterval`, 'milliseconds, 0 or more', s['retryInterval']);
  if (!isInt(s['weight'], 1, MAX_WEIGHT)) bad(`${at}.weight`, `an integer from 1 to ${MAX_WEIGHT}`, s['weight']);
  const contacts = s['contacts'];
  if (!Array.isArray(contacts) || contacts.length === 0) return bad(`${at}.contacts`, 'a non-empty array of contacts', contacts);
  seqs.set(s['seq'], contacts.length);
  checkContactStates(s, contacts.length, at, bad);
  checkQueuePlace(s, contacts.length, at, bad);
  const state = s['state'];
  if (typeof state === 'string' && state.length === contacts.length && contacts.some((c, k) => state[k] !== String(REJECTED) && !isObject(c))) {
    bad(`${at}.contacts`, 'contact objects', contacts);
  }
}

/** A contact's state digit, retries and hand-outs, one each a contact (`n`). */
function checkContactStates(s: Record<string, unknown>, n: number, at: string, bad: Bad): void {
  const state = s['state'];
  if (typeof state !== 'string' || state.length !== n || !/^[0-6]*$/.test(state)) bad(`${at}.state`, `${n} digits from 0 to 6, one a contact`, state);
  for (const k of ['retries', 'handouts'] as const) {
    const v = s[k];
    const max = k === 'retries' ? 255 : 0xffff;
    if (!Array.isArray(v) || v.length !== n || !v.every((x) => isInt(x, 0, max))) bad(`${at}.${k}`, `${n} integers from 0 to ${max}, one a contact`, v);
  }
}

/** Where the submission's queued contacts stand: `fresh` (the next never handed out), `back` and `resend` (indexes below it). */
function checkQueuePlace(s: Record<string, unknown>, n: number, at: string, bad: Bad): void {
  if (s['fresh'] !== undefined && !isInt(s['fresh'], 0, n)) bad(`${at}.fresh`, `an index from 0 to ${n}`, s['fresh']);
  const fresh = isInt(s['fresh'], 0, n) ? s['fresh'] : n;
  for (const k of ['back', 'resend'] as const) {
    const v = s[k];
    if (v !== undefined && !distinctBelow(v, fresh)) bad(`${at}.${k}`, `distinct contact indexes below fresh (${fresh})`, v);
  }
}

function distinctBelow(v: unknown, end: number): boolean {
  return Array.isArray(v) && v.every((x) => isInt(x, 0, end - 1)) && new Set(v).size === v.length;
}

/** A queue of the section: its (business, type) and its flows, which name only submissions of the section. */
function checkQueueSnapshot(q: unknown, at: string, seqs: ReadonlyMap<number, number>, bad: Bad): void {
  if (!isObject(q) || !isInt(q['businessId'], 1) || !isInt(q['typeId'], 1) || !Array.isArray(q['flows'])) return bad(at, 'a queue with businessId, typeId and flows', q);
  (q['flows'] as unknown[]).forEach((f, j) => {
    const fat = `${at}.flows[${j}]`;
    if (!isObject(f) || typeof f['key'] !== 'string' || !isInt(f['weight'], 1, MAX_WEIGHT)) return bad(fat, 'a flow with a key and a weight', f);
    for (const k of ['returning', 'fresh'] as const) {
      const v = f[k];
      if (v !== undefined && (!Array.isArray(v) || !v.every((x) => seqs.has(x as number)))) bad(`${fat}.${k}`, 'submission numbers of this snapshot', v);
    }
    const entries = f['entries'];
    if (entries !== undefined && !Array.isArray(entries)) bad(`${fat}.entries`, 'an array of [submission, index]', entries);
  });
}
