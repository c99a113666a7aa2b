/**
 * The flags of `sendpool serve`, turned into `runServer` options. Every check happens here, before
 * the server (and its optional packages) is loaded: a bad flag is a UsageError naming the flag, what
 * was expected and what was given. Secrets (key files) are never echoed, only their length.
 */
import { DEFAULT_CONNECTIONS } from '../server/connections.js';
import { MAX_IN_FLIGHT_PER_NUMBER } from '../server/channels/whatsapp/pacing-defaults.js';
import { hostProblem, MIN_METRICS_KEY_LENGTH, MIN_REPORT_TOKEN_KEY_BYTES, publicBaseUrlProblem, secretProblem } from '../server/lib/option-checks.js';
import type { Options, Parsed } from './args.js';
import { formatDuration, parseDuration } from './duration.js';
import { UsageError } from './errors.js';
import { readFailure } from './fleet-file.js';
import type { Io } from './io.js';
import { smsChannelFlags } from './smpp-flags.js';

/** The flags `serve` accepts (besides `--help`). */
export const SERVE_FLAGS: Options = {
  port: { type: 'string' },
  host: { type: 'string' },
  keys: { type: 'string' },
  snapshot: { type: 'string' },
  'data-dir': { type: 'string' },
  memory: { type: 'boolean' },
  recover: { type: 'boolean' },
  redis: { type: 'string' },
  'state-dir': { type: 'string' },
  'public-base-url': { type: 'string' },
  'report-token-key-file': { type: 'string' },
  'allow-private-webhook-targets': { type: 'boolean' },
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string' },
  'metrics-key-file': { type: 'string' },
  'no-metrics': { type: 'boolean' },
  'no-dashboard': { type: 'boolean' },
  'headers-timeout': { type: 'string' },
  'request-timeout': { type: 'string' },
  'keep-alive-timeout': { type: 'string' },
  'idle-timeout': { type: 'string' },
  'already-sent-window': { type: 'string' },
  channel: { type: 'string' },
  'whatsapp-credentials': { type: 'string' },
  'graph-url': { type: 'string' },
  'graph-api-version': { type: 'string' },
  'max-in-flight-per-number': { type: 'string' },
  'sms-channel': { type: 'string' },
  'smpp-config': { type: 'string' },
  version: { type: 'boolean' },
};

/** Environment variables of the WhatsApp channel's secrets, by option. */
const WHATSAPP_ENV = Object.freeze({
  accessToken: 'SENDPOOL_WHATSAPP_ACCESS_TOKEN',
  appSecret: 'SENDPOOL_WHATSAPP_APP_SECRET',
  verifyToken: 'SENDPOOL_WHATSAPP_VERIFY_TOKEN',
});
const WHATSAPP_MIN_LENGTH = { accessToken: 16, appSecret: 16, verifyToken: 8 } as const;

/** What `serve` hands to `runServer`, and what it says on standard error before listening. */
export interface ServeSettings {
  readonly options: Record<string, unknown>;
  /** Warnings about the configuration (one line each). */
  readonly notes: readonly string[];
}

const TIMEOUT_FLAGS = [
  ['headers-timeout', 'headersTimeoutMs'],
  ['request-timeout', 'requestTimeoutMs'],
  ['keep-alive-timeout', 'keepAliveTimeoutMs'],
  ['idle-timeout', 'idleTimeoutMs'],
] as const;

const DAY_MS = 86_400_000;
const LOOPBACK = /^(?:127\.\d+\.\d+\.\d+|::1|localhost)$/i;

function portFlag(flag: string, text: string): number {
  const port = Number(text);
  if (!/^[0-9]+$/.test(text) || port > 65_535) throw new UsageError(`--${flag}: expected a port from 0 to 65535, got ${JSON.stringify(text)}`);
  return port;
}

function hostFlag(flag: string, text: string): string {
  const found = hostProblem(`--${flag}`, text);
  if (found) throw new UsageError(found.message);
  return text;
}

function timeoutFlag(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1 || ms > DAY_MS) throw new UsageError(`--${flag}: expected a duration from 1ms to 1d, such as 10s, 2m or 500ms, got ${JSON.stringify(text)}`);
  return ms;
}

/** `--max-in-flight-per-number N`: the ceiling of a number's in-flight window (WhatsApp channel). */
function inFlightFlag(text: string): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < 1 || n > MAX_IN_FLIGHT_PER_NUMBER) {
    throw new UsageError(`--max-in-flight-per-number: expected a whole number from 1 to ${MAX_IN_FLIGHT_PER_NUMBER} (sends of one number at the platform at once), got ${JSON.stringify(text)}`);
  }
  return n;
}

