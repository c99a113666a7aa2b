/**
 * A failure the provider reports later, in a status webhook, goes through the one error table as a
 * send's answer does (the Cloud API reports most template failures that way, not in the answer):
 *
 * - the fleet: `template-out` pauses or disables the template, `number-out` takes the number out,
 *   `requeue` and `transport` rest it, a credentials code opens the number's incident;
 * - the contact, sent and already notified FAILED: sent again when the action says it goes again.
 *   A `retry` is a contact retry (counts against `max_retries`, after `retry_interval`, notified as
 *   the engine's retries are); a failover (`template-out`, `number-out`) or a rest (`requeue`) goes
 *   again at once or after the rest; `transport` and `recipient-wait` after their backoff. Every
 *   one but a retry is bounded by `MAX_TRANSPORT_ATTEMPTS` follow-ups of one contact, so a message
 *   the provider keeps failing later ends FAILED. `give-up` ends with the FAILED already notified.
 *
 * Sent again means submitted again, as one contact of its own: the contact's id, request, company,
 * campaign and values are kept, its retry count continues (`retriesUsed`), and it waits
 * (`notBefore`) in the engine's own timers. On the durable server the submission is written with
 * the step the webhook's acknowledgement waits for; on Redis it is a chunk of the shared queue. A
 * FAILED delivered twice is acted on once: the first forgets the message (tracked-messages.ts).
 *
 * A late failure sends the contact again only while the send is recent and the recipient has not
 * got it: not when it comes `failureWindowMs` or more after the provider accepted the message
 * (`TrackedMessage.sentAt`; by then the campaign's statistics count the contact sent, and a
 * campaign must finish), nor when the message reached DEVICE, READ or REPLIED (sending it again
 * would deliver it twice). The fleet's side of the table still applies to those, and the FAILED
 * is notified; the outcome is logged at info and counted in `sendpool_late_failures_total`.
 */
import type { FastifyBaseLogger } from 'fastify';
import { MAX_TRANSPORT_ATTEMPTS, actionForCode, backoffMs, type FailureAction } from '../core/channel-errors.js';
import type { Clock } from '../core/clock.js';
import type { Engine } from '../core/engine.js';
import type { Submission } from '../core/submission.js';
import { reached } from '../events/status-merge.js';
import type { ServerContact } from './contacts.js';
import type { NumberIncidents } from './number-incidents.js';
import { DEFAULT_FAILURE_WINDOW_MS } from './options.js';
import type { SendAgain, TrackedMessage } from './tracked-messages.js';

export interface LateFailureDeps {
  readonly engine: Engine;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  readonly incidents: NumberIncidents;
  /**
   * Queues the contact's next send: into the engine, or the shared queue on Redis. `handout` is
   * the hand-out the failed message was (its ids must not be used again).
   */
  readonly resubmit: (submission: Submission, contact: ServerContact, handout: number) => void;
  /** A contact retry is waiting (the notifier's, as for the engine's own retries). */
  readonly retryPending: (contact: ServerContact, campaignId: number, retryIndex: number) => void;
  /**
   * How long after the provider accepted a message its later failure still sends the contact again.
   * @default DEFAULT_FAILURE_WINDOW_MS (10 minutes)
   */
  readonly failureWindowMs?: number;
  /** Each late failure's outcome (the `sendpool_late_failures_total` counter). @default none */
  readonly onOutcome?: (outcome: LateOutcome) => void;
  /**
   * The contact failed for good without reaching the recipient (the table ended it within the
   * window): what it held may be given back (its phone, for `already_sent`). @default none
   */
  readonly onEnded?: (contact: ServerContact, again: SendAgain) => void;
}

/**
 * What a late failure did to its contact: `resent` (sent again), `ended` (the table ends it: the
 * FAILED stands), `past-window` (reported `failureWindowMs` or more after the send), `after-delivery`
 * (the message had reached DEVICE or beyond). The label of `sendpool_late_failures_total`.
 */
export type LateOutcome = 'resent' | 'ended' | 'past-window' | 'after-delivery';

