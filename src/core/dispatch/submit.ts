/**
 * A submission joins the dispatch queue: checked whole (a bad one changes nothing), its contacts
 * that can never go rejected at once, and the rest queued in its (business, type)'s queue, or
 * waiting for `notBefore`. Contacts are kept packed when the queue is long (contact-list.ts).
 */
import { SubmissionError } from '../errors.js';
import { problem } from '../problems.js';
import type { Submission } from '../submission.js';
import { checkContact, checkSubmission } from './check-submission.js';
import { type ContactList, ObjectContacts, PackedContacts, packable } from './contact-list.js';
import type { DispatchHost, DispatchState } from './dispatch-state.js';
import { EXPIRED, QUEUED, REJECTED, SUBMITTED, type SubmissionRecord, WAITING, createRecord } from './record.js';
import type { ContactRejection, SubmitTicket } from './types.js';

export function submit(s: DispatchState, input: Submission): SubmitTicket {
  const placeholders = placeholdersOf(s.host, input);
  const now = s.host.tick();
  s.due(now);
  const given = input.contacts;
  const n = given.length;
  const rejected: ContactRejection[] = [];
  for (let i = 0; i < n; i++) {
    const why = checkContact(given[i], placeholders, i);
    if (why) rejected.push(why);
  }
  const pack = s.counts[QUEUED]! >= s.packFrom && rejected.length === 0 && packable(given);
  const contacts: ContactList = pack ? new PackedContacts(given, placeholders) : new ObjectContacts(given);
  const record = createRecord(s.nextSeq++, input, contacts, s.queue(input.businessId, input.typeId));
  s.bySeq.set(record.seq, record);
  s.counts[SUBMITTED]! += n;
  const expiredAlready = record.deadline !== undefined && record.deadline <= now;
  const accepted = expiredAlready ? 0 : n - rejected.length;
  if (rejected.length > 0 || expiredAlready) endAtOnce(s, record, rejected, expiredAlready, now);
  if (accepted > 0 && input.notBefore !== undefined && input.notBefore > now) waitUntil(s, record, input.notBefore);
  else queueFresh(s, record, accepted, input.ahead === true);
  record.queue.wakeAt = 0;
  s.finishIfDone(record);
  return { submissionId: record.id, accepted, rejected };
}

/** The values each contact must bring for the submission's type. @throws {SubmissionError} listing what is wrong with it */
function placeholdersOf(host: DispatchHost, input: Submission): number {
  const problems = checkSubmission(input);
  const placeholders = problems.length === 0 ? host.placeholders(input.businessId, input.typeId) : undefined;
  if (problems.length === 0 && placeholders === undefined) {
    problems.push(
      host.hasBusiness(input.businessId) ? problem('$.typeId', `a template type of business ${input.businessId}`, input.typeId) : problem('$.businessId', 'a business of the fleet', input.businessId),
    );
  }
  if (problems.length > 0 || placeholders === undefined) throw new SubmissionError(problems);
  return placeholders;
}

/** Contacts that end as they arrive: the rejected, and every one when the deadline has passed already. */
function endAtOnce(s: DispatchState, record: SubmissionRecord, rejected: readonly ContactRejection[], expiredAlready: boolean, now: number): void {
  // In index order, so outcomes come in the order of the contacts.
  let r = 0;
  for (let i = 0; i < record.contacts.length; i++) {
    const why = rejected[r]?.index === i ? rejected[r++] : undefined;
    if (why !== undefined) {
      s.enter(record, i, REJECTED);
      s.emit(record, i, REJECTED, now, -1, why.reason, undefined);
    } else if (expiredAlready) {
      s.enter(record, i, EXPIRED);
      s.emit(record, i, EXPIRED, now, -1, undefined, undefined);
    }
  }
}

/** Not before a time: each contact waits as a retry waits (no retry counted), then goes from `back`. */
function waitUntil(s: DispatchState, record: SubmissionRecord, at: number): void {
  const n = record.contacts.length;
  const times = (record.retryAt = new Float64Array(n));
  for (let i = 0; i < n; i++) {
    // Rejected contacts have their state already; the rest are still at 0, uncounted.
    if (record.state[i] !== QUEUED) continue;
    s.enter(record, i, WAITING);
    times[i] = at;
    s.retries.push({ at, seq: record.seq, index: i, handout: 0 });
  }
  // None is fresh: each comes back through `back` when its time falls due.
  record.fresh = n;
}

/** The `accepted` contacts not ended at once go to the queue, ahead of the others' with `ahead`. */
function queueFresh(s: DispatchState, record: SubmissionRecord, accepted: number, ahead: boolean): void {
  if (accepted > 0) {
    // The others start queued (state 0): counted at once rather than one by one.
    s.touch(record);
    record.counts[QUEUED] = accepted;
    s.counts[QUEUED]! += accepted;
    s.armDeadline(record);
  }
  record.queue.addFresh(record, accepted, ahead);
}
