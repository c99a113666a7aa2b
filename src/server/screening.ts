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

/** A screening done a few contacts at a time ({@link startScreening}). */
export interface Screening {
  /** Screens up to `count` more contacts; true once every contact is screened. */
  step(count: number): boolean;
  /** The request with the screened contacts moved to its rejections (call once every step is done). */
  result(): ParsedSendRequest;
}

/**
 * Screens a request's accepted contacts in steps, so a large request can be screened in slices
 * (intake-parse.ts) while other requests are answered; the sets are read as they are at each step.
 * `sent`: the `already_sent` check. @default none (off)
 */
export function startScreening(parsed: ParsedSendRequest, blocked: PhoneSet, taken: PhoneSet, sent?: SentScreen): Screening {
  let screened: Rejection[] | undefined;
  const accepted: AcceptedContact[] = [];
  const all = parsed.accepted;
  let next = 0;
  return {
    step(count) {
      const end = Math.min(all.length, next + count);
      for (; next < end; next++) {
        const a = all[next]!;
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
      return next === all.length;
    },
    result() {
      if (screened === undefined) return parsed;
      // Rejections stay in request order.
      const rejected = [...parsed.rejected, ...screened].sort((x, y) => x.index - y.index);
      return { ...parsed, accepted, rejected };
    },
  };
}