/** What the later failure does to the contact: nothing more (and why), or when and how it goes again. */
export type LateDecision =
  { readonly kind: 'end'; readonly why: Exclude<LateOutcome, 'resent'> } | { readonly kind: 'again'; readonly retriesUsed: number; readonly notBefore: number; readonly retry: boolean };

/** The failed message as far as deciding its contact's fate goes. */
export interface LateFailure {
  /** Retries used so far (the failed message's). */
  readonly used: number;
  /** Times the contact was already sent again after a later failure. */
  readonly followUps: number;
  /** The submission's `max_retries`. */
  readonly maxRetries: number;
  /** The submission's `retry_interval`, in ms. */
  readonly retryIntervalMs: number;
  /** When the provider accepted the message (epoch ms). */
  readonly sentAt: number;
  /** The message reached DEVICE, READ or REPLIED before the failure. */
  readonly delivered: boolean;
}

/**
 * The contact's side of the table, pure: the failed message `f`, the window in which a failure
 * still sends its contact again, `now`. A failure after delivery, or `windowMs` or more after the
 * send, ends the contact whatever the action; otherwise the action says.
 */
export function decideLate(action: FailureAction, f: LateFailure, windowMs: number, now: number): LateDecision {
  if (f.delivered) return { kind: 'end', why: 'after-delivery' };
  if (now - f.sentAt >= windowMs) return { kind: 'end', why: 'past-window' };
  const { used, followUps, maxRetries, retryIntervalMs } = f;
  const backoff = (base: number) => now + backoffMs(base, followUps);
  if (action.kind === 'give-up') return { kind: 'end', why: 'ended' };
  if (action.kind === 'retry') {
    return used >= maxRetries ? { kind: 'end', why: 'ended' } : { kind: 'again', retriesUsed: used + 1, notBefore: now + Math.max(retryIntervalMs, action.notBeforeMs), retry: true };
  }
  // Every other kind goes again without a retry: bounded like transport tries.
  if (followUps + 1 >= MAX_TRANSPORT_ATTEMPTS) return { kind: 'end', why: 'ended' };
  switch (action.kind) {
    case 'template-out':
    case 'number-out':
      return { kind: 'again', retriesUsed: used, notBefore: now, retry: false };
    case 'requeue':
      return { kind: 'again', retriesUsed: used, notBefore: now + action.restMs, retry: false };
    case 'transport':
      return { kind: 'again', retriesUsed: used, notBefore: backoff(action.backoffMs), retry: false };
    case 'recipient-wait':
      return { kind: 'again', retriesUsed: used, notBefore: backoff(action.waitMs), retry: false };
  }
}

