/**
 * The dispatch queue: turns `assign` into the loop a messaging server runs (sans-I/O).
 *
 * Every contact is in exactly one state at a time: queued, waiting for a retry, in flight, or one
 * of the final states sent, failed, expired, rejected. Counts per state are kept as contacts move,
 * so they add up to what was submitted at any moment, and each final outcome is reported once
 * through `takeOutcomes()`.
 *
 * The invariant that keeps the queue right (pool-queue.ts has the details): every queued contact is
 * reachable exactly once, from the record of its own submission, listed only in the flow of its own
 * campaign in the queue of its own (business, template type); a submission with nothing queued is
 * listed nowhere. Records are objects, never recycled, so nothing in a queue can come to mean
 * another submission. Timers name submissions by their number, which is never reused either.
 *
 * The queue's state and the moves between contact states are in dispatch-state.ts; this file
 * holds the queue's calls and `poll`'s loop (the hot path, which reads that state in place). Around
 * it: submissions (submit.ts, checks in check-submission.ts), reports (report.ts), records and
 * their states (record.ts), contacts as kept (contact-list.ts), hand-outs into buffers
 * (message-batch.ts), snapshots (dispatch-snapshot.ts) and restore (dispatch-restore.ts).
 */
import { ArgumentError, NotFoundError, SnapshotError } from '../errors.js';
import type { Pool } from '../pool.js';
import { describeValue } from '../problems.js';
import type { Submission } from '../submission.js';
import { type CompiledTemplate, compileTemplate } from '../template-text.js';
import { type DispatchSnapshot, type SubmissionChange, checkDispatchSnapshot, dispatchSnapshot, recordToChange } from './dispatch-snapshot.js';
import { restoreDispatch } from './dispatch-restore.js';
import { type DispatchHost, DispatchState, FINISHED_KEPT, removedReason } from './dispatch-state.js';
import { type BatchSource, MessageBatch } from './message-batch.js';
import { OutcomeBatch } from './outcome-batch.js';
import type { PoolQueue } from './pool-queue.js';
import { FAILED, IN_FLIGHT, LISTED_NEW, QUEUED, type RecordQueue, type SubmissionRecord, TOLD, countsView, parseMessageId, unlisted } from './record.js';
import { ALREADY_FINAL, UNKNOWN, checkOutcome, reportOutcome } from './report.js';
import { submit } from './submit.js';
import type { Blocker, ContactOutcome, DispatchCounts, OutgoingMessage, PollOptions, QueueStatus, ReportResult, SendOutcome, SubmissionStatus, SubmitTicket } from './types.js';

export type { DispatchHost } from './dispatch-state.js';
export { FINISHED_KEPT } from './dispatch-state.js';
export type { DispatchSnapshot } from './dispatch-snapshot.js';

/** What changed in the dispatch queue since the host last asked (`engine.takeChanges()`). */
export interface DispatchChanges {
  readonly nextSeq: number;
  readonly counts: DispatchCounts;
  /** Live submissions that changed, contacts included the first time. */
  readonly submissions: readonly SubmissionChange[];
  /** Submissions that finished: their final counts (their rows can go). */
  readonly finished: readonly SubmissionStatus[];
}

/**
 * A submission that joins this many queued contacts or more is kept packed (contact-list.ts): in
 * a long queue contacts wait, and memory is what they cost; below it they leave soon, and copying
 * them would cost more time than holding the caller's objects costs memory.
 */
export const PACK_FROM_QUEUED = 10_000;

