/**
 * The compact phone set (src/server/phone-hash-set.ts) against a plain `Set`: the same answers for
 * any sequence of adds, deletes and lookups, also while a growth is still moving phones from the old
 * table to the new one a few slots per change.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PhoneHashSet } from '../../src/server/phone-hash-set.js';

type Op = { readonly op: 'add' | 'delete' | 'has'; readonly phone: number };

/** Phones from a small range (so adds, deletes and lookups meet the same ones), as integers of 13 digits. */
const phone = fc.integer({ min: 0, max: 3000 }).map((i) => 5511900000000 + i * 7919);
const op: fc.Arbitrary<Op> = fc.record({ op: fc.constantFrom('add', 'add', 'add', 'delete', 'has'), phone });

describe('PhoneHashSet', () => {
  it('answers as a Set for every sequence of adds, deletes and lookups, through incremental growths', () => {
    let sawGrowth = 0;
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 4000, size: 'max' }), fc.integer({ min: 0, max: 64 }), (ops, capacity) => {
        const set = new PhoneHashSet(capacity);
        const model = new Set<number>();
        for (const { op: kind, phone: p } of ops) {
          if (kind === 'add') expect(set.add(p)).toBe(!model.has(p) && model.add(p) !== undefined);
          else if (kind === 'delete') expect(set.delete(p)).toBe(model.delete(p));
          else expect(set.has(p)).toBe(model.has(p));
          if (set.growing) sawGrowth++;
          expect(set.size).toBe(model.size);
        }
        expect([...set.values()].sort((a, b) => a - b)).toEqual([...model].sort((a, b) => a - b));
        for (const p of model) expect(set.has(p)).toBe(true);
      }),
      // Sequences of thousands of steps: a failure is reported as found (shrinking them takes minutes).
      { seed: 20261127, numRuns: 40, endOnFailure: true },
    );
    // The property covered sets in the middle of a growth, not only settled ones.
    expect(sawGrowth).toBeGreaterThan(1000);
  });

  it('moves a growth a few slots per change: the old table is still there right after the doubling, gone later', () => {
    const set = new PhoneHashSet();
    let p = 5511900000000;
    while (!set.growing) set.add(p++);
    // Doubled at half load (17 phones in 32 slots): the new table and the old one, being emptied, are both held.
    const during = set.bytes;
    expect(set.size).toBe(17);
    expect(during).toBe((32 + 64) * 8);
    while (set.growing) set.add(p++);
    expect(set.bytes).toBeLessThan(during);
    // Every phone added is still there after its move.
    for (let q = 5511900000000; q < p; q++) expect(set.has(q)).toBe(true);
    expect(set.size).toBe(p - 5511900000000);
  });

  it('grows a large set without moving it all at once: each change after a doubling moves 4 slots', () => {
    const set = new PhoneHashSet();
    let p = 5511900000000;
    // 2^17 slots at half load: the next add doubles to 2^18.
    while (set.size < 65_536) set.add(p++);
    expect(set.growing).toBe(false);
    set.add(p++);
    expect(set.growing).toBe(true);
    // 131,072 old slots at 4 per change: the move ends after 32,768 more changes, not before.
    for (let k = 0; k < 32_766; k++) set.add(p++);
    expect(set.growing).toBe(true);
    for (let k = 0; k < 2; k++) set.add(p++);
    expect(set.growing).toBe(false);
    expect(set.size).toBe(65_536 + 1 + 32_768);
  });
  it('keeps set semantics through the growths of a large set, its next table prepared ahead, with deletes on the way', () => {
    const set = new PhoneHashSet();
    const model = new Set<number>();
    // mulberry32 from a fixed seed.
    let seed = 20261127;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    let prepared = 0;
    for (let k = 0; k < 300_000; k++) {
      const p = 5511900000000 + Math.floor(random() * 400_000) * 7919;
      if (random() < 0.8) expect(set.add(p)).toBe(!model.has(p) && model.add(p) !== undefined);
      else expect(set.delete(p)).toBe(model.delete(p));
      // The next table is held ahead of the doubling (prepared): one table and one twice its size.
      const slots = set.bytes / 8;
      if (!set.growing && (slots & (slots - 1)) !== 0) prepared++;
    }
    expect(prepared).toBeGreaterThan(0);
    expect(set.size).toBe(model.size);
    for (let i = 0; i < 400_000; i += 7) {
      const p = 5511900000000 + i * 7919;
      expect(set.has(p)).toBe(model.has(p));
    }
  });
});
