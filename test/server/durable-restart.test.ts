/**
 * What a durable server keeps besides contacts, across a restart on the same data directory:
 * webhook configuration and signing secret, report records and the key of their download links,
 * the contact id counter, campaign statistics, and the messages sent before it (a later status
 * from the provider still becomes a notification). (The kill -9 behaviour of contacts and SMS is
 * in durable.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runServer } from '../../src/server/index.js';
import { KEY_1, api, contacts, quietProvider, startReceiver, testFleet, waitFor } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'sendpool-durable-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('durable server restart', () => {
  it('keeps the webhook configuration and secret, reports and their links, contact ids, statistics and sent messages', async () => {
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(testFleet()));
    const provider = quietProvider();
    const options = (): Parameters<typeof runServer>[0] => ({
      fleetFile,
      port: 0,
      dataDir: join(dir, 'data'),
      apiKeys: [{ key: KEY_1, companyId: 1 }],
      channel: provider.channel(),
      logger: false,
      handleSignals: false,
      metrics: false,
      allowPrivateWebhookTargets: true,
      campaignBatchIntervalMs: 10,
      // Sent contacts (no DEVICE) count as sent once this window passes, across the restart too.
      failureWindowMs: 200,
    });
    let secret = '';
    const receiver = await startReceiver(() => secret);
    const lastCounts = () =>
      (receiver.all('/campaign') as { campaigns: { campaign_id: number; datetime: string; [k: string]: unknown }[] }[])
        .flatMap((b) => b.campaigns)
        .filter((c) => c.campaign_id === 1)
        .sort((a, b) => a.datetime.localeCompare(b.datetime))
        .at(-1);
    const first = await runServer(options());
    let fileUrl: string;
    try {
      expect(
        (
          await api(first.address, '/messenger/config/', {
            body: { url_report_webhook: `${receiver.url}/reports`, url_hsm_callback: `${receiver.url}/hsm`, url_campaign_webhook: `${receiver.url}/campaign` },
          })
        ).status,
      ).toBe(200);
      secret = (await api(first.address, '/messenger/config/secret/')).json.webhook_secret;
      expect((await api(first.address, '/reports/', { body: { report_type: 'numbers' } })).status).toBe(202);
      await waitFor(() => receiver.all('/reports').length === 1, 'report.ready');
      fileUrl = receiver.all('/reports')[0].file_url;
      expect((await api(first.address, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(3) } })).status).toBe(202);
      await waitFor(() => receiver.all('/hsm').filter((n) => n.status === 'SENT').length === 3, 'three SENT');
      expect((await api(first.address, '/operator/blocklist/', { body: { phones: [contacts(1, 9)[0]!.phone_number] } })).status).toBe(200);
      provider.sink().messageStatus({ messageId: provider.sent[1]!, status: 'READ' });
      await waitFor(() => lastCounts()?.count_read === 1, 'the READ counted');
    } finally {
      await first.close();
    }

    const second = await runServer(options());
    try {
      expect(second.restored).toBe(true);
      expect((await api(second.address, '/messenger/config/')).json).toMatchObject({ url_report_webhook: `${receiver.url}/reports` });
      expect((await api(second.address, '/messenger/config/secret/')).json.webhook_secret).toBe(secret);
      // The link signed before the restart works after it (same key, same record); the port changed.
      const download = await fetch(fileUrl.replace(/^http:\/\/[^/]+/, second.address), { headers: { 'x-api-key-id': KEY_1 } });
      expect(download.status).toBe(200);
      expect(await download.text()).toContain('phone');
      expect((await api(second.address, '/reports/1/')).json).toMatchObject({ report_id: 1, status: 'ready' });
      // New contacts continue the id sequence (the HSM `id`), signed with the kept secret.
      expect((await api(second.address, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(1, 3) } })).status).toBe(202);
      await waitFor(() => receiver.all('/hsm').filter((n) => n.status === 'SENT').length === 4, 'the fourth SENT');
      const ids = receiver
        .all('/hsm')
        .filter((n) => n.status === 'SENT')
        .map((n) => n.id);
      expect(new Set(ids).size).toBe(4);
      expect(Math.max(...ids)).toBe(4);
      // The blocklist and the phones the campaign took are kept: blocked and duplicated.
      const again = await api(second.address, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: [...contacts(1), ...contacts(1, 9)] } });
      expect(again.json).toMatchObject({
        accepted: 0,
        rejected: 2,
        rejections: [
          { index: 0, reason: 'duplicated' },
          { index: 1, reason: 'blocked' },
        ],
      });
      // A later status of a message sent before the restart: notified, and counted on top of the
      // statistics kept (the campaign's 3 contacts from before, not only the new one).
      provider.sink().messageStatus({ messageId: provider.sent[0]!, status: 'DEVICE' });
      await waitFor(() => receiver.all('/hsm').some((n) => n.status === 'DEVICE' && n.id === 1), 'DEVICE of contact 1');
      await waitFor(() => lastCounts()?.count_delivered === 2, 'the DEVICE counted');
      await waitFor(() => lastCounts()?.count_total === 6, 'the rejected contacts counted');
      await waitFor(() => lastCounts()?.status === 'FINISHED', 'the failure window of the last send passed');
      expect(lastCounts()).toMatchObject({ status: 'FINISHED', count_total: 6, count_sent: 4, count_duplicated: 1, count_blocked: 1, count_delivered: 2, count_read: 1, count_remaining: 0 });
      expect(receiver.badSignatures).toBe(0);
    } finally {
      await second.close();
      await receiver.close();
    }
  });

  it("writes a request's ENQUEUED notifications as one row: delivered after a restart, the row gone once they all are", async () => {
    const fleetFile = join(dir, 'fleet-paused.json');
    // Every number paused: nothing is sent, so the ENQUEUED are every notification there is.
    const fleet = testFleet();
    for (const b of fleet.businesses) for (const n of b.numbers) (n as { status: string }).status = 'paused';
    writeFileSync(fleetFile, JSON.stringify(fleet));
    const probe = await startReceiver(() => 'whsec_unused');
    const port = probe.port;
    await probe.close(); // down while the request is accepted: the run stays mostly unbuilt
    const options = (): Parameters<typeof runServer>[0] => ({
      fleetFile,
      port: 0,
      dataDir: join(dir, 'data-runs'),
      apiKeys: [{ key: KEY_1, companyId: 1 }],
      logger: false,
      handleSignals: false,
      metrics: false,
      allowPrivateWebhookTargets: true,
    });
    const first = await runServer(options());
    let secret = '';
    try {
      await api(first.address, '/messenger/config/', { body: { url_hsm_callback: `http://127.0.0.1:${port}/hsm` } });
      secret = (await api(first.address, '/messenger/config/secret/')).json.webhook_secret;
      expect((await api(first.address, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(1_500) } })).status).toBe(202);
    } finally {
      await first.close();
    }
    const receiver = await startReceiver(() => secret, port);
    try {
      const second = await runServer(options());
      try {
        await waitFor(() => receiver.ids.size === 1_500, 'every ENQUEUED after the restart');
        await waitFor(() => second.server.sendpool.stats().webhooksPending === 0, 'nothing pending');
        expect(new Set(receiver.all('/hsm').map((n: { id: number }) => n.id)).size).toBe(1_500);
        expect(receiver.all('/hsm').every((n: { status: string }) => n.status === 'ENQUEUED')).toBe(true);
      } finally {
        await second.close();
      }
      // Every notification of the run ended: its row went, and a third start sends nothing again.
      const third = await runServer(options());
      try {
        expect(third.server.sendpool.stats().webhooksPending).toBe(0);
      } finally {
        await third.close();
      }
      expect(receiver.duplicates).toBe(0);
    } finally {
      await receiver.close();
    }
  });
});
