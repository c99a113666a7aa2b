/**
 * The dashboard feature, the operator dashboard's routes: the page and its two files under
 * /dashboard/ (no key: they hold no data and no secret), and its data under /dashboard/api/ (the
 * API's key, the API's scope: a company's key sees its businesses, an operator key every
 * business). Actions go through the operator endpoints (/operator/numbers/…/pause/ and the rest),
 * except the replay of dead letters, which is under /dashboard/api/dead-letters/ (an operator key
 * opens no /messenger/ route).
 *
 * A Fastify plugin that shares the root's scope (`fastify-plugin`): it watches another feature's
 * answers (a campaign's accepted POST /messenger/messages/), which a hook of its own scope would
 * not see.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../../core/clock.js';
import type { Engine } from '../../core/engine.js';
import { errorResponse } from '../../contract/responses.js';
import type { ServerContext } from '../context.js';
import { answer } from '../http-errors.js';
import { registerDeadLetterRoutes } from './dead-letters.js';
import { ASSET_FILES, DASHBOARD_HEADERS, loadAssets, type AssetName, type DashboardAsset } from '../dashboard/assets.js';
import type { DashboardOptions } from '../dashboard/options.js';
import { QueryReader } from '../dashboard/query.js';
import { DashboardState } from '../dashboard/state.js';
import { TargetsCache, accountsView, campaignsView, numbersView, poolsView, templatesView, webhooksView } from '../dashboard/views.js';

/** Paths served without a key: the page and its files. */
export const DASHBOARD_OPEN_PATHS: readonly string[] = [
  '/dashboard',
  '/dashboard/',
  ...Object.keys(ASSET_FILES)
    .filter((f) => f !== 'index.html')
    .map((f) => `/dashboard/${f}`),
];

/** Most rows of a page of numbers, templates or pools; campaigns and receivers are heavier. */
const MAX_ROWS = 200;

export interface DashboardFeatureOptions {
  /** The views read most of the server: the whole context. */
  readonly ctx: ServerContext;
  /** What the dashboard keeps besides the engine's views (samples, causes, campaigns' pools). */
  readonly state: DashboardState;
  /** The page and its files ({@link openDashboard}). */
  readonly assets: ReadonlyMap<AssetName, DashboardAsset>;
}

/**
 * What the dashboard is served from when it is on: its state, and its files, read now (a missing
 * one is an option error of `buildServer`, not of `listen`).
 */
export function openDashboard(engine: Engine, clock: Clock, options: DashboardOptions | undefined): Omit<DashboardFeatureOptions, 'ctx'> | undefined {
  return options ? { state: new DashboardState(engine, clock, options), assets: loadAssets() } : undefined;
}

const dashboard: FastifyPluginAsync<DashboardFeatureOptions> = async (app, { ctx, state, assets }) => {
  const file = (asset: DashboardAsset) => async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.headers(DASHBOARD_HEADERS).header('cache-control', 'no-cache').type(asset.contentType).send(asset.body);
  for (const [name, asset] of assets) {
    const serve = file(asset);
    if (name !== 'index.html') app.get(`/dashboard/${name}`, serve);
    else {
      app.get('/dashboard/', async (request, reply) => {
        // The page's files and data are relative to it: /dashboard (no slash) must become /dashboard/.
        // Relative, so it holds behind a proxy that serves the server under a path prefix.
        if (request.url.split('?')[0] === '/dashboard') return reply.headers(DASHBOARD_HEADERS).redirect('dashboard/', 308);
        return serve(request, reply);
      });
    }
  }

  // Data: checked queries, small pages, never cached.
  const data =
    <T>(known: readonly string[], build: (q: QueryReader, request: FastifyRequest) => T | Promise<T>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      reply.headers(DASHBOARD_HEADERS).header('cache-control', 'no-store');
      const q = new QueryReader(request.query, known);
      const result = await build(q, request);
      if (q.problems.length > 0) return answer(reply, errorResponse('invalid_body', q.problems));
      return result;
    };
  app.get(
    '/dashboard/api/pools/',
    data(['offset', 'limit', 'since'], async (q, request) => {
      const p = q.page(50, MAX_ROWS);
      const since = q.integer('since', 0, Number.MAX_SAFE_INTEGER, 0);
      // On Redis output is the fleet's: as GET /messenger/businesses/, wait for a fresh view first.
      if (ctx.refreshOutput) {
        ctx.engine.businesses();
        await ctx.refreshOutput();
      }
      return q.problems.length > 0 ? undefined : poolsView(ctx, state, request, p, since);
    }),
  );
  app.get(
    '/dashboard/api/numbers/',
    data(['offset', 'limit', 'q', 'status', 'business_id'], (q, request) => {
      const p = q.page(50, MAX_ROWS);
      const filter = { q: q.text('q', 32), status: q.oneOf('status', ['active', 'paused'] as const), businessId: q.id('business_id') };
      return q.problems.length > 0 ? undefined : numbersView(ctx, state, request, p, filter);
    }),
  );
  app.get(
    '/dashboard/api/accounts/',
    data([], (q, request) => (q.problems.length > 0 ? undefined : accountsView(ctx, state, request))),
  );
  app.get(
    '/dashboard/api/templates/',
    data(['offset', 'limit', 'status', 'business_id'], (q, request) => {
      const p = q.page(50, MAX_ROWS);
      const filter = { status: q.oneOf('status', ['active', 'paused', 'disabled'] as const), businessId: q.id('business_id') };
      return q.problems.length > 0 ? undefined : templatesView(ctx, state, request, p, filter);
    }),
  );
  app.get(
    '/dashboard/api/campaigns/',
    data(['offset', 'limit'], (q, request) => {
      const p = q.page(20, 100);
      return q.problems.length > 0 ? undefined : campaignsView(ctx, state, request, p);
    }),
  );
  const targets = new TargetsCache();
  app.get(
    '/dashboard/api/webhooks/',
    data(['offset', 'limit'], (q, request) => {
      const p = q.page(20, 100);
      return q.problems.length > 0 ? undefined : webhooksView(ctx, state, targets, request, p);
    }),
  );

  // Dead letters: the key's company's (an operator key's: every company's), replayed from the page.
  registerDeadLetterRoutes(app, ctx, '/dashboard/api/dead-letters', (request) => (request.operator ? null : request.companyId), { ...DASHBOARD_HEADERS, 'cache-control': 'no-store' });

  // A campaign's pool is known from its accepted request, before its first message goes.
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode !== 202 || request.method !== 'POST' || request.routeOptions.url !== '/messenger/messages/') return;
    const body = request.body as { business_id?: unknown; template_type_id?: unknown; campaign_id?: unknown } | null;
    if (typeof body !== 'object' || body === null || typeof body.business_id !== 'number' || typeof body.template_type_id !== 'number') return;
    state.campaigns.accepted(request.companyId, typeof body.campaign_id === 'number' ? body.campaign_id : 0, body.business_id, body.template_type_id);
  });
};

export const dashboardFeature = fp(dashboard, { name: 'sendpool-dashboard', fastify: '5.x' });
