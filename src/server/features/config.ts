/**
 * The config feature: POST /messenger/config/ (spec 4.4) and, as extensions, GET
 * /messenger/config/ to read it back and GET /messenger/config/secret/ for the company's webhook
 * signing secret. A Fastify plugin (encapsulated: it adds routes, no hooks).
 */
import type { FastifyPluginAsync } from 'fastify';
import { ConfigUpdateSchema, WebhookConfigSchema } from '../../contract/config-schema.js';
import { mergeConfig, parseConfig } from '../../contract/parse-config.js';
import { ErrorBodySchema } from '../../contract/response-schemas.js';
import { errorResponse } from '../../contract/responses.js';
import type { ServerContext } from '../context.js';
import { answer } from '../http-errors.js';

export interface ConfigFeatureOptions {
  readonly ctx: Pick<ServerContext, 'backend' | 'notifier' | 'urlPolicy'>;
}

export const configFeature: FastifyPluginAsync<ConfigFeatureOptions> = async (app, { ctx }) => {
  app.get('/messenger/config/', { schema: { response: { 200: WebhookConfigSchema } } }, async (request) => {
    await ctx.backend.readConfigs([request.companyId], true);
    return ctx.notifier.config(request.companyId);
  });

  app.post('/messenger/config/', { schema: { body: ConfigUpdateSchema, response: { 200: WebhookConfigSchema, '4xx': ErrorBodySchema } } }, async (request, reply) => {
    const parsed = parseConfig(request.body, { urlPolicy: ctx.urlPolicy });
    if (!parsed.ok) return answer(reply, errorResponse('invalid_body', parsed.problems));
    // Changed from the configuration as it is now (on Redis another instance may have changed it
    // since this one last read it), and written before it is answered.
    await ctx.backend.readConfigs([request.companyId], true);
    const next = mergeConfig(ctx.notifier.config(request.companyId), parsed.value);
    ctx.notifier.setConfig(request.companyId, next);
    if (!(await ctx.backend.writeConfig(request.companyId))) return answer(reply, errorResponse('unavailable', [], 'The server could not write the configuration durably; send it again later.'));
    return next;
  });

  app.get('/messenger/config/secret/', async (request, reply) => {
    await ctx.backend.readConfigs([request.companyId]);
    const secret = ctx.notifier.secretOf(request.companyId);
    // A secret shown once must be the one that signs after a restart.
    if (!(await ctx.backend.written())) return answer(reply, errorResponse('unavailable', [], 'The server could not write the secret durably; ask again later.'));
    return { webhook_secret: secret };
  });
};
