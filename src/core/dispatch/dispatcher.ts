/**
 * The dispatch queue: turns `assign` into the loop a messaging server runs (sans-I/O).
 *
 * Every contact is in exactly one state at a time: queued, waiting for a retry, in flight, or one
 * of the terminal states sent, failed, expired, rejected. Counts per state are kept as contacts
 * move, so they add up to what was submitted at any moment, and each terminal outcome is reported
 * once through `takeOutcomes()`.
 *
 * A contact is referenced as `slot * 2^32 + index` (slot: the submission's place in a table,
 * recycled), so queues hold plain numbers: 8 bytes per queued contact.
 */
import { Heap } from 'mnemonist';
import { type FailureAction, actionForCode, channelError, failureReason } from '../channel-errors.js';
import { ArgumentError, NotFoundError, SubmissionError } from '../errors.js';
import type { Pool } from '../pool.js';
import { type Problem, describeValue, problem } from '../problems.js';
import type { Submission, SubmissionContact } from '../submission.js';
import { type CompiledTemplate, compileTemplate, renderCompiled } from '../template-text.js';
import { PoolQueue } from './pool-queue.js';
import type {
  Blocker,
  ContactOutcome,
  ContactRejection,
  DispatchCounts,
  OutgoingMessage,
  PollOptions,
  ReportResult,
  SendOutcome,
  SubmissionStatus,
  SubmitTicket,
  TerminalState,
} from './types.js';

/** What the dispatcher needs of the engine. */
export interface DispatchHost {
  tick(): number;
  hasBusiness(businessId: number): boolean;
  pool(businessId: number, typeId: number): Pool | undefined;
  placeholders(businessId: number, typeId: number): number | undefined;
  fill(pool: Pool, count: number, now: number, numbers: Int32Array, templates: Float64Array): number;
  shortfall(pool: Pool): { reason: Blocker; retryAt?: number };
  phoneAt(slot: number): string;
  templateText(templateId: number): string;
  pauseNumber(phone: string, until: number | undefined): void;
  setTemplate(templateId: number, status: 'paused' | 'disabled', until: number | undefined): void;
  nextResumeAt(): number | undefined;
}

// Contact states.
const QUEUED = 0;
const WAITING = 1;
const IN_FLIGHT = 2;
const SENT = 3;
const FAILED = 4;
const EXPIRED = 5;
const REJECTED = 6;
const TERMINAL_NAMES: Record<number, TerminalState> = { [SENT]: 'sent', [FAILED]: 'failed', [EXPIRED]: 'expired', [REJECTED]: 'rejected' };

const SLOT = 2 ** 32;
const MAX_RETRIES = 100;
const MAX_INTERVAL = 30 * 86_400_000;
const MAX_WEIGHT = 1000;
const PHONE = /^[0-9]{8,15}$/;
/** Finished submissions whose final counts stay readable through `submissionStatus`. */
const FINISHED_KEPT = 1000;

interface Counts {
  submitted: number;
  queued: number;
  waitingRetry: number;
  inFlight: number;
  sent: number;
  failed: number;
  expired: number;
  rejected: number;
}

const COUNT_KEY: Record<number, keyof Counts> = {
  [QUEUED]: 'queued',
  [WAITING]: 'waitingRetry',
  [IN_FLIGHT]: 'inFlight',
  [SENT]: 'sent',
  [FAILED]: 'failed',
  [EXPIRED]: 'expired',
  [REJECTED]: 'rejected',
};

function zero(): Counts {
  return { submitted: 0, queued: 0, waitingRetry: 0, inFlight: 0, sent: 0, failed: 0, expired: 0, rejected: 0 };
}

interface SubmissionRecord {
  readonly id: string;
  readonly seq: number;
  readonly slot: number;
  readonly businessId: number;
  readonly typeId: number;
  readonly campaignId: number | undefined;
  readonly queueId: number | undefined;
  readonly botId: number | undefined;
  readonly maxRetries: number;
  readonly retryInterval: number;
  readonly deadline: number | undefined;
  readonly weight: number;
  readonly flowKey: string;
  readonly contacts: readonly SubmissionContact[];
  readonly state: Uint8Array;
  readonly retries: Uint8Array;
  readonly handouts: Uint16Array;
  /** The pair of the hand-out in flight: the message id names the contact, so no lookup table is needed. */
  readonly flightPhone: (string | undefined)[];
  readonly flightTemplate: Float64Array;
  readonly counts: Counts;
}

