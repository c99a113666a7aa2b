/**
 * What the server knows that the contract's parser does not: a contact whose phone is on the
 * company's blocklist is rejected as `blocked`, one whose phone the campaign already took (an
 * earlier request) as `duplicated`, one whose phone the business took for the template type
 * within `alreadySentWindowMs` (any campaign) as `already_sent`. Done in the same turn as the
 * submission, so two requests taken at once cannot both take a phone.
 */
import { problem } from '../core/problems.js';
import type { AcceptedContact, ParsedSendRequest } from '../contract/parse-send-request.js';
import type { PhoneSet, Rejection } from '../contract/rejection.js';

/** Phones the business took for the request's template type within the window, and the expected value a refusal says. */
export interface SentScreen {
  readonly phones: PhoneSet;
  /** E.g. `a phone business 1 has not sent template type 10 within 24 h`. */
  readonly expected: string;
}

/** JSON path of a contact's phone, built for a rejection only (a string per contact otherwise: garbage under a flood). */
function phonePath(index: number): string {
  return `$.contacts[${index}].phone_number`;
}

/** `sent`: the `already_sent` check. @default none (off) */
export function screenContacts(parsed: ParsedSendRequest, blocked: PhoneSet, taken: PhoneSet, sent?: SentScreen): ParsedSendRequest {
  let screened: Rejection[] | undefined;
  const accepted: AcceptedContact[] = [];
  for (const a of parsed.accepted) {
    const phone = a.contact.phone_number;
    if (blocked.has(phone)) {
      (screened ??= []).push({ index: a.index, reason: 'blocked', problems: [problem(phonePath(a.index), "a phone not on the company's blocklist (the recipient opted out)", phone)] });
    } else if (taken.has(phone)) {
      (screened ??= []).push({
        index: a.index,
        reason: 'duplicated',
        problems: [problem(phonePath(a.index), 'a phone not already in the campaign (sent once, taken by an earlier request)', phone)],
      });
    } else if (sent !== undefined && sent.phones.has(phone)) {
      (screened ??= []).push({ index: a.index, reason: 'already_sent', problems: [problem(phonePath(a.index), sent.expected, phone)] });
    } else accepted.push(a);
  }
  if (screened === undefined) return parsed;
  // Rejections stay in request order.
  const rejected = [...parsed.rejected, ...screened].sort((x, y) => x.index - y.index);
  return { ...parsed, accepted, rejected };
}
