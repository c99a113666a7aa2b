/**
 * The places large request bodies take to be decoded and checked (src/server/body-parser.ts):
 * first come first served, never more than its width in at once, a place given back once however
 * often its release is called.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BodyGate } from '../../src/server/body-parser.js';

/** Lets every pending promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('BodyGate', () => {
  it('admits in the order asked, at most `width` at once, under any order of releases (repeated releases count once)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 12 }), fc.array(fc.nat(), { maxLength: 40 }), async (width, count, picks) => {
        const gate = new BodyGate(width);
        const admitted: number[] = [];
        const releases = new Map<number, () => void>();
        for (let i = 0; i < count; i++) void gate.enter().then((release) => (admitted.push(i), releases.set(i, release)));
        await settle();
        const released = new Set<number>();
        for (const pick of [...picks, ...Array.from({ length: count * 2 }, (_, i) => i)]) {
          const inside = [...releases.keys()].filter((i) => !released.has(i));
          expect(inside.length).toBeLessThanOrEqual(width);
          expect(admitted).toEqual(Array.from({ length: admitted.length }, (_, i) => i));
          // Every place is taken while some wait.
          if (admitted.length < count) expect(inside.length).toBe(width);
          const all = [...releases.keys()];
          if (all.length === 0) break;
          const i = all[pick % all.length]!;
          releases.get(i)!();
          released.add(i);
          await settle();
        }
        expect(admitted).toHaveLength(count);
        expect(gate.waiting).toBe(0);
      }),
      { seed: 20261128, numRuns: 200 },
    );
  });
});
