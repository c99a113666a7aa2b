/** Public types of the dispatch loop: submit, poll, report, outcomes, stats. */
import type { FailureAction } from '../channel-errors.js';
import type { Problem } from '../problems.js';
import type { SubmissionContact } from '../submission.js';

/** Why a contact was refused at submission. */
export type RejectionReason = 'invalid_phone' | 'invalid_variables';

/** A contact refused at submission; it counts as submitted and ends `rejected`. */
export interface ContactRejection {
  /** Position of the contact in the submission's `contacts`. */
  readonly index: number;
  readonly reason: RejectionReason;
  readonly problem: Problem;
}

/** Answer of `engine.submit`. */
export interface SubmitTicket {
  /** Identifier of the submission, e.g. `s12`. */
  readonly submissionId: string;
  /** Contacts queued for sending. */
  readonly accepted: number;
  /** Contacts refused, with reasons. */
  readonly rejected: readonly ContactRejection[];
}

/** One message that may go now: the host sends it through its channel, then reports the outcome. */
export interface OutgoingMessage {
  /**
   * Unique per hand-out: `<submission>.<contact index>.<hand-out>`; report outcomes under it. Give it
   * to a provider that deduplicates as the idempotency key: a contact that was in flight at a
   * restart goes again under the same id (the same hand-out, repeated), so a provider that
   * deduplicates sends it once; a retry or a failover is a new hand-out with a new id.
   */
  readonly messageId: string;
  /**
   * The contact's id, the same over every hand-out and retry of it: `<submission>.<contact index>`.
   * Count and deduplicate contacts by it (a retried contact is one contact).
   */
  readonly contactId: string;
  readonly submissionId: string;
  /** Position of the contact in its submission's `contacts`. */
  readonly index: number;
  readonly businessId: number;
  readonly typeId: number;
  readonly campaignId: number | undefined;
  readonly queueId: number | undefined;
  readonly botId: number | undefined;
  /** The host's contact object, as submitted. */
  readonly contact: SubmissionContact;
  /** The sending number chosen. */
  readonly phone: string;
  /** The template chosen. */
  readonly templateId: number;
  /** The template text with the contact's values filled in. */
  readonly text: string;
  /**
   * Clock time it was handed out, which is when the number's capacity was charged for it. The
   * windows hold over these times: an audit of sends checks them, not when a send left the host.
   */
  readonly handedOutAt: number;
  /** True for a contact retry (spec 6.3 `is_retry`). */
  readonly isRetry: boolean;
  /** Zero-based index of the retry, null on the first try (spec 6.3 `retry_index`). */
  readonly retryIndex: number | null;
  /**
   * The submission's `maxRetries` and `retryInterval` (ms): what a host needs to act on a failure
   * the provider reports later (a status webhook) with the same rules as the engine's.
   */
  readonly maxRetries: number;
  readonly retryInterval: number;
}

/** What the channel said of a message. */
export type SendOutcome =
  | { readonly status: 'sent' }
  | {
      readonly status: 'failed';
      /** The channel's numeric error code; looked up in the error-to-action table. */
      readonly code?: number;
      /** Free text kept in the contact's outcome (e.g. the channel's message). */
      readonly reason?: string;
      /** Overrides the table's action for this failure. */
      readonly action?: FailureAction;
      /**
       * The provider refused the request (an error answer to the send, a connection never made):
       * nothing went, so the hand-out's charge goes back to the number's windows. A failure the
       * provider reports later (a status webhook) is not a refusal: it counted the message.
       * @default false
       */
      readonly refused?: boolean;
    }
  | { readonly status: 'expired' };

