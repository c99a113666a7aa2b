/**
 * The dead-letters feature (an extension; the spec has none): webhook events the outbox gave up
 * on, with the receiver's last answer, and their replay (docs/server.md, "Dead letters").
 *
 *   GET  <base>/                      newest first; `family`, `limit` (1-500, 100), `before` (a page's `next_before`)
 *   POST <base>/{event_id}/replay/    202: the event goes back into the outbox under its event_id
 *   POST <base>/replay/               202: every dead letter (of `family`, in the body) goes back
 *
 * Under /messenger/webhooks/dead-letters the key's company's; under /dashboard/api/dead-letters the
 * dashboard's (a company's key its company's, an operator key every company's). A replay is
 * answered once it is kept (the durable server's step, Redis' script).
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { problem, type Problem } from '../../core/problems.js';
import { errorResponse } from '../../contract/responses.js';
import { formatUtcMinus3 } from '../../events/datetime.js';
import type { WebhookFamily } from '../../events/outbox.js';
import type { ServerContext } from '../context.js';
import { QueryReader } from '../dashboard/query.js';
import { parseCursor, type DeadLetter, type DeadLetterCursor } from '../dead-letters.js';
import { answer, fail } from '../http-errors.js';

/** The families an event can have. */
export const WEBHOOK_FAMILIES: readonly WebhookFamily[] = ['report', 'attendance', 'hsm', 'campaign', 'sms-dlr', 'sms-mo'];

/** Largest page of dead letters. */
const MAX_LIMIT = 500;

/** A dead letter as the API answers it. */
export function deadLetterView(d: DeadLetter) {
  let payload: unknown;
  try {
    payload = JSON.parse(d.event.body);
  } catch {
    payload = d.event.body;
  }
  return {
    event_id: d.event.id,
    family: d.event.family,
    company_id: d.event.companyId,
    url: d.event.url,
    created_at: d.createdAt === null ? null : formatUtcMinus3(d.createdAt),
    dead_lettered_at: formatUtcMinus3(d.deadLetteredAt),
    attempts: d.attempts,
    last_error: d.lastError,
    payload,
  };
}

/** Who the dead letters are read for: a company, or (null) every company (an operator key). */
type ScopeOf = (request: FastifyRequest) => number | null;

/** What the dead letters' routes read of the server (`closing`: no replay while it shuts down). */
export type DeadLettersContext = Pick<ServerContext, 'deadLetters' | 'closing'>;

export interface DeadLettersFeatureOptions {
  readonly ctx: DeadLettersContext;
}

/** Registers the three routes under `base` (no trailing slash), with `headers` on every answer. */
export function registerDeadLetterRoutes(app: FastifyInstance, ctx: DeadLettersContext, base: string, scopeOf: ScopeOf, headers: Readonly<Record<string, string>> = {}): void {
  const unavailable = (reply: FastifyReply) => fail(reply, 'unavailable', [], 'The replay could not be kept (the store did not answer); nothing was replayed. Try again later.');

  app.get(`${base}/`, async (request, reply) => {
    reply.headers(headers);
    const q = new QueryReader(request.query, ['family', 'limit', 'before']);
    const family = q.oneOf('family', WEBHOOK_FAMILIES);
    const limit = q.integer('limit', 1, MAX_LIMIT, 100);
    const beforeText = q.text('before', 140);
    let before: DeadLetterCursor | undefined;
    if (beforeText !== undefined) {
      before = parseCursor(beforeText);
      if (before === undefined) q.problems.push(problem('$.query.before', 'a next_before of an earlier page (<dead_lettered_at ms>_<event_id>)', beforeText));
    }
    if (q.problems.length > 0) return answer(reply, errorResponse('invalid_body', q.problems));
    const page = await ctx.deadLetters.list(scopeOf(request), { limit, ...(family ? { family } : {}), ...(before ? { before } : {}) });
    return { dead_letters: page.items.map(deadLetterView), next_before: page.next };
  });

  app.post<{ Params: { eventId: string } }>(`${base}/:eventId/replay/`, async (request, reply) => {
    reply.headers(headers);
    const id = request.params.eventId;
    if (ctx.closing) return fail(reply, 'unavailable', [], 'The server is shutting down; nothing was replayed.');
    let replayed: DeadLetter | undefined;
    try {
      replayed = await ctx.deadLetters.replay(scopeOf(request), id);
    } catch (e) {
      request.log.error({ err: e, eventId: id }, 'dead letter replay not kept');
      return unavailable(reply);
    }
    if (replayed === undefined) return fail(reply, 'not_found', [problem('$.path.event_id', 'the event_id of a dead letter you can see', id)], `No dead letter with event_id ${id}.`);
    request.log.info({ eventId: id, family: replayed.event.family, operator: request.operator }, 'dead letter replayed');
    return reply.code(202).send({ replayed: 1, event_ids: [id] });
  });

  app.post(`${base}/replay/`, async (request, reply) => {
    reply.headers(headers);
    const parsed = replayAllBody(request.body);
    if (!parsed.ok) return answer(reply, errorResponse('invalid_body', parsed.problems));
    if (ctx.closing) return fail(reply, 'unavailable', [], 'The server is shutting down; nothing was replayed.');
    let replayed: number;
    try {
      replayed = await ctx.deadLetters.replayAll(scopeOf(request), parsed.family);
    } catch (e) {
      request.log.error({ err: e }, 'dead letters replay not kept');
      return unavailable(reply);
    }
    request.log.info({ replayed, family: parsed.family ?? 'all', operator: request.operator }, 'dead letters replayed');
    return reply.code(202).send({ replayed });
  });
}

/** The body of a replay of all: none, `{}`, or `{ "family": "<family>" }`. */
function replayAllBody(body: unknown): { ok: true; family?: WebhookFamily } | { ok: false; problems: Problem[] } {
  if (body === undefined || body === null) return { ok: true };
  if (typeof body !== 'object' || Array.isArray(body)) return { ok: false, problems: [problem('$', 'an object with an optional family, or no body', body)] };
  const { family, ...rest } = body as Record<string, unknown>;
  const problems = Object.keys(rest).map((k) => problem(`$.${k}`, 'no such field (known: family)', rest[k]));
  if (family !== undefined && !(WEBHOOK_FAMILIES as readonly unknown[]).includes(family)) problems.push(problem('$.family', `one of ${WEBHOOK_FAMILIES.join(', ')}`, family));
  return problems.length > 0 ? { ok: false, problems } : family === undefined ? { ok: true } : { ok: true, family: family as WebhookFamily };
}

/** The company API's dead letters, a Fastify plugin (encapsulated): the key's company's. */
export const deadLettersFeature: FastifyPluginAsync<DeadLettersFeatureOptions> = async (app, { ctx }) => {
  registerDeadLetterRoutes(app, ctx, '/messenger/webhooks/dead-letters', (request) => request.companyId);
};
