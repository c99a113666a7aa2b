/**
 * The contract every `Store` keeps, as a reusable suite: `MemoryStore` and `RedisStore` both run it
 * (test/store/store-contract.test.ts). A store shared through Redis grants from tokens it leased in
 * the background, so the suite asks "eventually": it lets the store settle (its lease calls
 * answered) and asks again, until the store grants nothing more at that moment.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ManualClock } from '../../src/core/clock.js';
import type { NumberLimits, Store } from '../../src/core/limits/store.js';
import { windowViolation } from './window-violation.js';

export { windowViolation };

/** One store under test, on a manual clock it was built with. */
export interface StoreUnderTest {
  readonly store: Store;
  readonly clock: ManualClock;
  /** Waits until the store's background work (if any) is done. */
  settle(): Promise<void>;
  close(): Promise<void>;
  /**
   * How much later than the exact rate an idle window may start refilling after a charge: 0 for a
   * store that charges at hand-out, the lease lifetime for a leasing store (it charges a lease as
   * if its tokens went at the end of its lifetime).
   */
  readonly refillDelayMs: number;
}

export type StoreFactory = () => Promise<StoreUnderTest>;

const HOUR = 3_600_000;
let phoneSeq = 0;
const phone = (): string => `55119${String(++phoneSeq).padStart(8, '0')}`;

/** Reserves up to `want` at `now`, settling and asking again while the store keeps granting. */
export async function reserveEventually(t: StoreUnderTest, h: number, want: number, now: number): Promise<number> {
  let got = t.store.reserve(h, want, now);
  for (let i = 0; got < want && i < 1000; i++) {
    await t.settle();
    const more = t.store.reserve(h, want - got, now);
    if (more === 0) break;
    got += more;
  }
  return got;
}

async function drain(t: StoreUnderTest, h: number, now: number): Promise<number> {
  return reserveEventually(t, h, 1_000_000, now);
}

