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
 */
import { Heap } from 'mnemonist';
import { type FailureAction, actionForCode, channelError, failureReason } from '../channel-errors.js';
import { ArgumentError, NotFoundError, SnapshotError, SubmissionError } from '../errors.js';
import type { Pool } from '../pool.js';
import { describeValue, problem } from '../problems.js';
import type { Submission } from '../submission.js';
import { type CompiledTemplate, compileTemplate, renderCompiled } from '../template-text.js';
import { checkContact, checkSubmission } from './check-submission.js';
import {
  type DispatchSnapshot,
  type SubmissionChange,
  checkDispatchSnapshot,
  queueToSnapshot,
  recordToChange,
  recordToSnapshot,
} from './dispatch-snapshot.js';
import { PoolQueue } from './pool-queue.js';
import {
  COUNT_KEY,
  EXPIRED,
  FAILED,
  FIRST_FINAL,
  IN_FLIGHT,
  QUEUED,
  REJECTED,
  SENT,
  type SubmissionRecord,
  TERMINAL_NAMES,
  WAITING,
  createRecord,
  parseMessageId,
  zeroCounts,
} from './record.js';
import type {
  Blocker,
  ContactOutcome,
  ContactRejection,
  DispatchCounts,
  OutgoingMessage,
  PollOptions,
  QueueStatus,
  ReportResult,
  SendOutcome,
  SubmissionStatus,
  SubmitTicket,
  TerminalState,
} from './types.js';

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
  pauseNumber(phone: string, until: number | undefined): void;
  setTemplate(templateId: number, status: 'paused' | 'disabled', until: number | undefined): void;
  nextResumeAt(): number | undefined;
  anomaly(message: string): void;
  /** A message went out on the number at `slot` (its limit usage changed), when changes are tracked. */
  charged(slot: number): void;
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
/** Hand-outs of one contact at most (the counter's width); a contact that reaches it ends failed. */
const MAX_HANDOUTS = 0xffff;

interface RetryTimer {
  readonly at: number;
  readonly seq: number;
  readonly index: number;
  readonly handout: number;
}

interface DeadlineTimer {
  readonly at: number;
  readonly seq: number;
}

type Extra = { reason?: string; code?: number };

export class Dispatcher {
  readonly #host: DispatchHost;
  #nextSeq = 1;
  readonly #counts = zeroCounts();
  readonly #bySeq = new Map<number, SubmissionRecord>();
  readonly #finished = new Map<string, SubmissionStatus>();
  readonly #queues = new Map<string, PoolQueue>();
  readonly #queueOrder: PoolQueue[] = [];
  #pollStart = 0;
  /** Template texts split at their placeholders, by template id (texts do not change under an id). */
  readonly #compiled = new Map<number, CompiledTemplate>();
  readonly #retries = new Heap<RetryTimer>((a, b) => a.at - b.at || a.seq - b.seq || a.index - b.index);
  readonly #deadlines = new Heap<DeadlineTimer>((a, b) => a.at - b.at || a.seq - b.seq);
  #outcomes: ContactOutcome[] = [];
  #scratchNumbers = new Int32Array(256);
  #scratchTemplates = new Float64Array(256);
  #tracking = false;
  #dirty: SubmissionRecord[] = [];
  #finishedSince: SubmissionStatus[] = [];

