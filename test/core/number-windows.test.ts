/**
 * `Store.windows` and `engine.numberWindows`: how full each window of a number is, for inspection.
 * The windows agree with `available` (what may go now is the least room of any window) whatever
 * was charged when, and a store without the method answers undefined.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, isNotFoundError, ManualClock, MemoryStore, type Store } from '../../src/index.js';

describe('MemoryStore.windows', () => {
  it('agrees with available after any reservations at any times', () => {
    fc.assert(
      fc.property(
        fc.record({ perHour: fc.integer({ min: 1, max: 5000 }), per24h: fc.integer({ min: 1, max: 20_000 }), perSecond: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }) }),
        fc.array(fc.record({ step: fc.integer({ min: 0, max: 3_600_000 }), want: fc.integer({ min: 1, max: 500 }) }), { maxLength: 30 }),
        (limits, steps) => {
          const store = new MemoryStore();
          let now = 1_000_000;
          const h = store.open('5511900000001', limits, now);
          for (const { step, want } of steps) {
            now += step;
            store.reserve(h, want, now);
            const w = store.windows(h, now);
            const rooms = [w.hour.limit - w.hour.used, w.day.limit - w.day.used, ...(w.second ? [w.second.limit - w.second.used] : [])];
            expect(store.available(h, now)).toBe(Math.max(0, Math.min(...rooms)));
            expect(w.hour.limit).toBe(limits.perHour);
            expect(w.day.limit).toBe(limits.per24h);
            expect(w.second?.limit).toBe(limits.perSecond);
            for (const x of [w.hour, w.day, ...(w.second ? [w.second] : [])]) expect(x.used).toBeGreaterThanOrEqual(0);
          }
        },
      ),
    );
  });
});

describe('engine.numberWindows', () => {
  const fleet = {
    businesses: [
      { id: 1, name: 'A', numbers: [{ phone: '5511900000001', throughputPerHour: 100, messagingLimit24h: 1000, status: 'active' }], templateTypes: [{ id: 10, name: 't', templateIds: [100] }] },
    ],
    templates: [{ id: 100, name: 'a', text: 'Hi', businessIds: [1], status: 'active' }],
  };

  it('answers the store’s windows, and throws NotFoundError for an unknown phone', () => {
    const engine = createEngine(fleet, { clock: new ManualClock(0) });
    engine.assign(1, 10, 7);
    expect(engine.numberWindows('5511900000001')).toEqual({ hour: { used: 7, limit: 100 }, day: { used: 7, limit: 1000 } });
    let error: unknown;
    try {
      engine.numberWindows('5511900000009');
    } catch (e) {
      error = e;
    }
    expect(isNotFoundError(error)).toBe(true);
  });

  it('answers undefined with a store that cannot tell', () => {
    const inner = new MemoryStore();
    // A store of only the required methods (as one that leases tokens from elsewhere may be).
    const store: Store = {
      open: (k, l, n) => inner.open(k, l, n),
      available: (h, n) => inner.available(h, n),
      reserve: (h, w, n) => inner.reserve(h, w, n),
      release: (h, c, n) => inner.release(h, c, n),
      availableAt: (h, c, n) => inner.availableAt(h, c, n),
      snapshot: () => inner.snapshot(),
      restore: (s, n) => inner.restore(s, n),
    };
    const engine = createEngine(fleet, { clock: new ManualClock(0), store });
    expect(engine.numberWindows('5511900000001')).toBeUndefined();
  });
});