/** A key from a file: its text without surrounding whitespace (the newline an editor adds). */
function keyFromFile(io: Io, flag: string, file: string, check: (key: string) => string | undefined): string {
  let text: string;
  try {
    text = io.readFile(file);
  } catch (e) {
    throw new UsageError(`--${flag} ${file}: cannot read: ${readFailure(e)}`);
  }
  const key = text.trim();
  const problem = check(key);
  if (problem !== undefined) throw new UsageError(`--${flag} ${file}: ${problem}`);
  return key;
}

function metricsKeyProblem(key: string): string | undefined {
  const expected = `a key of ${MIN_METRICS_KEY_LENGTH} to 512 characters without whitespace (surrounding whitespace is ignored)`;
  if (key.length === 0) return `expected ${expected}, got an empty file`;
  if (/\s/.test(key)) return `expected ${expected}, got ${key.length} characters with whitespace inside`;
  if (key.length < MIN_METRICS_KEY_LENGTH || key.length > 512) return `expected ${expected}, got ${key.length} characters`;
  return undefined;
}

function reportKeyProblem(key: string): string | undefined {
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes >= MIN_REPORT_TOKEN_KEY_BYTES) return undefined;
  return `expected a key of at least ${MIN_REPORT_TOKEN_KEY_BYTES} bytes (surrounding whitespace is ignored), got ${bytes === 0 ? 'an empty file' : `${bytes} byte${bytes === 1 ? '' : 's'}`}`;
}

/**
 * The WhatsApp channel's secrets: from `--whatsapp-credentials FILE` (a JSON object with
 * `accessToken`, `appSecret`, `verifyToken`), else from the environment. Never echoed: a problem
 * says where the secret came from and its length only.
 */