export class Dispatcher {
  readonly #s: DispatchState;
  #pollStart = 0;
  /** Template texts split at their placeholders, by template id (texts do not change under an id). */
  readonly #compiled = new Map<number, CompiledTemplate>();
  #scratchNumbers = new Int32Array(256);
  #scratchTemplates = new Float64Array(256);
  /** The batch `poll()` fills before it builds its objects. */
  #pollBatch = new MessageBatch(256);
  readonly #source: BatchSource;
  /** @param packFrom queued contacts from which submissions are kept packed (see `CoreEngineOptions.packContactsFrom`) */
  constructor(host: DispatchHost, packFrom = PACK_FROM_QUEUED) {
    this.#s = new DispatchState(host, packFrom);
    this.#source = { phoneAt: (slot) => host.phoneAt(slot), template: (id) => this.#template(id) };
  }

  /** Keeps a list of what changes, for `takeChanges`. */
  track(): void {
    this.#s.tracking = true;
  }

  /**
   * Submissions changed and finished since the last call. With `full`, every live submission with
   * its contacts (a host starting to keep rows from an engine restored from a snapshot file).
   */
  takeChanges(full = false): DispatchChanges {
    // Nothing falls due here: an outcome made now would miss the host's step it belongs to.
    const submissions: SubmissionChange[] = [];
    if (full) {
      for (const r of this.#s.listed) r.told = unlisted(r.told);
      for (const r of this.#s.bySeq.values()) {
        if (!r.live) continue;
        submissions.push(recordToChange(r, true));
        r.told = TOLD;
      }
    } else {
      for (const r of this.#s.listed) {
        if (!r.live) r.told = unlisted(r.told);
        else {
          submissions.push(recordToChange(r, r.told === LISTED_NEW));
          r.told = TOLD;
        }
      }
    }
    this.#s.listed = [];
    const finished = this.#s.finishedSince;
    this.#s.finishedSince = [];
    return { nextSeq: this.#s.nextSeq, counts: countsView(this.#s.counts), submissions, finished };
  }

  submit(input: Submission): SubmitTicket {
    return submit(this.#s, input);
  }

  // ---------------------------------------------------------------- poll

  poll(options: PollOptions = {}): OutgoingMessage[] {
    const limit = options.limit ?? 10_000;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new ArgumentError('poll({ limit })', 'a whole number, 1 or more', describeValue(limit));
    const batch = this.#pollBatch;
    const n = this.#fillBatch(batch, limit);
    const out = new Array<OutgoingMessage>(n);
    for (let i = 0; i < n; i++) out[i] = batch.message(i);
    batch.clear();
    return out;
  }

  /** `poll` into a reusable batch: rows instead of objects (message-batch.ts). Answers the rows filled. */
  pollInto(batch: MessageBatch, limit = batch.capacity): number {
    if (!(batch instanceof MessageBatch)) throw new ArgumentError('pollInto(batch)', 'a MessageBatch', describeValue(batch));
    if (!Number.isSafeInteger(limit) || limit < 1) throw new ArgumentError('pollInto(batch, limit)', 'a whole number, 1 or more', describeValue(limit));
    return this.#fillBatch(batch, Math.min(limit, batch.capacity));
  }

  #fillBatch(batch: MessageBatch, limit: number): number {
    const now = this.#s.host.tick();
    this.#s.due(now);
    batch.clear();
    batch.handedOutAt = now;
    batch.source = this.#source;
    const queues = this.#s.queueOrder;
    const k = queues.length;
    // Start one queue further each call, so a busy type cannot keep a poll limit to itself.
    const start = k === 0 ? 0 : this.#pollStart++ % k;
    for (let j = 0; j < k && batch.count < limit; j++) {
      const queue = queues[(start + j) % k]!;
      if (queue.ready === 0 || queue.wakeAt > now) continue;
      const pool = this.#s.host.pool(queue.businessId, queue.typeId);
      if (!pool) continue;
      this.#serve(queue, pool, Math.min(queue.ready, limit - batch.count), now, batch);
    }
    return batch.count;
  }

  #serve(queue: PoolQueue, pool: Pool, want: number, now: number, batch: MessageBatch): void {
    if (this.#scratchNumbers.length < want) {
      this.#scratchNumbers = new Int32Array(want);
      this.#scratchTemplates = new Float64Array(want);
    }
    // `poll()`'s own batch grows to what it hands out; a caller's batch has room for its limit.
    batch.reserve(batch.count + want);
    const numbers = this.#scratchNumbers;
    const templates = this.#scratchTemplates;
    // The queue's state and its host read once: the loop below runs per message.
    const state = this.#s;
    const host = state.host;
    const n = host.fill(pool, want, now, numbers, templates);
    const counts = state.counts;
    const tracking = state.tracking;
    const grouped = pool.grouped;
    let refused = -1;
    let row = batch.count;
    let times: Float64Array | undefined;
    let timesOf: SubmissionRecord | undefined;
    for (let i = 0; i < n; i++) {
      // `ready` counts exactly what `next` finds; if it ever did not, the queue reports the anomaly
      // and the capacity charged for the rest of this call goes unused (under-use, never over-send).
      const record = queue.next();
      if (record === undefined) break;
      const index = queue.index;
      const slot = numbers[i]!;
      // A portfolio with no room for a new recipient: the contact goes back to the head of its flow
      // and waits, with the rest of the queue, for a recipient to leave the portfolio's 24 h.
      if (grouped && !host.admit(slot, record.contacts.at(index).phone, now)) {
        queue.addBack(record, index);
        refused = i;
        break;
      }
      if (tracking) {
        host.charged(slot);
        state.touch(record);
      }
      let handout = record.handouts[index]!;
      // In flight at a restart: the same hand-out again, under the same message id.
      if (record.resend !== undefined && record.resend[index] === 1) {
        record.resend[index] = 0;
        handout--;
      } else record.handouts[index] = handout + 1;
      // Queued -> in flight, written out: this loop is the hot path of the dispatch loop.
      record.state[index] = IN_FLIGHT;
      record.counts[QUEUED]!--;
      record.counts[IN_FLIGHT]!++;
      counts[QUEUED]!--;
      counts[IN_FLIGHT]!++;
      record.flightSlot[index] = slot;
      record.flightTemplate[index] = templates[i]!;
      // When its number was charged: a refusal gives the charge back to that 24 h bucket.
      if (timesOf !== record) {
        timesOf = record;
        times = record.retryAt ??= new Float64Array(record.contacts.length);
      }
      times![index] = now;
      batch.records[row] = record;
      batch.indexes[row] = index;
      batch.handouts[row] = handout;
      batch.numbers[row] = slot;
      batch.templateIds[row] = templates[i]!;
      row++;
    }
    batch.count = row;
    if (refused >= 0) {
      host.unfill(numbers, refused, n, now);
      this.#block(queue, host.portfolioShortfall(numbers[refused]!, now));
    } else if (n < want) this.#block(queue, host.shortfall(pool));
    else this.#block(queue, undefined);
  }

  #block(queue: RecordQueue, s: { reason: Blocker; retryAt?: number } | undefined): void {
    queue.blocked = s?.reason;
    queue.retryAt = s?.retryAt;
    queue.wakeAt = s === undefined ? 0 : (s.retryAt ?? Infinity);
  }

