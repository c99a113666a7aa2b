/**
 * RedisStore against a real Redis: several stores on one prefix never exceed a window together,
 * retried lease calls are charged once, NOSCRIPT falls back to EVAL, keys share a hash tag, leases
 * expire unspent, give-backs are exact, and an unreachable Redis fails closed and recovers.
 */
import fc from 'fast-check';
import { afterAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { NumberLimits } from '../../src/core/limits/store.js';
import { keySlot } from '../../src/redis/key-slot.js';
import { LEASE_SCRIPT, RedisStore, runScript, script, type RedisCapacityEvent } from '../../src/redis/index.js';
import { cleanup, connect, describeTargets, keysOf, masters, testPrefix } from './helpers.js';
import { windowViolation } from '../store/store-contract.js';

describeTargets('RedisStore', (target) => {
  const prefix = testPrefix('store');
  const client = connect(target);
  let n = 0;
  afterAll(async () => {
    await cleanup(client, prefix);
    client.disconnect();
  });

  it('property: stores sharing a number never exceed any window together (hand-outs, not only charges)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ perHour: fc.integer({ min: 1, max: 30 }), per24h: fc.integer({ min: 1, max: 60 }), perSecond: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }) }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 0, max: 8 }), fc.boolean()), { minLength: 1, maxLength: 25 }),
        async (limits, steps) => {
          const clock = new ManualClock(0);
          const p = `${prefix}prop${++n}:`;
          const stores = [0, 1, 2].map((i) => new RedisStore({ client, prefix: p, clock, timeSource: 'clock', leaseTtlMs: 5_000, instanceId: `i${i}`, instances: () => 3 }));
          const handles = stores.map((s) => s.open('5511900000001', limits, 0));
          const sends: number[] = [];
          for (const [who, dt, want, settle] of steps) {
            const now = clock.advance(dt);
            const g = stores[who]!.reserve(handles[who]!, want, now);
            for (let k = 0; k < g; k++) sends.push(now);
            if (settle) await Promise.all(stores.map((s) => s.settle()));
          }
          await Promise.all(stores.map((s) => s.close()));
          expect(windowViolation(sends, limits)).toBeNull();
        },
      ),
      { numRuns: 30 },
    );
  });

  it('a retried lease call (same lease id) is answered from its record, not charged twice', async () => {
    const s = script(LEASE_SCRIPT);
    const phone = '5511900000002';
    const keys = [`${prefix}{${phone}}:s`, `${prefix}{${phone}}:l:x1`];
    // time, epoch, bucket, record keep, loss time, instance, grace, min retry, fleet, fair; then the
    // number: want, per hour, per second, per 24 h, lease id, ttl, seen, confirm (a new state may be
    // created), held, held until.
    const args = (id: string): (string | number)[] => [1000, '', 3_600_000, 60_000, 0, '', 1000, 250, 1, '', 5, 100, 0, 1000, id, 1000, 0, '0', 0, 0];
    const first = (await runScript(client, s, keys, args('x1'))) as number[];
    const again = (await runScript(client, s, keys, args('x1'))) as number[];
    expect(first[1]).toBe(5);
    expect(again[1]).toBe(5);
    expect(again[2]).toBe(first[2]);
    expect(again[4]).toBe(first[4]);
    expect([first[5], again[5]]).toEqual([0, 0]);
    const other = (await runScript(client, s, [keys[0]!, `${prefix}{${phone}}:l:x2`], args('x2'))) as number[];
    expect(other[1]).toBe(5);
    expect(other[4]).toBe(first[4]! - 5);
  });

  it("an instance's view of a number follows what the others sent (asked again once older than viewMaxAgeMs)", async () => {
    const clock = new ManualClock(0);
    const p = `${prefix}view:`;
    const limits = { perHour: 100, per24h: 1000 };
    const [a, b] = ['a', 'b'].map((id) => new RedisStore({ client, prefix: p, clock, timeSource: 'clock', instanceId: id, instances: () => 2, viewMaxAgeMs: 1_000 }));
    const ha = a!.open('5511900000009', limits, 0);
    const hb = b!.open('5511900000009', limits, 0);
    b!.available(hb, 0);
    await b!.settle();
    expect(b!.available(hb, 0)).toBe(100);
    // A leases and spends 30; B's view is refreshed once it is older than a second.
    a!.reserve(ha, 30, 0);
    await a!.settle();
    expect(a!.reserve(ha, 30, 0)).toBe(30);
    await a!.settle();
    clock.advance(1_000);
    b!.available(hb, clock.now());
    await b!.settle();
    // Redis's "left" no longer has A's lease: B sees at most what A did not take.
    expect(b!.available(hb, clock.now())).toBeLessThanOrEqual(70);
    await Promise.all([a!.close(), b!.close()]);
  });

  it('every instance sees the same output: the tokens others hold unspent count (they tell Redis after spending)', async () => {
    const clock = new ManualClock(0);
    const p = `${prefix}held:`;
    const limits = { perHour: 1000, per24h: 10_000 };
    const [a, b] = ['a', 'b'].map((id) => new RedisStore({ client, prefix: p, clock, timeSource: 'clock', instanceId: id, instances: () => 2, viewMaxAgeMs: 1_000, fairShares: false }));
    const phone = '5511900000019';
    const ha = a!.open(phone, limits, 0);
    const hb = b!.open(phone, limits, 0);
    // A leases (it asked for tokens) and spends some; B has leased nothing.
    a!.reserve(ha, 100, 0);
    await a!.settle();
    expect(a!.reserve(ha, 100, 0)).toBe(100);
    await a!.settle();
    const heldByA = a!.held(phone);
    expect(heldByA).toBeGreaterThan(0);
    const view = async (): Promise<[number, number]> => {
      clock.advance(1_000);
      a!.available(ha, clock.now());
      b!.available(hb, clock.now());
      await Promise.all([a!.settle(), b!.settle()]);
      return [a!.available(ha, clock.now()), b!.available(hb, clock.now())];
    };
    // A's last call told Redis what it holds: both instances answer the fleet's output, 1000 less
    // the 100 sent and the few tokens the lease's worst-case charge costs (a lease's lifetime of refill).
    const [first, firstB] = await view();
    expect(firstB).toBe(first);
    expect(first).toBeGreaterThan(890);
    expect(first).toBeLessThanOrEqual(900);
    // A spends without calling Redis; after tell() both see it (a second later: at most one token refilled).
    expect(a!.reserve(ha, 50, clock.now())).toBe(50);
    a!.tell();
    await a!.settle();
    const [second, secondB] = await view();
    expect(secondB).toBe(second);
    expect(second - (first - 50)).toBeGreaterThanOrEqual(0);
    expect(second - (first - 50)).toBeLessThanOrEqual(1);
    // A gives its tokens back on close: B's output still counts them, now as Redis's.
    await a!.close();
    clock.advance(1_000);
    b!.available(hb, clock.now());
    await b!.settle();
    expect(b!.available(hb, clock.now())).toBeLessThanOrEqual(850);
    await b!.close();
  });

  it('falls back to EVAL after SCRIPT FLUSH (NOSCRIPT)', async () => {
    for (const node of masters(client)) await node.script('FLUSH');
    const clock = new ManualClock(0);
    const store = new RedisStore({ client, prefix: `${prefix}flush:`, clock, timeSource: 'clock' });
    const h = store.open('5511900000003', { perHour: 10, per24h: 100 }, 0);
    store.reserve(h, 4, 0);
    await store.settle();
    expect(store.reserve(h, 4, 0)).toBe(4);
    await store.close();
  });

  it("keeps a number's keys under one hash tag (one Redis Cluster slot)", async () => {
    const clock = new ManualClock(0);
    const p = `${prefix}tag:`;
    const store = new RedisStore({ client, prefix: p, clock, timeSource: 'clock' });
    const h = store.open('5511900000004', { perHour: 10, per24h: 100 }, 0);
    store.reserve(h, 2, 0);
    await store.settle();
    const keys = (await keysOf(client, `${p}*`)).sort();
    // The number's state and lease record; the fleet's epoch marker and register.
    const numberKeys = keys.filter((k) => k.startsWith(`${p}{5511900000004}:`));
    expect(numberKeys.length).toBe(2);
    expect(keys.filter((k) => !numberKeys.includes(k))).toEqual([`${p}{epoch}`, `${p}{epoch}:numbers`].filter((k) => keys.includes(k)));
    expect(new Set(numberKeys.map(keySlot)).size).toBe(1);
    if (target.name === 'cluster') {
      const slots = await Promise.all(numberKeys.map((k) => client.call('CLUSTER', 'KEYSLOT', k)));
      expect(slots).toEqual(numberKeys.map(keySlot));
    }
    await store.close();
  });

  it('unspent leased tokens expire with the lease and are not spent by anyone else', async () => {
    const clock = new ManualClock(0);
    const p = `${prefix}expire:`;
    const events: RedisCapacityEvent[] = [];
    const limits: NumberLimits = { perHour: 10, per24h: 100 };
    const a = new RedisStore({ client, prefix: p, clock, timeSource: 'clock', leaseTtlMs: 1_000, instances: () => 1, onEvent: (e) => events.push(e) });
    const b = new RedisStore({ client, prefix: p, clock, timeSource: 'clock', leaseTtlMs: 1_000 });
    const ha = a.open('5511900000005', limits, 0);
    const hb = b.open('5511900000005', limits, 0);
    a.reserve(ha, 10, 0);
    await a.settle();
    expect(a.held('5511900000005')).toBe(10);
    // A "crashes": it never spends nor returns. B gets nothing while A's charge stands.
    b.reserve(hb, 10, 0);
    await b.settle();
    expect(b.reserve(hb, 10, 0)).toBe(0);
    clock.set(1_000);
    expect(a.reserve(ha, 1, 1_000)).toBe(0);
    expect(events.some((e) => e.type === 'lease-expired' && e.tokens === 10)).toBe(true);
    await b.close();
    await a.close();
  });

  it('a refused token goes back into the lease it came from and is spent again, never more than the lease', async () => {
    const clock = new ManualClock(0);
    const p = `${prefix}refund:`;
    const limits: NumberLimits = { perHour: 10, per24h: 100 };
    const a = new RedisStore({ client, prefix: p, clock, timeSource: 'clock', leaseTtlMs: 5_000, instances: () => 1 });
    const h = a.open('5511900000007', limits, 0);
    a.reserve(h, 10, 0);
    await a.settle();
    clock.set(10);
    expect(a.reserve(h, 10, 10)).toBe(10);
    expect(a.reserve(h, 1, 10)).toBe(0);
    clock.set(200);
    a.refund(h, 3, 10, 200); // three of them refused by the provider
    expect(a.reserve(h, 10, 200)).toBe(3);
    // A refund for a time before any take of a live lease gives nothing.
    a.refund(h, 1, 5, 200);
    expect(a.reserve(h, 1, 200)).toBe(0);
    await a.close();
  });

  it('close gives unspent tokens back: the latest lease exactly, to every window', async () => {
    const clock = new ManualClock(0);
    const p = `${prefix}back:`;
    const limits: NumberLimits = { perHour: 20, per24h: 20 };
    const a = new RedisStore({ client, prefix: p, clock, timeSource: 'clock' });
    const ha = a.open('5511900000006', limits, 0);
    a.reserve(ha, 20, 0);
    await a.settle();
    expect(a.reserve(ha, 5, 0)).toBe(5);
    expect(await a.close()).toBe(15);
    // As of the end of a's lease lifetime (10 s, charged as its worst moment), exactly 15 are back.
    clock.set(10_000);
    const b = new RedisStore({ client, prefix: p, clock, timeSource: 'clock' });
    const hb = b.open('5511900000006', limits, 10_000);
    b.reserve(hb, 20, 10_000);
    await b.settle();
    expect(b.reserve(hb, 20, 10_000)).toBe(15);
    await b.close();
  });

  it('fails closed while Redis is unreachable and resumes by itself', async () => {
    const { Redis } = await import('ioredis');
    // A client on a port where nothing listens: every lease call fails.
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    dead.on('error', () => {});
    const clock = new ManualClock(0);
    const events: RedisCapacityEvent[] = [];
    let current: typeof client = dead as never;
    const proxy = {
      evalsha: (...a: Parameters<typeof client.evalsha>) => current.evalsha(...a),
      eval: (...a: Parameters<typeof client.eval>) => current.eval(...a),
    };
    const store = new RedisStore({ client: proxy, prefix: `${prefix}down:`, clock, timeSource: 'clock', downRetryMs: 100, onEvent: (e) => events.push(e) });
    const h = store.open('5511900000007', { perHour: 10, per24h: 100 }, 0);
    expect(store.reserve(h, 3, 0)).toBe(0);
    await store.settle();
    expect(store.reserve(h, 3, 0)).toBe(0);
    expect(store.metrics().up).toBe(false);
    expect(store.state).toBe('connecting');
    expect(events.map((e) => e.type)).toContain('redis-down');
    expect(store.availableAt(h, 1, 0)).toBeGreaterThanOrEqual(100);
    current = client;
    clock.set(100);
    store.availableAt(h, 1, 100);
    await store.settle();
    expect(store.reserve(h, 3, 100)).toBe(3);
    expect(events.map((e) => e.type)).toContain('redis-up');
    expect(store.state).toBe('ready');
    // Gone again after it was ready: 'lost', and nothing new is granted.
    current = dead as never;
    clock.set(20_000);
    expect(store.reserve(h, 3, 20_000)).toBe(0);
    await store.settle();
    expect(store.state).toBe('lost');
    expect(store.reserve(h, 3, 20_000)).toBe(0);
    await store.close();
    dead.disconnect();
  });
});
