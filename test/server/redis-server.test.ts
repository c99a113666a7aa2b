/**
 * The server on Redis, two instances in this process sharing one queue: contacts posted to either
 * are sent by both (any instance dispatches), each once, and every contact's notifications reach
 * the receiver whichever instance sent it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanup, connect, describeTargets, keysOf, testPrefix, type TestClient } from '../redis/helpers.js';
import { api, contacts, fastChannel, startReceiver, startServer, waitFor, type Receiver, type Started } from './helpers.js';

describeTargets('the server on Redis: instances share the queue', (target) => {
  let client: TestClient;
  let base: string;
  let a: Started;
  let b: Started;
  let receiver: Receiver;
  let secret = '';

  beforeAll(async () => {
    client = connect(target);
    base = testPrefix('server');
    const redis = { client, prefix: base, prefetchContacts: 150 };
    // Batches as often as asked (the fleet's interval is claimed in Redis).
    a = await startServer({ redis: { ...redis, consumer: 'a' }, channel: fastChannel({ seed: 1 }), campaignBatchIntervalMs: 1 });
    b = await startServer({ redis: { ...redis, consumer: 'b' }, channel: fastChannel({ seed: 2 }), campaignBatchIntervalMs: 1 });
    receiver = await startReceiver(() => secret);
  });
  afterAll(async () => {
    await a?.server.close();
    await b?.server.close();
    await receiver?.close();
    await cleanup(client, base);
    client.disconnect();
  });

  it('one configuration and one secret for every instance', async () => {
    // Configured on A only; B reads it back, and both show the same signing secret.
    expect((await api(a.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);
    expect((await api(b.url, '/messenger/config/')).json).toMatchObject({ url_hsm_callback: `${receiver.url}/hsm` });
    const [one, two] = await Promise.all([api(a.url, '/messenger/config/secret/'), api(b.url, '/messenger/config/secret/')]);
    expect(one.json.webhook_secret).toMatch(/^whsec_/);
    expect(two.json.webhook_secret).toBe(one.json.webhook_secret);
    secret = one.json.webhook_secret;
    // /metrics shows the instance's side of Redis: steps failing in a row, the fleet's backlog, what it holds.
    const metrics = (await api(a.url, '/metrics', { key: null })).text;
    for (const line of ['sendpool_redis_step_failures 0', 'sendpool_redis_backlog ', 'sendpool_redis_held_contacts ']) expect(metrics).toContain(line);
  });

  it('sends what either accepted from both, each contact once, with its notifications', async () => {
    const one = await api(a.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 5, contacts: contacts(600) } });
    const two = await api(b.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 5, contacts: contacts(600, 600) } });
    expect([one.status, two.status]).toEqual([202, 202]);
    // Ids from the shared counter: no contact id repeats across instances.
    const sent = () => receiver.all('/hsm').filter((e) => e.status === 'SENT');
    await waitFor(() => new Set(sent().map((e) => e.id)).size === 1200, '1,200 contacts sent');
    const ids = sent().map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Both instances sent: the channels of both recorded sends (A's request went out from B too).
    expect(a.channel.sends.length).toBeGreaterThan(0);
    expect(b.channel.sends.length).toBeGreaterThan(0);
    expect(a.channel.sends.length + b.channel.sends.length).toBe(1200);
    // Message ids are the contacts' global ids.
    const messageIds = [...a.channel.sends, ...b.channel.sends].map((s) => s.messageId);
    expect(new Set(messageIds).size).toBe(1200);
    // SMS accepted by A are sent by whichever instance takes them; their DLR callbacks come.
    const items = Array.from({ length: 30 }, (_, i) => ({ message: `SMS ${i}`, phone: `55119${String(70000000 + i)}`, reference: `s${i}`, url_callback_dlr: `${receiver.url}/dlr` }));
    expect((await api(a.url, '/sms/messages/', { body: items })).status).toBe(202);
    await waitFor(
      () =>
        new Set(
          receiver
            .all('/dlr')
            .filter((d) => d.status === 'SENT')
            .map((d) => d.reference),
        ).size === 30,
      '30 SMS delivery reports',
    );
    await waitFor(() => a.server.sendpool.idle() && b.server.sendpool.idle(), 'both idle');
    expect(await client.xlen(`${base}{queue}:sms`)).toBe(0);
    expect(await client.scard(`${base}{queue}:active`)).toBe(0);
  });

  it('one statistics batch counts the whole campaign, whichever instance accepted and sent it', async () => {
    await api(a.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm`, url_campaign_webhook: `${receiver.url}/campaign` } });
    // Rejections on both instances: an invalid phone on A, a phone repeated in B's request.
    const one = await api(a.url, '/messenger/messages/', {
      body: { business_id: 1, template_type_id: 10, campaign_id: 6, contacts: [...contacts(300, 2000), { phone_number: '123', template_variables: ['x'] }] },
    });
    const twice = contacts(300, 2300);
    const two = await api(b.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 6, contacts: [...twice, twice[7]!] } });
    expect([one.status, two.status]).toEqual([202, 202]);
    expect([one.json.rejected, two.json.rejected]).toEqual([1, 1]);
    const last = () =>
      (receiver.all('/campaign') as { campaigns: { campaign_id: number; count_total: number; count_processed: number; status: string }[] }[])
        .flatMap((batch) => batch.campaigns)
        .filter((c) => c.campaign_id === 6)
        .sort((x, y) => x.count_processed - y.count_processed)
        .at(-1);
    await waitFor(() => {
      // Both run the period; one claims each (the fleet's interval).
      a.server.sendpool.flushCampaignStatistics();
      b.server.sendpool.flushCampaignStatistics();
      return last()?.status === 'FINISHED';
    }, 'the campaign finished in a statistics batch');
    const counts = last() as unknown as Record<string, number>;
    expect(counts).toMatchObject({ count_total: 602, count_processed: 602, count_remaining: 0, count_invalid_phone: 1, count_duplicated: 1 });
    // Each of the 600 sent once and counted once under its outcome (the channel also reports
    // numbers that do not exist and messages that expire), whichever instance sent it.
    expect(counts['count_sent']! + counts['count_expired']! + counts['count_does_not_exist']! + counts['count_failed']!).toBe(600);
    expect(a.channel.sends.length + b.channel.sends.length).toBe(1200 + 600);
  });

  it('a phone goes once per campaign, whichever instances the requests went to', async () => {
    const first = await api(a.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 11, contacts: contacts(3, 5000) } });
    expect(first.json).toMatchObject({ accepted: 3, rejected: 0 });
    const again = await api(b.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 11, contacts: contacts(4, 5001) } });
    expect(again.json).toMatchObject({
      accepted: 2,
      rejected: 2,
      rejections: [
        { index: 0, reason: 'duplicated' },
        { index: 1, reason: 'duplicated' },
      ],
    });
    // Two requests with the same phones at once, to both instances: each phone is taken once.
    const [x, y] = await Promise.all([
      api(a.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 12, contacts: contacts(200, 5100) } }),
      api(b.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 12, contacts: contacts(200, 5100) } }),
    ]);
    expect(x.json.accepted + y.json.accepted).toBe(200);
    // Another campaign of the business and type: already sent (the next test).
  });

  it('a phone the business took for the type on one instance is already_sent on another, in any campaign, and taken once by requests at once', async () => {
    // Every message reaches the device: no contact fails later and gives its phone back.
    const shared = { client, prefix: `${base}sent:` };
    const channel = () => fastChannel({ serverProbability: 1, deviceProbability: 1 });
    const one = await startServer({ redis: { ...shared, consumer: 's1' }, channel: channel() });
    const two = await startServer({ redis: { ...shared, consumer: 's2' }, channel: channel() });
    try {
      const post = (s: Started, campaignId: number, list: unknown[]) => api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: campaignId, contacts: list } });
      expect((await post(one, 21, contacts(3, 7000))).json).toMatchObject({ accepted: 3, rejected: 0 });
      const later = await post(two, 22, contacts(4, 7000));
      expect(later.json).toMatchObject({
        accepted: 1,
        rejected: 3,
        rejection_counts: { already_sent: 3, duplicated: 0 },
      });
      expect(later.json.rejections[0]).toMatchObject({
        index: 0,
        reason: 'already_sent',
        problems: [{ path: '$.contacts[0].phone_number', actual: `${JSON.stringify(contacts(1, 7000)[0]!.phone_number)} (string)` }],
      });
      // The phones refused are not campaign 22's: a later request of it is refused already_sent again, not duplicated.
      expect((await post(one, 22, contacts(1, 7000))).json).toMatchObject({ accepted: 0, rejection_counts: { already_sent: 1, duplicated: 0 } });
      // Two campaigns at once on two instances: each phone is taken once.
      const [x, y] = await Promise.all([post(one, 23, contacts(100, 7100)), post(two, 24, contacts(100, 7100))]);
      expect(x.json.accepted + y.json.accepted).toBe(100);
      expect(x.json.rejection_counts.already_sent + y.json.rejection_counts.already_sent).toBe(100);
      // Kept in one hash per bucket of the window, with a TTL.
      const keys = await keysOf(client, `${base}sent:{queue}:sent:b1.t10.*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect(await client.pttl(key)).toBeGreaterThan(86_400_000);
    } finally {
      await one.server.close();
      await two.server.close();
    }
  });

  it('a phone blocked on one instance is refused by every instance, and unblocked likewise', async () => {
    const phone = contacts(1, 4000)[0]!.phone_number;
    const listed = async (url: string) => ((await api(url, '/operator/blocklist/')).json.phones as { phone: string }[]).some((e) => e.phone === phone);
    expect((await api(a.url, '/operator/blocklist/', { body: { phones: [phone] } })).status).toBe(200);
    // B's replica follows the shared log within a renewal period.
    await waitFor(() => listed(b.url), 'B sees the phone blocked');
    const refused = await api(b.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 8, contacts: contacts(2, 4000) } });
    expect(refused.json).toMatchObject({ accepted: 1, rejected: 1, rejections: [{ index: 0, reason: 'blocked' }] });
    // Removed on B: A takes the phone again once it has followed.
    expect((await api(b.url, `/operator/blocklist/${phone}/`, { method: 'DELETE' })).status).toBe(200);
    await waitFor(async () => !(await listed(a.url)), 'A sees the phone unblocked');
    const taken = await api(a.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 9, contacts: contacts(1, 4000) } });
    expect(taken.json).toMatchObject({ accepted: 1, rejected: 0 });
    // A third instance started now loads the blocklist from Redis (here: the phone added again).
    expect((await api(a.url, '/operator/blocklist/', { body: { phones: [phone] } })).status).toBe(200);
    const c = await startServer({ redis: { client, prefix: base, consumer: 'c3' } });
    try {
      const third = await api(c.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 10, contacts: contacts(1, 4000) } });
      expect(third.json).toMatchObject({ accepted: 0, rejected: 1 });
    } finally {
      await c.server.close();
    }
  });

  it('an instance shutting down gives its work to the others at once, not after the lease', async () => {
    // Leases of 10 minutes: only a release lets the second instance have the work within the test.
    const shared = { client, prefix: `${base}release:`, leaseMs: 600_000 };
    const d = await startServer({ redis: { ...shared, consumer: 'd', prefetchContacts: 300 }, dispatch: { maxInFlight: 0 } });
    expect((await api(d.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 3, contacts: contacts(250, 9000) } })).status).toBe(202);
    // D holds the contacts (it claims them) but sends none.
    await waitFor(async () => (await client.xpending(`${base}release:{queue}:s:c1.3`, 'dispatch'))[0] === 3, 'D holds the three chunks');
    await d.server.close();
    const e = await startServer({ redis: { ...shared, consumer: 'e' } });
    try {
      await waitFor(() => e.channel.sends.length === 250, 'E sent what D held');
      expect(d.channel.sends.length).toBe(0);
    } finally {
      await e.server.close();
    }
  });

  it('bounds intake by the fleet-wide backlog in Redis', async () => {
    // An instance that dispatches nothing (a paused fleet would too): what it accepts stays queued.
    const c = await startServer({ redis: { client, prefix: `${base}bound:`, consumer: 'c', prefetchContacts: 0 }, maxQueuedContacts: 250 });
    try {
      const post = (n: number, offset: number) => api(c.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 9, contacts: contacts(n, offset) } });
      expect((await post(200, 5000)).status).toBe(202);
      const refused = await post(100, 6000);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      // The refused request gave its phones back: half of them are taken now, none as duplicated.
      expect((await post(50, 6000)).json).toMatchObject({ accepted: 50, rejected: 0 });
    } finally {
      await c.server.close();
    }
  });
});
