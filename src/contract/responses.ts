/**
 * Builders of the response bodies and HTTP statuses of the contract. Pure: the request id comes
 * from the host (ids are randomness, and the contract has none).
 */
import type { Problem } from '../core/problems.js';
import type { ParsedSendRequest } from './parse-send-request.js';
import type { ParsedSmsBatch } from './parse-sms-batch.js';
import { problemTotal } from './problem-cap.js';
import { MAX_PROBLEMS_PER_REJECTION, REJECTION_REASONS, type Rejection, type RejectionReason } from './rejection.js';
import { type ErrorBody, type ErrorCode, MAX_PROBLEM_TEXT, MAX_REJECTIONS_IN_BODY, type RejectionBody, SMS_REJECTION_REASONS, type SendResponse, type SmsResponse } from './response-schemas.js';

/** The HTTP status of each error code. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_json: 400,
  bad_request: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  body_too_large: 413,
  unsupported_media_type: 415,
  invalid_body: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  unavailable: 503,
  invalid_idempotency_key: 400,
  idempotency_key_reused: 422,
  request_in_progress: 409,
};

/** Statuses of the successful answers. */
export const SUCCESS_STATUS = {
  businesses: 200,
  send: 202,
  sms: 202,
  config: 200,
} as const;

const DEFAULT_MESSAGES: Readonly<Record<ErrorCode, string>> = {
  invalid_json: 'The body is not valid JSON.',
  bad_request: 'The request is not valid HTTP/1.1.',
  missing_api_key: 'The x-api-key-id header is missing.',
  invalid_api_key: 'The x-api-key-id header does not carry a valid API key.',
  not_found: 'No such endpoint.',
  method_not_allowed: 'Method not allowed on this endpoint.',
  request_timeout: 'The request did not arrive in time.',
  body_too_large: 'The body is larger than the limit.',
  unsupported_media_type: 'The body must be application/json.',
  invalid_body: 'The body does not follow the contract.',
  rate_limited: 'Too many requests.',
  headers_too_large: 'The request headers are larger than the limit.',
  internal_error: 'Internal error.',
  unavailable: 'Service unavailable.',
  invalid_idempotency_key: 'The Idempotency-Key header is not a valid key.',
  idempotency_key_reused: 'The Idempotency-Key was used with another body.',
  request_in_progress: 'A request with this Idempotency-Key is still in progress.',
};

/** Most problems listed in an error body; `problem_count` carries the total. */
export const MAX_PROBLEMS_IN_BODY = 100;

/** An HTTP answer: status and JSON body. */
export interface HttpAnswer<B> {
  readonly status: number;
  readonly body: B;
}

/** `text` cut to {@link MAX_PROBLEM_TEXT} characters (ending in `…`), never inside a surrogate pair. */
function clip(text: string): string {
  if (text.length <= MAX_PROBLEM_TEXT) return text;
  let end = MAX_PROBLEM_TEXT - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

function problemBody({ path, expected, actual, message }: Problem): Problem {
  return { path: clip(path), expected: clip(expected), actual: clip(actual), message: clip(message) };
}

/**
 * The error answer for a code, with the problems when there are some: at most
 * {@link MAX_PROBLEMS_IN_BODY}, each text at most {@link MAX_PROBLEM_TEXT} characters, and
 * `problem_count` with the total (also those a parser counted without listing them).
 */
export function errorResponse(code: ErrorCode, problems: readonly Problem[] = [], message?: string): HttpAnswer<ErrorBody> {
  const shown = problems.slice(0, MAX_PROBLEMS_IN_BODY).map(problemBody);
  const count = problemTotal(problems);
  const first = shown[0]?.message ?? '';
  const text = message ?? (count > 0 ? `${DEFAULT_MESSAGES[code]} ${count} problem${count === 1 ? '' : 's'}; first: ${first}` : DEFAULT_MESSAGES[code]);
  return {
    status: ERROR_STATUS[code],
    body: { error: { code, message: text, ...(count > 0 ? { problems: shown, problem_count: count } : {}) } },
  };
}

function rejectionBody(rejection: Rejection): RejectionBody {
  const listed = rejection.problems.slice(0, MAX_PROBLEMS_PER_REJECTION);
  return {
    index: rejection.index,
    reason: rejection.reason,
    message: clip(listed[0]?.message ?? rejection.reason),
    problems: listed.map(problemBody),
    problem_count: Math.max(rejection.problemCount ?? 0, rejection.problems.length, 1),
    ...(rejection.duplicateOf === undefined ? {} : { duplicate_of: rejection.duplicateOf }),
  };
}

/**
 * The rejection part of a send or SMS answer: the first {@link MAX_REJECTIONS_IN_BODY} in full
 * (their problems bounded too), whether more were left out, and the count per reason of all of
 * them. Ten thousand rejected contacts answer in a few dozen kilobytes, not ten megabytes.
 */
function rejectionsPart<R extends RejectionReason>(rejected: readonly Rejection[], reasons: readonly R[]) {
  const counts = Object.fromEntries(reasons.map((r) => [r, 0])) as Record<R, number>;
  for (const r of rejected) if (r.reason in counts) counts[r.reason as R]++;
  return {
    rejections: rejected.slice(0, MAX_REJECTIONS_IN_BODY).map(rejectionBody),
    rejections_truncated: rejected.length > MAX_REJECTIONS_IN_BODY,
    rejection_counts: counts,
  };
}

/** The 202 answer of POST /messenger/messages/. `requestId` is a UUID v4 made by the host. */
export function sendResponse(parsed: ParsedSendRequest, requestId: string): HttpAnswer<SendResponse> {
  return {
    status: SUCCESS_STATUS.send,
    body: {
      request_id: requestId,
      accepted: parsed.accepted.length,
      rejected: parsed.rejected.length,
      ...rejectionsPart(parsed.rejected, REJECTION_REASONS),
    },
  };
}

/** The 202 answer of POST /sms/messages/. */
export function smsResponse(parsed: ParsedSmsBatch, requestId: string): HttpAnswer<SmsResponse> {
  let parts = 0;
  for (const a of parsed.accepted) parts += a.size.parts;
  return {
    status: SUCCESS_STATUS.sms,
    body: {
      request_id: requestId,
      accepted: parsed.accepted.length,
      rejected: parsed.rejected.length,
      parts,
      messages: parsed.accepted.map((a) => ({ index: a.index, encoding: a.size.encoding, parts: a.size.parts })),
      ...rejectionsPart(parsed.rejected, SMS_REJECTION_REASONS),
    },
  };
}
