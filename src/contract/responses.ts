/**
 * Builders of the response bodies and HTTP statuses of the contract. Pure: the request id comes
 * from the host (ids are randomness, and the contract has none).
 */
import type { Problem } from '../core/problems.js';
import type { ParsedSendRequest } from './parse-send-request.js';
import type { ParsedSmsBatch } from './parse-sms-batch.js';
import type { Rejection } from './rejection.js';
import type { ErrorBody, ErrorCode, RejectionBody, SendResponse, SmsResponse } from './response-schemas.js';

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
};

/** Most problems listed in an error body; `problem_count` carries the total. */
export const MAX_PROBLEMS_IN_BODY = 100;

/** An HTTP answer: status and JSON body. */
export interface HttpAnswer<B> {
  readonly status: number;
  readonly body: B;
}

/** The error answer for a code, with the problems (capped at 100) when there are some. */
export function errorResponse(code: ErrorCode, problems: readonly Problem[] = [], message?: string): HttpAnswer<ErrorBody> {
  const shown = problems.slice(0, MAX_PROBLEMS_IN_BODY).map(({ path, expected, actual, message: m }) => ({ path, expected, actual, message: m }));
  const count = problems.length;
  const text = message ?? (count > 0 ? `${DEFAULT_MESSAGES[code]} ${count} problem${count === 1 ? '' : 's'}; first: ${problems[0]?.message ?? ''}` : DEFAULT_MESSAGES[code]);
  return {
    status: ERROR_STATUS[code],
    body: { error: { code, message: text, ...(count > 0 ? { problems: shown, problem_count: count } : {}) } },
  };
}

function rejectionBody(rejection: Rejection): RejectionBody {
  return {
    index: rejection.index,
    reason: rejection.reason,
    message: rejection.problems[0]?.message ?? rejection.reason,
    problems: rejection.problems.map(({ path, expected, actual, message }) => ({ path, expected, actual, message })),
    ...(rejection.duplicateOf === undefined ? {} : { duplicate_of: rejection.duplicateOf }),
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
      rejections: parsed.rejected.map(rejectionBody),
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
      rejections: parsed.rejected.map(rejectionBody),
    },
  };
}
