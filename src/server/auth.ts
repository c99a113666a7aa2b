/**
 * Authentication (spec 5): every request carries `x-api-key-id`; the key is checked in constant
 * time against every configured key and decides the request's company. Missing or wrong: 401 with
 * the contract's error body. The key is never logged (the logger's serializer leaves headers out).
 *
 * An operator key (an extension) acts for every company, but only where that means something:
 * reading and steering numbers, templates and queues, and the dashboard's data. Anywhere else (a
 * send, a configuration, a report) it has no company to act for and is refused.
 */
import type { FastifyInstance } from 'fastify';
import { checkApiKey } from '../contract/api-key.js';
import { fail } from './http-errors.js';
import type { ApiKeyEntry, Tenants } from './tenants.js';

/** Paths an operator key opens: the operator endpoints of numbers, templates and queues, and the dashboard's data. */
const OPERATOR_PATHS = /^\/(?:operator\/(?:numbers|templates|queues)|dashboard\/api)(?:\/|$)/;

export function installAuth(app: FastifyInstance, tenants: Tenants, openPaths: ReadonlySet<string>): void {
  app.decorateRequest('companyId', 0);
  app.decorateRequest('operator', false);
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0]!;
    if (openPaths.has(path)) return;
    let found: ApiKeyEntry | undefined;
    const check = checkApiKey(request.headers, (key) => {
      found = tenants.resolve(key);
      return found !== undefined;
    });
    if (!check.ok) {
      request.log.info({ reason: check.code }, 'refused: API key');
      return fail(reply, check.code);
    }
    const entry = found!;
    if (entry.operator === true) {
      if (!OPERATOR_PATHS.test(path)) {
        request.log.info({ reason: 'operator key outside its paths' }, 'refused: API key');
        return fail(reply, 'invalid_api_key', [], 'An operator key opens only /operator/numbers/, /operator/templates/, /operator/queues/ and /dashboard/api/: use a company key here.');
      }
      request.operator = true;
      return;
    }
    request.companyId = entry.companyId;
  });
}
