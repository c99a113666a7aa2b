/**
 * The dispatch queue's state, and the moves of a contact between its states that keep it whole:
 * every contact is in exactly one state, its submission's counts and the queue's add up to what
 * was submitted, and each final state is emitted once as an outcome (dispatcher.ts has the
 * invariant of the queues). Shared by the queue's parts: submit (submit.ts), `poll`'s loop and the
 * views (dispatcher.ts), reports (report.ts), snapshots and restore; only they use it.
 */
import { Heap } from 'mnemonist';
import type { Pool } from '../pool.js';
import { OutcomeBatch } from './outcome-batch.js';
import { PoolQueue } from './pool-queue.js';
import { type Counts, EXPIRED, FAILED, QUEUED, REJECTED, type RetryTimer, SENT, SUBMITTED, type SubmissionRecord, WAITING, listChange, retryStands, unfinished, zeroCounts } from './record.js';
import type { Blocker, SubmissionStatus } from './types.js';

/** What the dispatch queue needs of the engine (core/engine-host.ts). */
export interface DispatchHost {
  tick(): number;
  hasBusiness(businessId: number): boolean;
  pool(businessId: number, typeId: number): Pool | undefined;
  placeholders(businessId: number, typeId: number): number | undefined;
  fill(pool: Pool, count: number, now: number, numbers: Int32Array, templates: Float64Array): number;
  shortfall(pool: Pool): { reason: Blocker; retryAt?: number };
  /** Undefined when a fill at `now` would hand out at least one message, else what holds the pool. */
  probe(pool: Pool, now: number): { reason: Blocker; retryAt?: number } | undefined;
  phoneAt(slot: number): string;
  templateText(templateId: number): string;
  /** Pauses the number at `slot` (a failure took it out). */
  pauseNumber(slot: number, until: number | undefined): void;
  /**
   * Gives back one message to `recipient` charged to the number at `slot` at `chargedAt` (the
   * provider refused it): to the number's windows, and to its portfolio's recipients.
   */
  refund(slot: number, chargedAt: number, now: number, recipient: string): void;
  setTemplate(templateId: number, status: 'paused' | 'disabled', until: number | undefined): void;
  nextResumeAt(): number | undefined;
  anomaly(message: string): void;
  /** A message went out on the number at `slot` (its limit usage changed), when changes are tracked. */
  charged(slot: number): void;
  /**
   * For a pool that shares a portfolio's limit (`pool.grouped`): charges a message from the number
   * at `slot` to `recipient` to the number's portfolio, and answers whether it may go.
   */
  admit(slot: number, recipient: string, now: number): boolean;
  /** Gives back the numbers' charges of pairs `from` to `to - 1` of a fill at `now`, unused. */
  unfill(numbers: Int32Array, from: number, to: number, now: number): void;
  /** What holds a queue whose message from the number at `slot` its portfolio refused. */
  portfolioShortfall(slot: number, now: number): { reason: Blocker; retryAt?: number };
}

/**
 * Final counts of this many finished submissions stay readable through `submissionStatus` (and in
 * snapshots); about 150 bytes each. Reports for older ones still answer `already-final`.
 */
export const FINISHED_KEPT = 10_000;
/** Hand-outs of one contact at most (the counter's width); a contact that reaches it ends failed. */
const MAX_HANDOUTS = 0xffff;

interface DeadlineTimer {
  readonly at: number;
  readonly seq: number;
}

export class DispatchState {
  readonly host: DispatchHost;
  /** Queued contacts from which submissions are kept packed (see `CoreEngineOptions.packContactsFrom`). */
  readonly packFrom: number;
  /** Number of the next submission (never reused). */
  nextSeq = 1;
  readonly counts: Counts = zeroCounts();
  /** Live submissions by number. */
  readonly bySeq = new Map<number, SubmissionRecord>();
  /** Final counts of the last finished submissions, by id, oldest first. */
  readonly finished = new Map<string, SubmissionStatus>();
  readonly queues = new Map<string, PoolQueue>();
  readonly queueOrder: PoolQueue[] = [];
  readonly retries = new Heap<RetryTimer>((a, b) => a.at - b.at || a.seq - b.seq || a.index - b.index);
  readonly deadlines = new Heap<DeadlineTimer>((a, b) => a.at - b.at || a.seq - b.seq);
  /** Final outcomes not taken yet, as rows (outcome-batch.ts). */
  readonly outcomes = new OutcomeBatch();
  /** Whether changes are kept for `takeChanges`, and those kept: records changed, submissions finished. */
  tracking = false;
  listed: SubmissionRecord[] = [];
  finishedSince: SubmissionStatus[] = [];

  constructor(host: DispatchHost, packFrom: number) {
    this.host = host;
    this.packFrom = packFrom;
  }

  /** The record changed: listed for the host's next `takeChanges` (tracking on). */
  touch(record: SubmissionRecord): void {
    if (this.tracking && listChange(record)) this.listed.push(record);
  }

  /** First state of a contact. */
  enter(record: SubmissionRecord, index: number, state: number): void {
    this.touch(record);
    record.state[index] = state;
    record.counts[state]!++;
    this.counts[state]!++;
    if (state === WAITING) record.queue.waiting++;
    if (state <= WAITING) this.armDeadline(record);
  }

  /** A contact from its state to `state`. */
  move(record: SubmissionRecord, index: number, state: number): void {
    this.touch(record);
    const before = record.state[index]!;
    record.counts[before]!--;
    this.counts[before]!--;
    record.counts[state]!++;
    this.counts[state]!++;
    record.state[index] = state;
    if (before === WAITING) record.queue.waiting--;
    if (state === WAITING) record.queue.waiting++;
    if (state <= WAITING) this.armDeadline(record);
  }

