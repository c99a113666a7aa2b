/**
 * Fair shares of a saturated number, against a real Redis: stores that ask for more than the
 * number gives split what it gives evenly, whoever asks first; a late joiner catches up its share
 * of one burst and no more; a store that stops asking leaves its share to the others; a store that
 * asks for little gets all it asks (max-min). Every window holds for the hand-outs of all of them.
 *
 * The stores run in lockstep on one manual clock, in a fixed order (store 0 always asks first: the
 * worst case for a first-come rule), and their own timers are pushed out of the test's way
 * (`clockRate` tiny), so each run is the same on any machine. test/redis/fair-shares-figure.ts
 * measures the same with instances in processes of their own (docs/scaling.md, "Fair shares").
 */
import { afterAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { NumberLimits } from '../../src/core/limits/store.js';
import { RedisStore } from '../../src/redis/index.js';
import { cleanup, connect, describeTargets, testPrefix } from './helpers.js';
import { windowViolation } from '../store/store-contract.js';

const PHONE = '5511990000001';
const MINUTE = 60_000;
/** 1 a second, the burst an hour's worth: saturated by anyone asking for 1,000,000. */
const LIMITS: NumberLimits = { perHour: 3600, per24h: 1_000_000 };

describeTargets('fair shares of a saturated number', (target) => {
  const prefix = testPrefix('fair');
  const client = connect(target);
  let run = 0;
  afterAll(async () => {
    await cleanup(client, prefix);
    client.disconnect();
  });

  /** `n` stores on one number, and a step that lets them ask in order and records the hand-outs. */
  function fleet(n: number, fairShares = true) {
    const clock = new ManualClock(0);
    const p = `${prefix}${++run}:`;
    // clockRate: the stores' own retry timers would fire in real time; here the steps drive them.
    const stores = Array.from(
      { length: n },
      (_, i) => new RedisStore({ client, prefix: p, clock, timeSource: 'clock', clockRate: 0.001, instanceId: `i${i}`, instances: () => n, fairShares, epochCheckMs: 3_600_000 }),
    );
    const handles = stores.map((s) => s.open(PHONE, LIMITS, 0));
    const got = stores.map(() => 0);
    const sends: number[] = [];
    /** Each store in `who` asks for `want` (its own number, or one for all), in that order. */
    async function step(who: readonly number[], want: number | readonly number[] = 1_000_000): Promise<void> {
      const now = clock.now();
      for (const i of who) {
        const w = typeof want === 'number' ? want : want[i]!;
        let g = stores[i]!.reserve(handles[i]!, w, now);
        await stores[i]!.settle();
        g += stores[i]!.reserve(handles[i]!, w - g, now);
        got[i]! += g;
        for (let k = 0; k < g; k++) sends.push(now);
      }
    }
    /** Runs `ms` of the clock in steps of `stepMs`; returns what each store got meanwhile. */
    async function runFor(ms: number, who: readonly number[], want?: number | readonly number[], stepMs = 100): Promise<number[]> {
      const before = [...got];
      const end = clock.now() + ms;
      while (clock.now() < end) {
        await step(who, want);
        clock.advance(stepMs);
      }
      return got.map((x, i) => x - before[i]!);
    }
    const close = async (): Promise<void> => {
      for (const s of stores) await s.close();
    };
    return { clock, stores, got, sends, runFor, close };
  }
  const spread = (xs: readonly number[]): number => Math.max(...xs) - Math.min(...xs);

  it.each([2, 3])('%i stores asking without bound get even shares, whoever asks first (within 2 tokens)', async (n) => {
    const f = fleet(n);
    const got = await f.runFor(10 * MINUTE, [...Array(n).keys()]);
    await f.close();
    if (process.env['SENDPOOL_DEBUG']) console.log(n, 'stores', got);
    // The burst (3,600) and ten minutes of refill, less the lease lifetime charged on the first lease.
    const total = got.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(4_100);
    expect(spread(got), JSON.stringify(got)).toBeLessThanOrEqual(2);
    expect(windowViolation(f.sends, LIMITS)).toBeNull();
  });

  it('without fair shares the first to ask takes the number (the behaviour fairShares: false keeps)', async () => {
    const f = fleet(2, false);
    const got = await f.runFor(10 * MINUTE, [0, 1]);
    await f.close();
    if (process.env['SENDPOOL_DEBUG']) console.log('first come', got);
    expect(got[0]!).toBeGreaterThan(0.9 * (got[0]! + got[1]!));
  });

  it('a store joining late catches up its share of one burst, then the shares are even', async () => {
    const f = fleet(2);
    const alone = await f.runFor(5 * MINUTE, [0], undefined, 500);
    // Alone, store 0 had the whole burst (after the round's opening) and the refill.
    expect(alone[0]).toBeGreaterThan(3_600);
    const joined = await f.runFor(60 * MINUTE, [0, 1], undefined, 500);
    await f.close();
    if (process.env['SENDPOOL_DEBUG']) console.log('alone', alone, 'joined', joined);
    // Store 1 catches up 3,600 / 2 = 1,800 (at 1 a second: the first half hour), then they share.
    expect(joined[1]! - joined[0]!, JSON.stringify(joined)).toBeGreaterThanOrEqual(1_800 - 2);
    expect(joined[1]! - joined[0]!, JSON.stringify(joined)).toBeLessThanOrEqual(1_800 + 2);
    expect(windowViolation(f.sends, LIMITS)).toBeNull();
  });

  it('a store that stops asking leaves its share to the others after the grace', async () => {
    const f = fleet(2);
    await f.runFor(10 * MINUTE, [0, 1]);
    // Store 1 stops: its share is held for it until its announced retry plus the grace (1 s), then
    // store 0 gets every token (ten minutes at 1 a second, less the grace and one retry wait).
    const after = await f.runFor(10 * MINUTE, [0]);
    await f.close();
    if (process.env['SENDPOOL_DEBUG']) console.log('after the other stopped', after);
    expect(after[0]).toBeGreaterThanOrEqual(600 - 3);
    expect(windowViolation(f.sends, LIMITS)).toBeNull();
  });

  it('a store asking for little gets all it asks; the others share the rest', async () => {
    const f = fleet(3);
    // Store 2 needs one token every 10 s (a tenth of the number's rate, well under a third) and
    // asks at every step until it has it, as an engine asks for a waiting contact.
    let needed = 0;
    let waited = 0;
    let longest = 0;
    const busy = [0, 0];
    for (let s = 0; s < 6_000; s++) {
      if (s % 100 === 0) needed++;
      const got = await f.runFor(100, needed > 0 ? [0, 1, 2] : [0, 1], [1_000_000, 1_000_000, needed]);
      needed -= got[2]!;
      waited = needed > 0 ? waited + 1 : 0;
      longest = Math.max(longest, waited);
      busy[0]! += got[0]!;
      busy[1]! += got[1]!;
    }
    await f.close();
    if (process.env['SENDPOOL_DEBUG']) console.log('busy', busy, 'small', f.got[2], 'longest wait (steps of 100 ms)', longest);
    expect(f.got[2]).toBe(60);
    // Each token by the next one the number makes (1 s), and one retry wait (250 ms) at most.
    expect(longest).toBeLessThanOrEqual(13);
    expect(spread(busy), JSON.stringify(busy)).toBeLessThanOrEqual(2);
    expect(windowViolation(f.sends, LIMITS)).toBeNull();
  });
});
