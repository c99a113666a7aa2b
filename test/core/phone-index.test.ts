import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PhoneIndex } from '../../src/core/phone-index.js';

describe('PhoneIndex', () => {
  it('finds every key it was given and nothing else, like a Map', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 16 }), { maxLength: 300 }), fc.array(fc.string({ maxLength: 16 }), { maxLength: 50 }), fc.boolean(), (keys, probes, presize) => {
        const index = new PhoneIndex(keys);
        if (presize) index.sizeFor(keys.length);
        keys.forEach((_, slot) => index.add(slot));
        const reference = new Map(keys.map((k, i) => [k, i]));
        expect(index.size).toBe(keys.length);
        for (const k of [...keys, ...probes]) expect(index.get(k)).toBe(reference.get(k));
      }),
    );
  });
});
