/**
 * The service's HTTP API as one Fastify plugin: the hooks every route goes through (http-setup.ts:
 * bodies, the API key, the request id, the duration metric), then each feature, in this order:
 * messenger, SMS, config, reports, operator, blocklist, dead letters, the provider's webhooks
 * (inbound), the dashboard and /metrics when they are on.
 *
 * It shares the root's scope (`fastify-plugin`), so the hooks are the root's: a route the host adds
 * goes through them as the features' do. Each feature is a plugin of its own, given what it reads
 * of the context; those that add routes only are encapsulated.
 */
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { ServerContext } from '../context.js';
import { httpHooks } from '../http-setup.js';
import { blocklistFeature } from './blocklist.js';
import { configFeature } from './config.js';
import { DASHBOARD_OPEN_PATHS, dashboardFeature, type DashboardFeatureOptions } from './dashboard.js';
import { deadLettersFeature } from './dead-letters.js';
import { inboundFeature, inboundPaths } from './inbound.js';
import { messengerFeature } from './messenger.js';
import { METRICS_OPEN_PATHS, metricsFeature, type MetricsFeatureOptions } from './metrics.js';
import { operatorFeature } from './operator.js';
import { reportsFeature } from './reports.js';
import { smsFeature } from './sms.js';

export interface ApiOptions {
  readonly ctx: ServerContext;
  /** The origin report download links start with (`publicBaseUrl`, or the listening address). */
  readonly baseUrl: () => string;
  /** Largest request body, in bytes (`limits.maxBodyBytes`). */
  readonly maxBodyBytes: number;
  /** The dashboard's state and files; undefined when it is off. */
  readonly dashboard: Omit<DashboardFeatureOptions, 'ctx'> | undefined;
  /** How /metrics is served; undefined when it is off. */
  readonly metrics: MetricsFeatureOptions | undefined;
}

const api: FastifyPluginAsync<ApiOptions> = async (app, { ctx, baseUrl, maxBodyBytes, dashboard, metrics }) => {
  const inbound = ctx.channel.inbound ?? [];
  // Open without an API key: /metrics (its own key, if any), the provider's webhooks (their own
  // proof), the dashboard's page.
  const openPaths = new Set([...METRICS_OPEN_PATHS, ...inboundPaths(inbound), ...(dashboard ? DASHBOARD_OPEN_PATHS : [])]);
  void app.register(httpHooks, { tenants: ctx.tenants, maxBodyBytes, openPaths, metrics: ctx.metrics });
  void app.register(messengerFeature, { ctx });
  void app.register(smsFeature, { ctx });
  void app.register(configFeature, { ctx });
  void app.register(reportsFeature, { ctx, baseUrl });
  void app.register(operatorFeature, { ctx });
  void app.register(blocklistFeature, { ctx });
  void app.register(deadLettersFeature, { ctx });
  void app.register(inboundFeature, { routes: inbound, maxBodyBytes });
  if (dashboard) void app.register(dashboardFeature, { ctx, ...dashboard });
  if (metrics) void app.register(metricsFeature, metrics);
};

export const sendpoolApi = fp(api, { name: 'sendpool-api', fastify: '5.x' });
