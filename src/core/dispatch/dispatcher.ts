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
 * Around it: submission checks (check-submission.ts), records and their states (record.ts),
 * contacts as kept (contact-list.ts), hand-outs into buffers (message-batch.ts), snapshots
 * (dispatch-snapshot.ts) and restore (dispatch-restore.ts). This file is over 400 lines because
 * the state moves, the hot loop of `poll` and the paths of `report` share the queue's private
 * state; splitting them would put that state behind calls on the hot path.
 */
import { Heap } from 'mnemonist';
import { type FailureAction, MAX_TRANSPORT_ATTEMPTS, actionForCode, backoffMs, channelError, failureReason } from '../channel-errors.js';
import { ArgumentError, NotFoundError, SnapshotError, SubmissionError } from '../errors.js';
import type { Pool } from '../pool.js';
import { describeValue, problem } from '../problems.js';
import type { Submission } from '../submission.js';
import { type CompiledTemplate, compileTemplate } from '../template-text.js';
import { checkContact, checkSubmission } from './check-submission.js';
import { type ContactList, ObjectContacts, PackedContacts, packable } from './contact-list.js';
import { type DispatchSnapshot, type SubmissionChange, checkDispatchSnapshot, dispatchSnapshot, recordToChange } from './dispatch-snapshot.js';
import { restoreDispatch } from './dispatch-restore.js';
import { type BatchSource, MessageBatch } from './message-batch.js';
import { OutcomeBatch } from './outcome-batch.js';
import { PoolQueue } from './pool-queue.js';
import {
  type Counts,
  EXPIRED,
  FAILED,
  FIRST_FINAL,
  IN_FLIGHT,
  LISTED_NEW,
  QUEUED,
  REJECTED,
  type RetryTimer,
  SENT,
  SUBMITTED,
  TOLD,
  type RecordQueue,
  type SubmissionRecord,
  WAITING,
  countsView,
  createRecord,
  listChange,
  parseMessageId,
  retryStands,
  unfinished,
  unlisted,
  zeroCounts,
} from './record.js';
import type { Blocker, ContactOutcome, ContactRejection, DispatchCounts, OutgoingMessage, PollOptions, QueueStatus, ReportResult, SendOutcome, SubmissionStatus, SubmitTicket } from './types.js';

export type { DispatchSnapshot } from './dispatch-snapshot.js';

/** What the dispatcher needs of the engine. */
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
 * Final counts of this many finished submissions stay readable through `submissionStatus` (and in
 * snapshots); about 150 bytes each. Reports for older ones still answer `already-final`.
 */
export const FINISHED_KEPT = 10_000;
/** In a contact's `attempts`: the count of tries that used no retry, and the flag of an unknown outcome seen. */
const COUNT_MASK = 0x7f;
const UNKNOWN_OUTCOME = 0x80;
/** Hand-outs of one contact at most (the counter's width); a contact that reaches it ends failed. */
const MAX_HANDOUTS = 0xffff;
/**
 * A submission that joins this many queued contacts or more is kept packed (contact-list.ts): in
 * a long queue contacts wait, and memory is what they cost; below it they leave soon, and copying
 * them would cost more time than holding the caller's objects costs memory.
 */
export const PACK_FROM_QUEUED = 10_000;

interface DeadlineTimer {
  readonly at: number;
  readonly seq: number;
}

// Answers of `report` that carry nothing of their own: one object each, not one per report.
const SENT_RESULT: ReportResult = Object.freeze({ ok: true, effect: 'sent' });
const FAILED_RESULT: ReportResult = Object.freeze({ ok: true, effect: 'failed' });
const EXPIRED_RESULT: ReportResult = Object.freeze({ ok: true, effect: 'expired' });
const UNKNOWN: ReportResult = Object.freeze({ ok: false, reason: 'unknown-message' });
const ALREADY_FINAL: ReportResult = Object.freeze({ ok: false, reason: 'already-final' });
const STALE: ReportResult = Object.freeze({ ok: false, reason: 'stale-hand-out' });

