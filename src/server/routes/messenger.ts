/** GET /messenger/businesses/ and POST /messenger/messages/ (spec 4.1, 4.2). */
import type { FastifyInstance } from 'fastify';
import { notWrittenBecause } from './written.js';
import { BusinessesResponseSchema } from '../../contract/business-schema.js';
import { ErrorBodySchema, SendResponseSchema } from '../../contract/response-schemas.js';
import { SendRequestSchema } from '../../contract/send-request-schema.js';
import type { PhoneSet } from '../../contract/rejection.js';
import type { SentScope } from '../redis/shared-phones.js';
import type { ServerContext } from '../context.js';
import { errorResponse } from '../../contract/responses.js';
import { answer } from '../http-errors.js';
import { intakeSend } from '../intake.js';
import { parseSendInSlices } from '../intake-parse.js';

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
    // A large body is checked in slices first (other requests are answered meanwhile); the bound
    // and the submission then run in one piece in intakeSend.
    const parsed = ctx.closing ? undefined : await parseSendInSlices(ctx, request.companyId, request.body);
    let taken: PhoneSet | undefined;
    let sent: PhoneSet | undefined;
    let reserved: string[] = [];
    let campaignId = 0;
    let scope: SentScope | undefined;
    // On Redis: enough contact ids reserved from the shared counter before the intake runs.
    if (ctx.redis && parsed?.ok) {
      await ctx.redis.ids.ensure(parsed.value.request.contacts.length);
      // Its ENQUEUED notifications go to the company's shared configuration.
      await ctx.redis.webhooks.ensure([request.companyId]);
      // Contacts are screened against the fleet's blocklist (loaded once at start).
      await ctx.redis.blocklist.ready();
      // A phone goes once per campaign, and once per business and type within the window
      // (already_sent), fleet-wide: the request reserves its phones first.
      const { request: body } = parsed.value;
      const blocked = ctx.blocklist.view(request.companyId);
      reserved = parsed.value.accepted.map((a) => a.contact.phone_number).filter((p) => !blocked.has(p));
      scope = ctx.sentPhones.enabled ? { businessId: body.business_id, typeId: body.template_type_id, now: ctx.clock.now() } : undefined;
      ({ taken, sent } = await ctx.redis.phones.reserve(request.companyId, body.campaign_id, request.id, reserved, scope));
      campaignId = body.campaign_id;
    }
    const result = intakeSend(ctx, request.companyId, request.body, request.id, parsed, taken, sent);
    let written = true;
    let because = '';
    // A 202 is a promise: it leaves only once the accepted contacts are written (durable server).
    if (ctx.durability && result.answer.status === 202) {
      try {
        await ctx.durability.commit();
      } catch (e) {
        written = false;
        because = notWrittenBecause(e);
      }
    }
    // No 202: the phones it reserved are the campaign's again.
    if (ctx.redis && reserved.length > 0 && (!written || result.answer.status !== 202)) {
      // Best effort: phones not given back now are taken over as orphans once their hold lapses.
      await ctx.redis.phones
        .release(request.companyId, campaignId, request.id, reserved, scope)
        .catch((e: unknown) => request.log.warn({ err: e, campaignId, phones: reserved.length }, 'campaign phones of a request without a 202 not given back: taken over once their hold lapses'));
    }
    if (!written) return answer(reply, errorResponse('unavailable', [], `The server could not write the request durably${because}; nothing was accepted. Send it again later.`));
    return answer(reply, result.answer, result.headers);
  });
}
