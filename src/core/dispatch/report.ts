/**
 * The paths of a report (docs/dispatch-loop.md, "Report answers" and "Retries and failover"): what the channel said of a hand-out
 * moves its contact on. A success or an expiry ends it; a failure goes by its action: a failover
 * (the number or template out, the contact queued again for another pair), a transport failure or
 * a recipient's wait (again later without using a retry), a retry of the contact, or the end.
 */
import { type FailureAction, MAX_TRANSPORT_ATTEMPTS, actionForCode, backoffMs, channelError, failureReason } from '../channel-errors.js';
import { ArgumentError } from '../errors.js';
import { describeValue } from '../problems.js';
import type { DispatchState } from './dispatch-state.js';
import { EXPIRED, FAILED, FIRST_FINAL, IN_FLIGHT, QUEUED, SENT, type SubmissionRecord, WAITING } from './record.js';
import type { ReportResult, SendOutcome } from './types.js';

/** In a contact's `attempts`: the count of tries that used no retry, and the flag of an unknown outcome seen. */
const COUNT_MASK = 0x7f;
const UNKNOWN_OUTCOME = 0x80;

// Answers of `report` that carry nothing of their own: one object each, not one per report.
const SENT_RESULT: ReportResult = Object.freeze({ ok: true, effect: 'sent' });
const FAILED_RESULT: ReportResult = Object.freeze({ ok: true, effect: 'failed' });
const EXPIRED_RESULT: ReportResult = Object.freeze({ ok: true, effect: 'expired' });
export const UNKNOWN: ReportResult = Object.freeze({ ok: false, reason: 'unknown-message' });
export const ALREADY_FINAL: ReportResult = Object.freeze({ ok: false, reason: 'already-final' });
const STALE: ReportResult = Object.freeze({ ok: false, reason: 'stale-hand-out' });

/** A report's outcome must be one the engine knows; a typo would otherwise change nothing silently. */
export function checkOutcome(outcome: SendOutcome): void {
  const status = (outcome as { status?: unknown } | null)?.status;
  if (status !== 'sent' && status !== 'failed' && status !== 'expired') {
    throw new ArgumentError('report(outcome.status)', 'one of "sent", "failed", "expired"', describeValue(status));
  }
}

/**
 * What the channel said of the hand-out `handout` of contact `index` of `record` (its message id's
 * parts, or a batch row's), at `now`. The contact's state moves as the outcome says; a failure
 * goes by its action (channel-errors.ts).
 */
export function reportOutcome(s: DispatchState, record: SubmissionRecord, index: number, handout: number, outcome: SendOutcome, now: number): ReportResult {
  if (index >= record.contacts.length || handout >= record.handouts[index]!) return UNKNOWN;
  const state = record.state[index]!;
  if (state >= FIRST_FINAL) return ALREADY_FINAL;
  if (state !== IN_FLIGHT || handout !== record.handouts[index]! - 1) return reportEarlier(s, record, index, handout, outcome, now);
  const slot = record.flightSlot[index]!;
  const templateId = record.flightTemplate[index]!;
  record.flightSlot[index] = -1;
  switch (outcome.status) {
    case 'sent':
      s.end(record, index, SENT, now, handout);
      return SENT_RESULT;
    case 'expired':
      s.end(record, index, EXPIRED, now, handout);
      return EXPIRED_RESULT;
    case 'failed':
      return failed(s, record, index, handout, slot, templateId, outcome, now);
  }
}

function failed(
  s: DispatchState,
  record: SubmissionRecord,
  index: number,
  handout: number,
  slot: number,
  templateId: number,
  outcome: Extract<SendOutcome, { status: 'failed' }>,
  now: number,
): ReportResult {
  const action: FailureAction = outcome.action ?? actionForCode(outcome.code);
  const reason = failureText(outcome);
  const code = outcome.code;
  // Nothing went: the number's windows get the message back, in the bucket it was charged to.
  if (outcome.refused === true && slot >= 0 && record.retryAt !== undefined) s.host.refund(slot, record.retryAt[index]!, now, record.contacts.at(index).phone);
  switch (action.kind) {
    case 'requeue':
      rest(s, slot, action.restMs, now);
      return requeue(s, record, index, now, handout, 'requeued');
    case 'number-out':
      if (slot >= 0) s.host.pauseNumber(slot, action.pauseMs === undefined ? undefined : now + action.pauseMs);
      return requeue(s, record, index, now, handout, 'failover');
    case 'template-out':
      s.host.setTemplate(templateId, action.status, action.status === 'paused' && action.pauseMs !== undefined ? now + action.pauseMs : undefined);
      return requeue(s, record, index, now, handout, 'failover');
    case 'transport':
      rest(s, slot, action.restMs, now);
      return tryAgain(s, record, index, handout, action.backoffMs, true, reason, code, now);
    case 'recipient-wait':
      return tryAgain(s, record, index, handout, action.waitMs, false, reason, code, now);
    case 'give-up':
      s.end(record, index, FAILED, now, handout, reason, code);
      return FAILED_RESULT;
    case 'retry':
      return retryLater(s, record, index, handout, action.notBeforeMs, reason, code, now);
  }
}

