/**
 * The `Idempotency-Key` header around an intake route (POST /messenger/messages/, POST
 * /sms/messages/; docs/server.md, "Idempotency-Key"): the key checked, a retry of a request
 * answered 202 answered the same again, a key used with another body refused, a key whose first
 * request still runs answered 409; a request that ends without a 202 frees its key.
 *
 * What keeps a 202 under its key is the route's own business, with its commit (idempotency.ts);
 * this is the part the routes share. A route's keys are apart from another's: the same key on
 * both endpoints names two requests.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorResponse } from '../../contract/responses.js';
import type { ServerContext } from '../context.js';
import { answer, fail } from '../http-errors.js';
import { IN_PROGRESS_RETRY_AFTER_S, bodyFingerprint, idempotencyKeyOf } from '../idempotency.js';
import type { IntakeAnswer } from '../intake.js';

/**
 * Runs `run` under the request's `Idempotency-Key`, if any. `scope` sets a route's keys apart from
 * another's ('' for POST /messenger/messages/, whose keys are stored as given); `run` gets the key
 * (scoped) to keep its 202 under, or undefined without one (or while the server closes).
 */
export async function idempotent(
  ctx: Pick<ServerContext, 'closing' | 'backend' | 'clock'>,
  request: FastifyRequest,
  reply: FastifyReply,
  scope: string,
  run: (key: string | undefined) => Promise<IntakeAnswer>,
): Promise<FastifyReply> {
  const header = idempotencyKeyOf(request.headers['idempotency-key']);
  if (header.problem) {
    const { expected, actual } = header.problem;
    return fail(reply, 'invalid_idempotency_key', [{ path: 'headers.idempotency-key', expected, actual, message: `headers.idempotency-key: expected ${expected}, got ${actual}` }]);
  }
  // A space is no key's character: a scoped key never equals a key given as is.
  const key = ctx.closing || header.key === undefined ? undefined : scope === '' ? header.key : `${scope} ${header.key}`;
  const companyId = request.companyId;
  if (key !== undefined) {
    const fingerprint = bodyFingerprint(request.body);
    const begun = await ctx.backend.beginKey(companyId, key, fingerprint, request.id, ctx.clock.now());
    if (begun.kind === 'replay') return answer(reply, begun.answer, { 'idempotent-replayed': 'true' });
    if (begun.kind === 'mismatch')
      return fail(
        reply,
        'idempotency_key_reused',
        [],
        'This Idempotency-Key was used with another body within the last 24 h: send a new key for a new request, or the same body to get the first answer again.',
      );
    if (begun.kind === 'in-progress')
      return answer(reply, errorResponse('request_in_progress', [], 'A request with this Idempotency-Key is still in progress; send it again once it is answered.'), {
        'retry-after': String(IN_PROGRESS_RETRY_AFTER_S),
      });
  }
  // No 202: the key is free again (a retry runs anew), and freed before the answer leaves, so a
  // client that sends the retry at once finds it free (best effort on Redis: backends/redis).
  const free = async (): Promise<void> => {
    if (key !== undefined) await ctx.backend.endKey(companyId, key, request.id);
  };
  let out: IntakeAnswer;
  try {
    out = await run(key);
  } catch (e) {
    await free();
    throw e;
  }
  if (out.answer.status !== 202) await free();
  return answer(reply, out.answer, out.headers);
}
