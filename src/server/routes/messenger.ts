/** GET /messenger/businesses/ and POST /messenger/messages/ (spec 4.1, 4.2). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notWrittenBecause } from './written.js';
import { BusinessesResponseSchema } from '../../contract/business-schema.js';
import { ErrorBodySchema, SendResponseSchema } from '../../contract/response-schemas.js';
import { SendRequestSchema } from '../../contract/send-request-schema.js';
import type { PhoneSet } from '../../contract/rejection.js';
import type { SentScope } from '../redis/shared-phones.js';
import type { ServerContext } from '../context.js';
import { errorResponse } from '../../contract/responses.js';
import { answer } from '../http-errors.js';
import { idempotent } from './idempotent.js';
import { intakeSend, type IntakeAnswer } from '../intake.js';
import { parseSendInSlices } from '../intake-parse.js';
import { intakeRefusal } from '../redis/reset.js';

export function messengerRoutes(app: FastifyInstance, ctx: ServerContext): void {
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
    const refused = intakeRefusal(ctx.redis);
    if (refused && !ctx.closing) return answer(reply, refused.answer, refused.headers);
    // An Idempotency-Key: a retry of a request answered 202 gets that answer again (idempotent.ts).
    return idempotent(ctx, request, reply, '', (key) => send(ctx, request, key));
  });
}

/**
 * A send request, whole or not at all with respect to this instance: a 202 leaves only once its
 * contacts (and the answer kept under its idempotency key) are written; without one, the phones it
 * reserved are given back. On Redis a request another instance voided meanwhile (it took over
 * its phones, the fence: shared-phones.ts) is answered 503 and nothing of it is written.
 */
async function send(ctx: ServerContext, request: FastifyRequest, key: string | undefined): Promise<IntakeAnswer> {
  const { companyId } = request;
  // A large body is checked in slices first (other requests are answered meanwhile); the bound
  // and the submission then run in one piece in intakeSend.
  const prepared = ctx.closing ? undefined : await parseSendInSlices(ctx, companyId, request.body);
  const parsed = prepared?.parsed;
  let taken: PhoneSet | undefined;
  let sent: PhoneSet | undefined;
  let reserved: string[] = [];
  let campaignId = 0;
  let scope: SentScope | undefined;
  // On Redis: enough contact ids reserved from the shared counter before the intake runs.
  if (ctx.redis && parsed?.ok) {
    await ctx.contactIds.ensure(parsed.value.request.contacts.length);
    // Its ENQUEUED notifications go to the company's shared configuration.
    await ctx.redis.webhooks.ensure([companyId]);
    // Contacts are screened against the fleet's blocklist (loaded once at start).
    await ctx.redis.blocklist.ready();
    // A phone goes once per campaign, and once per business and type within the window
    // (already_sent), fleet-wide: the request reserves its phones first, taking over those of
    // requests whose instance died before their 202.
    const { request: body } = parsed.value;
    const blocked = ctx.blocklist.view(companyId);
    reserved = parsed.value.accepted.map((a) => a.contact.phone_number).filter((p) => !blocked.has(p));
    scope = ctx.sentPhones.enabled ? { businessId: body.business_id, typeId: body.template_type_id, now: ctx.clock.now() } : undefined;
    ({ taken, sent } = await ctx.redis.phones.reserveTakingOver(companyId, body.campaign_id, request.id, reserved, scope));
    campaignId = body.campaign_id;
  }
  let result: IntakeAnswer;
  let written = true;
  let because = '';
  let voided = false;
  if (ctx.redis) {
    // What the intake stages besides chunks (its ENQUEUED run, its admissions) is the request's
    // part: written with its commit mark, or not at all if it is voided.
    const redis = ctx.redis;
    const captured = redis.persistence.capture(() => intakeSend(ctx, companyId, request.body, request.id, prepared, taken, sent));
    result = captured.value;
    if (result.answer.status === 202) {
      redis.persistence.stageRequest(request.id, captured, key === undefined ? undefined : { key: redis.idempotency.recordKey(companyId, key), answer: JSON.stringify(result.answer) });
      try {
        voided = !(await redis.persistence.commitRequest(request.id));
      } catch (e) {
        written = false;
        because = notWrittenBecause(e);
      }
    }
  } else {
    result = intakeSend(ctx, companyId, request.body, request.id, prepared, taken, sent);
    if (key !== undefined && result.answer.status === 202) ctx.idempotency.keep(companyId, key, request.id, result.answer, ctx.clock.now());
    // A 202 is a promise: it leaves only once the accepted contacts are written (durable server),
    // with the answer kept under its key in the same transaction.
    if (ctx.durability && result.answer.status === 202) {
      try {
        await ctx.durability.commit();
        if (key !== undefined) ctx.idempotency.settle(companyId, key, request.id);
      } catch (e) {
        written = false;
        because = notWrittenBecause(e);
      }
    }
  }
  // No 202: the phones it reserved are the campaign's again.
  if (ctx.redis && reserved.length > 0 && (!written || voided || result.answer.status !== 202)) {
    // Best effort: phones not given back now are taken over as orphans once their hold lapses.
    await ctx.redis.phones
      .release(companyId, campaignId, request.id, reserved, scope)
      .catch((e: unknown) => request.log.warn({ err: e, campaignId, phones: reserved.length }, 'campaign phones of a request without a 202 not given back: taken over once their hold lapses'));
  }
  if (!written) return { answer: errorResponse('unavailable', [], `The server could not write the request durably${because}; nothing was accepted. Send it again later.`) };
  if (voided)
    return {
      answer: errorResponse('unavailable', [], 'Another request took this one over before it was written (a retry of it, sent to another instance); nothing of this one was accepted.'),
      headers: { 'retry-after': '1' },
    };
  return result;
}