/**
 * What `engine.report` did with an outcome.
 *
 * Effects (`ok: true`), for the hand-out in flight:
 * - `sent`, `failed`, `expired`: the contact's final outcome (also for a late "sent" of an earlier
 *   hand-out, which settles a contact queued or waiting again);
 * - `retry-scheduled`: a contact retry, due at `retryAt`;
 * - `failover`: the template or number left the pools; the contact goes again on another pair;
 * - `requeued`: the number was throttled; the contact goes again.
 *
 * Refusals (`ok: false`) change nothing:
 * - `unknown-message`: not a message id this engine handed out (malformed, a submission or contact
 *   that never existed, a hand-out not made yet);
 * - `already-final`: the contact already has its final outcome, or its whole submission finished
 *   (also after a restart, for any submission the engine has numbered);
 * - `stale-hand-out`: a failure or expiry of an earlier hand-out of a contact that is queued, waiting
 *   or in flight again; the newer hand-out decides.
 */
export type ReportResult =
  | { readonly ok: true; readonly effect: 'sent' | 'failed' | 'expired' | 'retry-scheduled' | 'failover' | 'requeued'; readonly retryAt?: number }
  | { readonly ok: false; readonly reason: 'unknown-message' | 'already-final' | 'stale-hand-out' };

/** How a contact ended. */
export type TerminalState = 'sent' | 'failed' | 'expired' | 'rejected';

/** A contact's terminal outcome, reported once by `engine.takeOutcomes()`. */
export interface ContactOutcome {
  readonly submissionId: string;
  readonly index: number;
  /** The contact's id, as on its messages (`<submission>.<contact index>`). */
  readonly contactId: string;
  readonly contact: SubmissionContact;
  readonly campaignId: number | undefined;
  readonly state: TerminalState;
  /**
   * The attempt the outcome ends: null for the first try, k for the retry of index k (also when
   * that retry expired or was dropped before it went out).
   */
  readonly retryIndex: number | null;
  /** The last message id handed out for the contact, if any. */
  readonly messageId: string | undefined;
  /** For `failed`: the reason string (spec 7.1 form when the code is known); for `rejected`: the rejection reason. */
  readonly reason?: string;
  readonly code?: number;
  /** Clock time the outcome was reached. */
  readonly at: number;
}

/** Contacts per state; the states always add up to `submitted`. */
export interface DispatchCounts {
  readonly submitted: number;
  /** Waiting in a queue for capacity. */
  readonly queued: number;
  /** Failed and waiting for their retry time. */
  readonly waitingRetry: number;
  /** Handed out by `poll`, outcome not reported yet. */
  readonly inFlight: number;
  readonly sent: number;
  readonly failed: number;
  readonly expired: number;
  readonly rejected: number;
}

/**
 * What holds a pool's queue back: its numbers' windows, no active template, no active number, or
 * the messaging limit of a portfolio its numbers share (a new recipient finds no room).
 */
export type Blocker = 'no-capacity' | 'no-template' | 'no-number' | 'portfolio-limit';

/** State of one submission. */
export interface SubmissionStatus extends DispatchCounts {
  readonly submissionId: string;
  /** Every contact has its final outcome; the counts will not change again. */
  readonly finished: boolean;
  /** Why its queued contacts are not moving, if they are not. */
  readonly blocked?: Blocker;
  /** When they may move again, when known. */
  readonly retryAt?: number;
}

/** Contacts of one (business, template type) and what holds them back. */
export interface QueueStatus {
  /** Contacts waiting for capacity. */
  readonly queued: number;
  /** Contacts that failed and wait for their retry time. */
  readonly waitingRetry: number;
  /** Why queued contacts are not moving, if they are not. */
  readonly blocked?: Blocker;
  /** When they may move again, when known. */
  readonly retryAt?: number;
}

/**
 * A broken invariant of the dispatch queue found at run time: a bug in sendpool. The queue repairs
 * what it can (recounts) and goes on rather than throwing inside `poll`; report it.
 */
export interface DispatchAnomaly {
  /** Clock time it was found. */
  readonly at: number;
  readonly message: string;
}

/** Options of `engine.poll`. */
export interface PollOptions {
  /** Most messages handed out by this call. @default 10000 */
  readonly limit?: number;
}

export type { FailureAction, SubmissionContact };
