/**
 * Four sendpool instances (child processes) share ten numbers through one Redis under saturating
 * demand (more contacts than the first hour's capacity): per number and per window the sends of
 * all instances together never exceed the limit, the first hour carries at most its capacity, and
 * every contact goes exactly once.
 *
 * Time: the instances share a simulated clock, (wall - start) × 300, and the lease script is given
 * that clock's time (timeSource 'clock'), so the hourly and 24 h windows are exercised in ~15 s of
 * real time with the same script and the same arithmetic as with Redis TIME. Being real time
 * scaled, how much of the capacity the fleet manages to use depends on the machine's speed, so it
 * is measured by the benchmark (bench/redis-fleet.bench.ts, docs/benchmarks.md), not asserted
 * here; the test runs until every contact went, however long that takes.
 */
import { afterAll, expect, it } from 'vitest';
import { byPhone, NUMBERS, readSends, startInstances, testFleet, WAIT_BOUND_MS, windowViolations } from './fleet-run.js';
import { cleanup, connect, describeTargets, testPrefix } from './helpers.js';

const HOUR = 3_600_000;
const SCALE = 300;

describeTargets('4 instances, one Redis', (target) => {
  const prefix = testPrefix('fleet');
  afterAll(async () => {
    const client = connect(target);
    await cleanup(client, prefix);
    client.disconnect();
  });

  it(
    'saturating demand: no window exceeded, the hour within its capacity, every contact exactly once',
    async () => {
      // Capacity of the hour: 5 × 5,000 (24 h limit) + 5 × (1,800 burst + 1,800 refill) = 43,000.
      const capacity = NUMBERS.reduce((sum, n) => sum + Math.min(n.per24h, 2 * n.perHour), 0);
      // More than the hour can carry; on the cluster less (the same script and arithmetic, routed by
      // slot: the run need not last beyond the hour there).
      const perInstance = target.name === 'cluster' ? 5_000 : 11_000;
      // Each worker stops when all its contacts went; simEnd only bounds a hang.
      const fleet = await startInstances({ url: target.spec, prefix: `${prefix}hour:`, instances: 4, fleet: testFleet(NUMBERS), scale: SCALE, simEnd: WAIT_BOUND_MS * SCALE }, perInstance);
      try {
        const results = await Promise.all(fleet.instances.map((i) => i.done));
        for (const r of results) expect(r.code).toBe(0);
        const sends = readSends(fleet.instances);
        expect(windowViolations(sends)).toEqual([]);
        const inHour = sends.filter((s) => s.at < HOUR).length;
        if (process.env['SENDPOOL_DEBUG']) {
          const per = [...byPhone(sends)].map(([p, t]) => `${p.slice(-2)}:${t.filter((x) => x < HOUR).length}/${t.length} first ${t[0]} `);
          console.log(per.join('\n'), JSON.stringify(results.map((r) => r.summary)));
        }
        expect(inHour).toBeLessThanOrEqual(capacity);
        const contacts = new Set(sends.map((s) => s.contact));
        expect(contacts.size).toBe(sends.length);
        expect(sends.length).toBe(4 * perInstance);
        for (const r of results) expect(r.summary?.['sent']).toBe(perInstance);
      } finally {
        fleet.kill();
      }
    },
    2 * WAIT_BOUND_MS,
  );
});