export class Dispatcher {
  readonly #host: DispatchHost;
  #nextSeq = 1;
  readonly #counts: Counts = zeroCounts();
  readonly #bySeq = new Map<number, SubmissionRecord>();
  readonly #finished = new Map<string, SubmissionStatus>();
  readonly #queues = new Map<string, PoolQueue>();
  readonly #queueOrder: PoolQueue[] = [];
  #pollStart = 0;
  /** Template texts split at their placeholders, by template id (texts do not change under an id). */
  readonly #compiled = new Map<number, CompiledTemplate>();
  readonly #retries = new Heap<RetryTimer>((a, b) => a.at - b.at || a.seq - b.seq || a.index - b.index);
  readonly #deadlines = new Heap<DeadlineTimer>((a, b) => a.at - b.at || a.seq - b.seq);
  /** Final outcomes not taken yet, as rows (outcome-batch.ts). */
  #outcomes = new OutcomeBatch();
  #scratchNumbers = new Int32Array(256);
  #scratchTemplates = new Float64Array(256);
  /** The batch `poll()` fills before it builds its objects. */
  #pollBatch = new MessageBatch(256);
  readonly #source: BatchSource;
  #tracking = false;
  #listed: SubmissionRecord[] = [];
  #finishedSince: SubmissionStatus[] = [];

  readonly #packFrom: number;

  /** @param packFrom queued contacts from which submissions are kept packed (see `CoreEngineOptions.packContactsFrom`) */
  constructor(host: DispatchHost, packFrom = PACK_FROM_QUEUED) {
    this.#host = host;
    this.#packFrom = packFrom;
    this.#source = { phoneAt: (slot) => host.phoneAt(slot), template: (id) => this.#template(id) };
  }

  /** Keeps a list of what changes, for `takeChanges`. */
  track(): void {
    this.#tracking = true;
  }

