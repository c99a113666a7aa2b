/**
 * A large body's bytes become text in slices (src/server/body-parser.ts): the pieces, cut before a
 * character's first byte, join to exactly what `Buffer.toString('utf8')` gives, for any text and
 * for bytes that are not valid UTF-8.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startBodyText } from '../../src/server/body-parser.js';

function sliced(bytes: Buffer, unit: number): { text: string; steps: number } {
  const t = startBodyText(bytes, unit);
  let steps = 1;
  while (!t.step()) steps++;
  return { text: t.text(), steps };
}

describe('startBodyText', () => {
  it('gives the text of whole decoding for any text (1- to 4-byte characters) and any unit', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.integer({ min: 1, max: 40 }), (s, unit) => {
        const bytes = Buffer.from(s, 'utf8');
        expect(sliced(bytes, unit).text).toBe(bytes.toString('utf8'));
      }),
      { seed: 20261127, numRuns: 500 },
    );
  });

  it('gives the text of whole decoding for bytes that are not valid UTF-8', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 1, max: 40 }), (raw, unit) => {
        const bytes = Buffer.from(raw);
        expect(sliced(bytes, unit).text).toBe(bytes.toString('utf8'));
      }),
      { seed: 20261127, numRuns: 500 },
    );
  });

  it('decodes a body of 1 MB in pieces of 64 KiB', () => {
    const bytes = Buffer.from(JSON.stringify({ contacts: Array.from({ length: 10_000 }, (_, i) => ({ phone_number: `55119${80_000_000 + i}`, name: 'João Ñandú 😀' })) }));
    const { text, steps } = sliced(bytes, 64 * 1024);
    expect(text).toBe(bytes.toString('utf8'));
    expect(steps).toBe(Math.ceil(bytes.length / (64 * 1024)));
  });
});
