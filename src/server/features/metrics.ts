/**
 * The metrics feature: GET /metrics for Prometheus, where and to whom `metrics` says
 * (metrics-access.ts): a route of the API's port, open or behind a key, or a listener of its own
 * that opens when the server is ready and closes with it (the API's port then answers 404 there).
 * An encapsulated Fastify plugin: its hooks are its listener's, nobody else's.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { fail } from '../http-errors.js';
import { METRICS_CHALLENGE, metricsKeyCheck, type MetricsListener, type ResolvedMetrics } from '../metrics-access.js';

/** Paths served without an API key (the metrics key, if any, is checked instead). */
export const METRICS_OPEN_PATHS: readonly string[] = ['/metrics', '/metrics/'];

export interface MetricsFeatureOptions {
  /** The server's metrics (ServerMetrics.registry). */
  readonly registry: Registry;
  /** Who may scrape (the key), checked. */
  readonly access: ResolvedMetrics;
  /** The listener of its own (`access.listen`); undefined: /metrics is a route of the API's port. */
  readonly listener: MetricsListener | undefined;
}

export const metricsFeature: FastifyPluginAsync<MetricsFeatureOptions> = async (app, { registry, access, listener }) => {
  if (listener) {
    app.addHook('onReady', async () => {
      if (await listener.open()) app.log.info({ address: listener.address() }, 'metrics listening');
    });
    app.addHook('onClose', async () => listener.close());
    return;
  }
  const check = metricsKeyCheck(access.key);
  app.get('/metrics', async (request, reply) => {
    const refused = check?.(request.headers.authorization);
    if (refused) {
      request.log.info({ reason: refused.code }, 'refused: metrics key');
      reply.header('www-authenticate', METRICS_CHALLENGE);
      return fail(reply, refused.code, [], refused.message);
    }
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
};