  /**
   * Submissions changed and finished since the last call. With `full`, every live submission with
   * its contacts (a host starting to keep rows from an engine restored from a snapshot file).
   */
  takeChanges(full = false): DispatchChanges {
    // Nothing falls due here: an outcome made now would miss the host's step it belongs to.
    const submissions: SubmissionChange[] = [];
    if (full) {
      for (const r of this.#listed) r.told = unlisted(r.told);
      for (const r of this.#bySeq.values()) {
        if (!r.live) continue;
        submissions.push(recordToChange(r, true));
        r.told = TOLD;
      }
    } else {
      for (const r of this.#listed) {
        if (!r.live) r.told = unlisted(r.told);
        else {
          submissions.push(recordToChange(r, r.told === LISTED_NEW));
          r.told = TOLD;
        }
      }
    }
    this.#listed = [];
    const finished = this.#finishedSince;
    this.#finishedSince = [];
    return { nextSeq: this.#nextSeq, counts: countsView(this.#counts), submissions, finished };
  }

  #touch(record: SubmissionRecord): void {
    if (this.#tracking && listChange(record)) this.#listed.push(record);
  }

  // ---------------------------------------------------------------- submit

  submit(input: Submission): SubmitTicket {
    const problems = checkSubmission(input);
    const placeholders = problems.length === 0 ? this.#host.placeholders(input.businessId, input.typeId) : undefined;
    if (problems.length === 0 && placeholders === undefined) {
      problems.push(
        this.#host.hasBusiness(input.businessId)
          ? problem('$.typeId', `a template type of business ${input.businessId}`, input.typeId)
          : problem('$.businessId', 'a business of the fleet', input.businessId),
      );
    }
    if (problems.length > 0 || placeholders === undefined) throw new SubmissionError(problems);
    const now = this.#host.tick();
    this.#due(now);
    const given = input.contacts;
    const n = given.length;
    const rejected: ContactRejection[] = [];
    for (let i = 0; i < n; i++) {
      const why = checkContact(given[i], placeholders, i);
      if (why) rejected.push(why);
    }
    const pack = this.#counts[QUEUED]! >= this.#packFrom && rejected.length === 0 && packable(given);
    const contacts: ContactList = pack ? new PackedContacts(given, placeholders) : new ObjectContacts(given);
    const record = createRecord(this.#nextSeq++, input, contacts, this.#queue(input.businessId, input.typeId));
    this.#bySeq.set(record.seq, record);
    this.#counts[SUBMITTED]! += n;
    const expiredAlready = record.deadline !== undefined && record.deadline <= now;
    const accepted = expiredAlready ? 0 : n - rejected.length;
    if (rejected.length > 0 || expiredAlready) {
      // In index order, so outcomes come in the order of the contacts.
      let r = 0;
      for (let i = 0; i < n; i++) {
        const why = rejected[r]?.index === i ? rejected[r++] : undefined;
        if (why !== undefined) {
          this.#enter(record, i, REJECTED);
          this.#emit(record, i, REJECTED, now, -1, why.reason, undefined);
        } else if (expiredAlready) {
          this.#enter(record, i, EXPIRED);
          this.#emit(record, i, EXPIRED, now, -1, undefined, undefined);
        }
      }
    }
    if (accepted > 0 && input.notBefore !== undefined && input.notBefore > now) {
      // Not before a time: each waits as a retry waits (no retry counted), then goes from `back`.
      const at = input.notBefore;
      const times = (record.retryAt = new Float64Array(n));
      for (let i = 0; i < n; i++) {
        // Rejected contacts have their state already; the rest are still at 0, uncounted.
        if (record.state[i] !== QUEUED) continue;
        this.#enter(record, i, WAITING);
        times[i] = at;
        this.#retries.push({ at, seq: record.seq, index: i, handout: 0 });
      }
      // None is fresh: each comes back through `back` when its time falls due.
      record.fresh = n;
    } else {
      if (accepted > 0) {
        // The others start queued (state 0): counted at once rather than one by one.
        this.#touch(record);
        record.counts[QUEUED] = accepted;
        this.#counts[QUEUED]! += accepted;
        this.#armDeadline(record);
      }
      record.queue.addFresh(record, accepted, input.ahead === true);
    }
    record.queue.wakeAt = 0;
    this.#finishIfDone(record);
    return { submissionId: record.id, accepted, rejected };
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
    const now = this.#host.tick();
    this.#due(now);
    batch.clear();
    batch.handedOutAt = now;
    batch.source = this.#source;
    const queues = this.#queueOrder;
    const k = queues.length;
    // Start one queue further each call, so a busy type cannot keep a poll limit to itself.
    const start = k === 0 ? 0 : this.#pollStart++ % k;
    for (let j = 0; j < k && batch.count < limit; j++) {
      const queue = queues[(start + j) % k]!;
      if (queue.ready === 0 || queue.wakeAt > now) continue;
      const pool = this.#host.pool(queue.businessId, queue.typeId);
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
    const n = this.#host.fill(pool, want, now, numbers, templates);
    const counts = this.#counts;
    const tracking = this.#tracking;
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
      if (grouped && !this.#host.admit(slot, record.contacts.at(index).phone, now)) {
        queue.addBack(record, index);
        refused = i;
        break;
      }
      if (tracking) {
        this.#host.charged(slot);
        this.#touch(record);
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
      this.#host.unfill(numbers, refused, n, now);
      this.#block(queue, this.#host.portfolioShortfall(numbers[refused]!, now));
    } else if (n < want) this.#block(queue, this.#host.shortfall(pool));
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
      compiled = compileTemplate(this.#host.templateText(templateId));
      this.#compiled.set(templateId, compiled);
    }
    return compiled;
  }

  // ---------------------------------------------------------------- report

  report(messageId: string, outcome: SendOutcome): ReportResult {
    checkOutcome(outcome);
    const now = this.#host.tick();
    this.#due(now);
    const id = parseMessageId(messageId);
    if (id === undefined || id.seq >= this.#nextSeq) return UNKNOWN;
    // Numbered by this engine and no longer live: every contact of it has its final outcome.
    const record = this.#bySeq.get(id.seq);
    return record === undefined ? ALREADY_FINAL : this.#report(record, id.index, id.handout, outcome, now);
  }

  /** `report` for row `i` of a batch filled by `pollInto`. */
  reportAt(batch: MessageBatch, i: number, outcome: SendOutcome): ReportResult {
    checkOutcome(outcome);
    if (!(i >= 0 && i < batch.count)) throw new ArgumentError('reportAt(batch, i)', `a row from 0 to ${batch.count - 1}`, describeValue(i));
    const now = this.#host.tick();
    this.#due(now);
    const record = batch.records[i]!;
    return record.live ? this.#report(record, batch.indexes[i]!, batch.handouts[i]!, outcome, now) : ALREADY_FINAL;
  }

  #report(record: SubmissionRecord, index: number, handout: number, outcome: SendOutcome, now: number): ReportResult {
    if (index >= record.contacts.length || handout >= record.handouts[index]!) return UNKNOWN;
    const state = record.state[index]!;
    if (state >= FIRST_FINAL) return ALREADY_FINAL;
    if (state !== IN_FLIGHT || handout !== record.handouts[index]! - 1) return this.#reportEarlier(record, index, handout, outcome, now);
    const slot = record.flightSlot[index]!;
    const templateId = record.flightTemplate[index]!;
    record.flightSlot[index] = -1;
    switch (outcome.status) {
      case 'sent':
        this.#end(record, index, SENT, now, handout);
        return SENT_RESULT;
      case 'expired':
        this.#end(record, index, EXPIRED, now, handout);
        return EXPIRED_RESULT;
      case 'failed':
        return this.#failed(record, index, handout, slot, templateId, outcome, now);
    }
  }

  #failed(record: SubmissionRecord, index: number, handout: number, slot: number, templateId: number, outcome: Extract<SendOutcome, { status: 'failed' }>, now: number): ReportResult {
    const action: FailureAction = outcome.action ?? actionForCode(outcome.code);
    const reason = outcome.code !== undefined ? failureReason(outcome.code, outcome.reason ?? channelError(outcome.code)?.description) : (outcome.reason ?? 'Unknown failure');
    const code = outcome.code;
    // Nothing went: the number's windows get the message back, in the bucket it was charged to.
    if (outcome.refused === true && slot >= 0 && record.retryAt !== undefined) this.#host.refund(slot, record.retryAt[index]!, now, record.contacts.at(index).phone);
    switch (action.kind) {
      case 'requeue':
        if (action.restMs > 0 && slot >= 0) this.#host.pauseNumber(slot, now + action.restMs);
        return this.#requeue(record, index, now, handout, 'requeued');
      case 'number-out':
        if (slot >= 0) this.#host.pauseNumber(slot, action.pauseMs === undefined ? undefined : now + action.pauseMs);
        return this.#requeue(record, index, now, handout, 'failover');
      case 'template-out':
        this.#host.setTemplate(templateId, action.status, action.status === 'paused' && action.pauseMs !== undefined ? now + action.pauseMs : undefined);
        return this.#requeue(record, index, now, handout, 'failover');
      case 'transport':
        if (action.restMs !== undefined && action.restMs > 0 && slot >= 0) this.#host.pauseNumber(slot, now + action.restMs);
        return this.#tryAgain(record, index, handout, action.backoffMs, true, reason, code, now);
      case 'recipient-wait':
        return this.#tryAgain(record, index, handout, action.waitMs, false, reason, code, now);
      case 'give-up':
        this.#end(record, index, FAILED, now, handout, reason, code);
        return FAILED_RESULT;
      case 'retry': {
        if (record.retries[index]! >= record.maxRetries) {
          this.#end(record, index, FAILED, now, handout, reason, code);
          return FAILED_RESULT;
        }
        const at = now + Math.max(record.retryInterval, action.notBeforeMs);
        if (record.deadline !== undefined && at >= record.deadline) {
          this.#end(record, index, EXPIRED, now, handout, reason, code);
          return EXPIRED_RESULT;
        }
        record.retries[index]!++;
        (record.retryAt ??= new Float64Array(record.contacts.length))[index] = at;
        this.#move(record, index, WAITING);
        this.#retries.push({ at, seq: record.seq, index, handout: record.handouts[index]! });
        return { ok: true, effect: 'retry-scheduled', retryAt: at };
      }
    }
  }

  /**
   * A failure of the exchange or of the recipient's pair, not of the contact: it waits `baseMs`,
   * doubled at each such failure of it, and goes again without using a retry; after
   * {@link MAX_TRANSPORT_ATTEMPTS} it ends failed. `same`: the next hand-out repeats this message id
   * (the request may have reached the provider: a provider that deduplicates sends it once).
   */
  #tryAgain(record: SubmissionRecord, index: number, handout: number, baseMs: number, same: boolean, reason: string, code: number | undefined, now: number): ReportResult {
    const attempts = (record.attempts ??= new Uint8Array(record.contacts.length));
    const k = attempts[index]! & COUNT_MASK;
    if (k + 1 >= MAX_TRANSPORT_ATTEMPTS) {
      this.#end(record, index, FAILED, now, handout, `${reason} (after ${k + 1} tries)`, code);
      return FAILED_RESULT;
    }
    // After a try whose outcome is unknown, every later try repeats its id: a pair rate limit met
    // by the repeat may be the first try's own message (it went), and a new id would send it twice.
    const unknown = same || (attempts[index]! & UNKNOWN_OUTCOME) !== 0;
    attempts[index] = (k + 1) | (unknown ? UNKNOWN_OUTCOME : 0);
    same = unknown;
    const at = now + backoffMs(baseMs, k);
    if (record.deadline !== undefined && at >= record.deadline) {
      this.#end(record, index, EXPIRED, now, handout, reason, code);
      return EXPIRED_RESULT;
    }
    if (same) (record.resend ??= new Uint8Array(record.contacts.length))[index] = 1;
    (record.retryAt ??= new Float64Array(record.contacts.length))[index] = at;
    this.#move(record, index, WAITING);
    this.#retries.push({ at, seq: record.seq, index, handout: record.handouts[index]! });
    return { ok: true, effect: 'requeued', retryAt: at };
  }

  /** Back in its queue for another pair: a failover, not a contact retry. */
  #requeue(record: SubmissionRecord, index: number, now: number, handout: number, effect: 'requeued' | 'failover'): ReportResult {
    if (record.deadline !== undefined && record.deadline <= now) {
      this.#end(record, index, EXPIRED, now, handout);
      return EXPIRED_RESULT;
    }
    // A contact whose outcome was once unknown keeps that id through a failover too: the refusal
    // speaks of this try, not of the first, which may have gone; a new id would let the provider
    // take the contact twice under two ids.
    if (record.attempts !== undefined && (record.attempts[index]! & UNKNOWN_OUTCOME) !== 0) (record.resend ??= new Uint8Array(record.contacts.length))[index] = 1;
    const ended = this.#returnToQueue(record, index, now);
    return ended === undefined ? { ok: true, effect } : FAILED_RESULT;
  }

  /**
   * Queues a contact that was handed out (or waited) again, ahead of contacts never handed out.
   * Answers the final state it reached instead, when it cannot go again.
   */
  #returnToQueue(record: SubmissionRecord, index: number, now: number): 'failed' | undefined {
    let why: string | undefined;
    if (record.handouts[index]! >= MAX_HANDOUTS) why = `handed out ${MAX_HANDOUTS} times without a final outcome`;
    else if (!this.#host.pool(record.businessId, record.typeId)) why = removedReason(record);
    if (why !== undefined) {
      this.#end(record, index, FAILED, now, -1, why);
      return 'failed';
    }
    this.#move(record, index, QUEUED);
    record.queue.addBack(record, index);
    record.queue.wakeAt = 0;
    return undefined;
  }

  /** A report for a hand-out that is not the one in flight (made before a restart or a failover). */
  #reportEarlier(record: SubmissionRecord, index: number, handout: number, outcome: SendOutcome, now: number): ReportResult {
    if (outcome.status !== 'sent') return STALE;
    // An earlier hand-out was sent after all: the contact is done, whatever it is doing now. A later
    // hand-out still in flight is settled with it: its report will find the contact final.
    if (record.state[index] === QUEUED) record.queue.removeOne(record, index);
    record.flightSlot[index] = -1;
    this.#end(record, index, SENT, now, handout);
    return SENT_RESULT;
  }

