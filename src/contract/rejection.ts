import type { Problem } from '../core/problems.js';

/**
 * Why one contact or SMS item of an otherwise valid request is not sent. The names match the
 * campaign statistics' problem counters where one exists (`count_invalid_phone`,
 * `count_blocked`, `count_duplicated`, `count_already_sent`, spec 6.4, 7.3). `blocked`: the phone is
 * on the company's blocklist; `already_sent`: the business already took the phone for the template
 * type within the server's `alreadySentWindowMs` (both the server's: the contract's parser knows
 * neither). `invalid_data`: the contact breaks the contract in a field none of the others names
 * (`contract`, `data`, a field the contract does not know) or is not an object at all; counted,
 * as `invalid_document` and `invalid_variables` are, in the statistics' `count_invalid_data`.
 */
export type RejectionReason = 'invalid_phone' | 'invalid_document' | 'invalid_variables' | 'invalid_data' | 'blocked' | 'duplicated' | 'already_sent';

/** Reasons, in the order they are checked: a contact is rejected for the first that applies. */
export const REJECTION_REASONS: readonly RejectionReason[] = ['invalid_phone', 'invalid_document', 'invalid_variables', 'invalid_data', 'blocked', 'duplicated', 'already_sent'];

/**
 * Most problems a parser lists for one contact or SMS item; the rest are counted in
 * {@link Rejection.problemCount}. A contact can hold a hundred bad template values, and ten thousand
 * such contacts must not cost a million problems.
 */
export const MAX_PROBLEMS_PER_REJECTION = 5;

/** One contact (or SMS item) not sent, with the problems found in it. */
export interface Rejection<Reason extends RejectionReason = RejectionReason> {
  /** Position in `contacts` (or in the SMS array). */
  readonly index: number;
  readonly reason: Reason;
  /**
   * Each problem with its JSON path, e.g. `$.contacts[3].phone_number`: the first
   * {@link MAX_PROBLEMS_PER_REJECTION} found, in field order.
   */
  readonly problems: readonly Problem[];
  /** Problems found in it, when more than `problems` lists. @default problems.length */
  readonly problemCount?: number;
  /** For `duplicated`: index of the earlier item with the same phone, when in the same request. */
  readonly duplicateOf?: number;
}

/** Set-like view of phones already submitted in the campaign by earlier requests. */
export interface PhoneSet {
  has(phone: string): boolean;
}
