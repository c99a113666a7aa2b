/**
 * The inbound feature, the channel's own endpoints (the provider's webhooks): served without an
 * API key, since the provider cannot send one (the channel checks the provider's proof instead,
 * e.g. a signature over the raw body), and with the body as raw bytes, since a signature is
 * computed over exactly those. An encapsulated Fastify plugin, so the JSON-only body parser of the
 * API does not apply in it (its own parser replaces it there only).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { InboundRoute } from '../ports/channel.js';

/** The paths to leave open in the API key check: each path with and without its trailing slash. */
export function inboundPaths(routes: readonly InboundRoute[]): string[] {
  return routes.flatMap((r) => [r.path, r.path.endsWith('/') ? r.path.slice(0, -1) : `${r.path}/`]);
}

export interface InboundFeatureOptions {
  /** The channel's endpoints (`channel.inbound`). */
  readonly routes: readonly InboundRoute[];
  /** Largest body a provider may send, in bytes (the API's `limits.maxBodyBytes`). */
  readonly maxBodyBytes: number;
}

export const inboundFeature: FastifyPluginAsync<InboundFeatureOptions> = async (app, { routes, maxBodyBytes }) => {
  if (routes.length === 0) return;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_request, body, done) => done(null, body));
  for (const route of routes) {
    for (const method of ['GET', 'POST'] as const) {
      app.route({
        method,
        url: route.path,
        handler: async (request, reply) => {
          const query: Record<string, string | undefined> = {};
          for (const [k, v] of Object.entries((request.query ?? {}) as Record<string, string | string[] | undefined>)) query[k] = Array.isArray(v) ? v[v.length - 1] : v;
          const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
          const answer = await route.handle({ method, query, headers: request.headers, rawBody });
          return reply
            .code(answer.status)
            .header('content-type', answer.contentType ?? 'text/plain; charset=utf-8')
            .send(answer.body ?? '');
        },
      });
    }
  }
};
