/**
 * The messenger feature: GET /messenger/businesses/ and POST /messenger/messages/ (spec 4.1, 4.2),
 * as a Fastify plugin (encapsulated: it adds routes, no hooks).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { notWrittenBecause } from '../lib/not-written.js';
import { BusinessesResponseSchema } from '../../contract/business-schema.js';
import { ErrorBodySchema, SendResponseSchema } from '../../contract/response-schemas.js';
import { SendRequestSchema } from '../../contract/send-request-schema.js';
import type { ParsedSendRequest } from '../../contract/parse-send-request.js';
import type { SendIntent } from '../ports/backend.js';
import type { ServerContext } from '../context.js';
import { errorResponse } from '../../contract/responses.js';
import { answer } from '../http-errors.js';
import { idempotent } from './idempotent.js';
import { intakeSend, type IntakeAnswer } from '../intake.js';
import { parseSendInSlices } from '../intake-parse.js';
import { intakeRefusal } from '../intake-refusal.js';

export interface MessengerOptions {
  /** The intake reads and writes most of the server: the whole context. */
  readonly ctx: ServerContext;
}

export const messengerFeature: FastifyPluginAsync<MessengerOptions> = async (app, { ctx }) => {
  app.get('/messenger/businesses/', { schema: { response: { 200: BusinessesResponseSchema } } }, async (request) => {
    // On Redis the numbers' windows are the fleet's: reading output asks Redis again for views older
    // than a second; wait for those answers, then read it.
    const refresh = ctx.refreshOutput;
    if (refresh) {
      ctx.engine.businesses();
      await refresh();
    }
    // Only the key's company's businesses; output is computed at this moment.
    return ctx.engine.businesses().filter((b) => ctx.tenants.owns(request.companyId, b.id));
  });

  app.post('/messenger/messages/', { schema: { body: SendRequestSchema, response: { 202: SendResponseSchema, '4xx': ErrorBodySchema } } }, async (request, reply) => {
    // On Redis, nothing is promised that cannot be queued now (a reset being handled, Redis away): 503.
    const refused = intakeRefusal(ctx.backend.refusal());
    if (refused && !ctx.closing) return answer(reply, refused.answer, refused.headers);
    // An Idempotency-Key: a retry of a request answered 202 gets that answer again (idempotent.ts).
    return idempotent(ctx, request, reply, '', (key) => send(ctx, request, key));
  });
};

/**
 * A send request, whole or not at all with respect to this instance: a 202 leaves only once its
 * contacts (and the answer kept under its idempotency key) are written; without one, the phones it
 * held are given back. On Redis a request another instance voided meanwhile (it took over its
 * phones, the fence: shared-phones.ts) is answered 503 and nothing of it is written.
 */
async function send(ctx: ServerContext, request: FastifyRequest, key: string | undefined): Promise<IntakeAnswer> {
  const { companyId } = request;
  const { backend } = ctx;
  // A large body is checked in slices first (other requests are answered meanwhile); the bound
  // and the submission then run in one piece in intakeSend.
  const prepared = ctx.closing ? undefined : await parseSendInSlices(ctx, companyId, request.body);
  const parsed = prepared?.parsed;
  // What the intake reads made ready, and the request's phones held (a fleet's shared sets).
  const hold = parsed?.ok ? await backend.hold(sendIntent(companyId, request.id, parsed.value)) : undefined;
  const { out: result, write } = await backend.writeRequest(
    request.id,
    () => intakeSend(ctx, companyId, request.body, request.id, prepared, hold?.taken, hold?.sent),
    (out) => (key === undefined ? undefined : { companyId, key, answer: out.answer }),
  );
  // No 202: the phones it held are the campaign's again.
  if (hold !== undefined && (write.kind !== 'written' || result.answer.status !== 202)) await hold.release();
  if (write.kind === 'failed')
    return { answer: errorResponse('unavailable', [], `The server could not write the request durably${notWrittenBecause(write.error)}; nothing was accepted. Send it again later.`) };
  if (write.kind === 'voided')
    return {
      answer: errorResponse('unavailable', [], 'Another request took this one over before it was written (a retry of it, sent to another instance); nothing of this one was accepted.'),
      headers: { 'retry-after': '1' },
    };
  return result;
}

/** What the backend holds for a parsed request before its intake. */
function sendIntent(companyId: number, requestId: string, parsed: ParsedSendRequest): SendIntent {
  const { request } = parsed;
  return {
    companyId,
    requestId,
    businessId: request.business_id,
    typeId: request.template_type_id,
    campaignId: request.campaign_id,
    contactCount: request.contacts.length,
    phones: parsed.accepted.map((a) => a.contact.phone_number),
  };
}
