import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstInvalidUtf8, utf8Problem } from '../../src/server/lib/utf8-check.js';

// Bytes that are mostly UTF-8 with damage: valid text encoded, then some bytes overwritten.
const damaged = fc.tuple(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 })).map(([text, edits]) => {
  const bytes = Buffer.from(text);
  for (const [at, b] of edits) if (bytes.length > 0) bytes[at % bytes.length] = b;
  return bytes;
});

describe('UTF-8 check of a body', () => {
  it('finds an invalid sequence exactly when Node says the bytes are not UTF-8, and everything before it is UTF-8', () => {
    fc.assert(
      fc.property(fc.oneof(damaged, fc.uint8Array({ maxLength: 12 })), (bytes) => {
        const at = firstInvalidUtf8(bytes);
        expect(at === bytes.length).toBe(isUtf8(bytes));
        expect(isUtf8(bytes.subarray(0, at))).toBe(true);
        expect(utf8Problem(bytes) === undefined).toBe(isUtf8(bytes));
      }),
      { seed: 20_261_128, numRuns: 2000 },
    );
  });

  it('refuses overlong forms, surrogates, code points past U+10FFFF and cut sequences', () => {
    for (const bad of [[0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xe2, 0x82], [0x80]]) {
      expect(firstInvalidUtf8(Uint8Array.from([0x41, ...bad]))).toBe(1);
    }
    expect(firstInvalidUtf8(Buffer.from('é€𝄞'))).toBe(9);
  });
});