/** The pair a contact's current hand-out went out on. */
interface InFlight {
  readonly phone: string;
  readonly templateId: number;
}

interface RetryTimer {
  readonly at: number;
  readonly ref: number;
  readonly handout: number;
}

interface DeadlineTimer {
  readonly at: number;
  readonly seq: number;
}

/** The dispatch section of an engine snapshot. */
export interface DispatchSnapshot {
  readonly nextSeq: number;
  readonly counts: DispatchCounts;
  readonly submissions: readonly {
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
  }[];
  /** Per queue and flow, queued contacts in order as [submission seq, index]. */
  readonly queues: readonly {
    readonly businessId: number;
    readonly typeId: number;
    readonly flows: readonly { readonly key: string; readonly weight: number; readonly entries: readonly (readonly [number, number])[] }[];
  }[];
  readonly retries: readonly (readonly [number, number, number, number])[];
  readonly outcomes: readonly ContactOutcome[];
}

export class Dispatcher {
  readonly #host: DispatchHost;
  #nextSeq = 1;
  readonly #counts = zero();
  readonly #bySlot: (SubmissionRecord | undefined)[] = [];
  readonly #freeSlots: number[] = [];
  readonly #bySeq = new Map<number, SubmissionRecord>();
  readonly #finished = new Map<string, SubmissionStatus>();
  readonly #queues = new Map<string, PoolQueue>();
  #queueOrder: PoolQueue[] = [];
  #pollStart = 0;
  /** Template texts split at their placeholders, by template id (texts do not change under an id). */
  #compiled = new Map<number, CompiledTemplate>();
  readonly #retries = new Heap<RetryTimer>((a, b) => a.at - b.at || a.ref - b.ref);
  readonly #deadlines = new Heap<DeadlineTimer>((a, b) => a.at - b.at || a.seq - b.seq);
  #outcomes: ContactOutcome[] = [];
  #scratchNumbers = new Int32Array(256);
  #scratchTemplates = new Float64Array(256);

