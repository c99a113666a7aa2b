/**
 * RedisPortfolios against a real Redis: instances sharing a portfolio never hand out to more
 * distinct recipients in any 24 h than its limit together; slots are charged before they are
 * spent, unspent ones come back when their lease ends here, a dead instance's after 24 h; a
 * recipient that already counts costs no slot.
 */
import fc from 'fast-check';
import { afterAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { RedisPortfolios } from '../../src/redis/index.js';
import { cleanup, connect, describeTargets, keysOf, testPrefix } from './helpers.js';

const DAY = 86_400_000;

/** The most distinct recipients with a hand-out in any (t − 24 h, t]. */
function mostInADay(sends: readonly (readonly [string, number])[]): number {
  let most = 0;
  for (const [, t] of sends) {
    const inSpan = new Set(sends.filter(([, s]) => s > t - DAY && s <= t).map(([who]) => who));
    most = Math.max(most, inSpan.size);
  }
  return most;
}

describeTargets('RedisPortfolios', (target) => {
  const prefix = testPrefix('pf');
  const client = connect(target);
  let n = 0;
  afterAll(async () => {
    await cleanup(client, prefix);
    client.disconnect();
  });

  const make = (p: string, clock: ManualClock, i: number, extra: Partial<ConstructorParameters<typeof RedisPortfolios>[0]> = {}) =>
    new RedisPortfolios({ client, prefix: p, clock, timeSource: 'clock', instanceId: `i${i}`, leaseTtlMs: 5_000, retryMs: 100, ...extra });

  it('property: instances sharing a portfolio never reach more distinct recipients in any 24 h than its limit together', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(0, 60_000, 3_600_000),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 6 * 3_600_000 }), fc.integer({ min: 0, max: 9 }), fc.boolean()), { minLength: 1, maxLength: 40 }),
        async (limit, slots, coverMs, steps) => {
          const clock = new ManualClock(1_000);
          const p = `${prefix}prop${++n}:`;
          const sources = [0, 1, 2].map((i) => make(p, clock, i, { slotsPerLease: slots, coverMs }));
          const sends: [string, number][] = [];
          for (const [who, dt, r, settle] of steps) {
            const now = clock.advance(dt % 3 === 0 ? dt : dt % 7_000);
            if (sources[who]!.admit('pf', limit, true, `55119${r}`, now)) sends.push([`55119${r}`, now]);
            if (settle) await Promise.all(sources.map((s) => s.settle()));
          }
          await Promise.all(sources.map((s) => s.close()));
          expect(mostInADay(sends)).toBeLessThanOrEqual(limit);
        },
      ),
      { numRuns: 40, seed: 20251101 },
    );
  });

  it('a lease is charged before its slots are spent: the others find no room while one instance holds it', async () => {
    const clock = new ManualClock(1_000);
    const p = `${prefix}held${++n}:`;
    const a = make(p, clock, 0, { slotsPerLease: 3 });
    const b = make(p, clock, 1, { slotsPerLease: 3 });
    expect(a.admit('pf', 3, true, '5511900000001', clock.now())).toBe(false);
    await a.settle();
    expect(a.held('pf')).toBe(3);
    expect(b.admit('pf', 3, true, '5511900000002', clock.now())).toBe(false);
    await b.settle();
    expect(b.held('pf')).toBe(0);
    expect(b.nextRoomAt('pf', 3, clock.now())).toBeGreaterThan(clock.now());
    await Promise.all([a.close(), b.close()]);
  });

  it("slots a live instance did not spend come back when its lease ends; a dead instance's after their 24 h", async () => {
    const clock = new ManualClock(1_000);
    const p = `${prefix}dead${++n}:`;
    const woken: string[] = [];
    const a = make(p, clock, 0, { slotsPerLease: 2 });
    const dead = make(p, clock, 1, { slotsPerLease: 2 });
    const b = make(p, clock, 2, { slotsPerLease: 2, onCapacity: (ids) => woken.push(...ids) });
    // a takes 2 slots and spends 1; the dead instance takes the other 2 and spends none.
    a.admit('pf', 4, true, '5511900000001', clock.now());
    await a.settle();
    expect(a.admit('pf', 4, true, '5511900000001', clock.now())).toBe(true);
    dead.admit('pf', 4, true, '5511900000009', clock.now());
    await dead.settle();
    expect(dead.held('pf')).toBe(2);
    expect(b.admit('pf', 4, true, '5511900000002', clock.now())).toBe(false);
    await b.settle();
    expect(b.held('pf')).toBe(0);
    // a's lease ends: its unspent slot goes back (a looks at its leases whenever it is used).
    clock.advance(5_000);
    a.used('pf', clock.now());
    await a.settle();
    expect(b.admit('pf', 4, true, '5511900000002', clock.now())).toBe(false);
    await b.settle();
    expect(woken).toContain('pf');
    expect(b.admit('pf', 4, true, '5511900000002', clock.now())).toBe(true);
    // Room is now: a's recipient, b's, a's new lease, the dead instance's 2 slots (the limit).
    expect(b.admit('pf', 4, true, '5511900000003', clock.now())).toBe(false);
    await Promise.all([a.close(), b.close()]);
    // The dead instance's slots count until 24 h after its lease's end, then come back.
    clock.advance(DAY - 5_000);
    const c = make(p, clock, 3, { slotsPerLease: 2 });
    expect(c.admit('pf', 4, true, '5511900000003', clock.now())).toBe(false);
    await c.settle();
    expect(c.held('pf')).toBe(0);
    clock.advance(10_000);
    expect(c.admit('pf', 4, true, '5511900000003', clock.now())).toBe(false);
    await c.settle();
    expect(c.held('pf')).toBe(2);
    expect(c.admit('pf', 4, true, '5511900000003', clock.now())).toBe(true);
    await c.close();
  });

  it('a recipient already in the 24 h costs no slot: another instance messages it on a full portfolio', async () => {
    const clock = new ManualClock(1_000);
    const p = `${prefix}known${++n}:`;
    const a = make(p, clock, 0, { slotsPerLease: 2, coverMs: 0 });
    const b = make(p, clock, 1, { slotsPerLease: 2, coverMs: 0 });
    a.admit('pf', 2, true, '5511900000001', clock.now());
    await a.settle();
    expect(a.admit('pf', 2, true, '5511900000001', clock.now())).toBe(true);
    expect(a.admit('pf', 2, true, '5511900000002', clock.now())).toBe(true);
    await a.settle();
    clock.advance(3_600_000);
    // Full: b's first try finds no slot and asks about the recipient; it counts, so it is free.
    expect(b.admit('pf', 2, true, '5511900000001', clock.now())).toBe(false);
    await b.settle();
    expect(b.admit('pf', 2, true, '5511900000001', clock.now())).toBe(true);
    expect(b.admit('pf', 2, true, '5511900000003', clock.now())).toBe(false);
    await b.settle();
    expect(b.admit('pf', 2, true, '5511900000003', clock.now())).toBe(false);
    // The keys share the portfolio's hash tag.
    const keys = await keysOf(client, `${p}*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) expect(k.startsWith(`${p}{pf:pf}:`)).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });

  it("a recipient messaged again before its slot's lease ends stays counted in Redis past that message", async () => {
    const clock = new ManualClock(1_000);
    const p = `${prefix}again${++n}:`;
    const a = make(p, clock, 0, { slotsPerLease: 1, coverMs: 0 });
    a.admit('pf', 5, true, '5511900000001', clock.now());
    await a.settle();
    const grantedAt = clock.now();
    expect(a.admit('pf', 5, true, '5511900000001', clock.now())).toBe(true);
    await a.settle();
    // The record landed; a message to the same recipient 4 s later is free, and Redis counts the
    // recipient until at least then (the slot's score): never a gap in its 24 h.
    const at = clock.advance(4_000);
    expect(a.admit('pf', 5, true, '5511900000001', at)).toBe(true);
    expect(Number(await client.zscore(`${p}{pf:pf}:r`, '5511900000001'))).toBeGreaterThanOrEqual(Math.max(at, grantedAt + 5_000));
    await a.close();
  });
  it("an instance with nothing to send sees another's spending in its view after a retry period, and a view leases nothing", async () => {
    const clock = new ManualClock(1_000);
    const p = `${prefix}view${++n}:`;
    const a = make(p, clock, 0, { slotsPerLease: 2 });
    const b = make(p, clock, 1, { slotsPerLease: 2 });
    expect(b.room('pf', 2, clock.now())).toBe(2);
    await b.settle();
    expect(b.held('pf')).toBe(0);
    a.admit('pf', 2, true, '5511900000001', clock.now());
    await a.settle();
    expect(a.admit('pf', 2, true, '5511900000001', clock.now())).toBe(true);
    expect(a.admit('pf', 2, true, '5511900000002', clock.now())).toBe(true);
    await a.settle();
    // Within the retry period b answers from its last view; after it, from Redis.
    expect(b.room('pf', 2, clock.now())).toBe(2);
    clock.advance(100);
    b.room('pf', 2, clock.now());
    await b.settle();
    expect(b.room('pf', 2, clock.now())).toBe(0);
    expect(b.held('pf')).toBe(0);
    await Promise.all([a.close(), b.close()]);
  });
});
