/**
 * Redis losing what the fleet wrote is noticed, reported and failed closed (docs/scaling.md,
 * "Redis loses its state"): a number's state gone while the register saw it alive (a cluster node
 * that came back empty, an eviction), everything gone with the epoch marker (a restart without
 * persistence), a host that kept the epoch across its own restart, a state older than an instance
 * saw (a restart from an old copy). In each case the numbers concerned count as having sent all
 * they could until the loss, whatever store asks next.
 *
 * The stores run on a manual clock with the time given to the scripts (`timeSource: 'clock'`), so
 * the windows are walked through in steps; the multi-instance restart is in failures.test.ts.
 */
import { afterAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { NumberLimits } from '../../src/core/limits/store.js';
import { RedisStore, type RedisCapacityEvent, type RedisStoreOptions } from '../../src/redis/index.js';
import { cleanup, connect, describeTargets, testPrefix } from './helpers.js';
import { reserveEventually } from '../store/store-contract.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const X = '5511990000101';
const Y = '5511990000102';
/** 10 an hour (one every 6 minutes), 100 a day: the 24 h limit binds within 10 hours. */
const LIMITS: NumberLimits = { perHour: 10, per24h: 100 };

describeTargets('Redis loses its state', (target) => {
  const prefix = testPrefix('lost');
  const client = connect(target);
  let run = 0;
  afterAll(async () => {
    await cleanup(client, prefix);
    client.disconnect();
  });

  /** A store on the test's clock; `events` collects what it reports. */
  function storeOn(p: string, clock: ManualClock, options: Partial<RedisStoreOptions> = {}) {
    const events: RedisCapacityEvent[] = [];
    // epochCheckMs: the marker is read before each call after a minute of the clock.
    const store = new RedisStore({ client, prefix: p, clock, timeSource: 'clock', leaseTtlMs: 1_000, epochCheckMs: 60_000, onEvent: (e) => events.push(e), ...options });
    const take = (phone: string, limits: NumberLimits = LIMITS): Promise<number> =>
      reserveEventually({ store, clock, settle: () => store.settle(), close: async () => {}, refillDelayMs: 0 }, store.open(phone, limits, clock.now()), 1_000, clock.now());
    return { store, events, take };
  }
  const resets = (events: readonly RedisCapacityEvent[]) => events.filter((e) => e.type === 'redis-reset');

  it("a number's state gone while the register saw it: reported, and the number counts as full at the loss", async () => {
    const p = `${prefix}${++run}:`;
    const clock = new ManualClock(0);
    const a = storeOn(p, clock);
    expect(await a.take(X)).toBe(10);
    // A minute later the marker is read again, and the register learns X's state exists.
    clock.set(60_000);
    expect(await a.take(X)).toBe(0);
    clock.set(120_000);
    await a.take(X);
    expect(resets(a.events)).toEqual([]);
    await client.del(`${p}{${X}}:s`);
    clock.set(7 * 60_000);
    expect(await a.take(X)).toBe(0);
    expect(resets(a.events)).toEqual([{ type: 'redis-reset', at: 7 * 60_000, scope: 'numbers', phones: [X], reason: 'missing', lostAt: 7 * 60_000 }]);
    // Another store, which never used X, gets nothing either: the state now says "full".
    const b = storeOn(p, clock);
    expect(await b.take(X)).toBe(0);
    // Full as of the loss (and the lease lifetime): the hour refills one every 6 minutes, but the
    // 24 h limit counts as reached (100 at 10 an hour and a burst of 10: nine hours back).
    clock.set(7 * 60_000 + 1_000 + HOUR);
    expect(await b.take(X)).toBe(0);
    clock.set(7 * 60_000 + 1_000 + DAY + HOUR);
    expect(await b.take(X)).toBe(10);
    expect(a.store.metrics().resets).toBe(1);
    await a.store.close();
    await b.store.close();
  });

  it("a state gone before any register saw it (written after Redis' last snapshot): the store that saw it notices", async () => {
    const p = `${prefix}${++run}:`;
    const clock = new ManualClock(0);
    const a = storeOn(p, clock);
    expect(await a.take(X)).toBe(10);
    // Redis back on a snapshot of before X's first lease: the marker is there, X's state is not,
    // and no register entry says it existed.
    await client.del(`${p}{${X}}:s`);
    await client.del(`${p}{epoch}:numbers`);
    clock.set(7 * 60_000);
    expect(await a.take(X)).toBe(0);
    expect(resets(a.events)).toMatchObject([{ scope: 'numbers', phones: [X], reason: 'missing' }]);
    await a.store.close();
  });

  it('everything gone with the epoch marker: a fleet reset, and every number (even one never seen) counts as full at the loss', async () => {
    const p = `${prefix}${++run}:`;
    const clock = new ManualClock(0);
    const a = storeOn(p, clock);
    expect(await a.take(X)).toBe(10);
    const before = a.store.epoch!;
    expect(before.lostAt).toBeUndefined();
    expect(a.events.filter((e) => e.type === 'epoch')).toEqual([{ type: 'epoch', at: 0, epoch: before.id, since: 0, lostAt: undefined }]);
    await cleanup(client, p);
    clock.set(HOUR);
    expect(await a.take(X)).toBe(0);
    const after = a.store.epoch!;
    expect(after.id).not.toBe(before.id);
    expect(after.lostAt).toBe(HOUR);
    expect(resets(a.events)).toEqual([{ type: 'redis-reset', at: HOUR, scope: 'fleet', epoch: after.id, previousEpoch: before.id, lostAt: HOUR }]);
    // Y was never used by anyone: its usage before the loss is unknown all the same. With 1,000 a
    // day (more than 10 an hour can reach in a day), the hour binds: nothing until it refills.
    const daily = { perHour: 10, per24h: 1_000 };
    expect(await a.take(Y, daily)).toBe(0);
    clock.set(HOUR + 1_000 + 6 * 60_000);
    expect(await a.take(Y, daily)).toBe(1);
    // A store started after the loss learns it from the marker and fails closed as well.
    const late = storeOn(p, clock);
    expect(await late.take(X)).toBe(0);
    expect(late.store.epoch).toEqual(after);
    await a.store.close();
    await late.store.close();
  });

  it('a host that kept the epoch notices a Redis that came back empty while it was away', async () => {
    const p = `${prefix}${++run}:`;
    const clock = new ManualClock(0);
    const first = storeOn(p, clock);
    expect(await first.take(X)).toBe(10);
    const kept = first.store.epoch!.id;
    await first.store.close();
    await cleanup(client, p);
    clock.set(HOUR);
    // Without it, a marker missing at start is a new Redis: nothing to notice.
    const forgetful = storeOn(`${p}other:`, clock);
    expect(await forgetful.take(X)).toBe(10);
    expect(resets(forgetful.events)).toEqual([]);
    await forgetful.store.close();
    const restarted = storeOn(p, clock, { knownEpoch: kept });
    expect(await restarted.take(X)).toBe(0);
    expect(resets(restarted.events)).toMatchObject([{ scope: 'fleet', previousEpoch: kept, lostAt: HOUR }]);
    await restarted.store.close();
  });

  it('a state older than what the store saw (Redis back on an old copy) is noticed and counts as full', async () => {
    const p = `${prefix}${++run}:`;
    const clock = new ManualClock(0);
    const a = storeOn(p, clock);
    expect(await a.take(X)).toBe(10);
    const key = `${p}{${X}}:s`;
    const copy = await client.dumpBuffer(key);
    clock.set(2 * HOUR);
    expect(await a.take(X)).toBe(10);
    // The copy of two hours ago comes back: it does not know the last 10, and would give 10 more
    // once the store asks again (after the next token of the hour, 6 minutes on).
    await client.restore(key, 0, copy, 'REPLACE');
    clock.set(2 * HOUR + 7 * 60_000);
    expect(await a.take(X)).toBe(0);
    expect(resets(a.events)).toMatchObject([{ scope: 'numbers', phones: [X], reason: 'rolled-back' }]);
    await a.store.close();
  });
});
