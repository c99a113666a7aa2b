/**
 * One origin, four paths: one always 500, one that times out, one that resets the connection, one
 * healthy (test/server/webhook-chaos.ts). A campaign, SMS and reports run against it, in memory, on
 * the durable server and on Redis; the healthy path gets every event of every accepted contact,
 * each once (the receiver's own record against what the server made), and is never held back by
 * the failing ones: the origin is not taken as down for them (docs/server.md, "Webhook delivery").
 * The delay figure (p99 under 1 s) is a benchmark's (bench/webhook-chaos.bench.ts), not a timing
 * assertion.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runServer } from '../../src/server/index.js';
import { cleanup, connect, TARGETS, SKIP_REASON, testPrefix } from '../redis/helpers.js';
import { KEY_1, contacts, fastChannel, startServer, testFleet } from './helpers.js';
import { dispatchSettled, quantile, runChaos, startChaosReceiver, watchOutbox, type ChaosOutcome, type ChaosReceiver } from './webhook-chaos.js';

const CONTACTS = Number(process.env.SENDPOOL_CHAOS_CONTACTS ?? 5_000);
/** The production schedule's shape, scaled down: the failing events keep failing for the whole run. */
const SCHEDULE = {
  // Each number paced (a campaign goes out over seconds, as on the Cloud API), five times its default
  // 80 a second so the 5,000 contacts take seconds here.
  perSecond: 400,
  outbox: { initialDelayMs: 200, maxDelayMs: 2_000, attemptTimeoutMs: 5_000, probeIntervalMs: 30_000 },
  delivery: { requestTimeoutMs: 1_000 },
  campaignBatchIntervalMs: 100,
};
const body = (from: number, n: number) => ({ business_id: 1, template_type_id: 10, campaign_id: 7, contacts: contacts(n, from) });
const dir = mkdtempSync(join(tmpdir(), 'sendpool-chaos-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What every mode must show: everything on the healthy path, once; the failing paths tried. */
function check(mode: string, outcome: ChaosOutcome, receiver: ChaosReceiver): void {
  expect(outcome.accepted).toBe(CONTACTS);
  expect(receiver.badSignatures).toBe(0);
  expect(outcome.duplicates).toBe(0);
  expect(outcome.hits.fail).toBeGreaterThan(0);
  expect(outcome.hits.timeout).toBeGreaterThan(0);
  expect(outcome.hits.reset).toBeGreaterThan(0);
  console.log(
    `chaos, ${mode}: ${outcome.healthyEvents} healthy events, delay p50 ${quantile(outcome.delays, 0.5)} ms, p99 ${quantile(outcome.delays, 0.99)} ms, max ${quantile(outcome.delays, 1)} ms; failing paths tried ${JSON.stringify(outcome.hits)}`,
  );
}

describe('a receiver with failing paths beside a healthy one', () => {
  it('in memory: every healthy event, once', async () => {
    const watch = watchOutbox();
    const s = await startServer(SCHEDULE);
    const receiver = await startChaosReceiver(() => s.server.sendpool.webhookSecret(1));
    try {
      const sp = s.server.sendpool;
      const settled = dispatchSettled(sp);
      check('memory', await runChaos({ url: s.url, settled }, receiver, watch.created, { contacts: CONTACTS, body }), receiver);
    } finally {
      watch.stop();
      await s.server.close();
      await receiver.close();
    }
  });

  it('on the durable server: every healthy event, once', async () => {
    const watch = watchOutbox();
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(testFleet(SCHEDULE.perSecond)));
    const running = await runServer({
      fleetFile,
      port: 0,
      dataDir: join(dir, 'data'),
      apiKeys: [{ key: KEY_1, companyId: 1 }],
      channel: fastChannel(),
      logger: false,
      handleSignals: false,
      metrics: false,
      allowPrivateWebhookTargets: true,
      outbox: SCHEDULE.outbox,
      delivery: SCHEDULE.delivery,
      campaignBatchIntervalMs: SCHEDULE.campaignBatchIntervalMs,
    });
    const sp = running.server.sendpool;
    const receiver = await startChaosReceiver(() => sp.webhookSecret(1));
    try {
      const settled = dispatchSettled(sp);
      check('durable', await runChaos({ url: running.address, settled }, receiver, watch.created, { contacts: CONTACTS, body }), receiver);
    } finally {
      watch.stop();
      await running.close();
      await receiver.close();
    }
  });

  it.skipIf(TARGETS.length === 0)(`on Redis, two instances: every healthy event, once${TARGETS.length === 0 ? ` (${SKIP_REASON})` : ''}`, async () => {
    const watch = watchOutbox();
    const client = connect(TARGETS[0]);
    const prefix = testPrefix('chaos');
    const redis = { client, prefix, prefetchContacts: 200 };
    const a = await startServer({ ...SCHEDULE, redis: { ...redis, consumer: 'a' }, channel: fastChannel({ seed: 1 }) });
    const b = await startServer({ ...SCHEDULE, redis: { ...redis, consumer: 'b' }, channel: fastChannel({ seed: 2 }) });
    const receiver = await startChaosReceiver(() => a.server.sendpool.webhookSecret(1));
    try {
      const settled = dispatchSettled(a.server.sendpool, b.server.sendpool);
      check('redis', await runChaos({ url: a.url, settled }, receiver, watch.created, { contacts: CONTACTS, body }), receiver);
    } finally {
      watch.stop();
      await a.server.close();
      await b.server.close();
      await receiver.close();
      await cleanup(client, prefix);
      client.disconnect();
    }
  });
});
