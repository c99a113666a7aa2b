/** HMAC-SHA256 and constant-time comparison (node:crypto, computation only). */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** A key as the host holds it: raw bytes, or a string taken as UTF-8. */
export type SecretKey = string | Uint8Array;

/** HMAC-SHA256 of `message` under `key`. */
export function hmacSha256(key: SecretKey, message: string): Buffer {
  return createHmac('sha256', typeof key === 'string' ? Buffer.from(key, 'utf8') : key)
    .update(message, 'utf8')
    .digest();
}

/** Constant-time equality of two byte strings (false for different lengths, without early exit on content). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
