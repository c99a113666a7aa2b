/**
 * Dead letters on the durable server: kept in the database with the step that deletes their events
 * from the outbox, so a restart lists them again; a replay is written (back into the outbox, out of
 * the dead letters) before its 202, so a restart right after it still delivers the event, under
 * its event id, and does not list it. Every wait is for a condition.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runServer } from '../../src/server/index.js';
import { KEY_1, api, quietProvider, testFleet, waitFor } from './helpers.js';
import { startSwitchedReceiver } from './dead-letter-receiver.js';

const dir = mkdtempSync(join(tmpdir(), 'sendpool-dead-letters-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dead letters on the durable server', () => {
  it('survive a restart, and a replay answered 202 survives one too', async () => {
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(testFleet()));
    const provider = quietProvider();
    const options = (maxAgeMs: number): Parameters<typeof runServer>[0] => ({
      fleetFile,
      port: 0,
      dataDir: join(dir, 'data'),
      apiKeys: [{ key: KEY_1, companyId: 1 }],
      channel: provider.channel(),
      logger: false,
      handleSignals: false,
      metrics: false,
      allowPrivateWebhookTargets: true,
      drainTimeoutMs: 50,
      outbox: { initialDelayMs: 20, maxDelayMs: 50, probeIntervalMs: 20, maxAgeMs, attemptTimeoutMs: 2_000 },
    });
    const receiver = await startSwitchedReceiver();
    const list = async (address: string) => (await api(address, '/messenger/webhooks/dead-letters/')).json.dead_letters as any[];
    try {
      // 1. Two report.ready events refused until dead-lettered.
      const first = await runServer(options(300));
      let kept: any[];
      try {
        expect((await api(first.address, '/messenger/config/', { body: { url_report_webhook: `${receiver.url}/reports` } })).status).toBe(200);
        for (let i = 0; i < 2; i++) expect((await api(first.address, '/reports/', { body: { report_type: 'numbers' } })).status).toBe(202);
        await waitFor(async () => (await list(first.address)).length === 2, 'two dead letters');
        kept = await list(first.address);
      } finally {
        await first.close();
      }

      // 2. Restarted: the same dead letters; one replayed (the receiver still refuses), then a restart at once.
      const second = await runServer(options(600_000));
      const replayed = kept[0].event_id as string;
      try {
        expect(second.restored).toBe(true);
        expect(await list(second.address)).toEqual(kept);
        expect((await api(second.address, `/messenger/webhooks/dead-letters/${replayed}/replay`, { method: 'POST' })).status).toBe(202);
        expect((await list(second.address)).map((d) => d.event_id)).toEqual([kept[1].event_id]);
      } finally {
        await second.close();
      }

      // 3. The receiver answers again: the replayed event goes after the restart, under its id; the other stays a dead letter.
      receiver.failing = false;
      const third = await runServer(options(600_000));
      try {
        await waitFor(() => receiver.accepted.some((a) => a.id === replayed), 'the replayed event delivered after the restart');
        expect(receiver.accepted.find((a) => a.id === replayed)!.payload).toEqual(kept[0].payload);
        expect((await list(third.address)).map((d) => d.event_id)).toEqual([kept[1].event_id]);
      } finally {
        await third.close();
      }
    } finally {
      await receiver.close();
    }
  });
});