  constructor(host: DispatchHost) {
    this.#host = host;
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
    if (full) for (const r of this.#bySeq.values()) r.announced = false;
    for (const r of full ? this.#bySeq.values() : this.#dirty) {
      r.dirty = false;
      if (!r.live) continue;
      submissions.push(recordToChange(r, !r.announced));
      r.announced = true;
    }
    if (full) for (const r of this.#dirty) r.dirty = false;
    this.#dirty = [];
    const finished = this.#finishedSince;
    this.#finishedSince = [];
    return { nextSeq: this.#nextSeq, counts: { ...this.#counts }, submissions, finished };
  }

  #touch(record: SubmissionRecord): void {
    if (!this.#tracking || record.dirty) return;
    record.dirty = true;
    this.#dirty.push(record);
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
    const seq = this.#nextSeq++;
    const record = createRecord(
      {
        seq,
        businessId: input.businessId,
        typeId: input.typeId,
        campaignId: input.campaignId,
        queueId: input.queueId,
        botId: input.botId,
        maxRetries: input.maxRetries ?? 0,
        retryInterval: input.retryInterval ?? 0,
        deadline: input.deadline,
        weight: input.weight ?? 1,
        contacts: input.contacts,
      },
      this.#queue(input.businessId, input.typeId),
    );
    this.#bySeq.set(seq, record);
    const n = record.contacts.length;
    this.#counts.submitted += n;
    const rejected: ContactRejection[] = [];
    const expiredAlready = record.deadline !== undefined && record.deadline <= now;
    let accepted = 0;
    for (let i = 0; i < n; i++) {
      const why = checkContact(record.contacts[i], placeholders, i);
      if (why) {
        rejected.push(why);
        this.#enter(record, i, REJECTED);
        this.#emit(record, i, 'rejected', now, { reason: why.reason });
      } else if (expiredAlready) {
        this.#enter(record, i, EXPIRED);
        this.#emit(record, i, 'expired', now, {});
      } else {
        this.#enter(record, i, QUEUED);
        accepted++;
      }
    }
    record.queue.addFresh(record, accepted);
    record.queue.wakeAt = 0;
    this.#finishIfDone(record);
    return { submissionId: record.id, accepted, rejected };
  }

  // ---------------------------------------------------------------- poll

  poll(options: PollOptions = {}): OutgoingMessage[] {
    const limit = options.limit ?? 10_000;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new ArgumentError('poll({ limit })', 'a whole number, 1 or more', describeValue(limit));
    const now = this.#host.tick();
    this.#due(now);
    const out: OutgoingMessage[] = [];
    const queues = this.#queueOrder;
    const k = queues.length;
    // Start one queue further each call, so a busy type cannot keep a poll limit to itself.
    const start = k === 0 ? 0 : this.#pollStart++ % k;
    for (let j = 0; j < k && out.length < limit; j++) {
      const queue = queues[(start + j) % k]!;
      if (queue.ready === 0 || queue.wakeAt > now) continue;
      const pool = this.#host.pool(queue.businessId, queue.typeId);
      if (!pool) continue;
      this.#serve(queue, pool, Math.min(queue.ready, limit - out.length), now, out);
    }
    return out;
  }

  #serve(queue: PoolQueue, pool: Pool, want: number, now: number, out: OutgoingMessage[]): void {
    if (this.#scratchNumbers.length < want) {
      this.#scratchNumbers = new Int32Array(want);
      this.#scratchTemplates = new Float64Array(want);
    }
    const n = this.#host.fill(pool, want, now, this.#scratchNumbers, this.#scratchTemplates);
    for (let i = 0; i < n; i++) {
      // `ready` counts exactly what `next` finds; if it ever did not, the queue reports the anomaly
      // and the capacity charged for the rest of this call goes unused (under-use, never over-send).
      const record = queue.next();
      if (record === undefined) break;
      const index = queue.index;
      const slot = this.#scratchNumbers[i]!;
      const phone = this.#host.phoneAt(slot);
      if (this.#tracking) this.#host.charged(slot);
      const templateId = this.#scratchTemplates[i]!;
      let handout = record.handouts[index]!;
      // In flight at a restart: the same hand-out again, under the same message id.
      if (record.resend !== undefined && record.resend[index] === 1) {
        record.resend[index] = 0;
        handout--;
      } else record.handouts[index] = handout + 1;
      this.#move(record, index, IN_FLIGHT);
      record.flightPhone[index] = phone;
      record.flightTemplate[index] = templateId;
      const contact = record.contacts[index]!;
      const retries = record.retries[index]!;
      const contactId = `${record.id}.${index}`;
      out.push({
        messageId: `${contactId}.${handout}`,
        contactId,
        submissionId: record.id,
        index,
        businessId: record.businessId,
        typeId: record.typeId,
        campaignId: record.campaignId,
        queueId: record.queueId,
        botId: record.botId,
        contact,
        phone,
        templateId,
        text: renderCompiled(this.#template(templateId), contact.variables ?? []),
        handedOutAt: now,
        isRetry: retries > 0,
        retryIndex: retries > 0 ? retries - 1 : null,
      });
    }
    if (n < want) this.#block(queue, this.#host.shortfall(pool));
    else this.#block(queue, undefined);
  }

  #block(queue: PoolQueue, s: { reason: Blocker; retryAt?: number } | undefined): void {
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
    if (id === undefined || id.seq >= this.#nextSeq) return { ok: false, reason: 'unknown-message' };
    const record = this.#bySeq.get(id.seq);
    // Numbered by this engine and no longer live: every contact of it has its final outcome.
    if (record === undefined) return { ok: false, reason: 'already-final' };
    const { index, handout } = id;
    if (index >= record.contacts.length || handout >= record.handouts[index]!) return { ok: false, reason: 'unknown-message' };
    const state = record.state[index]!;
    if (state >= FIRST_FINAL) return { ok: false, reason: 'already-final' };
    if (state !== IN_FLIGHT || handout !== record.handouts[index]! - 1) return this.#reportEarlier(record, index, messageId, outcome, now);
    const phone = record.flightPhone[index]!;
    const templateId = record.flightTemplate[index]!;
    record.flightPhone[index] = undefined;
    switch (outcome.status) {
      case 'sent':
        this.#end(record, index, SENT, now, messageId);
        return { ok: true, effect: 'sent' };
      case 'expired':
        this.#end(record, index, EXPIRED, now, messageId);
        return { ok: true, effect: 'expired' };
      case 'failed':
        return this.#failed(record, index, phone, templateId, outcome, now, messageId);
    }
  }

  #failed(
    record: SubmissionRecord,
    index: number,
    phone: string,
    templateId: number,
    outcome: Extract<SendOutcome, { status: 'failed' }>,
    now: number,
    messageId: string,
  ): ReportResult {
    const action: FailureAction = outcome.action ?? actionForCode(outcome.code);
    const reason = outcome.code !== undefined ? failureReason(outcome.code, outcome.reason ?? channelError(outcome.code)?.description) : (outcome.reason ?? 'Unknown failure');
    const extra = { reason, ...(outcome.code !== undefined ? { code: outcome.code } : {}) };
    switch (action.kind) {
      case 'requeue':
        if (action.restMs > 0) this.#host.pauseNumber(phone, now + action.restMs);
        return this.#requeue(record, index, now, messageId, 'requeued');
      case 'number-out':
        this.#host.pauseNumber(phone, action.pauseMs === undefined ? undefined : now + action.pauseMs);
        return this.#requeue(record, index, now, messageId, 'failover');
      case 'template-out':
        this.#host.setTemplate(templateId, action.status, action.status === 'paused' && action.pauseMs !== undefined ? now + action.pauseMs : undefined);
        return this.#requeue(record, index, now, messageId, 'failover');
      case 'give-up':
        this.#end(record, index, FAILED, now, messageId, extra);
        return { ok: true, effect: 'failed' };
      case 'retry': {
        if (record.retries[index]! >= record.maxRetries) {
          this.#end(record, index, FAILED, now, messageId, extra);
          return { ok: true, effect: 'failed' };
        }
        const at = now + Math.max(record.retryInterval, action.notBeforeMs);
        if (record.deadline !== undefined && at >= record.deadline) {
          this.#end(record, index, EXPIRED, now, messageId, extra);
          return { ok: true, effect: 'expired' };
        }
        record.retries[index]!++;
        (record.retryAt ??= new Float64Array(record.contacts.length))[index] = at;
        this.#move(record, index, WAITING);
        this.#retries.push({ at, seq: record.seq, index, handout: record.handouts[index]! });
        return { ok: true, effect: 'retry-scheduled', retryAt: at };
      }
    }
  }

  /** Back in its queue for another pair: a failover, not a contact retry. */
  #requeue(record: SubmissionRecord, index: number, now: number, messageId: string, effect: 'requeued' | 'failover'): ReportResult {
    if (record.deadline !== undefined && record.deadline <= now) {
      this.#end(record, index, EXPIRED, now, messageId);
      return { ok: true, effect: 'expired' };
    }
    const ended = this.#returnToQueue(record, index, now);
    return ended === undefined ? { ok: true, effect } : { ok: true, effect: ended };
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
      this.#end(record, index, FAILED, now, undefined, { reason: why });
      return 'failed';
    }
    this.#move(record, index, QUEUED);
    record.queue.addBack(record, index);
    record.queue.wakeAt = 0;
    return undefined;
  }

  /** A report for a hand-out that is not the one in flight (made before a restart or a failover). */
  #reportEarlier(record: SubmissionRecord, index: number, messageId: string, outcome: SendOutcome, now: number): ReportResult {
    if (outcome.status !== 'sent') return { ok: false, reason: 'stale-hand-out' };
    // An earlier hand-out was sent after all: the contact is done, whatever it is doing now. A later
    // hand-out still in flight is settled with it: its report will find the contact final.
    if (record.state[index] === QUEUED) record.queue.removeOne(record, index);
    record.flightPhone[index] = undefined;
    this.#end(record, index, SENT, now, messageId);
    return { ok: true, effect: 'sent' };
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
  #refreshBlock(q: PoolQueue, now: number): void {
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
      if (record && record.state[r.index] === WAITING && record.handouts[r.index] === r.handout) this.#returnToQueue(record, r.index, now);
    }
    const deadlines = this.#deadlines;
    for (let d = deadlines.peek(); d !== undefined && d.at <= now; d = deadlines.peek()) {
      deadlines.pop();
      const record = this.#bySeq.get(d.seq);
      if (record === undefined) continue;
      record.deadlineArmed = false;
      this.#endWaiting(record, EXPIRED, now, {});
    }
  }

  /** Every queued or waiting contact of `record` ends in `state` (a deadline, a type removed). */
  #endWaiting(record: SubmissionRecord, state: number, now: number, extra: Extra): void {
    if (record.counts.queued + record.counts.waitingRetry === 0) return;
    record.queue.removeAll(record);
    for (let i = 0; i < record.contacts.length; i++) {
      const s = record.state[i];
      if (s === QUEUED || s === WAITING) this.#end(record, i, state, now, undefined, extra);
    }
  }

  #peekRetry(): number | undefined {
    for (let r = this.#retries.peek(); r !== undefined; r = this.#retries.peek()) {
      const record = this.#bySeq.get(r.seq);
      if (record && record.state[r.index] === WAITING && record.handouts[r.index] === r.handout) return r.at;
      this.#retries.pop();
    }
    return undefined;
  }

  /** The earliest deadline something waits for. A submission whose contacts are all in flight is disarmed until one waits again. */
  #peekDeadline(): number | undefined {
    for (let d = this.#deadlines.peek(); d !== undefined; d = this.#deadlines.peek()) {
      const record = this.#bySeq.get(d.seq);
      if (record && record.counts.queued + record.counts.waitingRetry > 0) return d.at;
      this.#deadlines.pop();
      if (record) record.deadlineArmed = false;
    }
    return undefined;
  }

  // ---------------------------------------------------------------- views (deadlines applied first)

  stats(): DispatchCounts {
    this.#due(this.#host.tick());
    return { ...this.#counts };
  }

  submissionStatus(submissionId: string): SubmissionStatus {
    const now = this.#host.tick();
    this.#due(now);
    const finished = this.#finished.get(submissionId);
    if (finished) return finished;
    const id = typeof submissionId === 'string' && /^s[1-9][0-9]*$/.test(submissionId) ? Number(submissionId.slice(1)) : NaN;
    const record = this.#bySeq.get(id);
    if (!record) {
      throw new NotFoundError(
        'submission',
        submissionId,
        id < this.#nextSeq ? `(it finished; final counts are kept for the last ${FINISHED_KEPT} finished submissions)` : undefined,
      );
    }
    const queue = record.queue;
    this.#refreshBlock(queue, now);
    const waiting = record.counts.queued > 0 && queue.blocked !== undefined;
    return {
      submissionId,
      finished: false,
      ...record.counts,
      ...(waiting ? { blocked: queue.blocked } : {}),
      ...(waiting && queue.retryAt !== undefined ? { retryAt: queue.retryAt } : {}),
    };
  }

  /** Final outcomes reached since the last call, each reported exactly once. */
  takeOutcomes(): ContactOutcome[] {
    const out = this.#outcomes;
    this.#outcomes = [];
    return out;
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

  /** After a fleet change: contacts of types that no longer exist end failed. */
  fleetChanged(now: number): void {
    for (const record of [...this.#bySeq.values()]) {
      if (!this.#host.pool(record.businessId, record.typeId)) this.#endWaiting(record, FAILED, now, { reason: removedReason(record) });
    }
    this.poke();
  }

  // ---------------------------------------------------------------- state moves

  /** First state of a contact. */
  #enter(record: SubmissionRecord, index: number, state: number): void {
    this.#touch(record);
    record.state[index] = state;
    record.counts[COUNT_KEY[state]!]++;
    this.#counts[COUNT_KEY[state]!]++;
    if (state === WAITING) record.queue.waiting++;
    if (state <= WAITING) this.#armDeadline(record);
  }

  #move(record: SubmissionRecord, index: number, state: number): void {
    this.#touch(record);
    const before = record.state[index]!;
    const from = COUNT_KEY[before]!;
    const to = COUNT_KEY[state]!;
    record.counts[from]--;
    this.#counts[from]--;
    record.counts[to]++;
    this.#counts[to]++;
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

  #end(record: SubmissionRecord, index: number, state: number, now: number, messageId: string | undefined, extra: Extra = {}): void {
    this.#move(record, index, state);
    this.#emit(record, index, TERMINAL_NAMES[state]!, now, { ...extra, ...(messageId !== undefined ? { messageId } : {}) });
    this.#finishIfDone(record);
  }

  #emit(record: SubmissionRecord, index: number, state: TerminalState, at: number, extra: Extra & { messageId?: string }): void {
    const handouts = record.handouts[index]!;
    const contactId = `${record.id}.${index}`;
    const retries = record.retries[index]!;
    this.#outcomes.push({
      submissionId: record.id,
      index,
      contactId,
      contact: record.contacts[index]!,
      campaignId: record.campaignId,
      state,
      retryIndex: retries > 0 ? retries - 1 : null,
      messageId: extra.messageId ?? (handouts > 0 ? `${contactId}.${handouts - 1}` : undefined),
      ...(extra.reason !== undefined ? { reason: extra.reason } : {}),
      ...(extra.code !== undefined ? { code: extra.code } : {}),
      at,
    });
  }

  /** A submission whose contacts all ended is forgotten but for its final counts. */
  #finishIfDone(record: SubmissionRecord): void {
    const c = record.counts;
    if (c.queued + c.waitingRetry + c.inFlight > 0 || !record.live) return;
    if (record.inFresh || record.inReturning) {
      this.#host.anomaly(`${record.id} finished while still listed in its queue; removed`);
      record.queue.removeAll(record);
    }
    record.live = false;
    this.#bySeq.delete(record.seq);
    const status: SubmissionStatus = { submissionId: record.id, finished: true, ...c };
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
    const retries = this.#retries
      .toArray()
      .filter((t) => {
        const record = this.#bySeq.get(t.seq);
        return record !== undefined && record.state[t.index] === WAITING && record.handouts[t.index] === t.handout;
      })
      .sort((a, b) => a.at - b.at || a.seq - b.seq || a.index - b.index)
      .map((t) => [t.seq, t.index, t.handout, t.at] as const);
    return {
      nextSeq: this.#nextSeq,
      counts: { ...this.#counts },
      submissions: [...this.#bySeq.values()].map(recordToSnapshot),
      queues: this.#queueOrder.filter((q) => q.ready > 0).map(queueToSnapshot),
      retries,
      outcomes: [...this.#outcomes],
      finished: [...this.#finished.values()],
    };
  }

  /**
   * Loads a snapshot into this (new) dispatcher. Messages that were in flight go back to the head of
   * their queues: each pending contact is sent once more, and a late "sent" report for the old
   * hand-out still settles the contact instead of letting it go twice. Every queued contact is
   * placed exactly once, in the saved order where the snapshot has one.
   * @throws {SnapshotError} listing every problem of the section; nothing is loaded then
   */
  restore(input: unknown): void {
    const problems = checkDispatchSnapshot(input, '$.dispatch');
    if (problems.length > 0) throw new SnapshotError('The dispatch section of the snapshot is not valid', problems);
    const snap = input as DispatchSnapshot;
    const now = this.#host.tick();
    this.#nextSeq = snap.nextSeq;
    const inFlight = new Map<SubmissionRecord, number[]>();
    const savedBack = new Map<SubmissionRecord, readonly number[]>();
    for (const s of snap.submissions) {
      const record = createRecord(
        {
          seq: s.seq,
          businessId: s.businessId,
          typeId: s.typeId,
          campaignId: s.campaignId,
          queueId: s.queueId,
          botId: s.botId,
          maxRetries: s.maxRetries,
          retryInterval: s.retryInterval,
          deadline: s.deadline,
          weight: s.weight,
          contacts: s.contacts,
        },
        this.#queue(s.businessId, s.typeId),
      );
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
        this.#enter(record, i, state === IN_FLIGHT ? QUEUED : state);
      }
      inFlight.set(record, flying);
      const resend = [...flying, ...(s.resend ?? [])].filter((i) => record.state[i] === QUEUED && record.handouts[i]! > 0);
      if (resend.length > 0) {
        record.resend = new Uint8Array(n);
        for (const i of resend) record.resend[i] = 1;
      }
      const back = s.back ?? Array.from({ length: n }, (_, i) => i).filter((i) => record.state[i] === QUEUED && !flying.includes(i));
      savedBack.set(record, back);
      this.#bySeq.set(s.seq, record);
    }
    // Live contacts were counted as they entered; final ones of finished submissions come from the
    // snapshot's totals (which include the live ones), so the states add up to `submitted` again.
    const c = this.#counts;
    for (const key of ['sent', 'failed', 'expired', 'rejected'] as const) c[key] = Math.max(c[key], Math.trunc(Number(snap.counts[key]) || 0));
    c.submitted = c.queued + c.waitingRetry + c.inFlight + c.sent + c.failed + c.expired + c.rejected;
    const placedBack = new Set<SubmissionRecord>();
    const placedFresh = new Set<SubmissionRecord>();
    const placeBack = (record: SubmissionRecord) => {
      if (placedBack.has(record)) return;
      placedBack.add(record);
      const seen = new Set<number>();
      for (const i of [...inFlight.get(record)!, ...savedBack.get(record)!]) {
        if (seen.has(i) || record.state[i] !== QUEUED) continue;
        seen.add(i);
        record.queue.addBack(record, i);
      }
    };
    const placeFresh = (record: SubmissionRecord) => {
      if (placedFresh.has(record)) return;
      placedFresh.add(record);
      let count = 0;
      for (let i = record.fresh; i < record.contacts.length; i++) if (record.state[i] === QUEUED) count++;
      record.queue.addFresh(record, count);
    };
    const bySeq = (seq: number) => this.#bySeq.get(seq);
    for (const q of snap.queues) {
      for (const f of q.flows) {
        const records = [...inFlight.keys()].filter((r) => r.businessId === q.businessId && r.typeId === q.typeId && r.flowKey === f.key && inFlight.get(r)!.length > 0);
        for (const r of records) placeBack(r);
        for (const seq of f.returning ?? []) placeBack(bySeq(seq)!);
        for (const seq of f.fresh ?? []) placeFresh(bySeq(seq)!);
      }
    }
    // Whatever no saved order placed (version 1, or contacts that were all in flight).
    for (const record of this.#bySeq.values()) {
      placeBack(record);
      placeFresh(record);
    }
    const timed = new Set<string>();
    for (const [seq, index, handout, at] of snap.retries) {
      const record = this.#bySeq.get(seq)!;
      if (record.state[index] !== WAITING) continue;
      (record.retryAt ??= new Float64Array(record.contacts.length))[index] = at;
      this.#retries.push({ at, seq, index, handout });
      timed.add(`${seq}.${index}`);
    }
    for (const record of this.#bySeq.values()) {
      for (let i = 0; i < record.contacts.length; i++) {
        // A waiting contact without its timer would wait forever: it is due now.
        if (record.state[i] === WAITING && !timed.has(`${record.seq}.${i}`)) {
          (record.retryAt ??= new Float64Array(record.contacts.length))[i] = now;
          this.#retries.push({ at: now, seq: record.seq, index: i, handout: record.handouts[i]! });
        }
      }
    }
    // Whoever restores has the contacts (from the file or its rows); `takeChanges(true)` gives them again.
    for (const record of this.#bySeq.values()) record.announced = true;
    for (const status of snap.finished ?? []) this.#remember({ ...status, finished: true });
    // Older snapshots lack the contact id and the attempt.
    this.#outcomes = snap.outcomes.map((o) => ({ ...o, contactId: o.contactId ?? `${o.submissionId}.${o.index}`, retryIndex: o.retryIndex ?? null }));
    for (const record of [...this.#bySeq.values()]) this.#finishIfDone(record);
    this.fleetChanged(now);
  }
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
