/** Test doubles for the events subsystem: a seeded random source. */
import fc from 'fast-check';
import type { RandomSource } from '../../src/events/random.js';

/** A deterministic RandomSource (mulberry32), so runs replay exactly. */
export function seededRandom(seed = 1): RandomSource & { calls: number } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const source = {
    calls: 0,
    randomBytes(n: number): Uint8Array {
      source.calls++;
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = next() & 0xff;
      return out;
    },
  };
  return source;
}

/** Arbitrary seeded random source. */
export const arbRandom = fc.integer().map((s) => seededRandom(s));

/** 2025-01-01T12:00:00Z. */
export const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