/** Registers the contract suite for a store implementation. */
export function storeContract(name: string, make: StoreFactory): void {
  describe(`Store contract: ${name}`, () => {
    async function withStore(fn: (t: StoreUnderTest) => Promise<void>): Promise<void> {
      const t = await make();
      try {
        await fn(t);
      } finally {
        await t.close();
      }
    }

    it('grants the full bucket of the tightest window at once, then nothing', async () => {
      await withStore(async (t) => {
        const cases: [NumberLimits, number][] = [
          [{ perHour: 100, per24h: 1000 }, 100],
          [{ perHour: 100, per24h: 1000, perSecond: 5 }, 5],
          [{ perHour: 100, per24h: 30 }, 30],
        ];
        for (const [limits, expected] of cases) {
          const h = t.store.open(phone(), limits, t.clock.now());
          expect(await drain(t, h, t.clock.now())).toBe(expected);
          expect(t.store.reserve(h, 1, t.clock.now())).toBe(0);
        }
      });
    });

    it('never grants more than asked, and grants whole non-negative numbers', async () => {
      await withStore(async (t) => {
        const h = t.store.open(phone(), { perHour: 50, per24h: 1000 }, 0);
        for (const want of [0, 1, 3, 7, 100]) {
          const g = await reserveEventually(t, h, want, 0);
          expect(Number.isInteger(g) && g >= 0 && g <= want).toBe(true);
        }
      });
    });

    it('refills a rate window at its rate: 100/h gives one more every 36 s', async () => {
      await withStore(async (t) => {
        const h = t.store.open(phone(), { perHour: 100, per24h: 10_000 }, 0);
        const d = t.refillDelayMs;
        expect(await drain(t, h, 0)).toBe(100);
        t.clock.set(36_000 + d - 1);
        expect(await drain(t, h, 36_000 + d - 1)).toBe(0);
        t.clock.set(36_000 + d);
        expect(await drain(t, h, 36_000 + d)).toBe(1);
        t.clock.set(36_000 * 11 + d);
        expect(await drain(t, h, 36_000 * 11 + d)).toBe(10);
      });
    });

    it('release gives back the unused part of a reservation made at the same time', async () => {
      await withStore(async (t) => {
        const h = t.store.open(phone(), { perHour: 20, per24h: 1000 }, 0);
        expect(await reserveEventually(t, h, 8, 0)).toBe(8);
        t.store.release(h, 8, 0);
        expect(await reserveEventually(t, h, 8, 0)).toBe(8);
        t.store.release(h, 3, 0);
        // 20 in all: 5 kept of the second reservation, 15 left.
        expect(await drain(t, h, 0)).toBe(15);
      });
    });

    it('availableAt: now while tokens are there, later once drained, Infinity beyond the burst', async () => {
      await withStore(async (t) => {
        const h = t.store.open(phone(), { perHour: 10, per24h: 1000 }, 0);
        await reserveEventually(t, h, 1, 0);
        t.store.release(h, 1, 0);
        expect(t.store.availableAt(h, 1, 0)).toBe(0);
        await drain(t, h, 0);
        const at = t.store.availableAt(h, 1, 0);
        expect(at).toBeGreaterThan(0);
        expect(t.store.availableAt(h, 11, 0)).toBe(Infinity);
      });
    });

    it('a limit change keeps what was charged: 100 of 100/h leave 100 of 200/h', async () => {
      await withStore(async (t) => {
        const p = phone();
        const h = t.store.open(p, { perHour: 100, per24h: 10_000 }, 0);
        expect(await drain(t, h, 0)).toBe(100);
        expect(t.store.open(p, { perHour: 200, per24h: 10_000 }, 0)).toBe(h);
        const d = t.refillDelayMs;
        t.clock.set(d);
        expect(await drain(t, h, d)).toBe(100);
      });
    });

    it('the 24 h limit holds for 24 h and gives back after the bucket leaves the window', async () => {
      await withStore(async (t) => {
        const h = t.store.open(phone(), { perHour: 1000, per24h: 10 }, 0);
        expect(await drain(t, h, 0)).toBe(10);
        for (const at of [HOUR, 12 * HOUR, 24 * HOUR, 25 * HOUR - 1]) {
          t.clock.set(at);
          expect(await drain(t, h, at)).toBe(0);
        }
        t.clock.set(25 * HOUR);
        expect(await drain(t, h, 25 * HOUR)).toBe(10);
      });
    });

    it('snapshot is plain JSON with a kind, and restores into the same kind of store', async () => {
      await withStore(async (t) => {
        const h = t.store.open(phone(), { perHour: 10, per24h: 100 }, 0);
        await reserveEventually(t, h, 3, 0);
        const snap = JSON.parse(JSON.stringify(t.store.snapshot())) as { kind: unknown };
        expect(typeof snap.kind).toBe('string');
        expect(() => t.store.restore(t.store.snapshot(), 0)).not.toThrow();
      });
    });

    it('property: under any sequence of reserves, releases and time steps, every window holds', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({ perHour: fc.integer({ min: 1, max: 40 }), per24h: fc.integer({ min: 1, max: 80 }), perSecond: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }) }),
          fc.array(fc.tuple(fc.integer({ min: 0, max: 400_000 }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 12 })), { minLength: 1, maxLength: 12 }),
          async (limits, steps) => {
            await withStore(async (t) => {
              const h = t.store.open(phone(), limits, t.clock.now());
              const sends: number[] = [];
              for (const [dt, want, back] of steps) {
                const now = t.clock.advance(dt);
                const g = await reserveEventually(t, h, want, now);
                const r = Math.min(back, g);
                t.store.release(h, r, now);
                for (let k = 0; k < g - r; k++) sends.push(now);
              }
              expect(windowViolation(sends, limits)).toBeNull();
            });
          },
        ),
        { numRuns: 25 },
      );
    });
  });
}
