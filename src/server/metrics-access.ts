/**
 * Who may read GET /metrics, and where. By default it is open on the API's port, as it always was
 * (docs/decisions.md, "Server: metrics access"). A key makes every scrape send
 * `Authorization: Bearer <key>` (what Prometheus sends with `authorization: { credentials_file }`);
 * a listen address moves /metrics to a listener of its own, typically on an internal interface,
 * and the API's port then answers 404 there. Both may be combined.
 *
 * The separate listener is a plain Node server with the same connection limits as the API's. The
 * metrics feature (features/metrics.ts, which also serves the route on the API's port) opens it
 * when the Fastify instance becomes ready (so a port in use fails `listen`), closes it with it,
 * and is unref'd: it never keeps a process alive on its own. `runServer` on Redis opens it earlier,
 * before waiting for Redis ({@link openEarlyMetrics}): it answers with what is known then (whether
 * Redis is ready), and the server adopts it, same port, once built. Without a listener of its own,
 * the API's port itself opens before that wait ({@link openStartingApi}): /metrics there answers
 * with the starting metrics and everything else 503, until the server takes the port.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { problem, type Problem } from '../core/problems.js';
import type { ErrorCode } from '../contract/response-schemas.js';
import { errorResponse, type HttpAnswer } from '../contract/responses.js';
import { applyConnectionLimits, nodeServerOptions, type ResolvedConnections } from './connections.js';
import { hostProblem, MIN_METRICS_KEY_LENGTH, portProblem, secretProblem } from './lib/option-checks.js';

/** Where the separate metrics listener listens. */
export interface MetricsListen {
  /** Address to listen on. @default '127.0.0.1' */
  readonly host?: string;
  /** Port; 0 picks a free one (read it with `server.sendpool.metricsAddress()`). */
  readonly port: number;
}

/** Access to GET /metrics (the object form of {@link BuildServerOptions.metrics}). */
export interface MetricsOptions {
  /**
   * A key every scrape must send as `Authorization: Bearer <key>`; without it, or with another,
   * the answer is 401 with the contract's error body. 16 to 512 characters without whitespace.
   * @default none: /metrics needs no key
   */
  readonly key?: string;
  /**
   * Serve /metrics only on a listener of its own at this address; the API's port answers 404 on
   * /metrics.
   * @default none: /metrics is served on the API's port
   * @example { host: '10.0.0.5', port: 9464 }
   */
  readonly listen?: MetricsListen;
}

/** Access to /metrics, checked. */
export interface ResolvedMetrics {
  readonly key: string | undefined;
  readonly listen: { readonly host: string; readonly port: number } | undefined;
}

/** Checks the `metrics` option; undefined when /metrics is off. Bad values add problems. */
export function resolveMetrics(option: boolean | MetricsOptions | undefined, problems: Problem[]): ResolvedMetrics | undefined {
  if (option === false) return undefined;
  if (option === undefined || option === true) return { key: undefined, listen: undefined };
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    problems.push(problem('metrics', 'true, false or { key?, listen? }', option));
    return undefined;
  }
  const found: (Problem | undefined)[] = [];
  for (const k of Object.keys(option)) if (k !== 'key' && k !== 'listen') found.push(problem(`metrics.${k}`, 'no such option (metrics takes key and listen)', (option as Record<string, unknown>)[k]));
  if (option.key !== undefined) found.push(secretProblem('metrics.key', option.key, MIN_METRICS_KEY_LENGTH));
  let listen: ResolvedMetrics['listen'];
  if (option.listen !== undefined) {
    const l = option.listen as unknown;
    if (typeof l !== 'object' || l === null) found.push(problem('metrics.listen', '{ host?, port }', l));
    else {
      const { host = '127.0.0.1', port } = l as { host?: unknown; port?: unknown };
      found.push(portProblem('metrics.listen.port', port), hostProblem('metrics.listen.host', host));
      listen = { host: host as string, port: port as number };
    }
  }
  const real = found.filter((p): p is Problem => p !== undefined);
  problems.push(...real);
  return real.length > 0 ? undefined : { key: option.key, listen };
}

/** What a refused scrape is answered. */
export interface Refusal {
  readonly code: ErrorCode;
  readonly message: string;
}

/** The check of a scrape's Authorization header: what it is refused with, or undefined. */
export type KeyCheck = (authorization: string | undefined) => Refusal | undefined;

/** The `WWW-Authenticate` header of a refused scrape. */
export const METRICS_CHALLENGE = 'Bearer realm="sendpool-metrics"';
const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * The check of the Authorization header against the key, in constant time (digests of equal
 * length); none without a key.
 */
export function metricsKeyCheck(key: string | undefined): KeyCheck | undefined {
  return key === undefined ? undefined : keyCheck(key);
}

function keyCheck(key: string): KeyCheck {
  const expected = digest(key);
  return (authorization) => {
    if (authorization === undefined || authorization.trim() === '') {
      return { code: 'missing_api_key', message: 'GET /metrics needs the metrics key: send Authorization: Bearer <key>.' };
    }
    const token = /^Bearer +(\S+) *$/i.exec(authorization)?.[1];
    if (token === undefined || !timingSafeEqual(digest(token), expected)) {
      return { code: 'invalid_api_key', message: 'The Authorization header does not carry the metrics key (Authorization: Bearer <key>).' };
    }
    return undefined;
  };
}

/**
 * Key of `buildServer`'s options under which `runServer` hands over a metrics listener opened
 * before the server (not part of the public options: a symbol no host spells).
 */
export const EARLY_METRICS = Symbol('sendpool.earlyMetrics');

