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
  /** Unique per hand-out: `<submission>.<contact index>.<hand-out>`; report outcomes under it. */
  readonly messageId: string;
  readonly submissionId: string;
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
  /** True for a contact retry (spec 6.3 `is_retry`). */
  readonly isRetry: boolean;
  /** Zero-based index of the retry, null on the first try (spec 6.3 `retry_index`). */
  readonly retryIndex: number | null;
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
    }
  | { readonly status: 'expired' };

/** What `engine.report` did with an outcome. */
export type ReportResult =
  | { readonly ok: true; readonly effect: 'sent' | 'failed' | 'expired' | 'retry-scheduled' | 'failover' | 'requeued'; readonly retryAt?: number }
  | { readonly ok: false; readonly reason: 'unknown-message' | 'already-final' | 'stale-hand-out' };

/** How a contact ended. */
export type TerminalState = 'sent' | 'failed' | 'expired' | 'rejected';

/** A contact's terminal outcome, reported once by `engine.takeOutcomes()`. */
export interface ContactOutcome {
  readonly submissionId: string;
  readonly index: number;
  readonly contact: SubmissionContact;
  readonly campaignId: number | undefined;
  readonly state: TerminalState;
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

/** What holds a pool's queue back. */
export type Blocker = 'no-capacity' | 'no-template' | 'no-number';

/** State of one submission. */
export interface SubmissionStatus extends DispatchCounts {
  readonly submissionId: string;
  /** Why its queued contacts are not moving, if they are not. */
  readonly blocked?: Blocker;
  /** When they may move again, when known. */
  readonly retryAt?: number;
}

/** Options of `engine.poll`. */
export interface PollOptions {
  /** Most messages handed out by this call. @default 10000 */
  readonly limit?: number;
}

export type { FailureAction, SubmissionContact };
