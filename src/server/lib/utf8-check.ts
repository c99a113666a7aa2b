/**
 * A body's bytes must be UTF-8 (RFC 8259 §8.1): decoding invalid bytes would store U+FFFD in their
 * place, silently changing the client's text (a name, a variable). Node's `isUtf8` answers at
 * memory speed; the offset of the first invalid sequence is looked for only when it says no, to
 * name it in the error.
 */
import { isUtf8 } from 'node:buffer';
import type { Problem } from '../../core/problems.js';

/** The problem of a body that is not UTF-8, naming the first invalid byte, or undefined when it is UTF-8. */
export function utf8Problem(bytes: Uint8Array): Problem | undefined {
  if (isUtf8(bytes)) return undefined;
  const at = firstInvalidUtf8(bytes);
  const shown = Array.from(bytes.subarray(at, at + 4), (b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');
  const actual = `bytes that are not UTF-8 at byte ${at} (${shown})`;
  // Described as it is (as JSON syntax errors are), not as a JSON value.
  return { path: '$', expected: 'a body encoded in UTF-8', actual, message: `$: expected a body encoded in UTF-8, got ${actual}` };
}

/** Offset of the first byte that does not start or continue a well-formed UTF-8 sequence (Unicode 15, table 3-7). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    const n = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (n < 0 || i + n >= bytes.length) return i;
    // The second byte's range depends on the first (no overlong forms, no surrogates, nothing past U+10FFFF).
    const second = bytes[i + 1]!;
    const low = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    const high = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
    if (second < low || second > high) return i;
    for (let k = 2; k <= n; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return bytes.length;
}
