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

  it('grows a large set without moving it all at once: one add after a doubling moves 16 slots', () => {
    const set = new PhoneHashSet();
    let p = 5511900000000;
    // 2^17 slots at half load: the next add doubles to 2^18.
    while (set.size < 65_536) set.add(p++);
    expect(set.growing).toBe(false);
    set.add(p++);
    expect(set.growing).toBe(true);
    // 131,072 old slots at 16 per change: the move ends after 8,192 more changes, not before.
    for (let k = 0; k < 8190; k++) set.add(p++);
    expect(set.growing).toBe(true);
    for (let k = 0; k < 2; k++) set.add(p++);
    expect(set.growing).toBe(false);
    expect(set.size).toBe(65_536 + 1 + 8192);
  });
});
