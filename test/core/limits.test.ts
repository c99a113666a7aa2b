import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore, isArgumentError } from '../../src/index.js';
import { gcraAvailable, gcraAvailableAt, gcraTake } from '../../src/core/limits/gcra.js';
import { type Send, windowViolation } from './window-check.js';

const HOUR = 3_600_000;

/**
 * The reference token bucket: tokens scaled by the period, so refill and spend are integers
 * (S = tokens x P; refill adds elapsed x C, a message costs P). Formulated apart from GCRA.
 */
class ReferenceBucket {
  #scaled: number;
  #at = 0;
  constructor(
    readonly capacity: number,
    readonly period: number,
  ) {
    this.#scaled = capacity * period;
  }
  available(now: number): number {
    this.#refill(now);
    return Math.floor(this.#scaled / this.period);
  }
  take(n: number, now: number): void {
    this.#refill(now);
    this.#scaled -= n * this.period;
  }
  #refill(now: number): void {
    this.#scaled = Math.min(this.capacity * this.period, this.#scaled + (now - this.#at) * this.capacity);
    this.#at = now;
  }
}

describe('GCRA window', () => {
  it('agrees exactly with a reference token bucket over random traffic', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 400_000 }), fc.double({ min: 0, max: 1, noNaN: true })), { maxLength: 60 }), (capacity, steps) => {
        const ref = new ReferenceBucket(capacity, HOUR);
        const state = new Float64Array(2);
        let now = 0;
        for (const [dt, share] of steps) {
          now += dt;
          const available = gcraAvailable(state[0]!, state[1]!, capacity, HOUR, now);
          expect(available).toBe(ref.available(now));
          const n = Math.floor(available * share);
          gcraTake(state[0]!, state[1]!, capacity, HOUR, now, n, state, 0);
          ref.take(n, now);
        }
      }),
    );
  });

  it('availableAt is the first millisecond the tokens are there', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 0, max: HOUR }), (capacity, taken, now) => {
        const n = Math.min(taken, capacity);
        const state = new Float64Array(2);
        gcraTake(0, 0, capacity, HOUR, now, n, state, 0);
        for (const want of [1, Math.ceil(capacity / 2), capacity]) {
          const at = gcraAvailableAt(state[0]!, state[1]!, capacity, HOUR, now, want);
          expect(gcraAvailable(state[0]!, state[1]!, capacity, HOUR, at)).toBeGreaterThanOrEqual(want);
          if (at > now) expect(gcraAvailable(state[0]!, state[1]!, capacity, HOUR, at - 1)).toBeLessThan(want);
        }
        expect(gcraAvailableAt(state[0]!, state[1]!, capacity, HOUR, now, capacity + 1)).toBe(Infinity);
      }),
    );
  });

  it('has no drift: 1,000/h gives exactly one message per 3.6 s after a full burst', () => {
    const store = new MemoryStore();
    const h = store.open('5511990000001', { perHour: 1000, per24h: 1_000_000 }, 0);
    expect(store.available(h, 0)).toBe(1000);
    expect(store.reserve(h, 1001, 0)).toBe(1000); // all it has, no more
    expect(store.available(h, 3599)).toBe(0);
    expect(store.available(h, 3600)).toBe(1);
    expect(store.available(h, HOUR)).toBe(1000);
    expect(store.availableAt(h, 1, 0)).toBe(3600);
  });
});

