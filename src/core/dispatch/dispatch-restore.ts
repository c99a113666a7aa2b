/**
 * Loading a snapshot's dispatch section into a new dispatcher. Messages that were in flight go
 * back to the head of their queues: each pending contact is sent once more, and a late "sent"
 * report for the old hand-out still settles the contact instead of letting it go twice. Every
 * queued contact is placed exactly once, in the saved order where the snapshot has one.
 */
import { ObjectContacts } from './contact-list.js';
import type { DispatchSnapshot } from './dispatch-snapshot.js';
import type { PoolQueue } from './pool-queue.js';
import { EXPIRED, FAILED, IN_FLIGHT, QUEUED, REJECTED, type RetryTimer, SENT, SUBMITTED, type SubmissionRecord, WAITING, type Counts, contactsTold, createRecord } from './record.js';
import type { SubmissionStatus } from './types.js';

/** What restoring writes into: the dispatcher's state and its state moves. */
export interface RestoreTarget {
  readonly records: Map<number, SubmissionRecord>;
  readonly counts: Counts;
  queue(businessId: number, typeId: number): PoolQueue;
  /** The contact's first state, counted. */
  enter(record: SubmissionRecord, index: number, state: number): void;
  retry(timer: RetryTimer): void;
  remember(status: SubmissionStatus): void;
}

/** Restores records, queue order and retry timers of a checked snapshot. */
export function restoreDispatch(snap: DispatchSnapshot, now: number, target: RestoreTarget): void {
  const inFlight = new Map<SubmissionRecord, number[]>();
  const savedBack = new Map<SubmissionRecord, readonly number[]>();
  for (const s of snap.submissions) {
    const record = createRecord(s.seq, s, new ObjectContacts(s.contacts), target.queue(s.businessId, s.typeId));
    const n = s.contacts.length;
    record.retries.set(s.retries);
    record.handouts.set(s.handouts);
    // Version 1 kept no place in the queue: every queued contact goes back in index order.
    record.fresh = s.fresh ?? n;
    const flying: number[] = [];
    for (let i = 0; i < n; i++) {
      const state = Number(s.state[i]);
      if (state === IN_FLIGHT) flying.push(i);
      // In flight at the snapshot: queued again (below, ahead of the rest).
      target.enter(record, i, state === IN_FLIGHT ? QUEUED : state);
    }
    inFlight.set(record, flying);
    const resend = [...flying, ...(s.resend ?? [])].filter((i) => record.state[i] === QUEUED && record.handouts[i]! > 0);
    if (resend.length > 0) {
      record.resend = new Uint8Array(n);
      for (const i of resend) record.resend[i] = 1;
    }
    const flyingSet = new Set(flying);
    savedBack.set(record, s.back ?? Array.from({ length: n }, (_, i) => i).filter((i) => record.state[i] === QUEUED && !flyingSet.has(i)));
    target.records.set(s.seq, record);
  }
  // Live contacts were counted as they entered; final ones of finished submissions come from the
  // snapshot's totals (which include the live ones), so the states add up to `submitted` again.
  const c = target.counts;
  const totals = [
    [SENT, 'sent'],
    [FAILED, 'failed'],
    [EXPIRED, 'expired'],
    [REJECTED, 'rejected'],
  ] as const;
  for (const [state, key] of totals) c[state] = Math.max(c[state]!, Math.trunc(Number(snap.counts[key]) || 0));
  c[SUBMITTED] = c[QUEUED]! + c[WAITING]! + c[IN_FLIGHT]! + c[SENT]! + c[FAILED]! + c[EXPIRED]! + c[REJECTED]!;
  placeQueued(snap, target.records, inFlight, savedBack);
  restoreRetries(snap, now, target);
  // Whoever restores has the contacts (from the file or its rows); `takeChanges(true)` gives them again.
  for (const record of target.records.values()) record.told = contactsTold(record.told);
  for (const status of snap.finished ?? []) target.remember({ ...status, finished: true });
}

/** Puts every queued contact in its queue once: those in flight first, then the saved order, then the rest. */
function placeQueued(
  snap: DispatchSnapshot,
  records: ReadonlyMap<number, SubmissionRecord>,
  inFlight: ReadonlyMap<SubmissionRecord, number[]>,
  savedBack: ReadonlyMap<SubmissionRecord, readonly number[]>,
): void {
  const placedBack = new Set<SubmissionRecord>();
  const placedFresh = new Set<SubmissionRecord>();
  const placeBack = (record: SubmissionRecord): void => {
    if (placedBack.has(record)) return;
    placedBack.add(record);
    const seen = new Set<number>();
    for (const i of [...inFlight.get(record)!, ...savedBack.get(record)!]) {
      if (seen.has(i) || record.state[i] !== QUEUED) continue;
      seen.add(i);
      record.queue.addBack(record, i);
    }
  };
  const placeFresh = (record: SubmissionRecord): void => {
    if (placedFresh.has(record)) return;
    placedFresh.add(record);
    let count = 0;
    for (let i = record.fresh; i < record.contacts.length; i++) if (record.state[i] === QUEUED) count++;
    record.queue.addFresh(record, count);
  };
  for (const q of snap.queues) {
    for (const f of q.flows) {
      for (const [r, flying] of inFlight) {
        if (r.businessId === q.businessId && r.typeId === q.typeId && r.flowKey === f.key && flying.length > 0) placeBack(r);
      }
      for (const seq of f.returning ?? []) placeBack(records.get(seq)!);
      for (const seq of f.fresh ?? []) placeFresh(records.get(seq)!);
    }
  }
  // Whatever no saved order placed (version 1, or contacts that were all in flight).
  for (const record of records.values()) {
    placeBack(record);
    placeFresh(record);
  }
}

/** Retry timers of waiting contacts; a waiting contact without its timer would wait forever: it is due now. */
function restoreRetries(snap: DispatchSnapshot, now: number, target: RestoreTarget): void {
  const timed = new Set<string>();
  for (const [seq, index, handout, at] of snap.retries) {
    const record = target.records.get(seq)!;
    if (record.state[index] !== WAITING) continue;
    (record.retryAt ??= new Float64Array(record.contacts.length))[index] = at;
    target.retry({ at, seq, index, handout });
    timed.add(`${seq}.${index}`);
  }
  for (const record of target.records.values()) {
    for (let i = 0; i < record.contacts.length; i++) {
      if (record.state[i] === WAITING && !timed.has(`${record.seq}.${i}`)) {
        (record.retryAt ??= new Float64Array(record.contacts.length))[i] = now;
        target.retry({ at: now, seq: record.seq, index: i, handout: record.handouts[i]! });
      }
    }
  }
}