/** The failure's text in outcomes: the channel's reason, or the error table's description of its code. */
function failureText(outcome: Extract<SendOutcome, { status: 'failed' }>): string {
  if (outcome.code === undefined) return outcome.reason ?? 'Unknown failure';
  return failureReason(outcome.code, outcome.reason ?? channelError(outcome.code)?.description);
}

/** A failure that asks the number at `slot` (-1: none known) to rest: it pauses for `ms`, when given and above 0. */
function rest(s: DispatchState, slot: number, ms: number | undefined, now: number): void {
  if (ms !== undefined && ms > 0 && slot >= 0) s.host.pauseNumber(slot, now + ms);
}

/**
 * A failure of the contact that a retry may cure: it waits the submission's retry interval (at
 * least `notBeforeMs`) and uses one of its retries; without one left, or past its deadline, it ends.
 */
function retryLater(s: DispatchState, record: SubmissionRecord, index: number, handout: number, notBeforeMs: number, reason: string, code: number | undefined, now: number): ReportResult {
  if (record.retries[index]! >= record.maxRetries) {
    s.end(record, index, FAILED, now, handout, reason, code);
    return FAILED_RESULT;
  }
  const at = now + Math.max(record.retryInterval, notBeforeMs);
  if (record.deadline !== undefined && at >= record.deadline) {
    s.end(record, index, EXPIRED, now, handout, reason, code);
    return EXPIRED_RESULT;
  }
  record.retries[index]!++;
  (record.retryAt ??= new Float64Array(record.contacts.length))[index] = at;
  s.move(record, index, WAITING);
  s.retries.push({ at, seq: record.seq, index, handout: record.handouts[index]! });
  return { ok: true, effect: 'retry-scheduled', retryAt: at };
}

/**
 * A failure of the exchange or of the recipient's pair, not of the contact: it waits `baseMs`,
 * doubled at each such failure of it, and goes again without using a retry; after
 * {@link MAX_TRANSPORT_ATTEMPTS} it ends failed. `same`: the next hand-out repeats this message id
 * (the request may have reached the provider: a provider that deduplicates sends it once).
 */
function tryAgain(s: DispatchState, record: SubmissionRecord, index: number, handout: number, baseMs: number, same: boolean, reason: string, code: number | undefined, now: number): ReportResult {
  const attempts = (record.attempts ??= new Uint8Array(record.contacts.length));
  const k = attempts[index]! & COUNT_MASK;
  if (k + 1 >= MAX_TRANSPORT_ATTEMPTS) {
    s.end(record, index, FAILED, now, handout, `${reason} (after ${k + 1} tries)`, code);
    return FAILED_RESULT;
  }
  // After a try whose outcome is unknown, every later try repeats its id: a pair rate limit met
  // by the repeat may be the first try's own message (it went), and a new id would send it twice.
  const unknown = same || (attempts[index]! & UNKNOWN_OUTCOME) !== 0;
  attempts[index] = (k + 1) | (unknown ? UNKNOWN_OUTCOME : 0);
  same = unknown;
  const at = now + backoffMs(baseMs, k);
  if (record.deadline !== undefined && at >= record.deadline) {
    s.end(record, index, EXPIRED, now, handout, reason, code);
    return EXPIRED_RESULT;
  }
  if (same) (record.resend ??= new Uint8Array(record.contacts.length))[index] = 1;
  (record.retryAt ??= new Float64Array(record.contacts.length))[index] = at;
  s.move(record, index, WAITING);
  s.retries.push({ at, seq: record.seq, index, handout: record.handouts[index]! });
  return { ok: true, effect: 'requeued', retryAt: at };
}

/** Back in its queue for another pair: a failover, not a contact retry. */
function requeue(s: DispatchState, record: SubmissionRecord, index: number, now: number, handout: number, effect: 'requeued' | 'failover'): ReportResult {
  if (record.deadline !== undefined && record.deadline <= now) {
    s.end(record, index, EXPIRED, now, handout);
    return EXPIRED_RESULT;
  }
  // A contact whose outcome was once unknown keeps that id through a failover too: the refusal
  // speaks of this try, not of the first, which may have gone; a new id would let the provider
  // take the contact twice under two ids.
  if (record.attempts !== undefined && (record.attempts[index]! & UNKNOWN_OUTCOME) !== 0) (record.resend ??= new Uint8Array(record.contacts.length))[index] = 1;
  const ended = s.returnToQueue(record, index, now);
  return ended === undefined ? { ok: true, effect } : FAILED_RESULT;
}

/** A report for a hand-out that is not the one in flight (made before a restart or a failover). */
function reportEarlier(s: DispatchState, record: SubmissionRecord, index: number, handout: number, outcome: SendOutcome, now: number): ReportResult {
  if (outcome.status !== 'sent') return STALE;
  // An earlier hand-out was sent after all: the contact is done, whatever it is doing now. A later
  // hand-out still in flight is settled with it: its report will find the contact final.
  if (record.state[index] === QUEUED) record.queue.removeOne(record, index);
  record.flightSlot[index] = -1;
  s.end(record, index, SENT, now, handout);
  return SENT_RESULT;
}
