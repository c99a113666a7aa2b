/**
 * The fair-shares figure of docs/scaling.md: instances in processes of their own (instance-worker.ts,
 * 300x simulated time) each with 4,000 contacts for one number of 3,600 an hour (so together they
 * ask for more than the hour gives), with fair shares and with first come, first served. Prints what
 * each instance sent in the hour and the spread.
 *
 *   SENDPOOL_REDIS_URL=redis://127.0.0.1:6401 npx tsx test/redis/fair-shares-figure.ts
 *
 * FIGURE_RUNS (default 3) runs of each case. The instances start together but not at the same
 * instant (each builds its engine first): the first to ask meets a full bucket. Not a test: how
 * even the shares come out depends on the machine keeping up with the simulated clock.
 */
import { cleanup, connectSpec } from './targets.js';
import { readSends, startInstances, testFleet } from './fleet-run.js';

const url = process.env['SENDPOOL_REDIS_URL'];
if (url === undefined) {
  console.error('SENDPOOL_REDIS_URL is not set (e.g. redis://127.0.0.1:6401)');
  process.exit(1);
}
const RUNS = Number(process.env['FIGURE_RUNS'] ?? 3);
const HOUR = 3_600_000;
const ONE = [{ phone: '5511990000001', perHour: 3600, per24h: 100_000 }];

console.log('| instances | rule | sent by each in the hour | spread (most - least) |');
console.log('|---|---|---|---|');
for (const instances of [2, 3]) {
  for (const fairShares of [false, true]) {
    for (let run = 1; run <= RUNS; run++) {
      const prefix = `sendpool-figure:fair:${process.pid}:${instances}:${fairShares}:${run}:`;
      const fleet = await startInstances({ url, prefix, instances, fleet: testFleet(ONE), scale: 300, simEnd: HOUR, fairShares }, 4_000);
      await Promise.all(fleet.instances.map((x) => x.done));
      const sends = readSends(fleet.instances).filter((s) => s.at < HOUR);
      const each = fleet.instances.map((_, i) => sends.filter((s) => s.instance === i).length);
      console.log(
        `| ${instances} | ${fairShares ? 'fair shares' : 'first come'} | ${each.map((n) => n.toLocaleString('en-US')).join(' / ')} | ${(Math.max(...each) - Math.min(...each)).toLocaleString('en-US')} |`,
      );
      const client = connectSpec(url);
      await cleanup(client, prefix);
      client.disconnect();
    }
  }
}
