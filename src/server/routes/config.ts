/**
 * POST /messenger/config/ (spec 4.4) and, as extensions, GET /messenger/config/ to read it back
 * and GET /messenger/config/secret/ for the company's webhook signing secret.
 */
import type { FastifyInstance } from 'fastify';
import { ConfigUpdateSchema, WebhookConfigSchema } from '../../contract/config-schema.js';
import { mergeConfig, parseConfig } from '../../contract/parse-config.js';
import { ErrorBodySchema } from '../../contract/response-schemas.js';
import { errorResponse } from '../../contract/responses.js';
import type { ServerContext } from '../context.js';
import { answer } from '../http-errors.js';

export function configRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.get('/messenger/config/', { schema: { response: { 200: WebhookConfigSchema } } }, async (request) => ctx.notifier.config(request.companyId));

  app.post('/messenger/config/', { schema: { body: ConfigUpdateSchema, response: { 200: WebhookConfigSchema, '4xx': ErrorBodySchema } } }, async (request, reply) => {
    const parsed = parseConfig(request.body, { urlPolicy: ctx.urlPolicy });
    if (!parsed.ok) return answer(reply, errorResponse('invalid_body', parsed.problems));
    const next = mergeConfig(ctx.notifier.config(request.companyId), parsed.value);
    ctx.notifier.setConfig(request.companyId, next);
    return next;
  });

  app.get('/messenger/config/secret/', async (request) => ({ webhook_secret: ctx.notifier.secretOf(request.companyId) }));
}