describe('MemoryStore', () => {
  it('enforces every window together and never exceeds any of them', () => {
    fc.assert(
      fc.property(
        fc.record({
          perHour: fc.integer({ min: 1, max: 3_000 }),
          per24h: fc.integer({ min: 1, max: 20_000 }),
          perSecond: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
        }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 * HOUR }), fc.double({ min: 0, max: 1, noNaN: true })), { maxLength: 80 }),
        (limits, steps) => {
          const store = new MemoryStore();
          const h = store.open('5511990000001', limits, 0);
          const sends: Send[] = [];
          let now = 0;
          for (const [dt, share] of steps) {
            now += dt;
            const a = store.available(h, now);
            const n = Math.max(0, Math.min(a, Math.ceil(a * share)));
            expect(store.reserve(h, n, now)).toBe(n);
            sends.push({ at: now, count: n });
            // availableAt agrees with available (probed on a copy: a store's time only moves forward).
            const at = store.availableAt(h, 1, now);
            const probe = new MemoryStore();
            probe.restore(store.snapshot(), now);
            const ph = probe.open('5511990000001', limits, now);
            expect(probe.available(ph, at)).toBeGreaterThan(0);
          }
          expect(windowViolation(sends, limits)).toBeUndefined();
        },
      ),
    );
  });

  it('gives the 24 h capacity back a day (plus at most one bucket) later', () => {
    const store = new MemoryStore({ bucketMinutes: 15 });
    const h = store.open('5511990000001', { perHour: 1_000_000, per24h: 500 }, 0);
    expect(store.reserve(h, 500, 10 * 60_000)).toBe(500);
    expect(store.available(h, 10 * 60_000)).toBe(0);
    expect(store.available(h, 24 * HOUR + 10 * 60_000)).toBe(0);
    const back = store.availableAt(h, 1, 11 * 60_000);
    expect(back).toBe(24 * HOUR + 15 * 60_000);
    expect(store.available(h, back)).toBe(500);
  });

  it('keeps usage across a limit change and across snapshot and restore', () => {
    const store = new MemoryStore();
    const h = store.open('5511990000001', { perHour: 1000, per24h: 5000 }, 0);
    expect(store.reserve(h, 800, 0)).toBe(800);
    store.open('5511990000001', { perHour: 2000, per24h: 5000 }, 0);
    expect(store.available(h, 0)).toBe(1200); // the 800 sent still count as 800
    const copy = new MemoryStore();
    copy.restore(JSON.parse(JSON.stringify(store.snapshot())), 0);
    const h2 = copy.open('5511990000001', { perHour: 2000, per24h: 5000 }, 0);
    expect(copy.available(h2, 0)).toBe(1200);
    expect(copy.available(h2, HOUR)).toBe(2000);
  });

  it('release gives back exactly what an unused reservation took', () => {
    fc.assert(
      fc.property(
        fc.record({ perHour: fc.integer({ min: 1, max: 5000 }), per24h: fc.integer({ min: 1, max: 20_000 }), perSecond: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }) }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: HOUR }), fc.integer({ min: 0, max: 6000 }), fc.double({ min: 0, max: 1, noNaN: true })), { maxLength: 30 }),
        (limits, steps) => {
          const store = new MemoryStore();
          const h = store.open('5511990000001', limits, 0);
          let now = 0;
          for (const [dt, want, keep] of steps) {
            now += dt;
            const availableBefore = store.available(h, now);
            const atBefore = [1, 5, 50].map((k) => store.availableAt(h, k, now));
            const granted = store.reserve(h, want, now);
            expect(granted).toBe(Math.min(want, availableBefore));
            store.release(h, granted, now);
            expect(store.available(h, now)).toBe(availableBefore);
            expect([1, 5, 50].map((k) => store.availableAt(h, k, now))).toEqual(atBefore);
            // Keep part of a reservation: the rest is given back.
            const again = store.reserve(h, want, now);
            const used = Math.floor(again * keep);
            store.release(h, again - used, now);
            expect(store.available(h, now)).toBe(availableBefore - used);
          }
        },
      ),
    );
  });

  it('refuses bucket widths that do not divide a day', () => {
    let error: unknown;
    try {
      new MemoryStore({ bucketMinutes: 7 });
    } catch (e) {
      error = e;
    }
    expect(isArgumentError(error)).toBe(true);
    expect(String(error)).toContain('bucketMinutes');
  });
});
