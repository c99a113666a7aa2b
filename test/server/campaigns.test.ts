/**
 * Campaign semantics over HTTP: a contact waiting for its retry is remaining, not failed (and the
 * campaign is not FINISHED); a phone is sent once per campaign (a later contact with it is
 * `duplicated`); recipients who opt out are blocked in every later campaign of the company, and an
 * operator lists, adds and removes blocked phones.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine } from '../../src/index.js';
import { KEY_2, api, contacts, fastChannel, startReceiver, startServer, testFleet, waitFor } from './helpers.js';

type CampaignEntry = { campaign_id: number; datetime: string; status: string } & Record<string, unknown>;

/** The last statistics of a campaign a receiver got. */
function lastStats(receiver: Awaited<ReturnType<typeof startReceiver>>, campaignId: number): CampaignEntry | undefined {
  return (receiver.all('/campaign') as { campaigns: CampaignEntry[] }[])
    .flatMap((b) => b.campaigns)
    .filter((c) => c.campaign_id === campaignId)
    .sort((a, b) => a.datetime.localeCompare(b.datetime))
    .at(-1);
}

describe('campaigns', () => {
  it('counts a contact waiting for its retry as remaining: the campaign finishes only with the final outcomes', async () => {
    // Near the real time: the receiver checks the signature's timestamp against its own clock.
    const clock = new ManualClock(Date.now());
    // Every attempt fails with 131000 (a contact retry): one retry after a minute, then final.
    const s = await startServer({
      engine: createEngine(testFleet(), { clock }),
      clock,
      channel: fastChannel({ sendFailureProbability: 1, failureCodes: [{ code: 131000, weight: 1 }] }),
    });
    let secret = '';
    const receiver = await startReceiver(() => secret);
    try {
      await api(s.url, '/messenger/config/', { body: { url_campaign_webhook: `${receiver.url}/campaign` } });
      secret = (await api(s.url, '/messenger/config/secret/')).json.webhook_secret;
      const send = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 3, max_retries: 1, retry_interval: 1, contacts: contacts(3) } });
      expect(send.status).toBe(202);
      await waitFor(() => s.server.sendpool.engine.stats().waitingRetry === 3, 'three contacts waiting for their retry');
      clock.advance(1_000);
      s.server.sendpool.flushCampaignStatistics();
      await waitFor(() => lastStats(receiver, 3)?.count_total === 3, 'the statistics of the waiting contacts');
      expect(lastStats(receiver, 3)).toMatchObject({ status: 'RUNNING', count_total: 3, count_failed: 0, count_processed: 0, count_remaining: 3 });

      // The retries go out and fail for good: now the campaign is finished, three failed.
      clock.advance(60_000);
      s.server.sendpool.wake();
      await waitFor(() => s.server.sendpool.engine.stats().failed === 3, 'the retries failed');
      clock.advance(1_000);
      s.server.sendpool.flushCampaignStatistics();
      await waitFor(() => lastStats(receiver, 3)?.status === 'FINISHED', 'the campaign finished');
      expect(lastStats(receiver, 3)).toMatchObject({ count_total: 3, count_failed: 3, count_remaining: 0 });
    } finally {
      await s.server.close();
      await receiver.close();
    }
  });

  it('sends a phone once per campaign: a later request with it is rejected as duplicated and counted', async () => {
    // Every message reaches the device: no contact fails later and gives its phone back (already_sent).
    const s = await startServer({ channel: fastChannel({ serverProbability: 1, deviceProbability: 1 }) });
    try {
      const first = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 7, contacts: contacts(2) } });
      expect(first.json).toMatchObject({ accepted: 2, rejected: 0 });
      // The same two phones again (and a new one): only the new one is taken.
      const again = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 7, contacts: contacts(3) } });
      expect(again.status).toBe(202);
      expect(again.json).toMatchObject({
        accepted: 1,
        rejected: 2,
        rejections: [
          { index: 0, reason: 'duplicated', problems: [{ path: '$.contacts[0].phone_number' }] },
          { index: 1, reason: 'duplicated', problems: [{ path: '$.contacts[1].phone_number' }] },
        ],
        rejection_counts: { duplicated: 2 },
      });
      await waitFor(() => s.server.sendpool.idle(), 'the sends');
      expect(s.server.sendpool.engine.stats().sent).toBe(3);
      // Another campaign of the business and type may not within a day (already_sent, its own
      // test file); another company may, in campaign 7 too.
      expect((await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 8, contacts: contacts(1) } })).json).toMatchObject({
        accepted: 0,
        rejection_counts: { already_sent: 1 },
      });
      expect((await api(s.url, '/messenger/messages/', { key: KEY_2, body: { business_id: 2, template_type_id: 10, campaign_id: 7, contacts: contacts(1) } })).json).toMatchObject({ accepted: 1 });
      const counts = s.server.sendpool
        .snapshot()
        .server.notifier.companies.find((c) => c.companyId === 1)!
        .stats.campaigns.find((c) => c.campaignId === 7)!;
      expect(counts).toBeDefined();
    } finally {
      await s.server.close();
    }
  });

  it('counts duplicated and blocked contacts in the campaign statistics', async () => {
    const s = await startServer({ channel: fastChannel({ serverProbability: 1, deviceProbability: 1 }) });
    let secret = '';
    const receiver = await startReceiver(() => secret);
    try {
      await api(s.url, '/messenger/config/', { body: { url_campaign_webhook: `${receiver.url}/campaign` } });
      secret = (await api(s.url, '/messenger/config/secret/')).json.webhook_secret;
      expect((await api(s.url, '/operator/blocklist/', { body: { phones: [contacts(1, 2)[0]!.phone_number] } })).json).toEqual({ added: 1, already: 0, total: 1 });
      await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 9, contacts: contacts(2) } });
      const second = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 9, contacts: contacts(4) } });
      expect(second.json).toMatchObject({ accepted: 1, rejected: 3, rejection_counts: { duplicated: 2, blocked: 1 } });
      expect(second.json.rejections[2]).toMatchObject({ index: 2, reason: 'blocked', problems: [{ path: '$.contacts[2].phone_number' }] });
      await waitFor(() => s.server.sendpool.idle(), 'the sends');
      await waitFor(() => lastStats(receiver, 9)?.count_sent === 3, 'the statistics');
      expect(lastStats(receiver, 9)).toMatchObject({ status: 'FINISHED', count_total: 6, count_sent: 3, count_duplicated: 2, count_blocked: 1, count_remaining: 0 });
    } finally {
      await s.server.close();
      await receiver.close();
    }
  });
});

