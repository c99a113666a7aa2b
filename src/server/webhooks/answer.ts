/**
 * A receiver's answer to a webhook POST, as both transports (undici-transport.ts, the `http` path of
 * delivery-worker.ts) give it, and how a failed attempt is classified for the outbox.
 */

const ATTEMPT = Symbol.for('sendpool.WebhookAttemptError');

/**
 * An attempt sendpool ended itself: its deadline passed (`timeout`, `connect timeout`), or the
 * connect-time address check refused its target (safe-lookup.ts). It has the shape of Node's
 * network errors (a `code`, a `syscall`, each only when given), so {@link attemptFailure}
 * classifies it as it classifies theirs.
 */
export class WebhookAttemptError extends Error {
  readonly [ATTEMPT] = true;
  declare readonly code?: string;
  declare readonly syscall?: string;

  constructor(message: string, code?: string, syscall?: string) {
    super(message);
    this.name = 'WebhookAttemptError';
    if (code !== undefined) this.code = code;
    if (syscall !== undefined) this.syscall = syscall;
  }
}

/** True when `e` is a {@link WebhookAttemptError}, from this copy of sendpool or another. */
export function isWebhookAttemptError(e: unknown): e is WebhookAttemptError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[ATTEMPT] === true;
}

/** Bytes of a failing (non-2xx) answer's body kept for its error (the dead letter's `lastError`). */
export const ANSWER_BYTES = 256;

/** The status, and for a failing answer the first {@link ANSWER_BYTES} bytes of its body as UTF-8. */
export interface Answer {
  readonly status: number;
  readonly body?: string;
}

/**
 * Error codes of a request for which no connection could be opened: the name did not resolve, the
 * host or network is unreachable, the port refused, the TLS handshake failed (certificate errors
 * included), the connect timed out, or the connect-time address check refused it. Nothing
 * path-specific happened, so the receiver (origin) is down (Outbox, rule (a)).
 */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EAI_NODATA',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  // safe-lookup.ts: the name resolves to an address webhooks may not reach.
  'EADDRNOTPUBLIC',
  // undici's connect timeout (ConnectTimeoutError).
  'UND_ERR_CONNECT_TIMEOUT',
  // TLS: OpenSSL's verification results as Node names them (ERR_TLS_*, ERR_SSL_*, CERT_* by prefix below).
  'EPROTO',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_CRL',
  'HOSTNAME_MISMATCH',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
]);

const CONNECT_PREFIXES = ['ERR_TLS_', 'ERR_SSL_', 'CERT_'];

/** System calls whose failure means no connection was opened. */
const CONNECT_SYSCALLS = new Set(['connect', 'getaddrinfo', 'lookup', 'queryA', 'queryAaaa']);

/**
 * The failure of an attempt that threw (no answer): its text for the dead letter (the error code
 * when it has one: `ECONNREFUSED`, `ECONNRESET`; `connect timeout`; else the message) and whether
 * no connection could be opened (`connect`).
 */
export function attemptFailure(e: unknown): { ok: false; error: string; connect: boolean } {
  // Happy eyeballs (several addresses) fails with every address's error together.
  const inner = e instanceof AggregateError && (e as { code?: unknown }).code === undefined && e.errors.length > 0 ? (e.errors[0] as unknown) : e;
  const code = field(inner, 'code');
  const syscall = field(inner, 'syscall');
  const connect = code !== undefined && (CONNECT_CODES.has(code) || CONNECT_PREFIXES.some((p) => code.startsWith(p)) || (syscall !== undefined && CONNECT_SYSCALLS.has(syscall)));
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || (code === 'ETIMEDOUT' && syscall === 'connect')) return { ok: false, error: 'connect timeout', connect: true };
  if (code !== undefined) return { ok: false, error: code, connect };
  const message = field(inner, 'message');
  return { ok: false, error: message !== undefined ? message.slice(0, 200) : 'network error', connect: false };
}

function field(e: unknown, name: string): string | undefined {
  if (e === null || typeof e !== 'object') return undefined;
  const v = (e as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
}
