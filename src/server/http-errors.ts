/**
 * Every failure answers the contract's error body (`{ error: { code, message, problems? } }`),
 * also those Fastify raises itself (body too large, wrong content type, unknown route), so a
 * client handles all of them in one place.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { Problem } from '../core/problems.js';
import { errorResponse, type HttpAnswer } from '../contract/responses.js';
import type { ErrorCode } from '../contract/response-schemas.js';

/** Sends a contract answer. */
export function answer<B>(reply: FastifyReply, a: HttpAnswer<B>, headers?: Record<string, string>): FastifyReply {
  if (headers) reply.headers(headers);
  return reply.code(a.status).send(a.body);
}

/** Sends the error body of a code. */
export function fail(reply: FastifyReply, code: ErrorCode, problems: readonly Problem[] = [], message?: string): FastifyReply {
  return answer(reply, errorResponse(code, problems, message));
}

const CONTRACT_HTTP = Symbol.for('sendpool.ContractHttpError');

/** An error a content-type parser raises, carrying the contract's code and problems. */
export class ContractHttpError extends Error {
  readonly [CONTRACT_HTTP] = true;
  readonly code: ErrorCode;
  readonly problems: readonly Problem[];

  constructor(code: ErrorCode, problems: readonly Problem[]) {
    super(code);
    this.name = 'ContractHttpError';
    this.code = code;
    this.problems = problems;
  }
}

/** True when `e` is a {@link ContractHttpError}, from this copy of sendpool or another. */
export function isContractHttpError(e: unknown): e is ContractHttpError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[CONTRACT_HTTP] === true;
}

const REQUEST_CLOSED = Symbol.for('sendpool.RequestClosedError');

/** The client went away (the request's response closed) before its body was decoded: nothing is answered. */
export class RequestClosedError extends Error {
  readonly [REQUEST_CLOSED] = true;

  constructor() {
    super('the request closed before its body was decoded');
    this.name = 'RequestClosedError';
  }
}

/** True when `e` is a {@link RequestClosedError}, from this copy of sendpool or another. */
export function isRequestClosedError(e: unknown): e is RequestClosedError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[REQUEST_CLOSED] === true;
}

const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
};

/** Installs the error and not-found handlers. `knownPaths` answer 405 for other methods. */
export function installErrorHandlers(app: FastifyInstance, knownPaths: () => ReadonlyMap<string, readonly string[]>): void {
  app.setErrorHandler((error: FastifyError | ContractHttpError, request, reply) => {
    // Fastify closes the connection after a body it could not take, since the rest of the body may
    // still come; a body read to its end (body-bytes.ts reads one over the limit to its end) leaves
    // nothing behind, so the connection serves the client's next request.
    if (request.raw.complete && reply.getHeader('connection') === 'close') reply.removeHeader('connection');
    if (isContractHttpError(error)) return fail(reply, error.code, error.problems);
    const code = FASTIFY_CODES[error.code ?? ''];
    if (code !== undefined) return fail(reply, code);
    if (error.statusCode === 400) return fail(reply, 'invalid_json', [], error.message);
    if (error.statusCode === 503) return fail(reply, 'unavailable');
    request.log.error({ err: { type: error.name, message: error.message, stack: error.stack } }, 'unhandled error');
    return fail(reply, 'internal_error');
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!.replace(/\/+$/, '') + '/';
    const methods = knownPaths().get(path);
    if (methods && !methods.includes(request.method)) {
      reply.header('allow', methods.join(', '));
      return fail(reply, 'method_not_allowed', [], `Method ${request.method} is not allowed on ${path}; allowed: ${methods.join(', ')}.`);
    }
    return fail(reply, 'not_found', [], `No endpoint ${request.method} ${path}.`);
  });
}
