/**
 * Webhook isolation, measured (not a test): the delay of a healthy path's events, from the moment
 * an event enters the outbox to its arrival at the receiver, while three other paths of the same
 * origin fail (500, no answer, connection reset), beside its ceiling in the same run: the same
 * campaign with only the healthy path configured. The receiver runs in a worker thread of this
 * process (a receiver is another service: on the server's own thread it took a share of the CPU it
 * measures); one uncounted round of each goes first.
 *
 *     npx tsx bench/webhook-chaos.bench.ts
 *
 * Options (environment): BENCH_CONTACTS (5,000), BENCH_ROUNDS (3, interleaved chaos / ceiling).
 * The scenario is test/server/webhook-chaos.ts's (its test checks nothing is lost or duplicated).
 * docs/benchmarks.md has the latest figures.
 */
import { contacts, startServer } from '../test/server/helpers.js';
import { dispatchSettled, quantile, runChaos, startChaosReceiverThread, watchOutbox, type ChaosOutcome } from '../test/server/webhook-chaos.js';
import { cpuLoad, loadNote } from './load.js';

const CONTACTS = Number(process.env['BENCH_CONTACTS'] ?? 5_000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
let campaign = 100;

async function round(chaos: boolean): Promise<ChaosOutcome> {
  const watch = watchOutbox();
  // The production delivery settings; statistics batches every second so the timing-out path is busy.
  // Three numbers at the Cloud API's default pace (80 messages a second each), as a campaign goes out.
  const s = await startServer({ perSecond: 80, outbox: {}, delivery: {}, campaignBatchIntervalMs: 1_000 });
  const receiver = await startChaosReceiverThread(s.server.sendpool.webhookSecret(1));
  try {
    const sp = s.server.sendpool;
    const settled = dispatchSettled(sp);
    const id = campaign++;
    const body = (from: number, n: number) => ({ business_id: 1, template_type_id: 10, campaign_id: id, contacts: contacts(n, from + id * 100_000) });
    if (chaos) return await runChaos({ url: s.url, settled }, receiver, watch.created, { contacts: CONTACTS, body });
    return await runChaos({ url: s.url, settled }, receiver, watch.created, { contacts: CONTACTS, body, healthyOnly: true });
  } finally {
    watch.stop();
    await s.server.close();
    await receiver.close();
  }
}

const rows: string[] = [];
// One round of each first, not counted: the first campaign of the process runs the server's code
// cold (its delivery rate is half the warm one), which is a start-up figure, not this one.
await round(true);
await round(false);
for (let r = 0; r < ROUNDS; r++) {
  for (const chaos of [true, false]) {
    const before = cpuLoad();
    const o = await round(chaos);
    const line = `| ${chaos ? 'three failing paths beside it' : 'healthy path alone (ceiling)'} | ${o.healthyEvents} | ${quantile(o.delays, 0.5)} | **${quantile(o.delays, 0.99)}** | ${quantile(o.delays, 1)} | ${quantile(o.statusDelays, 0.99)} | ${o.hits.fail} / ${o.hits.timeout} / ${o.hits.reset} | ${loadNote([before, cpuLoad()])} |`;
    console.log(line);
    rows.push(line);
  }
}
console.log(
  '\n| run | healthy events | delay p50 (ms) | p99 (ms) | max (ms) | p99 without ENQUEUED (ms) | failing paths tried (500 / timeout / reset) | load |\n|---|---:|---:|---:|---:|---:|---|---|',
);
for (const r of rows) console.log(r);
