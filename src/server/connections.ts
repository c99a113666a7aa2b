/**
 * Limits of the server's HTTP connections: how long a client may take to send a request, how long
 * an idle keep-alive connection stays open, how long a connection may sit silent. Fastify's own
 * defaults set no request timeout and no idle timeout: a client that sent its headers and half a
 * body held the connection for as long as it liked, and half-sent headers lasted 60 to 90 s.
 *
 * Node checks partial requests against the headers and request timeouts on an interval of its own
 * (30 s by default), so that interval is an option as well: a 10 s headers timeout should close a
 * connection after 10 s, not after anything up to 40 s.
 */
import type { Server } from 'node:http';
import type { Problem } from '../core/problems.js';
import { clientErrorHandler } from './client-errors.js';
import { integerProblem } from './lib/option-checks.js';

/** Connection limits of {@link BuildServerOptions.connections}. */
export interface ConnectionOptions {
  /**
   * Longest time a client may take to send a request's headers, counted from the connection's
   * first byte of that request (or from the connection itself). Past it the server answers 408
   * (`request_timeout`) and closes the connection. Node's `headersTimeout`. At most
   * `requestTimeoutMs`.
   * @default 10_000, or `requestTimeoutMs` when that is shorter
   */
  readonly headersTimeoutMs?: number;
  /**
   * Longest time a client may take to send a whole request, headers and body. Past it: 408 and
   * the connection closes. At the default, a 10 MiB body needs about 1.4 Mbit/s. Node's
   * `requestTimeout`.
   * @default 60_000
   */
  readonly requestTimeoutMs?: number;
  /**
   * How long a keep-alive connection may stay idle after its last answer before the server closes
   * it (Node adds up to a second of its own). Behind a load balancer or proxy that reuses
   * connections, set it above the proxy's idle timeout (AWS ALB: 60 s, so 65_000), or the proxy
   * may send on a connection the server is closing. Node's `keepAliveTimeout`.
   * @default 5_000
   */
  readonly keepAliveTimeoutMs?: number;
  /**
   * A connection on which no byte moves either way for this long is closed: a client that stops
   * reading its answer, or a request that waits on nothing. Fastify's `connectionTimeout`.
   * @default 60_000
   */
  readonly idleTimeoutMs?: number;
  /**
   * How often partial requests are checked against `headersTimeoutMs` and `requestTimeoutMs`; a
   * timeout takes effect up to this much late. Node's `connectionsCheckingInterval`.
   * @default 1_000
   */
  readonly checkIntervalMs?: number;
}

/** Every limit, defaults filled in. */
export type ResolvedConnections = Required<ConnectionOptions>;

/** The defaults of {@link ConnectionOptions}. */
export const DEFAULT_CONNECTIONS: ResolvedConnections = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 60_000,
  checkIntervalMs: 1_000,
};

const DAY_MS = 86_400_000;

/** Fills in the defaults; each bad value adds a problem to `problems` (and its default is kept). */
export function resolveConnections(options: ConnectionOptions | undefined, problems: Problem[]): ResolvedConnections {
  const out: { -readonly [K in keyof ResolvedConnections]: number } = { ...DEFAULT_CONNECTIONS };
  if (options === undefined) return out;
  if (typeof options !== 'object' || options === null) {
    problems.push({ path: 'connections', expected: 'an object', actual: String(options), message: `connections: expected an object, got ${String(options)}` });
    return out;
  }
  for (const key of Object.keys(DEFAULT_CONNECTIONS) as (keyof ResolvedConnections)[]) {
    const value = options[key];
    if (value === undefined) continue;
    const found = integerProblem(`connections.${key}`, value, 1, DAY_MS, 'milliseconds');
    if (found) problems.push(found);
    else out[key] = value;
  }
  for (const key of Object.keys(options)) {
    if (!(key in DEFAULT_CONNECTIONS))
      problems.push({
        path: `connections.${key}`,
        expected: `one of ${Object.keys(DEFAULT_CONNECTIONS).join(', ')}`,
        actual: 'an unknown option',
        message: `connections.${key}: expected one of ${Object.keys(DEFAULT_CONNECTIONS).join(', ')}, got an unknown option`,
      });
  }
  // A shorter request timeout takes the default headers timeout down with it (as Node does); a
  // headers timeout given above the request timeout is refused (Node refuses it too).
  if (options.headersTimeoutMs === undefined) out.headersTimeoutMs = Math.min(out.headersTimeoutMs, out.requestTimeoutMs);
  if (out.headersTimeoutMs > out.requestTimeoutMs) {
    const expected = `at most connections.requestTimeoutMs (${out.requestTimeoutMs})`;
    problems.push({ path: 'connections.headersTimeoutMs', expected, actual: String(out.headersTimeoutMs), message: `connections.headersTimeoutMs: expected ${expected}, got ${out.headersTimeoutMs}` });
  }
  return out;
}

/** The Fastify options that apply the limits (and answer connection-level errors with the contract's body). */
export function fastifyConnectionOptions(c: ResolvedConnections) {
  return {
    connectionTimeout: c.idleTimeoutMs,
    keepAliveTimeout: c.keepAliveTimeoutMs,
    requestTimeout: c.requestTimeoutMs,
    // Node reads these when the http server is created, so they go through Fastify's `http`.
    http: { headersTimeout: c.headersTimeoutMs, requestTimeout: c.requestTimeoutMs, connectionsCheckingInterval: c.checkIntervalMs },
    clientErrorHandler,
  };
}

/** The `http.createServer` options of a plain Node server with the same limits (the metrics listener). */
export function nodeServerOptions(c: ResolvedConnections) {
  return { headersTimeout: c.headersTimeoutMs, requestTimeout: c.requestTimeoutMs, connectionsCheckingInterval: c.checkIntervalMs };
}

/** The limits a plain Node server takes after creation (with {@link nodeServerOptions}). */
export function applyConnectionLimits(server: Server, c: ResolvedConnections): void {
  server.keepAliveTimeout = c.keepAliveTimeoutMs;
  server.setTimeout(c.idleTimeoutMs);
  server.on('clientError', clientErrorHandler);
}
