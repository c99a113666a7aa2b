/**
 * The server's HTTP side before any route: the Fastify instance (a logger that never writes keys
 * or download tokens, request ids, connection limits, the answers of errors, unknown paths and
 * methods not allowed) and the hooks every route goes through (bodies, authentication, the request
 * id header, the request duration metric), a plugin registered before the features.
 *
 * Route schemas are the contract's JSON Schemas (TypeBox). Request bodies are validated by the
 * contract's own parsers, which use those same schemas but list every problem with its path and
 * know the fleet (template variables, businesses of the key's company); Fastify's Ajv would stop at
 * the first problem and answer another error shape, so its validator is replaced by a pass-through.
 * Response schemas serialise the answers (fast-json-stringify).
 *
 * Separate from buildServer, which wires the service's parts: this is the web server's.
 */
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { RandomSource } from '../events/random.js';
import { uuidV4 } from '../events/uuid.js';
import { installAuth } from './auth.js';
import { installJsonBodyParser } from './body-parser.js';
import { fastifyConnectionOptions, type ResolvedConnections } from './connections.js';
import { installErrorHandlers } from './http-errors.js';
import type { ServerMetrics } from './metrics.js';
import type { BuildServerOptions } from './options.js';
import type { Tenants } from './tenants.js';

function loggerOptions(option: BuildServerOptions['logger']): FastifyServerOptions['logger'] {
  if (option === false) return false;
  const base = typeof option === 'object' && option !== null ? option : {};
  return {
    level: 'info',
    ...base,
    // Keys and download tokens never reach the log: no headers, no query strings.
    redact: { paths: ['req.headers', 'headers["x-api-key-id"]', 'req.query'], remove: true },
    serializers: {
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: req.url.split('?')[0], id: req.id }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
}

/**
 * The Fastify instance of the server, with its answers to errors and to paths it has no route for
 * (405 for a known path's other methods). Those are set here, at once, not in a plugin: a route a
 * host adds right after `buildServer` (before the plugins load) is seen and answered the same.
 */
export function createFastify(logger: BuildServerOptions['logger'], random: RandomSource, maxBodyBytes: number, connections: ResolvedConnections): FastifyInstance {
  const app = Fastify({
    logger: loggerOptions(logger ?? true),
    bodyLimit: maxBodyBytes,
    genReqId: () => uuidV4(random),
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: true,
    ...fastifyConnectionOptions(connections),
  } as FastifyServerOptions);
  const knownPaths = new Map<string, string[]>();
  app.addHook('onRoute', (route) => {
    const path = route.url.endsWith('/') ? route.url : `${route.url}/`;
    const methods = knownPaths.get(path) ?? [];
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) if (!methods.includes(m) && m !== 'HEAD') methods.push(m);
    knownPaths.set(path, methods);
  });
  installErrorHandlers(app, () => knownPaths);
  return app;
}

export interface HttpHooksOptions {
  readonly tenants: Tenants;
  readonly maxBodyBytes: number;
  /** Paths open without a key (metrics, the provider's webhooks, the dashboard's page). */
  readonly openPaths: ReadonlySet<string>;
  readonly metrics: ServerMetrics | undefined;
}

/**
 * The hooks every route goes through. They are the root's (`fastify-plugin`), so every feature
 * registered after this plugin, and every route of the host, goes through them.
 */
const httpHooksPlugin: FastifyPluginAsync<HttpHooksOptions> = async (app, parts) => {
  // Bodies: JSON only, decoded by the contract (size limit, every problem at `$`), large ones in slices.
  installJsonBodyParser(app, parts.maxBodyBytes);
  app.setValidatorCompiler(() => () => true);
  installAuth(app, parts.tenants, parts.openPaths);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  const m = parts.metrics;
  if (m) {
    app.addHook('onResponse', async (request, reply) => {
      m.requestDuration.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    });
  }
};

export const httpHooks = fp(httpHooksPlugin, { name: 'sendpool-http', fastify: '5.x' });

/** `http://host:port` of the listening socket (IPv6 in brackets), or a placeholder before listen. */
export function listenOrigin(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return 'http://127.0.0.1';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
}