/** A metrics listener opened before the server exists; the server answers its scrapes once built. */
export interface EarlyMetrics {
  readonly server: http.Server;
  /** `http://host:port` */
  readonly address: string;
  /** Answers later scrapes from `registry` (the server's, once built). */
  answerFrom(registry: Registry): void;
  close(): Promise<void>;
}

/**
 * Opens the separate metrics listener of `access` now, answering from `registry` (what is known
 * before the server exists), with the same key check and connection limits the server's has.
 */
export async function openEarlyMetrics(
  access: ResolvedMetrics & { readonly listen: NonNullable<ResolvedMetrics['listen']> },
  connections: ResolvedConnections,
  registry: Registry,
): Promise<EarlyMetrics> {
  const check = metricsKeyCheck(access.key);
  let current = registry;
  const server = http.createServer(nodeServerOptions(connections), (req, res) => void answerScrape(req, res, current, check));
  applyConnectionLimits(server, connections);
  const address = await listenOn(server, access.listen.host, access.listen.port);
  return {
    server,
    address,
    answerFrom: (r) => void (current = r),
    close: () => closeListener(server),
  };
}

async function listenOn(server: http.Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.unref();
  const a = server.address() as AddressInfo;
  return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
}

function closeListener(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** The server's own metrics listener (`metrics.listen`): opened when the server is ready, closed with it. */
export interface MetricsListener {
  /** `http://host:port` while it listens; null before and after. */
  address(): string | null;
  /** Listens, or adopts the early listener (which already listens): answers true when it opened one now. */
  open(): Promise<boolean>;
  /** Stops listening and drops its connections. */
  close(): Promise<void>;
}

/**
 * The listener of `access.listen`, answering from `registry` with the key check and connection
 * limits of `access` and `connections`; `early`: one already open (`runServer`), adopted.
 */
export function metricsListener(
  access: ResolvedMetrics & { readonly listen: NonNullable<ResolvedMetrics['listen']> },
  registry: Registry,
  connections: ResolvedConnections,
  early: EarlyMetrics | undefined,
): MetricsListener {
  const check = metricsKeyCheck(access.key);
  let listener: http.Server | undefined;
  let address: string | null = null;
  return {
    address: () => address,
    open: async () => {
      if (early) {
        // Open since before the server existed: from now on it answers with the server's metrics.
        early.answerFrom(registry);
        listener = early.server;
        address = early.address;
        return false;
      }
      const server = http.createServer(nodeServerOptions(connections), (req, res) => void answerScrape(req, res, registry, check));
      applyConnectionLimits(server, connections);
      address = await listenOn(server, access.listen.host, access.listen.port);
      listener = server;
      return true;
    },
    close: async () => {
      const server = listener ?? early?.server;
      listener = undefined;
      address = null;
      if (server) await closeListener(server);
    },
  };
}

/** The request's path with one trailing slash, without its query. */
function pathOf(req: http.IncomingMessage): string {
  const [path = '/'] = (req.url ?? '/').split('?');
  return `${path.replace(/\/+$/, '')}/`;
}

function send(res: http.ServerResponse, a: HttpAnswer<unknown>, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(a.body);
  res.writeHead(a.status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** One request to the separate listener: GET or HEAD /metrics (with or without the trailing slash). */
async function answerScrape(req: http.IncomingMessage, res: http.ServerResponse, registry: Registry, check: KeyCheck | undefined): Promise<void> {
  const path = pathOf(req);
  if (path !== '/metrics/') return send(res, errorResponse('not_found', [], `No endpoint ${req.method ?? 'GET'} ${path}; this listener serves GET /metrics only.`));
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return send(res, errorResponse('method_not_allowed', [], `Method ${req.method ?? ''} is not allowed on /metrics/; allowed: GET, HEAD.`), { allow: 'GET, HEAD' });
  }
  const refused = check?.(req.headers.authorization);
  if (refused) return send(res, errorResponse(refused.code, [], refused.message), { 'www-authenticate': METRICS_CHALLENGE });
  try {
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text) });
    res.end(req.method === 'HEAD' ? undefined : text);
  } catch {
    send(res, errorResponse('internal_error'));
  }
}

/** The API's port while the server on Redis waits for Redis at start ({@link openStartingApi}). */
export interface StartingApi {
  /** The port it listens on (the one asked for, or the one picked for 0): the server listens there next. */
  readonly port: number;
  /** Stops listening (and drops its connections) so the server can take the port. */
  close(): Promise<void>;
}

/**
 * Opens the API's port before the wait for Redis at start, so that the instance is seen waiting
 * instead of refusing connections: GET /metrics answers from `metrics.registry` (the starting
 * metrics, `sendpool_redis_ready 0`), given when /metrics is served on the API's port, with the same
 * key check; every other request is answered 503 with
 * `Retry-After` and the contract's error body, nothing accepted. Closed right before the server
 * listens on the same port (a connection in that gap of a few milliseconds is refused).
 */
export async function openStartingApi(
  host: string,
  port: number,
  metrics: (ResolvedMetrics & { readonly registry: Registry }) | undefined,
  connections: ResolvedConnections,
  retryAfterS: number,
): Promise<StartingApi> {
  const check = metricsKeyCheck(metrics?.key);
  const server = http.createServer(nodeServerOptions(connections), (req, res) => {
    if (metrics !== undefined && pathOf(req) === '/metrics/') return void answerScrape(req, res, metrics.registry, check);
    // The body is not read: nothing is taken while the instance starts.
    send(res, errorResponse('unavailable', [], 'sendpool is starting: it waits for Redis before it serves; nothing was accepted. Send it again shortly.'), {
      'retry-after': String(retryAfterS),
      connection: 'close',
    });
  });
  applyConnectionLimits(server, connections);
  await listenOn(server, host, port);
  return { port: (server.address() as AddressInfo).port, close: () => closeListener(server) };
}