describe('blocklist', () => {
  it('blocks a recipient who opted out in every later campaign of the company, not of another', async () => {
    // Every message is delivered, read and answered with an opt-out.
    const s = await startServer({
      channel: fastChannel({ serverProbability: 1, deviceProbability: 1, readProbability: 1, replyProbability: 1, blocklistProbability: 1 }),
    });
    try {
      await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(2) } });
      await waitFor(async () => (await api(s.url, '/operator/blocklist/')).json.total === 2, 'both opt-outs on the blocklist');
      const list = await api(s.url, '/operator/blocklist/');
      expect(list.json).toMatchObject({ total: 2, next_after: null });
      expect(list.json.phones.map((p: { phone: string; source: string }) => [p.phone, p.source])).toEqual(contacts(2).map((c) => [c.phone_number, 'reply']));

      const later = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 2, contacts: contacts(3) } });
      expect(later.json).toMatchObject({ accepted: 1, rejected: 2, rejection_counts: { blocked: 2 } });
      // Company 2 has its own blocklist.
      expect((await api(s.url, '/operator/blocklist/', { key: KEY_2 })).json).toEqual({ total: 0, phones: [], next_after: null });
      expect((await api(s.url, '/messenger/messages/', { key: KEY_2, body: { business_id: 2, template_type_id: 10, campaign_id: 2, contacts: contacts(1) } })).json).toMatchObject({ accepted: 1 });
    } finally {
      await s.server.close();
    }
  });

  it('lets an operator add (all or nothing), page through and remove blocked phones', async () => {
    const s = await startServer();
    try {
      const phones = contacts(5).map((c) => c.phone_number);
      const bad = await api(s.url, '/operator/blocklist/', { body: { phones: [phones[0], '123', 'x'] } });
      expect(bad.status).toBe(422);
      expect(bad.json.error.problems.map((p: { path: string }) => p.path)).toEqual(['$.phones[1]', '$.phones[2]']);
      expect((await api(s.url, '/operator/blocklist/')).json.total).toBe(0);
      expect((await api(s.url, '/operator/blocklist/', { body: { phones: ['+55 (11) 98000-0000', ...phones] } })).json).toEqual({ added: 5, already: 1, total: 5 });
      const page = await api(s.url, '/operator/blocklist/?limit=2');
      expect(page.json.phones.map((p: { phone: string }) => p.phone)).toEqual(phones.slice(0, 2));
      expect(page.json.next_after).toBe(phones[1]);
      const rest = await api(s.url, `/operator/blocklist/?after=${page.json.next_after}&limit=10`);
      expect(rest.json.phones.map((p: { phone: string }) => p.phone)).toEqual(phones.slice(2));
      expect(rest.json.phones[0]).toMatchObject({ source: 'operator', added_at: expect.stringMatching(/-03:00$/) });
      expect((await api(s.url, '/operator/blocklist/?limit=0')).json.error.problems[0].path).toBe('$.query.limit');

      expect((await api(s.url, `/operator/blocklist/${phones[0]}/`, { method: 'DELETE' })).json).toEqual({ removed: phones[0], total: 4 });
      expect((await api(s.url, `/operator/blocklist/${phones[0]}/`, { method: 'DELETE' })).status).toBe(404);
      const send = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(2) } });
      expect(send.json).toMatchObject({ accepted: 1, rejected: 1, rejections: [{ index: 1, reason: 'blocked' }] });
    } finally {
      await s.server.close();
    }
  });
});
