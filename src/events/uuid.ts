/**
 * `event_id` of every payload: a UUID v4 (spec 6), built from the injected {@link RandomSource}.
 */
import { ArgumentError } from '../core/errors.js';
import type { RandomSource } from './random.js';

const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Any UUID, any version or case: what the schemas' `uuid` format accepts (`ticket_uuid`). */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Lower-case canonical UUID v4: 8-4-4-4-12 hex digits, version nibble 4, variant bits 10. */
export const UUID_V4_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A UUID v4 from 16 bytes of `random`, with the version (4) and variant (RFC 9562) bits set. */
export function uuidV4(random: RandomSource): string {
  const bytes = random.randomBytes(16);
  if (bytes.length < 16) {
    throw new ArgumentError('RandomSource.randomBytes(16)', '16 bytes', `${bytes.length} bytes`);
  }
  // Written out byte by byte: this runs for every webhook event.
  let out = '';
  for (let i = 0; i < 16; i++) {
    let x = bytes[i]!;
    if (i === 6) x = (x & 0x0f) | 0x40;
    else if (i === 8) x = (x & 0x3f) | 0x80;
    if (i === 4 || i === 6 || i === 8 || i === 10) out += '-';
    out += HEX[x]!;
  }
  return out;
}

/**
 * The `index`-th id of a family drawn once (`base`, a UUID v4): the base with its last 32 bits
 * XORed with the index, still a UUID v4. Ids of one family differ; ids of two families collide
 * only if their bases agree in their other 90 random bits. Internal.
 */
export function uuidV4At(base: string, index: number): string {
  const low = (Number.parseInt(base.slice(28), 16) ^ index) >>> 0;
  return base.slice(0, 28) + low.toString(16).padStart(8, '0');
}

/** True for a canonical lower-case UUID v4 string. */
export function isUuidV4(value: unknown): value is string {
  return typeof value === 'string' && UUID_V4_PATTERN.test(value);
}