  constructor(host: DispatchHost) {
    this.#host = host;
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
    const seq = this.#nextSeq++;
    const slot = this.#freeSlots.pop() ?? this.#bySlot.length;
    const n = input.contacts.length;
    const record: SubmissionRecord = {
      id: `s${seq}`,
      seq,
      slot,
      businessId: input.businessId,
      typeId: input.typeId,
      campaignId: input.campaignId,
      queueId: input.queueId,
      botId: input.botId,
      maxRetries: input.maxRetries ?? 0,
      retryInterval: input.retryInterval ?? 0,
      deadline: input.deadline,
      weight: input.weight ?? 1,
      flowKey: input.campaignId !== undefined ? `c${input.campaignId}` : `s${seq}`,
      contacts: input.contacts,
      state: new Uint8Array(n),
      retries: new Uint8Array(n),
      handouts: new Uint16Array(n),
      flightPhone: new Array<string | undefined>(n),
      flightTemplate: new Float64Array(n),
      counts: zero(),
    };
    this.#bySlot[slot] = record;
    this.#bySeq.set(seq, record);
    const queue = this.#queue(record.businessId, record.typeId);
    const flow = queue.flow(record.flowKey, record.weight);
    const rejected: ContactRejection[] = [];
    record.counts.submitted = n;
    this.#counts.submitted += n;
    const expiredAlready = record.deadline !== undefined && record.deadline <= now;
    let accepted = 0;
    for (let i = 0; i < n; i++) {
      const why = checkContact(input.contacts[i], placeholders, i);
      if (why) {
        rejected.push(why);
        this.#enter(record, i, REJECTED);
        this.#emit(record, i, 'rejected', now, { reason: why.reason });
      } else if (expiredAlready) {
        this.#enter(record, i, EXPIRED);
        this.#emit(record, i, 'expired', now, {});
      } else {
        this.#enter(record, i, QUEUED);
        queue.add(flow, slot * SLOT + i, false);
        accepted++;
      }
    }
    if (record.deadline !== undefined && !expiredAlready) this.#deadlines.push({ at: record.deadline, seq });
    queue.wakeAt = 0;
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
    const isLive = (ref: number) => this.#stateOf(ref) === QUEUED;
    for (let i = 0; i < n; i++) {
      const ref = queue.next(isLive)!;
      const record = this.#bySlot[Math.floor(ref / SLOT)]!;
      const index = ref % SLOT;
      const phone = this.#host.phoneAt(this.#scratchNumbers[i]!);
      const templateId = this.#scratchTemplates[i]!;
      const handout = record.handouts[index]!;
      record.handouts[index] = handout + 1;
      this.#move(record, index, IN_FLIGHT);
      const messageId = `${record.id}.${index}.${handout}`;
      record.flightPhone[index] = phone;
      record.flightTemplate[index] = templateId;
      const contact = record.contacts[index]!;
      const retries = record.retries[index]!;
      out.push({
        messageId,
        submissionId: record.id,
        businessId: record.businessId,
        typeId: record.typeId,
        campaignId: record.campaignId,
        queueId: record.queueId,
        botId: record.botId,
        contact,
        phone,
        templateId,
        text: renderCompiled(this.#template(templateId), contact.variables ?? []),
        isRetry: retries > 0,
        retryIndex: retries > 0 ? retries - 1 : null,
      });
    }
    if (n < want) {
      const s = this.#host.shortfall(pool);
      queue.blocked = s.reason;
      queue.retryAt = s.retryAt;
      queue.wakeAt = s.retryAt ?? Infinity;
    } else {
      queue.blocked = undefined;
      queue.retryAt = undefined;
      queue.wakeAt = 0;
    }
  }

  // ---------------------------------------------------------------- report

  report(messageId: string, outcome: SendOutcome): ReportResult {
    const now = this.#host.tick();
    this.#due(now);
    const id = parseMessageId(messageId);
    const record = id === undefined ? undefined : this.#bySeq.get(id.seq);
    if (id === undefined || record === undefined || id.index >= record.contacts.length) {
      return { ok: false, reason: id !== undefined && this.#finished.has(`s${id.seq}`) ? 'already-final' : 'unknown-message' };
    }
    const { index, handout } = id;
    const current = record.state[index] === IN_FLIGHT && record.handouts[index]! - 1 === handout;
    if (!current) return this.#reportStale(record, index, handout, messageId, outcome, now);
    const flight: InFlight = { phone: record.flightPhone[index]!, templateId: record.flightTemplate[index]! };
    record.flightPhone[index] = undefined;
    switch (outcome.status) {
      case 'sent':
        this.#end(record, index, SENT, now, messageId);
        return { ok: true, effect: 'sent' };
      case 'expired':
        this.#end(record, index, EXPIRED, now, messageId);
        return { ok: true, effect: 'expired' };
      case 'failed':
        return this.#failed(record, index, flight, outcome, now, messageId);
    }
  }

  #template(templateId: number): CompiledTemplate {
    let compiled = this.#compiled.get(templateId);
    if (compiled === undefined) {
      compiled = compileTemplate(this.#host.templateText(templateId));
      this.#compiled.set(templateId, compiled);
    }
    return compiled;
  }

  #failed(
    record: SubmissionRecord,
    index: number,
    flight: InFlight,
    outcome: Extract<SendOutcome, { status: 'failed' }>,
    now: number,
    messageId: string,
  ): ReportResult {
    const action: FailureAction = outcome.action ?? actionForCode(outcome.code);
    const reason = outcome.code !== undefined ? failureReason(outcome.code, outcome.reason ?? channelError(outcome.code)?.description) : (outcome.reason ?? 'Unknown failure');
    const extra = { reason, ...(outcome.code !== undefined ? { code: outcome.code } : {}) };
    switch (action.kind) {
      case 'requeue':
        if (action.restMs > 0) this.#host.pauseNumber(flight.phone, now + action.restMs);
        return this.#requeue(record, index, now, messageId, 'requeued');
      case 'number-out':
        this.#host.pauseNumber(flight.phone, action.pauseMs === undefined ? undefined : now + action.pauseMs);
        return this.#requeue(record, index, now, messageId, 'failover');
      case 'template-out':
        this.#host.setTemplate(flight.templateId, action.status, action.status === 'paused' && action.pauseMs !== undefined ? now + action.pauseMs : undefined);
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
        this.#move(record, index, WAITING);
        this.#retries.push({ at, ref: record.slot * SLOT + index, handout: record.handouts[index]! });
        return { ok: true, effect: 'retry-scheduled', retryAt: at };
      }
    }
  }