  /** A contact waits (queued or for a retry): its submission's deadline must be able to end it. */
  armDeadline(record: SubmissionRecord): void {
    if (record.deadline === undefined || record.deadlineArmed) return;
    record.deadlineArmed = true;
    this.deadlines.push({ at: record.deadline, seq: record.seq });
  }

  /** A contact's final state; `handout` names the message it ends with (-1: its last hand-out, if any). */
  end(record: SubmissionRecord, index: number, state: number, now: number, handout: number, reason?: string, code?: number): void {
    this.move(record, index, state);
    this.emit(record, index, state, now, handout, reason, code);
    this.finishIfDone(record);
  }

  emit(record: SubmissionRecord, index: number, state: number, at: number, handout: number, reason: string | undefined, code: number | undefined): void {
    this.outcomes.push(record, index, state, at, handout, reason, code);
  }

  /** A submission whose contacts all ended is forgotten but for its final counts. */
  finishIfDone(record: SubmissionRecord): void {
    if (unfinished(record.counts) > 0 || !record.live) return;
    if (record.inFresh || record.inReturning) {
      this.host.anomaly(`${record.id} finished while still listed in its queue; removed`);
      record.queue.removeAll(record);
    }
    record.live = false;
    this.bySeq.delete(record.seq);
    const c = record.counts;
    const status: SubmissionStatus = {
      submissionId: record.id,
      finished: true,
      submitted: c[SUBMITTED]!,
      queued: 0,
      waitingRetry: 0,
      inFlight: 0,
      sent: c[SENT]!,
      failed: c[FAILED]!,
      expired: c[EXPIRED]!,
      rejected: c[REJECTED]!,
    };
    this.remember(status);
    if (this.tracking) this.finishedSince.push(status);
  }

  /** A finished submission's final counts, kept for the last {@link FINISHED_KEPT} of them. */
  remember(status: SubmissionStatus): void {
    this.finished.set(status.submissionId, status);
    if (this.finished.size > FINISHED_KEPT) this.finished.delete(this.finished.keys().next().value!);
  }

  /** The queue of a (business, type), made at its first submission. */
  queue(businessId: number, typeId: number): PoolQueue {
    const key = `${businessId}/${typeId}`;
    let queue = this.queues.get(key);
    if (!queue) {
      queue = new PoolQueue(businessId, typeId, (message) => this.host.anomaly(message));
      this.queues.set(key, queue);
      this.queueOrder.push(queue);
    }
    return queue;
  }

  /** Applies what fell due by `now`: retries go back to their queues, deadlines expire contacts. */
  due(now: number): void {
    const retries = this.retries;
    for (let r = retries.peek(); r !== undefined && r.at <= now; r = retries.peek()) {
      retries.pop();
      const record = this.bySeq.get(r.seq);
      if (retryStands(record, r)) this.returnToQueue(record, r.index, now);
    }
    const deadlines = this.deadlines;
    for (let d = deadlines.peek(); d !== undefined && d.at <= now; d = deadlines.peek()) {
      deadlines.pop();
      const record = this.bySeq.get(d.seq);
      if (record === undefined) continue;
      record.deadlineArmed = false;
      this.endWaiting(record, EXPIRED, now);
    }
  }

  /** Every queued or waiting contact of `record` ends in `state` (a deadline, a type removed). */
  endWaiting(record: SubmissionRecord, state: number, now: number, reason?: string): void {
    if (record.counts[QUEUED]! + record.counts[WAITING]! === 0) return;
    record.queue.removeAll(record);
    for (let i = 0; i < record.contacts.length; i++) {
      const s = record.state[i];
      if (s === QUEUED || s === WAITING) this.end(record, i, state, now, -1, reason);
    }
  }

  /**
   * Queues a contact that was handed out (or waited) again, ahead of contacts never handed out.
   * Answers the final state it reached instead, when it cannot go again.
   */
  returnToQueue(record: SubmissionRecord, index: number, now: number): 'failed' | undefined {
    let why: string | undefined;
    if (record.handouts[index]! >= MAX_HANDOUTS) why = `handed out ${MAX_HANDOUTS} times without a final outcome`;
    else if (!this.host.pool(record.businessId, record.typeId)) why = removedReason(record);
    if (why !== undefined) {
      this.end(record, index, FAILED, now, -1, why);
      return 'failed';
    }
    this.move(record, index, QUEUED);
    record.queue.addBack(record, index);
    record.queue.wakeAt = 0;
    return undefined;
  }

  /** Clock time of the earliest retry that still stands; undefined when none waits. */
  peekRetry(): number | undefined {
    for (let r = this.retries.peek(); r !== undefined; r = this.retries.peek()) {
      if (retryStands(this.bySeq.get(r.seq), r)) return r.at;
      this.retries.pop();
    }
    return undefined;
  }

  /** The earliest deadline something waits for. A submission whose contacts are all in flight is disarmed until one waits again. */
  peekDeadline(): number | undefined {
    for (let d = this.deadlines.peek(); d !== undefined; d = this.deadlines.peek()) {
      const record = this.bySeq.get(d.seq);
      if (record && record.counts[QUEUED]! + record.counts[WAITING]! > 0) return d.at;
      this.deadlines.pop();
      if (record) record.deadlineArmed = false;
    }
    return undefined;
  }
}

export function removedReason(record: SubmissionRecord): string {
  return `template type ${record.typeId} of business ${record.businessId} was removed from the fleet`;
}
