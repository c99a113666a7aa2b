/**
 * Response bodies the spec leaves "not shown" (4.2, 4.3, 4.4, 7.4), decided in
 * docs/decisions.md (the HTTP contract): a send answers 202 with the request id and, per contact or item, what
 * was accepted and why the others were not; every error answers with one error body shape.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_PROBLEMS_PER_REJECTION, REJECTION_REASONS, type RejectionReason } from './rejection.js';

const Count = Type.Integer({ minimum: 0 });
const Reason = Type.Union(REJECTION_REASONS.map((r) => Type.Literal(r)));

/** Most rejections listed in a send or SMS answer; `rejected` has the total, `rejection_counts` the total per reason. */
export const MAX_REJECTIONS_IN_BODY = 100;

/** Reasons an SMS item can be rejected for (no template, so no `invalid_variables`). */
export const SMS_REJECTION_REASONS = ['invalid_phone', 'invalid_document', 'duplicated'] as const satisfies readonly RejectionReason[];

/** `{ reason: count }` over every reason of the list, zeros included. */
function countsOf<R extends string>(reasons: readonly R[], title: string) {
  const properties = Object.fromEntries(reasons.map((r) => [r, Count])) as Record<R, typeof Count>;
  return Type.Object(properties, { title, description: 'rejected items per reason, all of them (also those not listed)' });
}

/**
 * Longest text of a problem in an answer (each of path, expected, actual, message); a longer one is
 * cut and ends in `…`. A field name of a megabyte would otherwise come back three times.
 */
export const MAX_PROBLEM_TEXT = 512;

const ProblemText = (description?: string) => Type.String({ maxLength: MAX_PROBLEM_TEXT, ...(description === undefined ? {} : { description }) });

/** A problem as the error body and rejections carry it (src/core/problems.ts). */
export const ProblemSchema = Type.Object(
  {
    path: ProblemText('JSON path, e.g. $.contacts[3].phone_number'),
    expected: ProblemText(),
    actual: ProblemText(),
    message: ProblemText(),
  },
  { title: 'Problem' },
);

/** One contact or SMS item not sent. */
export const RejectionBodySchema = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: 'position in contacts (or in the SMS array)' }),
    reason: Reason,
    message: Type.String({ description: 'the first problem, in words' }),
    problems: Type.Array(ProblemSchema, { description: `the first ${MAX_PROBLEMS_PER_REJECTION} problems found; problem_count has the total` }),
    problem_count: Type.Integer({ minimum: 1, description: 'problems found in this contact or item' }),
    duplicate_of: Type.Optional(Type.Integer({ minimum: 0, description: 'index of the earlier item with the same phone' })),
  },
  { title: 'Rejection' },
);
export type RejectionBody = Static<typeof RejectionBodySchema>;

/** 202 answer of POST /messenger/messages/. */
export const SendResponseSchema = Type.Object(
  {
    request_id: Type.String({ description: 'UUID v4; comes back as request_id in HSM and attendance webhooks' }),
    accepted: Count,
    rejected: Count,
    rejections: Type.Array(RejectionBodySchema, { description: `the first ${MAX_REJECTIONS_IN_BODY} rejected contacts, in request order; rejected has the total` }),
    rejections_truncated: Type.Boolean({ description: 'true when rejections lists fewer than rejected' }),
    rejection_counts: countsOf(REJECTION_REASONS, 'RejectionCounts'),
  },
  { title: 'SendResponse' },
);
export type SendResponse = Static<typeof SendResponseSchema>;

/** One accepted SMS item in the 202 answer of POST /sms/messages/. */
export const SmsAcceptedBodySchema = Type.Object(
  {
    index: Type.Integer({ minimum: 0 }),
    encoding: Type.Union([Type.Literal('GSM-7'), Type.Literal('UCS-2')]),
    parts: Type.Integer({ minimum: 1 }),
  },
  { title: 'SmsAccepted' },
);

/** 202 answer of POST /sms/messages/. */
export const SmsResponseSchema = Type.Object(
  {
    request_id: Type.String({ description: 'UUID v4' }),
    accepted: Count,
    rejected: Count,
    parts: Type.Integer({ minimum: 0, description: 'total parts of the accepted items' }),
    messages: Type.Array(SmsAcceptedBodySchema, { description: 'every accepted item' }),
    rejections: Type.Array(RejectionBodySchema, { description: `the first ${MAX_REJECTIONS_IN_BODY} rejected items, in request order; rejected has the total` }),
    rejections_truncated: Type.Boolean({ description: 'true when rejections lists fewer than rejected' }),
    rejection_counts: countsOf(SMS_REJECTION_REASONS, 'SmsRejectionCounts'),
  },
  { title: 'SmsResponse' },
);
export type SmsResponse = Static<typeof SmsResponseSchema>;

/** Machine-readable error codes of the error body, each with one HTTP status (see `ERROR_STATUS`). */
export const ERROR_CODES = [
  'invalid_json',
  'bad_request',
  'missing_api_key',
  'invalid_api_key',
  'not_found',
  'method_not_allowed',
  'request_timeout',
  'body_too_large',
  'unsupported_media_type',
  'invalid_body',
  'rate_limited',
  'headers_too_large',
  'internal_error',
  'unavailable',
  'invalid_idempotency_key',
  'idempotency_key_reused',
  'request_in_progress',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Body of every 4xx and 5xx answer. */
export const ErrorBodySchema = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))),
      message: Type.String(),
      problems: Type.Optional(Type.Array(ProblemSchema, { description: 'at most 100; problem_count has the total' })),
      problem_count: Type.Optional(Count),
    }),
  },
  { title: 'ErrorBody' },
);
export type ErrorBody = Static<typeof ErrorBodySchema>;
