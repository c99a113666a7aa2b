/**
 * The blocklist feature: the company's blocklist (an extension; spec 6.4 counts `count_blocked`
 * but shows no endpoint): list, add and remove blocked phones. Recipients who answer with an
 * opt-out are added by the server itself (`source: "reply"`); contacts with a blocked phone are
 * refused at intake as `blocked`. A change is answered once it is written (durable server). A
 * Fastify plugin (encapsulated: it adds routes, no hooks).
 */
import type { FastifyPluginAsync } from 'fastify';
import { problem, type Problem } from '../../core/problems.js';
import { normalisePhone } from '../../contract/phone.js';
import { errorResponse } from '../../contract/responses.js';
import { formatUtcMinus3 } from '../../events/datetime.js';
import type { ServerContext } from '../context.js';
import { answer, fail } from '../http-errors.js';

/** Most phones one POST adds. */
export const MAX_BLOCKLIST_PHONES = 10_000;
/** Phones per page of GET, by default and at most. */
const PAGE = 1_000;
const MAX_PAGE = 10_000;

function unwritten() {
  return errorResponse('unavailable', [], 'The server could not write the change durably; send it again later.');
}

export interface BlocklistFeatureOptions {
  readonly ctx: Pick<ServerContext, 'blocklist' | 'backend' | 'clock'>;
}

export const blocklistFeature: FastifyPluginAsync<BlocklistFeatureOptions> = async (app, { ctx }) => {
  app.get<{ Querystring: { after?: string; limit?: string } }>('/operator/blocklist/', async (request, reply) => {
    const { after, limit: limitText } = request.query;
    const problems: Problem[] = [];
    let limit = PAGE;
    if (limitText !== undefined) {
      limit = /^[1-9][0-9]{0,4}$/.test(limitText) ? Number(limitText) : Number.NaN;
      if (!(limit <= MAX_PAGE)) problems.push(problem('$.query.limit', `an integer from 1 to ${MAX_PAGE}`, limitText));
    }
    let from: string | undefined;
    if (after !== undefined) {
      const phone = normalisePhone(after);
      if (phone.ok) from = phone.value;
      else problems.push(problem('$.query.after', phone.expected, after));
    }
    if (problems.length > 0) return answer(reply, errorResponse('invalid_body', problems));
    const page = ctx.blocklist.list(request.companyId, from, limit);
    return {
      total: ctx.blocklist.size(request.companyId),
      phones: page.entries.map((e) => ({ phone: e.phone, added_at: formatUtcMinus3(e.addedAt), source: e.source })),
      next_after: page.next,
    };
  });

  app.post('/operator/blocklist/', async (request, reply) => {
    const body = request.body as { phones?: unknown } | null | undefined;
    const problems: Problem[] = [];
    const phones: string[] = [];
    if (typeof body !== 'object' || body === null || Array.isArray(body)) problems.push(problem('$', 'an object { phones: [...] }', body));
    else {
      for (const key of Object.keys(body)) if (key !== 'phones') problems.push(problem(`$.${key}`, 'no such field (known: phones)', (body as Record<string, unknown>)[key]));
      const list = body.phones;
      if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BLOCKLIST_PHONES) {
        problems.push(problem('$.phones', `an array of 1 to ${MAX_BLOCKLIST_PHONES} phones`, Array.isArray(list) ? `${list.length} items` : list));
      } else {
        list.forEach((raw, i) => {
          const phone = typeof raw === 'string' ? normalisePhone(raw) : { ok: false as const, expected: 'a phone as a string of digits' };
          if (phone.ok) phones.push(phone.value);
          else if (problems.length < 100) problems.push(problem(`$.phones[${i}]`, phone.expected, raw));
        });
      }
    }
    // All or nothing: one bad phone and none is added.
    if (problems.length > 0) return answer(reply, errorResponse('invalid_body', problems));
    const now = ctx.clock.now();
    let added = 0;
    for (const p of phones) if (ctx.blocklist.add(request.companyId, p, now, 'operator')) added++;
    if (!(await ctx.backend.blocklistWritten())) return answer(reply, unwritten());
    reply.log.info({ added }, 'operator: blocklist add');
    return { added, already: phones.length - added, total: ctx.blocklist.size(request.companyId) };
  });

  app.delete<{ Params: { phone: string } }>('/operator/blocklist/:phone/', async (request, reply) => {
    const phone = normalisePhone(request.params.phone);
    if (!phone.ok) return answer(reply, errorResponse('invalid_body', [problem('$.params.phone', phone.expected, request.params.phone)]));
    if (!ctx.blocklist.remove(request.companyId, phone.value)) return fail(reply, 'not_found', [], `The phone ${phone.value} is not on your blocklist.`);
    if (!(await ctx.backend.blocklistWritten())) return answer(reply, unwritten());
    reply.log.info({ phone: phone.value }, 'operator: blocklist remove');
    return { removed: phone.value, total: ctx.blocklist.size(request.companyId) };
  });
};
