/**
 * Webhook signing, per the Standard Webhooks specification (standardwebhooks.com), so receivers
 * can verify a delivery with any of its libraries or with {@link verifyWebhook}. The spec of the
 * service does not say how receivers verify (5.4): this is our answer.
 *
 * - `webhook-id`: the payload's `event_id` (the same on every retry, so it doubles as the
 *   idempotency key);
 * - `webhook-timestamp`: integer seconds since the epoch at the attempt;
 * - `webhook-signature`: `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, several
 *   space-separated during a secret rotation;
 * - the secret, one per company, is `whsec_` + base64 of 32 random bytes; the HMAC key is the
 *   decoded bytes.
 */
import { ArgumentError } from '../core/errors.js';
import { hmacSha256, sameBytes } from './hmac.js';
import type { RandomSource } from './random.js';

/** How far a `webhook-timestamp` may be from the receiver's clock, either way: 5 minutes. */
export const WEBHOOK_TOLERANCE_MS = 5 * 60_000;

const PREFIX = 'whsec_';

/** A new company secret: `whsec_` + base64 of 32 bytes from `random`. */
export function generateWebhookSecret(random: RandomSource): string {
  return PREFIX + Buffer.from(random.randomBytes(32)).toString('base64');
}

function keyOf(secret: string, api: string): Buffer {
  const b64 = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  const key = Buffer.from(b64, 'base64');
  if (b64.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || key.length < 16) {
    throw new ArgumentError(`${api}(secret)`, 'a "whsec_" secret with at least 16 base64-encoded bytes', `${secret.length} characters`);
  }
  return key;
}

/** The three Standard Webhooks headers (a type alias, so it passes as a plain header record). */
export type WebhookHeaders = {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
};

/** What to sign: one delivery attempt. */
export interface SignWebhookInput {
  /** The event id (`event_id` of the payload). */
  readonly id: string;
  /** Attempt time, epoch milliseconds (written in whole seconds). */
  readonly now: number;
  /** The exact body bytes sent, as a string (the JSON text). */
  readonly body: string;
  /** The company's secret; several during a rotation (each signs). */
  readonly secret: string | readonly string[];
}

function signatureOf(key: Buffer, id: string, timestamp: string, body: string): Buffer {
  return hmacSha256(key, `${id}.${timestamp}.${body}`);
}

/** The headers of one delivery attempt. Sign at every attempt: the timestamp is the attempt's. */
export function signWebhook(input: SignWebhookInput): WebhookHeaders {
  if (input.id.length === 0 || /[\s.]/.test(input.id)) {
    throw new ArgumentError('signWebhook(id)', 'a non-empty id without spaces or dots', JSON.stringify(input.id));
  }
  const timestamp = String(Math.floor(input.now / 1000));
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  if (secrets.length === 0) throw new ArgumentError('signWebhook(secret)', 'at least one secret', 'none');
  const signatures = secrets.map((s) => `v1,${signatureOf(keyOf(s, 'signWebhook'), input.id, timestamp, input.body).toString('base64')}`);
  return { 'webhook-id': input.id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}

/** Headers as receivers have them: a fetch `Headers`, or Node's lower-cased header object. */
export type ReceivedHeaders = { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Why {@link verifyWebhook} refused a delivery. */
export type WebhookRejection =
  /** One of the three headers is missing. */
  | 'missing-header'
  /** `webhook-timestamp` is not an integer number of seconds. */
  | 'bad-timestamp'
  /** Signed more than the tolerance before now: a replay, or a badly late delivery. */
  | 'timestamp-too-old'
  /** Signed more than the tolerance after now: the clocks disagree. */
  | 'timestamp-too-new'
  /** No `v1` signature matches: wrong secret, or the id, timestamp or body were altered. */
  | 'bad-signature';

/** The answer of {@link verifyWebhook}. */
export type WebhookVerdict = { readonly ok: true; readonly id: string; readonly timestamp: number } | { readonly ok: false; readonly reason: WebhookRejection };

/** What a receiver passes to {@link verifyWebhook}. */
export interface VerifyWebhookInput {
  readonly headers: ReceivedHeaders;
  /** The raw body text, exactly as received (not re-serialised JSON). */
  readonly body: string;
  /** The company's secret, or the current and previous ones during a rotation. */
  readonly secret: string | readonly string[];
  /** The receiver's clock, epoch milliseconds. */
  readonly now: number;
  /** Accepted clock difference either way. @default WEBHOOK_TOLERANCE_MS (5 minutes) */
  readonly toleranceMs?: number;
}

function header(headers: ReceivedHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  for (const [k, v] of Object.entries(record)) {
    if (k.toLowerCase() === name) return typeof v === 'string' ? v : v?.[0];
  }
  return undefined;
}

/**
 * Verifies a delivery for a receiver: all three headers, a timestamp within 5 minutes of `now`
 * (boundaries included), and a matching `v1` signature (compared in constant time). Receivers then
 * deduplicate by `webhook-id`: delivery is at least once.
 */
export function verifyWebhook(input: VerifyWebhookInput): WebhookVerdict {
  const id = header(input.headers, 'webhook-id');
  const ts = header(input.headers, 'webhook-timestamp');
  const sig = header(input.headers, 'webhook-signature');
  if (!id || !ts || !sig) return { ok: false, reason: 'missing-header' };
  if (!/^\d{1,15}$/.test(ts)) return { ok: false, reason: 'bad-timestamp' };
  const timestamp = Number(ts);
  const tolerance = input.toleranceMs ?? WEBHOOK_TOLERANCE_MS;
  // NaN compares false both ways and would switch the replay check off: refuse it as a host bug.
  if (!Number.isFinite(input.now)) throw new ArgumentError('verifyWebhook(now)', 'a finite clock time in milliseconds', String(input.now));
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new ArgumentError('verifyWebhook(toleranceMs)', 'a finite number of milliseconds, 0 or more', String(tolerance));
  }
  const age = input.now - timestamp * 1000;
  if (age > tolerance) return { ok: false, reason: 'timestamp-too-old' };
  if (-age > tolerance) return { ok: false, reason: 'timestamp-too-new' };
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  const expected = secrets.map((s) => signatureOf(keyOf(s, 'verifyWebhook'), id, ts, input.body));
  for (const part of sig.split(' ')) {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== 'v1') continue;
    const given = Buffer.from(part.slice(comma + 1), 'base64');
    if (expected.some((e) => sameBytes(e, given))) return { ok: true, id, timestamp };
  }
  return { ok: false, reason: 'bad-signature' };
}
