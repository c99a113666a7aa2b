import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gsm7Septets, smsPartTexts, smsSize } from '../../src/contract/index.js';

describe('smsSize', () => {
  it('GSM-7: 160 characters in one part, 161 in two (153 per part)', () => {
    expect(smsSize('a'.repeat(160))).toEqual({ encoding: 'GSM-7', units: 160, parts: 1 });
    expect(smsSize('a'.repeat(161))).toEqual({ encoding: 'GSM-7', units: 161, parts: 2 });
    expect(smsSize('a'.repeat(306))).toEqual({ encoding: 'GSM-7', units: 306, parts: 2 });
    expect(smsSize('a'.repeat(307))).toEqual({ encoding: 'GSM-7', units: 307, parts: 3 });
  });

  it('GSM-7 extension characters count twice', () => {
    for (const c of ['^', '{', '}', '\\', '[', '~', ']', '|', '€', '\f']) expect(gsm7Septets(c), c).toBe(2);
    expect(smsSize('€'.repeat(80))).toEqual({ encoding: 'GSM-7', units: 160, parts: 1 });
    expect(smsSize(`${'€'.repeat(80)}a`)).toEqual({ encoding: 'GSM-7', units: 161, parts: 2 });
  });

  it('an extension character is not split across parts', () => {
    // 152 septets then "€" (2): 154 > 153, so the euro starts part 2.
    const text = `${'a'.repeat(152)}€${'a'.repeat(152)}`;
    expect(smsSize(text)).toEqual({ encoding: 'GSM-7', units: 306, parts: 3 });
  });

  it('basic-set accents (é, ü, Ç, à) stay GSM-7; Portuguese ã, ç, á switch to UCS-2', () => {
    expect(smsSize('Café à Ça über').encoding).toBe('GSM-7');
    expect(smsSize('Olá, João').encoding).toBe('UCS-2');
    expect(smsSize('ação').encoding).toBe('UCS-2');
  });

  it('UCS-2: 70 units in one part, 71 in two (67 per part); emoji take two units, never split', () => {
    expect(smsSize('ç'.repeat(70))).toEqual({ encoding: 'UCS-2', units: 70, parts: 1 });
    expect(smsSize('ç'.repeat(71))).toEqual({ encoding: 'UCS-2', units: 71, parts: 2 });
    expect(smsSize('😀'.repeat(35))).toEqual({ encoding: 'UCS-2', units: 70, parts: 1 });
    // 66 units + an emoji (2) does not fit 67: 3 parts for 66 + 2 + 66.
    expect(smsSize(`${'ç'.repeat(66)}😀${'ç'.repeat(66)}`)).toEqual({ encoding: 'UCS-2', units: 134, parts: 3 });
  });

  it('empty text has no parts', () => {
    expect(smsSize('')).toEqual({ encoding: 'GSM-7', units: 0, parts: 0 });
  });

  it('parts are enough for the units and never more than one extra per split character', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 800, unit: fc.constantFrom('a', '€', 'ç', '😀', ' ') }), (text) => {
        const { encoding, units, parts } = smsSize(text);
        const [single, per] = encoding === 'GSM-7' ? [160, 153] : [70, 67];
        if (units <= single) expect(parts).toBe(1);
        else {
          expect(parts).toBeGreaterThanOrEqual(Math.ceil(units / per));
          expect(parts).toBeLessThanOrEqual(Math.ceil(units / (per - 1)));
        }
      }),
    );
  });
});

describe('smsPartTexts', () => {
  const unitsOf = (text: string, encoding: 'GSM-7' | 'UCS-2') => (encoding === 'GSM-7' ? [...text].reduce((n, c) => n + gsm7Septets(c), 0) : text.length);

  it('cuts exactly as many parts as smsSize counts, in order, each within its size', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 0, maxLength: 1600, unit: fc.constantFrom('a', '€', '[', 'ç', '😀', ' ', 'é') }), (text) => {
        const size = smsSize(text);
        const parts = smsPartTexts(text, size.encoding);
        expect(parts.length).toBe(size.parts);
        expect(parts.join('')).toBe(text);
        const limit = size.parts === 1 ? (size.encoding === 'GSM-7' ? 160 : 70) : size.encoding === 'GSM-7' ? 153 : 67;
        for (const part of parts) {
          expect(part.length).toBeGreaterThan(0);
          expect(unitsOf(part, size.encoding)).toBeLessThanOrEqual(limit);
        }
      }),
    );
  });

  it('keeps an extension character and a surrogate pair whole', () => {
    const gsm = smsPartTexts(`${'a'.repeat(152)}€${'a'.repeat(152)}`, 'GSM-7');
    expect(gsm).toEqual(['a'.repeat(152), `€${'a'.repeat(151)}`, 'a']);
    const ucs = smsPartTexts(`${'ç'.repeat(66)}😀${'ç'.repeat(66)}`, 'UCS-2');
    expect(ucs).toEqual(['ç'.repeat(66), `😀${'ç'.repeat(65)}`, 'ç']);
  });
});
