/**
 * The contract every backend keeps (src/server/ports/backend.ts), checked the same way on each:
 * memory, sqlite and redis (backend-contract.test.ts), through the server's HTTP API, as the Store
 * contract (store-contract.ts) checks MemoryStore and RedisStore. What differs between backends
 * (where state lives, who shares it) is invisible here: an answer given is kept, a key replays, a
 * phone goes once, ids never repeat.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, contacts, startReceiver, waitFor, type Receiver, type Started } from './helpers.js';

/** A server on the backend under test, and how to stop it and what it keeps. */
export interface BackendFixture {
  readonly started: Started;
  readonly close: () => Promise<void>;
}

const send = (campaignId: number, list: readonly object[], key?: string) =>
  ({
    body: { business_id: 1, template_type_id: 10, campaign_id: campaignId, contacts: list },
    ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
  }) as const;

export function backendContract(name: string, make: () => Promise<BackendFixture>): void {
  describe(`backend contract: ${name}`, { timeout: 60_000 }, () => {
    let fixture: BackendFixture;
    let url = '';
    let receiver: Receiver;
    let secret = '';

    beforeAll(async () => {
      fixture = await make();
      url = fixture.started.url;
      receiver = await startReceiver(() => secret);
    });
    afterAll(async () => {
      await fixture?.close();
      await receiver?.close();
    });

    it('keeps a configuration as written, and one secret', async () => {
      const set = await api(url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } });
      expect(set.status).toBe(200);
      expect((await api(url, '/messenger/config/')).json).toMatchObject({ url_hsm_callback: `${receiver.url}/hsm` });
      const first = await api(url, '/messenger/config/secret/');
      expect(first.json.webhook_secret).toMatch(/^whsec_/);
      expect((await api(url, '/messenger/config/secret/')).json.webhook_secret).toBe(first.json.webhook_secret);
      secret = first.json.webhook_secret;
    });

    it('gives every accepted contact its own id, never repeated, and sends each once', async () => {
      const one = await api(url, '/messenger/messages/', send(101, contacts(40, 1000)));
      const two = await api(url, '/messenger/messages/', send(102, contacts(40, 2000)));
      expect([one.status, two.status, one.json.accepted, two.json.accepted]).toEqual([202, 202, 40, 40]);
      await waitFor(() => receiver.all('/hsm').filter((e) => e.status === 'SENT').length >= 80, '80 SENT');
      const sent = receiver.all('/hsm').filter((e) => e.status === 'SENT');
      expect(new Set(sent.map((e) => e.id)).size).toBe(sent.length);
      const enqueued = receiver.all('/hsm').filter((e) => e.status === 'ENQUEUED');
      expect(new Set(enqueued.map((e) => e.id)).size).toBe(80);
      expect(fixture.started.channel.sends.length).toBe(80);
    });

    it('sends a phone once per campaign: the second request finds it duplicated', async () => {
      const list = contacts(5, 3000);
      expect((await api(url, '/messenger/messages/', send(103, list))).json.accepted).toBe(5);
      const again = await api(url, '/messenger/messages/', send(103, [...list, ...contacts(1, 3100)]));
      expect(again.status).toBe(202);
      expect(again.json.accepted).toBe(1);
      expect(again.json.rejections.map((r: { reason: string }) => r.reason)).toEqual(['duplicated', 'duplicated', 'duplicated', 'duplicated', 'duplicated']);
    });

    it('replays the first 202 under an Idempotency-Key, refuses the key with another body, frees it after a refusal', async () => {
      const first = await api(url, '/messenger/messages/', send(104, contacts(3, 4000), 'contract-1'));
      expect(first.status).toBe(202);
      const again = await api(url, '/messenger/messages/', send(104, contacts(3, 4000), 'contract-1'));
      expect(again.json).toEqual(first.json);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect((await api(url, '/messenger/messages/', send(104, contacts(4, 4000), 'contract-1'))).json.error.code).toBe('idempotency_key_reused');
      // Refused (422): nothing kept under the key; the next request with it runs.
      expect((await api(url, '/messenger/messages/', { body: { business_id: 'x' }, headers: { 'idempotency-key': 'contract-2' } })).status).toBe(422);
      expect((await api(url, '/messenger/messages/', send(105, contacts(2, 4100), 'contract-2'))).status).toBe(202);
      // SMS keys are apart from send keys, and replay the same way.
      const sms = [{ message: 'Hi', phone: '5511970000001', reference: 'c1' }];
      const smsFirst = await api(url, '/sms/messages/', { body: sms, headers: { 'idempotency-key': 'contract-1' } });
      expect(smsFirst.status).toBe(202);
      const smsAgain = await api(url, '/sms/messages/', { body: sms, headers: { 'idempotency-key': 'contract-1' } });
      expect(smsAgain.json).toEqual(smsFirst.json);
      expect(smsAgain.headers.get('idempotent-replayed')).toBe('true');
      await waitFor(() => fixture.started.channel.counts.sms === 1, 'the one SMS sent');
    });

    it('refuses a blocked phone, and accepts it once unblocked', async () => {
      const [phone] = contacts(1, 5000).map((c) => c.phone_number);
      expect((await api(url, '/operator/blocklist/', { body: { phones: [phone] } })).status).toBe(200);
      const refused = await api(url, '/messenger/messages/', send(106, contacts(1, 5000)));
      expect(refused.json).toMatchObject({ accepted: 0, rejections: [{ index: 0, reason: 'blocked' }] });
      expect((await api(url, `/operator/blocklist/${phone}/`, { method: 'DELETE' })).status).toBe(200);
      expect((await api(url, '/messenger/messages/', send(107, contacts(1, 5000)))).json.accepted).toBe(1);
    });

    it('gives a report id once it is kept, and finds it again', async () => {
      const today = new Date().toISOString().slice(0, 10);
      const created = await api(url, '/reports/', { body: { report_type: 'official-messages', start_date: today, end_date: today } });
      expect(created.status).toBe(202);
      expect(created.json.report_id).toEqual(expect.any(Number));
      expect((await api(url, `/reports/${created.json.report_id}/`)).json).toMatchObject({ report_id: created.json.report_id });
    });
  });
}
