/**
 * The operator feature (an extension; the spec has none): the platform's signals as calls. Pause,
 * disable and resume numbers and templates of the key's company, and read their state. A number
 * has no "disabled" state in the engine: disabling it is a pause without an end. A Fastify plugin
 * (encapsulated: it adds routes, no hooks).
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { problem, type Problem } from '../../core/problems.js';
import { errorResponse } from '../../contract/responses.js';
import { parseDateTime } from '../../events/datetime.js';
import type { ServerContext } from '../context.js';
import { answer, fail } from '../http-errors.js';
import { snakeKeys } from '../lib/snake-case.js';

/** What the operator's routes read and steer of the server. */
type OperatorContext = Pick<ServerContext, 'engine' | 'tenants' | 'dispatch' | 'clock'>;

export interface OperatorFeatureOptions {
  readonly ctx: OperatorContext;
}

/** `{ until?: epoch ms | ISO 8601, duration_seconds?: n }`: when a pause ends by itself. */
function pauseEnd(ctx: OperatorContext, body: unknown): { ok: true; until?: number } | { ok: false; problems: Problem[] } {
  if (body === undefined || body === null) return { ok: true };
  if (typeof body !== 'object' || Array.isArray(body)) return { ok: false, problems: [problem('$', 'an object with until or duration_seconds, or no body', body)] };
  const { until, duration_seconds: duration, ...rest } = body as Record<string, unknown>;
  const problems = Object.keys(rest).map((k) => problem(`$.${k}`, 'no such field (known: until, duration_seconds)', rest[k]));
  let end: number | undefined;
  if (until !== undefined && duration !== undefined) problems.push(problem('$', 'until or duration_seconds, not both', body));
  else if (until !== undefined) {
    end = typeof until === 'number' && Number.isSafeInteger(until) ? until : typeof until === 'string' ? parseDateTime(until) : undefined;
    if (end === undefined || end <= ctx.clock.now()) problems.push(problem('$.until', 'a future time: epoch milliseconds or ISO 8601 with offset', until));
  } else if (duration !== undefined) {
    if (typeof duration !== 'number' || !Number.isSafeInteger(duration) || duration < 1 || duration > 30 * 86_400) {
      problems.push(problem('$.duration_seconds', 'an integer from 1 to 2592000 (30 days)', duration));
    } else end = ctx.clock.now() + duration * 1000;
  }
  return problems.length > 0 ? { ok: false, problems } : end === undefined ? { ok: true } : { ok: true, until: end };
}

/** Who asks: a company's key, or an operator key (every company). */
type Asker = { readonly companyId: number; readonly operator: boolean };

export const operatorFeature: FastifyPluginAsync<OperatorFeatureOptions> = async (app, { ctx }) => {
  const sees = (who: Asker, businessId: number) => ctx.tenants.sees(who, businessId);
  const ownNumber = (who: Asker, phone: string) => ctx.engine.numbers().find((n) => n.phone === phone && sees(who, n.businessId));
  const ownTemplate = (who: Asker, id: number) => ctx.engine.templates().find((t) => t.id === id && t.businessIds.length > 0 && t.businessIds.every((b) => sees(who, b)));

  // The engine's views, snake_case on the wire as every answer is (lib/snake-case.ts).
  app.get('/operator/numbers/', async (request) => snakeKeys(ctx.engine.numbers().filter((n) => sees(request, n.businessId))));
  app.get('/operator/templates/', async (request) => snakeKeys(ctx.engine.templates().filter((t) => t.businessIds.some((b) => sees(request, b)))));
  app.get('/operator/queues/', async (request) => {
    // A contact that failed and waits for its retry time is in no queue until then, so `queued`
    // alone reads 0 while it waits: `waiting_retry` counts it, per pool and in the totals.
    const queues = ctx.engine
      .businesses()
      .filter((b) => sees(request, b.id))
      .flatMap((b) =>
        b.template_types.map((t) => {
          const { queued, waitingRetry, ...held } = ctx.engine.queueStatus(b.id, t.id);
          return { business_id: b.id, template_type_id: t.id, output: t.output, queued, waiting_retry: waitingRetry, ...(snakeKeys(held) as object) };
        }),
      );
    const totals = { queued: 0, waiting_retry: 0 };
    for (const q of queues) {
      totals.queued += q.queued;
      totals.waiting_retry += q.waiting_retry;
    }
    return { queues, totals };
  });

  const numberAction = async (action: 'pause' | 'disable' | 'resume', phone: string, who: Asker, body: unknown, reply: FastifyReply) => {
    if (!ownNumber(who, phone)) return fail(reply, 'not_found', [], `No number ${phone} in your businesses.`);
    const end = action === 'pause' ? pauseEnd(ctx, body) : { ok: true as const };
    if (!end.ok) return answer(reply, errorResponse('invalid_body', end.problems));
    if (action === 'resume') ctx.engine.setNumberStatus(phone, 'active');
    else ctx.engine.setNumberStatus(phone, 'paused', end.until === undefined ? {} : { until: end.until });
    ctx.dispatch.kick();
    request_log(reply, `number ${action}`, { phone, operator: who.operator });
    return snakeKeys(ownNumber(who, phone));
  };
  const templateAction = async (action: 'pause' | 'disable' | 'resume', idText: string, who: Asker, body: unknown, reply: FastifyReply) => {
    const id = /^[1-9]\d{0,15}$/.test(idText) ? Number(idText) : Number.NaN;
    if (!ownTemplate(who, id)) return fail(reply, 'not_found', [], `No template ${idText} used only by your businesses.`);
    const end = action === 'pause' ? pauseEnd(ctx, body) : { ok: true as const };
    if (!end.ok) return answer(reply, errorResponse('invalid_body', end.problems));
    if (action === 'resume') ctx.engine.setTemplateStatus(id, 'active');
    else if (action === 'disable') ctx.engine.setTemplateStatus(id, 'disabled');
    else ctx.engine.setTemplateStatus(id, 'paused', end.until === undefined ? {} : { until: end.until });
    ctx.dispatch.kick();
    request_log(reply, `template ${action}`, { template: id, operator: who.operator });
    return snakeKeys(ownTemplate(who, id));
  };

  for (const action of ['pause', 'disable', 'resume'] as const) {
    app.post<{ Params: { phone: string } }>(`/operator/numbers/:phone/${action}/`, async (request, reply) => numberAction(action, request.params.phone, request, request.body, reply));
    app.post<{ Params: { id: string } }>(`/operator/templates/:id/${action}/`, async (request, reply) => templateAction(action, request.params.id, request, request.body, reply));
  }
};

function request_log(reply: FastifyReply, what: string, fields: Record<string, unknown>): void {
  reply.log.info(fields, `operator: ${what}`);
}