  #template(templateId: number): CompiledTemplate {
    let compiled = this.#compiled.get(templateId);
    if (compiled === undefined) {
      compiled = compileTemplate(this.#s.host.templateText(templateId));
      this.#compiled.set(templateId, compiled);
    }
    return compiled;
  }

  // ---------------------------------------------------------------- report

  report(messageId: string, outcome: SendOutcome): ReportResult {
    checkOutcome(outcome);
    const now = this.#s.host.tick();
    this.#s.due(now);
    const id = parseMessageId(messageId);
    if (id === undefined || id.seq >= this.#s.nextSeq) return UNKNOWN;
    // Numbered by this engine and no longer live: every contact of it has its final outcome.
    const record = this.#s.bySeq.get(id.seq);
    return record === undefined ? ALREADY_FINAL : reportOutcome(this.#s, record, id.index, id.handout, outcome, now);
  }

  /** `report` for row `i` of a batch filled by `pollInto`. */
  reportAt(batch: MessageBatch, i: number, outcome: SendOutcome): ReportResult {
    checkOutcome(outcome);
    if (!(i >= 0 && i < batch.count)) throw new ArgumentError('reportAt(batch, i)', `a row from 0 to ${batch.count - 1}`, describeValue(i));
    const now = this.#s.host.tick();
    this.#s.due(now);
    const record = batch.records[i]!;
    return record.live ? reportOutcome(this.#s, record, batch.indexes[i]!, batch.handouts[i]!, outcome, now) : ALREADY_FINAL;
  }

  /**
   * Clock time of the next moment `poll()` can hand out something or a timer falls due (a retry, a
   * deadline, a timed resume); `now` only when `poll()` would hand out at once; null when nothing
   * will happen by the clock alone (nothing waits, or only a call such as a resume can unblock it).
   */
  nextWakeAt(): number | null {
    const now = this.#s.host.tick();
    this.#s.due(now);
    let at = Infinity;
    let blocked = false;
    for (const q of this.#s.queueOrder) {
      if (q.ready === 0) continue;
      this.#refreshBlock(q, now);
      if (q.wakeAt <= now) return now;
      if (q.wakeAt < at) at = q.wakeAt;
      blocked = true;
    }
    const retry = this.#s.peekRetry();
    if (retry !== undefined && retry < at) at = retry;
    const deadline = this.#s.peekDeadline();
    if (deadline !== undefined && deadline < at) at = deadline;
    if (blocked) {
      const resume = this.#s.host.nextResumeAt();
      if (resume !== undefined && resume < at) at = resume;
    }
    return Number.isFinite(at) ? Math.max(at, now) : null;
  }

  /** For a queue that would be polled now: whether its pool can hand out, and if not, what holds it. */
  #refreshBlock(q: RecordQueue, now: number): void {
    if (q.ready === 0 || q.wakeAt > now) return;
    const pool = this.#s.host.pool(q.businessId, q.typeId);
    this.#block(q, pool ? this.#s.host.probe(pool, now) : { reason: 'no-template' });
  }

  /** Something changed that may unblock queues (a resume, a limit change): poll them again. */
  poke(): void {
    for (const q of this.#s.queueOrder) q.wakeAt = 0;
  }

  stats(): DispatchCounts {
    this.#s.due(this.#s.host.tick());
    return countsView(this.#s.counts);
  }

  submissionStatus(submissionId: string): SubmissionStatus {
    const now = this.#s.host.tick();
    this.#s.due(now);
    const finished = this.#s.finished.get(submissionId);
    if (finished) return finished;
    const id = typeof submissionId === 'string' && /^s[1-9][0-9]*$/.test(submissionId) ? Number(submissionId.slice(1)) : NaN;
    const record = this.#s.bySeq.get(id);
    if (!record) {
      throw new NotFoundError('submission', submissionId, id < this.#s.nextSeq ? `(it finished; final counts are kept for the last ${FINISHED_KEPT} finished submissions)` : undefined);
    }
    const queue = record.queue;
    this.#refreshBlock(queue, now);
    const waiting = record.counts[QUEUED]! > 0 && queue.blocked !== undefined;
    return {
      submissionId,
      finished: false,
      ...countsView(record.counts),
      ...(waiting ? { blocked: queue.blocked } : {}),
      ...(waiting && queue.retryAt !== undefined ? { retryAt: queue.retryAt } : {}),
    };
  }

  /** Final outcomes reached since the last call, each reported exactly once. */
  takeOutcomes(): ContactOutcome[] {
    const out = this.#s.outcomes.outcomes();
    this.#s.outcomes.clear();
    return out;
  }

  /** `takeOutcomes` as rows: the batch receives them (its earlier rows are dropped). Answers how many. */
  takeOutcomesInto(batch: OutcomeBatch): number {
    if (!(batch instanceof OutcomeBatch)) throw new ArgumentError('takeOutcomesInto(batch)', 'an OutcomeBatch', describeValue(batch));
    this.#s.outcomes.swap(batch);
    return batch.count;
  }

  /** Clock time the earliest contact waiting for its retry falls due; undefined when none waits. */
  nextRetryAt(): number | undefined {
    this.#s.due(this.#s.host.tick());
    return this.#s.peekRetry();
  }

  /** Contacts queued and waiting for a (business, type), and what holds them, if anything. */
  queueStatus(businessId: number, typeId: number): QueueStatus {
    const now = this.#s.host.tick();
    this.#s.due(now);
    const queue = this.#s.queues.get(`${businessId}/${typeId}`);
    if (!queue) return { queued: 0, waitingRetry: 0 };
    this.#refreshBlock(queue, now);
    const held = queue.ready > 0 && queue.blocked !== undefined;
    return {
      queued: queue.ready,
      waitingRetry: queue.waiting,
      ...(held ? { blocked: queue.blocked } : {}),
      ...(held && queue.retryAt !== undefined ? { retryAt: queue.retryAt } : {}),
    };
  }

  /**
   * After a fleet change: contacts of types that no longer exist end failed, and the numbers of
   * messages in flight move to their new slots (`slotOf` answers -1 for a number that left).
   */
  fleetChanged(now: number, slotOf: (oldSlot: number) => number): void {
    for (const record of [...this.#s.bySeq.values()]) {
      if (record.counts[IN_FLIGHT]! > 0) {
        const slots = record.flightSlot;
        for (let i = 0; i < slots.length; i++) if (slots[i]! >= 0) slots[i] = slotOf(slots[i]!);
      }
      if (!this.#s.host.pool(record.businessId, record.typeId)) this.#s.endWaiting(record, FAILED, now, removedReason(record));
    }
    this.poke();
  }

  // ---------------------------------------------------------------- state moves

  snapshot(): DispatchSnapshot {
    return dispatchSnapshot({
      nextSeq: this.#s.nextSeq,
      counts: countsView(this.#s.counts),
      records: this.#s.bySeq,
      queues: this.#s.queueOrder,
      retries: this.#s.retries.toArray(),
      outcomes: this.#s.outcomes.outcomes(),
      finished: this.#s.finished,
    });
  }

  /**
   * Loads a snapshot into this (new) dispatcher (dispatch-restore.ts has how).
   * @throws {SnapshotError} listing every problem of the section; nothing is loaded then
   */
  restore(input: unknown): void {
    const problems = checkDispatchSnapshot(input, '$.dispatch');
    if (problems.length > 0) throw new SnapshotError('The dispatch section of the snapshot is not valid', problems);
    const snap = input as DispatchSnapshot;
    const now = this.#s.host.tick();
    this.#s.nextSeq = snap.nextSeq;
    restoreDispatch(snap, now, {
      records: this.#s.bySeq,
      counts: this.#s.counts,
      queue: (b, t) => this.#s.queue(b, t),
      enter: (record, i, state) => this.#s.enter(record, i, state),
      retry: (timer) => this.#s.retries.push(timer),
      remember: (status) => this.#s.remember(status),
    });
    for (const o of restoredOutcomes(snap)) this.#s.outcomes.pushMade(o);
    for (const record of [...this.#s.bySeq.values()]) this.#s.finishIfDone(record);
    this.fleetChanged(now, (slot) => slot);
  }
}

/** Outcomes not taken before the snapshot; older snapshots lack the contact id and the attempt. */
function restoredOutcomes(snap: DispatchSnapshot): ContactOutcome[] {
  return snap.outcomes.map((o) => ({ ...o, contactId: o.contactId ?? `${o.submissionId}.${o.index}`, retryIndex: o.retryIndex ?? null }));
}