  // ---------------------------------------------------------------- timing

  /**
   * Clock time of the next moment `poll()` can hand out something or a timer falls due (a retry, a
   * deadline, a timed resume); `now` only when `poll()` would hand out at once; null when nothing
   * will happen by the clock alone (nothing waits, or only a call such as a resume can unblock it).
   */
  nextWakeAt(): number | null {
    const now = this.#host.tick();
    this.#due(now);
    let at = Infinity;
    let blocked = false;
    for (const q of this.#queueOrder) {
      if (q.ready === 0) continue;
      this.#refreshBlock(q, now);
      if (q.wakeAt <= now) return now;
      if (q.wakeAt < at) at = q.wakeAt;
      blocked = true;
    }
    const retry = this.#peekRetry();
    if (retry !== undefined && retry < at) at = retry;
    const deadline = this.#peekDeadline();
    if (deadline !== undefined && deadline < at) at = deadline;
    if (blocked) {
      const resume = this.#host.nextResumeAt();
      if (resume !== undefined && resume < at) at = resume;
    }
    return Number.isFinite(at) ? Math.max(at, now) : null;
  }

  /** For a queue that would be polled now: whether its pool can hand out, and if not, what holds it. */
  #refreshBlock(q: RecordQueue, now: number): void {
    if (q.ready === 0 || q.wakeAt > now) return;
    const pool = this.#host.pool(q.businessId, q.typeId);
    this.#block(q, pool ? this.#host.probe(pool, now) : { reason: 'no-template' });
  }

  /** Something changed that may unblock queues (a resume, a limit change): poll them again. */
  poke(): void {
    for (const q of this.#queueOrder) q.wakeAt = 0;
  }

  /** Applies what fell due by `now`: retries go back to their queues, deadlines expire contacts. */
  #due(now: number): void {
    const retries = this.#retries;
    for (let r = retries.peek(); r !== undefined && r.at <= now; r = retries.peek()) {
      retries.pop();
      const record = this.#bySeq.get(r.seq);
      if (retryStands(record, r)) this.#returnToQueue(record, r.index, now);
    }
    const deadlines = this.#deadlines;
    for (let d = deadlines.peek(); d !== undefined && d.at <= now; d = deadlines.peek()) {
      deadlines.pop();
      const record = this.#bySeq.get(d.seq);
      if (record === undefined) continue;
      record.deadlineArmed = false;
      this.#endWaiting(record, EXPIRED, now);
    }
  }

  /** Every queued or waiting contact of `record` ends in `state` (a deadline, a type removed). */
  #endWaiting(record: SubmissionRecord, state: number, now: number, reason?: string): void {
    if (record.counts[QUEUED]! + record.counts[WAITING]! === 0) return;
    record.queue.removeAll(record);
    for (let i = 0; i < record.contacts.length; i++) {
      const s = record.state[i];
      if (s === QUEUED || s === WAITING) this.#end(record, i, state, now, -1, reason);
    }
  }

  #peekRetry(): number | undefined {
    for (let r = this.#retries.peek(); r !== undefined; r = this.#retries.peek()) {
      if (retryStands(this.#bySeq.get(r.seq), r)) return r.at;
      this.#retries.pop();
    }
    return undefined;
  }

  /** The earliest deadline something waits for. A submission whose contacts are all in flight is disarmed until one waits again. */
  #peekDeadline(): number | undefined {
    for (let d = this.#deadlines.peek(); d !== undefined; d = this.#deadlines.peek()) {
      const record = this.#bySeq.get(d.seq);
      if (record && record.counts[QUEUED]! + record.counts[WAITING]! > 0) return d.at;
      this.#deadlines.pop();
      if (record) record.deadlineArmed = false;
    }
    return undefined;
  }

  // ---------------------------------------------------------------- views (deadlines applied first)

  stats(): DispatchCounts {
    this.#due(this.#host.tick());
    return countsView(this.#counts);
  }

  submissionStatus(submissionId: string): SubmissionStatus {
    const now = this.#host.tick();
    this.#due(now);
    const finished = this.#finished.get(submissionId);
    if (finished) return finished;
    const id = typeof submissionId === 'string' && /^s[1-9][0-9]*$/.test(submissionId) ? Number(submissionId.slice(1)) : NaN;
    const record = this.#bySeq.get(id);
    if (!record) {
      throw new NotFoundError('submission', submissionId, id < this.#nextSeq ? `(it finished; final counts are kept for the last ${FINISHED_KEPT} finished submissions)` : undefined);
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
    const out = this.#outcomes.outcomes();
    this.#outcomes.clear();
    return out;
  }

  /** `takeOutcomes` as rows: the batch receives them (its earlier rows are dropped). Answers how many. */
  takeOutcomesInto(batch: OutcomeBatch): number {
    if (!(batch instanceof OutcomeBatch)) throw new ArgumentError('takeOutcomesInto(batch)', 'an OutcomeBatch', describeValue(batch));
    this.#outcomes.swap(batch);
    return batch.count;
  }

  /** Clock time the earliest contact waiting for its retry falls due; undefined when none waits. */
  nextRetryAt(): number | undefined {
    this.#due(this.#host.tick());
    return this.#peekRetry();
  }

  /** Contacts queued and waiting for a (business, type), and what holds them, if anything. */
  queueStatus(businessId: number, typeId: number): QueueStatus {
    const now = this.#host.tick();
    this.#due(now);
    const queue = this.#queues.get(`${businessId}/${typeId}`);
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
    for (const record of [...this.#bySeq.values()]) {
      if (record.counts[IN_FLIGHT]! > 0) {
        const slots = record.flightSlot;
        for (let i = 0; i < slots.length; i++) if (slots[i]! >= 0) slots[i] = slotOf(slots[i]!);
      }
      if (!this.#host.pool(record.businessId, record.typeId)) this.#endWaiting(record, FAILED, now, removedReason(record));
    }
    this.poke();
  }

  // ---------------------------------------------------------------- state moves

  /** First state of a contact. */
  #enter(record: SubmissionRecord, index: number, state: number): void {
    this.#touch(record);
    record.state[index] = state;
    record.counts[state]!++;
    this.#counts[state]!++;
    if (state === WAITING) record.queue.waiting++;
    if (state <= WAITING) this.#armDeadline(record);
  }

  #move(record: SubmissionRecord, index: number, state: number): void {
    this.#touch(record);
    const before = record.state[index]!;
    record.counts[before]!--;
    this.#counts[before]!--;
    record.counts[state]!++;
    this.#counts[state]!++;
    record.state[index] = state;
    if (before === WAITING) record.queue.waiting--;
    if (state === WAITING) record.queue.waiting++;
    if (state <= WAITING) this.#armDeadline(record);
  }

  /** A contact waits (queued or for a retry): its submission's deadline must be able to end it. */
  #armDeadline(record: SubmissionRecord): void {
    if (record.deadline === undefined || record.deadlineArmed) return;
    record.deadlineArmed = true;
    this.#deadlines.push({ at: record.deadline, seq: record.seq });
  }

  /** A contact's final state; `handout` names the message it ends with (-1: its last hand-out, if any). */
  #end(record: SubmissionRecord, index: number, state: number, now: number, handout: number, reason?: string, code?: number): void {
    this.#move(record, index, state);
    this.#emit(record, index, state, now, handout, reason, code);
    this.#finishIfDone(record);
  }

  #emit(record: SubmissionRecord, index: number, state: number, at: number, handout: number, reason: string | undefined, code: number | undefined): void {
    this.#outcomes.push(record, index, state, at, handout, reason, code);
  }

  /** A submission whose contacts all ended is forgotten but for its final counts. */
  #finishIfDone(record: SubmissionRecord): void {
    if (unfinished(record.counts) > 0 || !record.live) return;
    if (record.inFresh || record.inReturning) {
      this.#host.anomaly(`${record.id} finished while still listed in its queue; removed`);
      record.queue.removeAll(record);
    }
    record.live = false;
    this.#bySeq.delete(record.seq);
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
    this.#remember(status);
    if (this.#tracking) this.#finishedSince.push(status);
  }

  #remember(status: SubmissionStatus): void {
    this.#finished.set(status.submissionId, status);
    if (this.#finished.size > FINISHED_KEPT) this.#finished.delete(this.#finished.keys().next().value!);
  }

  #queue(businessId: number, typeId: number): PoolQueue {
    const key = `${businessId}/${typeId}`;
    let queue = this.#queues.get(key);
    if (!queue) {
      queue = new PoolQueue(businessId, typeId, (message) => this.#host.anomaly(message));
      this.#queues.set(key, queue);
      this.#queueOrder.push(queue);
    }
    return queue;
  }

  // ---------------------------------------------------------------- snapshots

  snapshot(): DispatchSnapshot {
    return dispatchSnapshot({
      nextSeq: this.#nextSeq,
      counts: countsView(this.#counts),
      records: this.#bySeq,
      queues: this.#queueOrder,
      retries: this.#retries.toArray(),
      outcomes: this.#outcomes.outcomes(),
      finished: this.#finished,
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
    const now = this.#host.tick();
    this.#nextSeq = snap.nextSeq;
    restoreDispatch(snap, now, {
      records: this.#bySeq,
      counts: this.#counts,
      queue: (b, t) => this.#queue(b, t),
      enter: (record, i, state) => this.#enter(record, i, state),
      retry: (timer) => this.#retries.push(timer),
      remember: (status) => this.#remember(status),
    });
    for (const o of restoredOutcomes(snap)) this.#outcomes.pushMade(o);
    for (const record of [...this.#bySeq.values()]) this.#finishIfDone(record);
    this.fleetChanged(now, (slot) => slot);
  }
}

/** Outcomes not taken before the snapshot; older snapshots lack the contact id and the attempt. */
function restoredOutcomes(snap: DispatchSnapshot): ContactOutcome[] {
  return snap.outcomes.map((o) => ({ ...o, contactId: o.contactId ?? `${o.submissionId}.${o.index}`, retryIndex: o.retryIndex ?? null }));
}

function removedReason(record: SubmissionRecord): string {
  return `template type ${record.typeId} of business ${record.businessId} was removed from the fleet`;
}

/** A report's outcome must be one the engine knows; a typo would otherwise change nothing silently. */
function checkOutcome(outcome: SendOutcome): void {
  const status = (outcome as { status?: unknown } | null)?.status;
  if (status !== 'sent' && status !== 'failed' && status !== 'expired') {
    throw new ArgumentError('report(outcome.status)', 'one of "sent", "failed", "expired"', describeValue(status));
  }
}
