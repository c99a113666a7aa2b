/**
 * Meta's proofs on its webhooks: the verification handshake of a subscription (GET with
 * `hub.mode=subscribe`, `hub.verify_token`, `hub.challenge`) and the `X-Hub-Signature-256` header
 * of every notification, `sha256=` and the hex HMAC-SHA256 of the raw body keyed with the app
 * secret. Both compared in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** `sha256=<hex>` of `body` with `secret`: what Meta sends (and the tests' fake sends). */
export function signatureOf(body: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Whether `header` is the signature of `body` with `secret`. */
export function verifySignature(body: Buffer, header: string | string[] | undefined, secret: string): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const hex = header.slice(7);
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
}

/** Whether two secrets are equal, in time independent of where they differ. */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  // Hash both first: timingSafeEqual needs equal lengths, and the length must not leak either.
  const a = createHmac('sha256', 'sendpool-compare').update(given).digest();
  const b = createHmac('sha256', 'sendpool-compare').update(expected).digest();
  return timingSafeEqual(a, b);
}
