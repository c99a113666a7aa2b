/**
 * The SMS feature: POST /sms/messages/ (spec 4.3): checked, queued, sent; DLR and MO go to the
 * item's URLs. A Fastify plugin (encapsulated: it adds a route, no hooks).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { notWrittenBecause } from '../lib/not-written.js';
import { toSmsSends, type SmsSend } from '../../contract/mapping.js';
import { parseSmsBatch } from '../../contract/parse-sms-batch.js';
import { ErrorBodySchema, SmsResponseSchema } from '../../contract/response-schemas.js';
import { errorResponse, smsResponse, type HttpAnswer } from '../../contract/responses.js';
import { SmsBatchSchema } from '../../contract/sms-schema.js';
import { webhooksPending, type ServerContext } from '../context.js';
import { answer } from '../http-errors.js';
import type { IntakeAnswer } from '../intake.js';
import { idempotent } from './idempotent.js';
import { intakeRefusal } from '../intake-refusal.js';

/** Longest SMS `Retry-After`. */
const MAX_SMS_RETRY_AFTER_S = 3600;
/** SMS `Retry-After` when the gateway answered nothing in the last minute (no pace to go by). */
const UNKNOWN_SMS_RETRY_AFTER_S = 30;

/** What the SMS intake reads and writes of the server. */
export type SmsContext = Pick<ServerContext, 'closing' | 'closedBecause' | 'backend' | 'clock' | 'urlPolicy' | 'limits' | 'sms' | 'outbox' | 'notifier' | 'maxPendingWebhooks' | 'metrics'>;

export interface SmsFeatureOptions {
  readonly ctx: SmsContext;
}

/** Seconds until the gateway has taken `excess` SMS off the queue at its pace of the last minute (1 s to 1 h). */
function smsRetryAfterSeconds(ctx: SmsContext, excess: number): number {
  const seconds = ctx.sms.drainSeconds(excess);
  if (seconds === undefined) return UNKNOWN_SMS_RETRY_AFTER_S;
  return Math.max(1, Math.min(MAX_SMS_RETRY_AFTER_S, Math.ceil(seconds)));
}

export const smsFeature: FastifyPluginAsync<SmsFeatureOptions> = async (app, { ctx }) => {
  app.post('/sms/messages/', { schema: { body: SmsBatchSchema, response: { 202: SmsResponseSchema, '4xx': ErrorBodySchema } } }, async (request, reply) => {
    if (ctx.closing) return answer(reply, errorResponse('unavailable', [], ctx.closedBecause ?? 'The server is shutting down.'));
    const refused = intakeRefusal(ctx.backend.refusal());
    if (refused) return answer(reply, refused.answer, refused.headers);
    const parsed = parseSmsBatch(request.body, {
      urlPolicy: ctx.urlPolicy,
      ...(ctx.limits.maxSmsItems === undefined ? {} : { maxSmsItems: ctx.limits.maxSmsItems }),
    });
    if (!parsed.ok) return answer(reply, errorResponse('invalid_body', parsed.problems));
    const sends = toSmsSends(parsed.value);
    if (ctx.sms.queued + sends.length > ctx.sms.maxQueued) {
      const seconds = smsRetryAfterSeconds(ctx, ctx.sms.queued + sends.length - ctx.sms.maxQueued);
      reply.header('retry-after', String(seconds));
      return answer(reply, errorResponse('rate_limited', [], `The SMS queue is full (${ctx.sms.queued} waiting, bound ${ctx.sms.maxQueued}); retry after ${seconds} s.`));
    }
    // Every SMS brings callbacks (DLR, maybe MO): with their receivers down, the outbox is the bound.
    const pending = webhooksPending(ctx);
    if (pending > ctx.maxPendingWebhooks) {
      reply.header('retry-after', '30');
      return answer(reply, errorResponse('rate_limited', [], `Webhook deliveries are behind (${pending} pending); retry later.`));
    }
    // An Idempotency-Key: a retry of a request answered 202 gets that answer again (idempotent.ts).
    return idempotent(ctx, request, reply, 'sms', (key) => accept(ctx, request, sends, smsResponse(parsed.value, request.id), key));
  });
};

/**
 * Accepted SMS, whole or not at all: the 202 leaves only once they (and the answer kept under the
 * request's idempotency key, in the same write) are written, on the durable server and on Redis.
 */
async function accept(ctx: SmsContext, request: FastifyRequest, sends: readonly SmsSend[], accepted: HttpAnswer<unknown>, key: string | undefined): Promise<IntakeAnswer> {
  const { companyId } = request;
  const requestId = request.id;
  const acceptedAt = ctx.clock.now();
  const items = sends.map((s) => ({ ...s, smsId: `${requestId}:${s.index}`, requestId, companyId, acceptedAt }));
  const write = await ctx.backend.writeSms(requestId, items, key === undefined ? undefined : { companyId, key, answer: accepted });
  if (write.kind === 'voided')
    return { answer: errorResponse('unavailable', [], 'Another request took this one over before it was written; nothing of this one was accepted.'), headers: { 'retry-after': '1' } };
  if (write.kind === 'failed')
    return { answer: errorResponse('unavailable', [], `The server could not write the SMS durably${notWrittenBecause(write.error)}; nothing was accepted. Send them again later.`) };
  ctx.metrics?.contactsAccepted.inc({ kind: 'sms' }, sends.length);
  return { answer: accepted };
}
