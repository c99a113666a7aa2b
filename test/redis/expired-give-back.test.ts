/**
 * Tokens of a lease that expired unspent go back to the number's 24 h counter. A process too busy
 * to spend a per-second number's leases within their 250 ms (a loaded machine) used to burn the
 * number's day on tokens it never sent: a 500/24 h number stopped at 271 sends. The store runs on a
 * manual clock with the time given to the scripts, so the lease's expiry is a step of the clock.
 */
import { afterAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { NumberLimits } from '../../src/core/limits/store.js';
import { RedisStore, type RedisCapacityEvent } from '../../src/redis/index.js';
import { cleanup, connect, describeTargets, testPrefix } from './helpers.js';

const PHONE = '5511990000301';
/** 100 a day, 100 a second: the day binds; leases of a per-second number live 250 ms. */
const LIMITS: NumberLimits = { perHour: 100_000, per24h: 100, perSecond: 100 };

describeTargets('leases that expire unspent', (target) => {
  const prefix = testPrefix('expired-back');
  const client = connect(target);
  let run = 0;
  afterAll(async () => {
    await cleanup(client, prefix);
    client.disconnect();
  });

  it("give their tokens back to the day's counter: the number still sends its whole day", async () => {
    const p = `${prefix}${++run}:`;
    const clock = new ManualClock(1_000_000);
    const events: RedisCapacityEvent[] = [];
    const store = new RedisStore({ client, prefix: p, clock, timeSource: 'clock', clockRate: 0.001, epochCheckMs: 3_600_000, onEvent: (e) => events.push(e) });
    const handle = store.open(PHONE, LIMITS, clock.now());
    const dayCount = async () => Number(await client.hget(`${p}{${PHONE}}:s`, 'ds'));
    try {
      // Ten times: a lease granted, then its lifetime passes before anything is spent (the process busy).
      let wasted = 0;
      for (let k = 0; k < 10; k++) {
        expect(store.reserve(handle, 0, clock.now())).toBe(0);
        store.reserve(handle, 50, clock.now());
        await store.settle();
        const held = store.held(PHONE);
        // What the previous round took is back: only this lease is charged for the day.
        expect(await dayCount()).toBe(held);
        expect(held).toBeGreaterThan(0);
        wasted += held;
        clock.advance(1_000);
        expect(store.held(PHONE)).toBe(0);
        await store.settle();
        expect(await dayCount()).toBe(0);
      }
      expect(wasted).toBeGreaterThan(100);
      expect(events.filter((e) => e.type === 'lease-expired').reduce((n, e) => n + (e.type === 'lease-expired' ? e.tokens : 0), 0)).toBe(wasted);
      // The day is whole: 100 spent now, as the process keeps up.
      let spent = 0;
      for (let guard = 0; guard < 1000 && spent < 100; guard++) {
        spent += store.reserve(handle, 100 - spent, clock.now());
        await store.settle();
        clock.advance(10);
      }
      expect(spent).toBe(100);
      expect(await dayCount()).toBe(100);
      // And no more than the day.
      clock.advance(1_000);
      store.reserve(handle, 1, clock.now());
      await store.settle();
      expect(store.reserve(handle, 1, clock.now())).toBe(0);
    } finally {
      await store.close();
    }
  });
});