  /** Back to the head of its queue for another pair: a failover, not a contact retry. */
  #requeue(record: SubmissionRecord, index: number, now: number, messageId: string, effect: 'requeued' | 'failover'): ReportResult {
    if (record.deadline !== undefined && record.deadline <= now) {
      this.#end(record, index, EXPIRED, now, messageId);
      return { ok: true, effect: 'expired' };
    }
    this.#move(record, index, QUEUED);
    const queue = this.#queue(record.businessId, record.typeId);
    queue.add(queue.flow(record.flowKey, record.weight), record.slot * SLOT + index, true);
    queue.wakeAt = 0;
    return { ok: true, effect };
  }

  /** A report for a hand-out that is not the one in flight (e.g. from before a restart). */
  #reportStale(record: SubmissionRecord, index: number, handout: number, messageId: string, outcome: SendOutcome, now: number): ReportResult {
    const state = record.state[index]!;
    if (state >= SENT) return { ok: false, reason: 'already-final' };
    if (handout >= record.handouts[index]!) return { ok: false, reason: 'unknown-message' };
    // An earlier hand-out was sent after all: the contact is done, whatever it is doing now.
    if (outcome.status === 'sent') {
      if (state === QUEUED) {
        const queue = this.#queue(record.businessId, record.typeId);
        const flow = queue.flows.get(record.flowKey);
        if (flow) queue.dropped(flow);
      }
      // A later hand-out still in flight is settled with it: its report will find the contact final.
      record.flightPhone[index] = undefined;
      this.#end(record, index, SENT, now, messageId);
      return { ok: true, effect: 'sent' };
    }
    return { ok: false, reason: 'stale-hand-out' };
  }

  // ---------------------------------------------------------------- timing

  /** Clock time of the next moment `poll()` can yield more (or a timer falls due); null when idle. */
  nextWakeAt(): number | null {
    const now = this.#host.tick();
    this.#due(now);
    let at = Infinity;
    let blocked = false;
    for (const q of this.#queueOrder) {
      if (q.ready === 0) continue;
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

  /** Something changed that may unblock queues (a resume, a limit change): poll them again. */
  poke(): void {
    for (const q of this.#queueOrder) q.wakeAt = 0;
  }

  #due(now: number): void {
    const retries = this.#retries;
    let r = retries.peek();
    while (r !== undefined && r.at <= now) {
      retries.pop();
      const record = this.#bySlot[Math.floor(r.ref / SLOT)];
      const index = r.ref % SLOT;
      if (record && record.state[index] === WAITING && record.handouts[index] === r.handout) {
        this.#move(record, index, QUEUED);
        const queue = this.#queue(record.businessId, record.typeId);
        queue.add(queue.flow(record.flowKey, record.weight), r.ref, true);
        queue.wakeAt = 0;
      }
      r = retries.peek();
    }
    const deadlines = this.#deadlines;
    let d = deadlines.peek();
    while (d !== undefined && d.at <= now) {
      deadlines.pop();
      const record = this.#bySeq.get(d.seq);
      if (record) this.#expireWaiting(record, now);
      d = deadlines.peek();
    }
  }

  #expireWaiting(record: SubmissionRecord, now: number): void {
    const queue = this.#queue(record.businessId, record.typeId);
    const flow = queue.flows.get(record.flowKey);
    for (let i = 0; i < record.contacts.length; i++) {
      const s = record.state[i];
      if (s === QUEUED) {
        if (flow) queue.dropped(flow);
        this.#end(record, i, EXPIRED, now, undefined);
      } else if (s === WAITING) {
        this.#end(record, i, EXPIRED, now, undefined);
      }
    }
  }

  #peekRetry(): number | undefined {
    let r = this.#retries.peek();
    while (r !== undefined) {
      const record = this.#bySlot[Math.floor(r.ref / SLOT)];
      const index = r.ref % SLOT;
      if (record && record.state[index] === WAITING && record.handouts[index] === r.handout) return r.at;
      this.#retries.pop();
      r = this.#retries.peek();
    }
    return undefined;
  }

  #peekDeadline(): number | undefined {
    let d = this.#deadlines.peek();
    while (d !== undefined) {
      const record = this.#bySeq.get(d.seq);
      if (record && record.counts.queued + record.counts.waitingRetry > 0) return d.at;
      this.#deadlines.pop();
      d = this.#deadlines.peek();
    }
    return undefined;
  }

  // ---------------------------------------------------------------- views

  stats(): DispatchCounts {
    return { ...this.#counts };
  }

  submissionStatus(submissionId: string): SubmissionStatus {
    const finished = this.#finished.get(submissionId);
    if (finished) return finished;
    const seq = submissionId.startsWith('s') ? Number(submissionId.slice(1)) : NaN;
    const record = this.#bySeq.get(seq);
    if (!record) throw new NotFoundError('submission', submissionId);
    const queue = this.#queue(record.businessId, record.typeId);
    const waiting = record.counts.queued > 0 && queue.blocked !== undefined;
    return {
      submissionId,
      ...record.counts,
      ...(waiting ? { blocked: queue.blocked } : {}),
      ...(waiting && queue.retryAt !== undefined ? { retryAt: queue.retryAt } : {}),
    };
  }

  /** Terminal outcomes reached since the last call, each reported exactly once. */
  takeOutcomes(): ContactOutcome[] {
    const out = this.#outcomes;
    this.#outcomes = [];
    return out;
  }

  /** Contacts queued for a (business, type) and what holds them, if anything. */
  queueStatus(businessId: number, typeId: number): { readonly queued: number; readonly blocked?: Blocker; readonly retryAt?: number } {
    const queue = this.#queues.get(`${businessId}/${typeId}`);
    if (!queue || queue.ready === 0) return { queued: 0 };
    return {
      queued: queue.ready,
      ...(queue.blocked ? { blocked: queue.blocked } : {}),
      ...(queue.retryAt !== undefined ? { retryAt: queue.retryAt } : {}),
    };
  }

  /** After a fleet change: contacts of types that no longer exist end failed. */
  fleetChanged(now: number): void {
    for (const record of [...this.#bySeq.values()]) {
      if (this.#host.pool(record.businessId, record.typeId)) continue;
      const queue = this.#queue(record.businessId, record.typeId);
      const flow = queue.flows.get(record.flowKey);
      for (let i = 0; i < record.contacts.length; i++) {
        const s = record.state[i];
        if (s === QUEUED || s === WAITING) {
          if (s === QUEUED && flow) queue.dropped(flow);
          this.#end(record, i, FAILED, now, undefined, { reason: `template type ${record.typeId} of business ${record.businessId} was removed from the fleet` });
        }
      }
    }
    this.poke();
  }

  // ---------------------------------------------------------------- state moves

  #stateOf(ref: number): number {
    const record = this.#bySlot[Math.floor(ref / SLOT)];
    return record ? record.state[ref % SLOT]! : -1;
  }

  /** First state of a contact. */
  #enter(record: SubmissionRecord, index: number, state: number): void {
    record.state[index] = state;
    record.counts[COUNT_KEY[state]!]++;
    this.#counts[COUNT_KEY[state]!]++;
  }

  #move(record: SubmissionRecord, index: number, state: number): void {
    const from = COUNT_KEY[record.state[index]!]!;
    const to = COUNT_KEY[state]!;
    record.counts[from]--;
    this.#counts[from]--;
    record.counts[to]++;
    this.#counts[to]++;
    record.state[index] = state;
  }

  #end(record: SubmissionRecord, index: number, state: number, now: number, messageId: string | undefined, extra: { reason?: string; code?: number } = {}): void {
    this.#move(record, index, state);
    this.#emit(record, index, TERMINAL_NAMES[state]!, now, { ...extra, ...(messageId !== undefined ? { messageId } : {}) });
    this.#finishIfDone(record);
  }

  #emit(record: SubmissionRecord, index: number, state: TerminalState, at: number, extra: { reason?: string; code?: number; messageId?: string }): void {
    const handouts = record.handouts[index]!;
    this.#outcomes.push({
      submissionId: record.id,
      index,
      contact: record.contacts[index]!,
      campaignId: record.campaignId,
      state,
      messageId: extra.messageId ?? (handouts > 0 ? `${record.id}.${index}.${handouts - 1}` : undefined),
      ...(extra.reason !== undefined ? { reason: extra.reason } : {}),
      ...(extra.code !== undefined ? { code: extra.code } : {}),
      at,
    });
  }

  /** A submission whose contacts all ended is forgotten but for its final counts. */
  #finishIfDone(record: SubmissionRecord): void {
    const c = record.counts;
    if (c.queued + c.waitingRetry + c.inFlight > 0) return;
    this.#bySeq.delete(record.seq);
    this.#bySlot[record.slot] = undefined;
    this.#freeSlots.push(record.slot);
    this.#finished.set(record.id, { submissionId: record.id, ...c });
    if (this.#finished.size > FINISHED_KEPT) this.#finished.delete(this.#finished.keys().next().value!);
  }

  #queue(businessId: number, typeId: number): PoolQueue {
    const key = `${businessId}/${typeId}`;
    let queue = this.#queues.get(key);
    if (!queue) {
      queue = new PoolQueue(businessId, typeId);
      this.#queues.set(key, queue);
      this.#queueOrder.push(queue);
    }
    return queue;
  }

  // ---------------------------------------------------------------- snapshots

  snapshot(): DispatchSnapshot {
    const submissions = [...this.#bySeq.values()].map((r) => ({
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
      contacts: r.contacts,
      state: Array.from(r.state, String).join(''),
      retries: Array.from(r.retries),
      handouts: Array.from(r.handouts),
    }));
    const queues = this.#queueOrder
      .filter((q) => q.ready > 0)
      .map((q) => {
        // Active flows from the one being served, then the rest: the service order.
        const order = [...q.active.slice(q.cursor), ...q.active.slice(0, q.cursor)];
        return {
          businessId: q.businessId,
          typeId: q.typeId,
          flows: order.map((f) => ({
            key: f.key,
            weight: f.weight,
            entries: f.entries
              .toArray()
              .filter((ref) => this.#stateOf(ref) === QUEUED)
              .map((ref) => [this.#bySlot[Math.floor(ref / SLOT)]!.seq, ref % SLOT] as const),
          })),
        };
      });
    const retries = this.#retries
      .toArray()
      .filter((t) => {
        const record = this.#bySlot[Math.floor(t.ref / SLOT)];
        return record !== undefined && record.state[t.ref % SLOT] === WAITING && record.handouts[t.ref % SLOT] === t.handout;
      })
      .sort((a, b) => a.at - b.at || a.ref - b.ref)
      .map((t) => [this.#bySlot[Math.floor(t.ref / SLOT)]!.seq, t.ref % SLOT, t.handout, t.at] as const);
    return { nextSeq: this.#nextSeq, counts: this.stats(), submissions, queues, retries, outcomes: [...this.#outcomes] };
  }

  /**
   * Loads a snapshot. Messages that were in flight go back to the head of their queues: each
   * pending contact is sent exactly once more, and a late "sent" report for the old hand-out still
   * settles the contact instead of letting it go twice.
   */
  restore(snap: DispatchSnapshot): void {
    this.#nextSeq = snap.nextSeq;
    Object.assign(this.#counts, snap.counts);
    for (const s of snap.submissions) {
      const slot = this.#freeSlots.pop() ?? this.#bySlot.length;
      const n = s.contacts.length;
      const record: SubmissionRecord = {
        id: `s${s.seq}`,
        seq: s.seq,
        slot,
        businessId: s.businessId,
        typeId: s.typeId,
        campaignId: s.campaignId,
        queueId: s.queueId,
        botId: s.botId,
        maxRetries: s.maxRetries,
        retryInterval: s.retryInterval,
        deadline: s.deadline,
        weight: s.weight,
        flowKey: s.campaignId !== undefined ? `c${s.campaignId}` : `s${s.seq}`,
        contacts: s.contacts,
        state: Uint8Array.from(s.state, (ch) => Number(ch)),
        retries: Uint8Array.from(s.retries),
        handouts: Uint16Array.from(s.handouts),
        flightPhone: new Array<string | undefined>(n),
        flightTemplate: new Float64Array(n),
        counts: zero(),
      };
      record.counts.submitted = n;
      for (let i = 0; i < n; i++) record.counts[COUNT_KEY[record.state[i]!]!]++;
      this.#bySlot[slot] = record;
      this.#bySeq.set(s.seq, record);
      if (record.deadline !== undefined) this.#deadlines.push({ at: record.deadline, seq: s.seq });
    }
    for (const q of snap.queues) {
      const queue = this.#queue(q.businessId, q.typeId);
      for (const f of q.flows) {
        const flow = queue.flow(f.key, f.weight);
        for (const [seq, index] of f.entries) {
          const record = this.#bySeq.get(seq);
          if (record && record.state[index] === QUEUED) queue.add(flow, record.slot * SLOT + index, false);
        }
      }
    }
    for (const [seq, index, handout, at] of snap.retries) {
      const record = this.#bySeq.get(seq);
      if (record) this.#retries.push({ at, ref: record.slot * SLOT + index, handout });
    }
    // In flight at the snapshot: back to the front of their queues, in submission order.
    for (const record of [...this.#bySeq.values()].reverse()) {
      const queue = this.#queue(record.businessId, record.typeId);
      for (let i = record.contacts.length - 1; i >= 0; i--) {
        if (record.state[i] !== IN_FLIGHT) continue;
        this.#move(record, i, QUEUED);
        queue.add(queue.flow(record.flowKey, record.weight), record.slot * SLOT + i, true);
      }
    }
    this.#outcomes = [...snap.outcomes];
  }
}

/** Checks a submission's own fields; every problem with its JSON path. */
function checkSubmission(input: Submission): Problem[] {
  const problems: Problem[] = [];
  if (typeof input !== 'object' || input === null) return [problem('$', 'a submission object', input)];
  const int = (key: keyof Submission, min: number, max: number, required: boolean, what: string) => {
    const v = input[key];
    if (v === undefined && !required) return;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) problems.push(problem(`$.${key}`, what, v));
  };
  int('businessId', 1, Number.MAX_SAFE_INTEGER, true, 'a business id (a positive integer)');
  int('typeId', 1, Number.MAX_SAFE_INTEGER, true, 'a template type id (a positive integer)');
  int('campaignId', 0, Number.MAX_SAFE_INTEGER, false, 'a campaign id (an integer, 0 or more)');
  int('queueId', 0, Number.MAX_SAFE_INTEGER, false, 'a queue id (an integer, 0 or more)');
  int('botId', 0, Number.MAX_SAFE_INTEGER, false, 'a bot id (an integer, 0 or more)');
  int('maxRetries', 0, MAX_RETRIES, false, `an integer from 0 to ${MAX_RETRIES}`);
  int('retryInterval', 0, MAX_INTERVAL, false, `milliseconds from 0 to ${MAX_INTERVAL} (30 days)`);
  int('deadline', 0, Number.MAX_SAFE_INTEGER, false, 'a clock time in milliseconds');
  int('weight', 1, MAX_WEIGHT, false, `an integer from 1 to ${MAX_WEIGHT}`);
  if (!Array.isArray(input.contacts) || input.contacts.length === 0) problems.push(problem('$.contacts', 'a non-empty array of contacts', input.contacts));
  else if (input.contacts.length >= SLOT) problems.push(problem('$.contacts', `fewer than ${SLOT} contacts`, input.contacts));
  return problems;
}

/** Checks one contact against the type; a rejection when it cannot be sent. */
function checkContact(contact: SubmissionContact | undefined, placeholders: number, index: number): ContactRejection | undefined {
  const path = `$.contacts[${index}]`;
  if (typeof contact !== 'object' || contact === null) return { index, reason: 'invalid_phone', problem: problem(path, 'a contact object', contact) };
  if (typeof contact.phone !== 'string' || !PHONE.test(contact.phone)) {
    return { index, reason: 'invalid_phone', problem: problem(`${path}.phone`, 'a phone of 8 to 15 digits, country code included', contact.phone) };
  }
  const values = contact.variables ?? [];
  if (!Array.isArray(values) || values.length !== placeholders) {
    return { index, reason: 'invalid_variables', problem: problem(`${path}.variables`, `${placeholders} value(s), one for each placeholder of the type`, values) };
  }
  for (let v = 0; v < values.length; v++) {
    if (typeof values[v] !== 'string' || values[v] === '') {
      return { index, reason: 'invalid_variables', problem: problem(`${path}.variables[${v}]`, 'a non-empty string', values[v]) };
    }
  }
  return undefined;
}

/** `s<seq>.<index>.<hand-out>` into its numbers; undefined for anything else. */
function parseMessageId(messageId: string): { seq: number; index: number; handout: number } | undefined {
  if (typeof messageId !== 'string' || messageId.charCodeAt(0) !== 115 /* s */) return undefined;
  const a = messageId.indexOf('.');
  const b = messageId.indexOf('.', a + 1);
  if (a < 2 || b <= a + 1 || b + 1 >= messageId.length) return undefined;
  const seq = Number(messageId.slice(1, a));
  const index = Number(messageId.slice(a + 1, b));
  const handout = Number(messageId.slice(b + 1));
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(index) || !Number.isSafeInteger(handout) || index < 0 || handout < 0) return undefined;
  return { seq, index, handout };
}
