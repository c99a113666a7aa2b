/**
 * The durable server: a contact the provider reported FAILED later, and that must go again, is
 * written before the provider's event is acknowledged. Here it waits (131056, the pair rate limit:
 * 6 s) when the server stops, and the next server sends it: nothing of it is lost across a restart.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runServer } from '../../src/server/index.js';
import { KEY_1, api, quietProvider, startReceiver, testFleet, waitFor } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'sendpool-late-failures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a failure reported later, on the durable server', () => {
  it('sends the contact again after a restart when it was waiting to go again', async () => {
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
    });
    let secret = '';
    const receiver = await startReceiver(() => secret);
    const phone = '5511987650001';
    const first = await runServer(options());
    try {
      expect((await api(first.address, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);
      secret = (await api(first.address, '/messenger/config/secret/')).json.webhook_secret;
      const body = { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: [{ phone_number: phone, template_variables: ['Ana'] }] };
      expect((await api(first.address, '/messenger/messages/', { body })).status).toBe(202);
      await waitFor(() => provider.sent.length === 1, 'the first send');
      const sink = provider.sink();
      sink.messageStatus({ messageId: provider.sent[0]!, status: 'FAILED', failureCode: 131056 });
      // What a channel waits for before it answers the provider 200.
      expect(await sink.written!()).toBe(true);
      expect(provider.sent).toHaveLength(1);
    } finally {
      await first.close();
    }
    const second = await runServer(options());
    try {
      await waitFor(() => provider.sent.length === 2, 'the contact sent again by the next server');
      expect(provider.sent[1]).not.toBe(provider.sent[0]);
      await waitFor(() => receiver.all('/hsm').filter((x) => x.status === 'SENT').length === 2, 'two SENT');
      const statuses = receiver.all('/hsm').map((x) => x.status);
      expect(statuses).toEqual(['ENQUEUED', 'SENT', 'FAILED', 'SENT']);
      expect(new Set(receiver.all('/hsm').map((x) => x.id)).size).toBe(1);
    } finally {
      await second.close();
      await receiver.close();
    }
  });
});