/** The hand-out a channel message id names (`…<hand-out>` after its last dot), 0 when it names none. */
function handoutOf(messageId: string): number {
  const n = Number(messageId.slice(messageId.lastIndexOf('.') + 1));
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/** The log line of each way a late failure ends its contact. */
const END_MESSAGES: Readonly<Record<Exclude<LateOutcome, 'resent'>, string>> = {
  'after-delivery': 'a failure reported after delivery does not send the contact again',
  'past-window': 'a failure reported past the failure window does not send the contact again',
  ended: 'a failure reported later ends the contact',
};

/**
 * The contact sent again, as a submission of its own: the contact as submitted (with its follow-ups
 * counted), under the request's business, type, campaign and retry settings the failed send kept.
 */
function sendingAgain(
  contact: ServerContact,
  again: SendAgain,
  decision: Extract<LateDecision, { kind: 'again' }>,
  now: number,
): { readonly next: ServerContact & { followUps: number }; readonly submission: Submission } {
  const next: ServerContact & { followUps: number } = {
    phone: contact.phone,
    ...(contact.variables !== undefined ? { variables: contact.variables } : {}),
    ...(contact.document !== undefined ? { document: contact.document } : {}),
    ...(contact.contract !== undefined ? { contract: contact.contract } : {}),
    ...(contact.data !== undefined ? { data: contact.data } : {}),
    id: contact.id,
    requestId: contact.requestId,
    companyId: contact.companyId,
    costCenterId: contact.costCenterId,
    followUps: decision.retry ? again.followUps : again.followUps + 1,
  };
  const submission: Submission = {
    businessId: again.businessId,
    typeId: again.typeId,
    ...(again.campaignId !== null ? { campaignId: again.campaignId } : {}),
    ...(contact.costCenterId !== 0 ? { queueId: contact.costCenterId } : {}),
    maxRetries: again.maxRetries,
    retryInterval: again.retryInterval,
    retriesUsed: decision.retriesUsed,
    ...(decision.notBefore > now ? { notBefore: decision.notBefore } : {}),
    contacts: [next],
  };
  return { next, submission };
}

/**
 * The handler of late failures: called for every FAILED the provider reports of a message it had
 * accepted (once: the first forgets the message). Answers what it did to the contact (undefined for
 * a message tracked without what sending it again needs).
 */
export function lateFailures(deps: LateFailureDeps): (tracked: TrackedMessage, messageId: string, code: number) => LateOutcome | undefined {
  const { engine, clock, log } = deps;
  const windowMs = deps.failureWindowMs ?? DEFAULT_FAILURE_WINDOW_MS;

  /** The fleet's side of the table: what the failure says of the template or the number. */
  function steer(t: TrackedMessage, templateId: number, action: FailureAction, code: number, now: number): void {
    try {
      switch (action.kind) {
        case 'template-out':
          engine.setTemplateStatus(templateId, action.status, { source: 'failover', ...(action.status === 'paused' && action.pauseMs !== undefined ? { until: now + action.pauseMs } : {}) });
          return;
        case 'number-out':
          engine.setNumberStatus(t.from, 'paused', { source: 'failover', ...(action.pauseMs !== undefined ? { until: now + action.pauseMs } : {}) });
          return;
        case 'requeue':
        case 'transport':
          if (action.kind === 'transport') deps.incidents.result(t.from, { status: 'failed', code });
          if (action.restMs !== undefined && action.restMs > 0) engine.setNumberStatus(t.from, 'paused', { source: 'failover', until: now + action.restMs });
          return;
        default:
          return;
      }
    } catch (e) {
      // A template or number the fleet no longer has: nothing to steer.
      log.warn({ code, templateId, number: t.from, err: e instanceof Error ? e.message : String(e) }, 'a failure reported later names what the fleet no longer has');
    }
  }

  return (t, messageId, code) => {
    const again = t.again;
    if (again === undefined) return undefined; // tracked before sendpool kept what sending again needs
    const now = clock.now();
    const action = actionForCode(code);
    steer(t, again.templateId, action, code, now);
    const used = t.retryIndex === null ? 0 : t.retryIndex + 1;
    const delivered = t.progress !== undefined && reached(t.progress, 'DEVICE');
    const failure: LateFailure = { used, followUps: again.followUps, maxRetries: again.maxRetries, retryIntervalMs: again.retryInterval, sentAt: t.sentAt, delivered };
    const decision = decideLate(action, failure, windowMs, now);
    const contact = t.contact;
    const done = (outcome: LateOutcome): LateOutcome => {
      deps.onOutcome?.(outcome);
      return outcome;
    };
    if (decision.kind === 'end') {
      log.info({ messageId, code, action: action.kind, contactId: contact.id, outcome: decision.why, sentAt: t.sentAt }, END_MESSAGES[decision.why]);
      if (decision.why === 'ended') deps.onEnded?.(contact, again);
      return done(decision.why);
    }
    const { next, submission } = sendingAgain(contact, again, decision, now);
    try {
      deps.resubmit(submission, next, handoutOf(messageId));
    } catch (e) {
      // The type is gone from the fleet, or the server is closing: the FAILED notification stands.
      log.warn({ messageId, code, contactId: contact.id, err: e instanceof Error ? e.message : String(e) }, 'a failure reported later could not send its contact again');
      deps.onEnded?.(contact, again);
      return done('ended');
    }
    if (decision.retry) deps.retryPending(next, t.campaignId, decision.retriesUsed - 1);
    log.info({ messageId, code, action: action.kind, contactId: contact.id, notBefore: decision.notBefore, retry: decision.retry }, 'a failure reported later sends its contact again');
    return done('resent');
  };
}