function whatsAppSecrets(io: Io, file: string | undefined, env: NodeJS.ProcessEnv): Record<keyof typeof WHATSAPP_ENV, string> {
  let fromFile: Record<string, unknown> = {};
  if (file !== undefined) {
    let text: string;
    try {
      text = io.readFile(file);
    } catch (e) {
      throw new UsageError(`--whatsapp-credentials ${file}: cannot read: ${readFailure(e)}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UsageError(`--whatsapp-credentials ${file}: expected a JSON object { "accessToken", "appSecret", "verifyToken" }, got text that is not JSON`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new UsageError(`--whatsapp-credentials ${file}: expected a JSON object { "accessToken", "appSecret", "verifyToken" }`);
    fromFile = parsed as Record<string, unknown>;
    const unknown = Object.keys(fromFile).filter((k) => !(k in WHATSAPP_ENV));
    if (unknown.length > 0) throw new UsageError(`--whatsapp-credentials ${file}: no such field ${unknown.map((k) => JSON.stringify(k)).join(', ')} (known: accessToken, appSecret, verifyToken)`);
  }
  const secrets = {} as Record<keyof typeof WHATSAPP_ENV, string>;
  for (const key of Object.keys(WHATSAPP_ENV) as (keyof typeof WHATSAPP_ENV)[]) {
    const inFile = fromFile[key] !== undefined;
    const value = inFile ? fromFile[key] : env[WHATSAPP_ENV[key]];
    const where = inFile ? `--whatsapp-credentials ${file}: ${key}` : WHATSAPP_ENV[key];
    if (value === undefined || value === '') {
      throw new UsageError(`--channel whatsapp: needs ${key}: set ${WHATSAPP_ENV[key]} or give "${key}" in --whatsapp-credentials FILE`);
    }
    const found = secretProblem(where, value, WHATSAPP_MIN_LENGTH[key]);
    if (found) throw new UsageError(found.message);
    secrets[key] = value as string;
  }
  return secrets;
}

/** The flags being read, and what they make: `runServer` options, and notes for standard error. */
interface Reading {
  readonly values: Parsed['values'];
  readonly options: Record<string, unknown>;
  readonly notes: string[];
  /** A flag's text, when given. */
  readonly str: (flag: string) => string | undefined;
}

/** Checks the flags and maps them to `runServer` options. */
export function serveSettings(values: Parsed['values'], io: Io, env: NodeJS.ProcessEnv = process.env): ServeSettings {
  const r: Reading = { values, options: {}, notes: [], str: (k) => (typeof values[k] === 'string' ? values[k] : undefined) };
  const port = r.str('port');
  if (port !== undefined) r.options['port'] = portFlag('port', port);
  const host = r.str('host');
  if (host !== undefined) r.options['host'] = hostFlag('host', host);
  if (r.str('keys') !== undefined) r.options['keysFile'] = r.str('keys');
  if (r.str('snapshot') !== undefined) r.options['snapshotFile'] = r.str('snapshot');
  storageFlags(r);
  accessFlags(r, io);
  metricsFlags(r, io, host);
  connectionFlags(r);
  channelFlags(r, io, env);
  const smpp = smsChannelFlags(io, r.str('sms-channel'), r.str('smpp-config'), env);
  if (smpp !== undefined) {
    r.options['smpp'] = smpp;
    const where = (a: { host?: string; port?: number; tls?: boolean }) => {
      const tls = a.tls ?? smpp.tls;
      return `${a.host ?? smpp.host}:${a.port ?? smpp.port ?? (tls ? 3550 : 2775)}${tls ? ' (TLS)' : ''}`;
    };
    r.notes.push(`SMS go over SMPP to ${smpp.smscs ? smpp.smscs.map(where).join(', ') : where(smpp)}`);
  }
  return { options: r.options, notes: r.notes };
}

/** Where the state is kept: a directory (durable by default), Redis, or memory only; and `--recover`. */
function storageFlags(r: Reading): void {
  const { str, values, options } = r;
  // Durable by default: a 202 is a promise (docs/decisions.md, "The server is durable by default").
  const redis = str('redis');
  if (redis !== undefined) {
    // One of many instances: the state is in Redis, not in a directory of this one.
    if (str('data-dir') !== undefined || values['memory'] === true) throw new UsageError('--redis: the state is kept in Redis; give no --data-dir or --memory with it');
    if (!/^rediss?:\/\/[^\s]+$/.test(redis)) throw new UsageError(`--redis: expected a redis:// or rediss:// URL, got ${JSON.stringify(redis.replace(/\/\/[^@/]*@/, '//***@'))}`);
    const stateDir = str('state-dir');
    options['redis'] = { url: redis, ...(stateDir !== undefined ? { stateDir } : {}) };
  } else if (str('state-dir') !== undefined) {
    throw new UsageError('--state-dir: keeps what an instance on Redis saw of it; give it with --redis');
  } else if (values['memory'] === true) {
    if (str('data-dir') !== undefined) throw new UsageError('--memory and --data-dir: give one or the other');
  } else options['dataDir'] = str('data-dir') ?? 'sendpool-data';
  if (values['recover'] === true) {
    // A damaged store is refused at start; --recover starts from what is intact and reports the loss.
    if (options['dataDir'] === undefined) throw new UsageError(`--recover: recovers the durable store of --data-dir; there is none with ${redis !== undefined ? '--redis' : '--memory'}`);
    options['recover'] = true;
    r.notes.push(`--recover: a damaged or incomplete store in ${str('data-dir') ?? 'sendpool-data'} starts from what is intact, and what was lost is reported (docs/server.md, "A damaged store")`);
  }
}

/** What reaches the server from outside: its public base URL, the report links' key, private webhook targets. */
function accessFlags(r: Reading, io: Io): void {
  const baseUrl = r.str('public-base-url');
  if (baseUrl !== undefined) {
    const found = publicBaseUrlProblem('--public-base-url', baseUrl);
    if (found) throw new UsageError(found.message);
    r.options['publicBaseUrl'] = baseUrl;
  }
  const reportKeyFile = r.str('report-token-key-file');
  if (reportKeyFile !== undefined) r.options['reportTokenKey'] = keyFromFile(io, 'report-token-key-file', reportKeyFile, reportKeyProblem);
  if (r.values['allow-private-webhook-targets'] === true) {
    r.options['allowPrivateWebhookTargets'] = true;
    r.notes.push('webhooks and SMS callbacks may target loopback and private addresses (--allow-private-webhook-targets: for local development only)');
  }
}

/** `/metrics`: on its own listener, behind a key, or off; the dashboard off. A note when it is open beyond loopback. */
function metricsFlags(r: Reading, io: Io, host: string | undefined): void {
  const metricsPort = r.str('metrics-port');
  const metricsHost = r.str('metrics-host');
  const metricsKeyFile = r.str('metrics-key-file');
  if (metricsHost !== undefined && metricsPort === undefined) throw new UsageError('--metrics-host: needs --metrics-port (the port of the metrics listener)');
  const noMetrics = r.values['no-metrics'] === true;
  if (noMetrics && (metricsPort ?? metricsKeyFile) !== undefined) {
    throw new UsageError(`--no-metrics: serves no /metrics, so ${metricsPort !== undefined ? '--metrics-port' : '--metrics-key-file'} has nothing to configure`);
  }
  const metrics: Record<string, unknown> = {};
  if (metricsPort !== undefined) metrics['listen'] = { port: portFlag('metrics-port', metricsPort), host: metricsHost === undefined ? '127.0.0.1' : hostFlag('metrics-host', metricsHost) };
  if (metricsKeyFile !== undefined) metrics['key'] = keyFromFile(io, 'metrics-key-file', metricsKeyFile, metricsKeyProblem);
  if (r.values['no-dashboard'] === true) r.options['dashboard'] = false;
  if (noMetrics) r.options['metrics'] = false;
  else if (Object.keys(metrics).length > 0) r.options['metrics'] = metrics;
  else if (!LOOPBACK.test(host ?? '127.0.0.1')) {
    r.notes.push(`GET /metrics is open without a key on ${host ?? ''}; give --metrics-key-file or --metrics-port (docs/server.md, "Metrics")`);
  }
}

/** The connections' timeouts, and the already-sent window. */
function connectionFlags(r: Reading): void {
  const connections: Record<string, number> = {};
  for (const [flag, option] of TIMEOUT_FLAGS) {
    const text = r.str(flag);
    if (text !== undefined) connections[option] = timeoutFlag(flag, text);
  }
  // A shorter --request-timeout alone takes the headers timeout down with it (runServer does that).
  const headersMs = connections['headersTimeoutMs'];
  const requestMs = connections['requestTimeoutMs'] ?? DEFAULT_CONNECTIONS.requestTimeoutMs;
  if (headersMs !== undefined && headersMs > requestMs) {
    const given = r.str('request-timeout');
    throw new UsageError(
      `--headers-timeout: expected at most the request timeout (${given === undefined ? `${formatDuration(requestMs)}, the default of --request-timeout` : `--request-timeout ${given}`}), got ${JSON.stringify(r.str('headers-timeout'))}`,
    );
  }
  if (Object.keys(connections).length > 0) r.options['connections'] = connections;
  const alreadySent = r.str('already-sent-window');
  if (alreadySent !== undefined) {
    const ms = parseDuration(alreadySent);
    if (ms === undefined || ms > 366 * DAY_MS) throw new UsageError(`--already-sent-window: expected 0 (off) or a duration up to 366d, such as 24h, 7d or 30m, got ${JSON.stringify(alreadySent)}`);
    r.options['alreadySentWindowMs'] = ms;
  }
}

/** The messaging channel: simulated, or WhatsApp with its secrets and Graph API options. */
function channelFlags(r: Reading, io: Io, env: NodeJS.ProcessEnv): void {
  const { str } = r;
  const channel = str('channel') ?? 'simulated';
  if (channel !== 'simulated' && channel !== 'whatsapp') throw new UsageError(`--channel: expected "simulated" or "whatsapp", got ${JSON.stringify(channel)}`);
  if (channel === 'simulated') {
    for (const flag of ['whatsapp-credentials', 'graph-url', 'graph-api-version', 'max-in-flight-per-number']) {
      if (str(flag) !== undefined) throw new UsageError(`--${flag}: needs --channel whatsapp`);
    }
    return;
  }
  const graphUrl = str('graph-url');
  const graphVersion = str('graph-api-version');
  const inFlight = str('max-in-flight-per-number');
  if (graphUrl !== undefined && !/^https?:\/\/[^\s?#@]+$/.test(graphUrl))
    throw new UsageError(`--graph-url: expected an http or https URL such as https://graph.facebook.com, got ${JSON.stringify(graphUrl)}`);
  if (graphVersion !== undefined && !/^v\d+\.\d+$/.test(graphVersion)) throw new UsageError(`--graph-api-version: expected a Graph API version such as v23.0, got ${JSON.stringify(graphVersion)}`);
  const maxInFlightPerNumber = inFlight === undefined ? undefined : inFlightFlag(inFlight);
  r.options['whatsapp'] = {
    ...whatsAppSecrets(io, str('whatsapp-credentials'), env),
    ...(graphUrl !== undefined ? { graphUrl } : {}),
    ...(graphVersion !== undefined ? { apiVersion: graphVersion } : {}),
    ...(maxInFlightPerNumber !== undefined ? { maxInFlightPerNumber } : {}),
  };
}
