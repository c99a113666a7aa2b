/**
 * How much of the fleet's capacity four instances sharing it through one Redis use: the simulated
 * hour of test/redis/fleet.test.ts (ten numbers, five bound by their 24 h limit within the hour and
 * five by their hourly rate; 4 × 11,000 contacts against 43,000 of capacity), measured instead of
 * asserted. The instances are child processes on a shared clock running at 300x real time, so the
 * figure depends on the machine keeping up: run it on a quiet machine.
 *
 *   SENDPOOL_REDIS_URL=redis://127.0.0.1:6391 npx tsx bench/redis-fleet.bench.ts
 *
 * BENCH_RUNS (default 3) runs; each prints the share of the hour's capacity used, the contacts sent
 * by the end of the run (an hour and a quarter), whether any window was exceeded (never expected),
 * and the Redis round trips per 1,000 sends.
 */
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { NUMBERS, readSends, startInstances, testFleet, windowViolations } from '../test/redis/fleet-run.js';
import { cleanup } from '../test/redis/helpers.js';

const url = process.env['SENDPOOL_REDIS_URL'];
if (url === undefined) {
  console.error('SENDPOOL_REDIS_URL is not set (e.g. redis://127.0.0.1:6391)');
  process.exit(1);
}
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const HOUR = 3_600_000;
const SCALE = 300;
const PER_INSTANCE = 11_000;
const INSTANCES = 4;
const capacity = NUMBERS.reduce((sum, n) => sum + Math.min(n.per24h, 2 * n.perHour), 0);

const used: number[] = [];
console.log(
  `4 instances, 10 numbers, one Redis, ${SCALE}x simulated time; capacity of the hour ${capacity.toLocaleString('en-US')}; load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
for (let run = 1; run <= RUNS; run++) {
  const prefix = `sendpool-bench:fleet:${process.pid}:${run}:`;
  const fleet = await startInstances({ url, prefix, instances: INSTANCES, fleet: testFleet(NUMBERS), scale: SCALE, simEnd: HOUR + 15 * 60_000 }, PER_INSTANCE);
  const results = await Promise.all(fleet.instances.map((x) => x.done));
  const sends = readSends(fleet.instances);
  const client = new Redis(url);
  await cleanup(client, prefix);
  client.disconnect();
  const inHour = sends.filter((s) => s.at < HOUR).length;
  const violations = windowViolations(sends);
  const roundTrips = results.map((r) => Number((r.summary?.['metrics'] as { roundTrips?: number } | undefined)?.roundTrips ?? 0));
  const tripsPer1000 = (1000 * roundTrips.reduce((a, b) => a + b, 0)) / Math.max(1, sends.length);
  used.push(inHour / capacity);
  console.log(
    `run ${run}: ${((100 * inHour) / capacity).toFixed(1)} % of the hour's capacity (${inHour.toLocaleString('en-US')}), ` +
      `${sends.length.toLocaleString('en-US')} of ${(INSTANCES * PER_INSTANCE).toLocaleString('en-US')} contacts by 1 h 15, ` +
      `${violations.length === 0 ? 'no window exceeded' : `WINDOWS EXCEEDED: ${JSON.stringify(violations)}`}, ` +
      `${tripsPer1000.toFixed(0)} Redis round trips per 1,000 sends`,
  );
}
used.sort((a, b) => a - b);
console.log(
  `used: ${used.map((u) => `${(100 * u).toFixed(1)} %`).join(', ')} (median ${(100 * used[Math.floor(used.length / 2)]!).toFixed(1)} %); load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
