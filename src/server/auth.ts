/**
 * Authentication (spec 5): every request carries `x-api-key-id`; the key is checked in constant
 * time against every configured key and decides the request's company. Missing or wrong: 401 with
 * the contract's error body. The key is never logged (the logger's serializer leaves headers out).
 */
import type { FastifyInstance } from 'fastify';
import { checkApiKey } from '../contract/api-key.js';
import { fail } from './http-errors.js';
import type { Tenants } from './tenants.js';

export function installAuth(app: FastifyInstance, tenants: Tenants, openPaths: ReadonlySet<string>): void {
  app.decorateRequest('companyId', 0);
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0]!;
    if (openPaths.has(path)) return;
    let companyId = 0;
    const check = checkApiKey(request.headers, (key) => {
      const entry = tenants.resolve(key);
      if (entry) companyId = entry.companyId;
      return entry !== undefined;
    });
    if (!check.ok) {
      request.log.info({ reason: check.code }, 'refused: API key');
      return fail(reply, check.code);
    }
    request.companyId = companyId;
  });
}
