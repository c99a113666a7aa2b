/**
 * Four sendpool instances (child processes) share ten numbers through one Redis for a simulated
 * hour of saturating demand: per number and per window the sends of all instances together never
 * exceed the limit, they use at least 95 % of the hour's capacity, and every contact goes exactly
 * once.
 *
 * Time: the instances share a simulated clock, (wall - start) × 300, and the lease script is given
 * that clock's time (timeSource 'clock'), so the hourly and 24 h windows are exercised in ~15 s of
 * real time with the same script and the same arithmetic as with Redis TIME. test/redis/realtime
 * runs the 'redis' time source in real time on per-second windows.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { byPhone, checkWindows, NUMBERS, readSends, startInstances, testFleet } from './fleet-run.js';
import { cleanup, connect, REDIS_URL, SKIP_REASON, testPrefix } from './helpers.js';

const HOUR = 3_600_000;

const enabled = REDIS_URL !== undefined;
if (!enabled) describe('4 instances, one Redis', () => it.skipIf(true)(SKIP_REASON, () => {}));

describe.runIf(enabled)('4 instances, one Redis', () => {
  const prefix = testPrefix('fleet');
  afterAll(async () => {
    const client = connect();
    await cleanup(client, prefix);
    client.disconnect();
  });

  it('a simulated hour of saturating demand: no window exceeded, >= 95 % used, every contact exactly once', async () => {
    // Capacity of the hour: 5 × 5,000 (24 h limit) + 5 × (1,800 burst + 1,800 refill) = 43,000.
    const capacity = NUMBERS.reduce((sum, n) => sum + Math.min(n.per24h, 2 * n.perHour), 0);
    const perInstance = 11_000;
    const scale = 300;
    const instances = startInstances(
      { url: REDIS_URL!, prefix: `${prefix}hour:`, instances: 4, fleet: testFleet(NUMBERS), startWall: Date.now() + 4000, scale, simEnd: HOUR + 15 * 60_000 },
      perInstance,
    );
    const results = await Promise.all(instances.map((i) => i.done));
    for (const r of results) expect(r.code).toBe(0);
    const sends = readSends(instances);
    checkWindows(sends);
    const inHour = sends.filter((s) => s.at < HOUR).length;
    if (process.env['SENDPOOL_DEBUG']) {
      const per = [...byPhone(sends)].map(([p, t]) => `${p.slice(-2)}:${t.filter((x) => x < HOUR).length}/${t.length} first ${t[0]} `);
      console.log(per.join('\n'), JSON.stringify(results.map((r) => r.summary)));
    }
    expect(inHour / capacity).toBeGreaterThanOrEqual(0.95);
    expect(inHour).toBeLessThanOrEqual(capacity);
    const contacts = new Set(sends.map((s) => s.contact));
    expect(contacts.size).toBe(sends.length);
    expect(sends.length).toBe(4 * perInstance);
    console.log(`simulated hour: ${inHour} of ${capacity} (${((100 * inHour) / capacity).toFixed(2)} %), ${sends.length} contacts`, JSON.stringify(results.map((r) => r.summary)));
  }, 60_000);
});
