/**
 * `already_sent` over HTTP (spec 6.4, `count_already_sent`): a contact whose phone the business
 * took for the template type within `alreadySentWindowMs`, in any campaign, is refused at intake
 * with its problem, counted in the campaign's statistics and not sent; two requests at once cannot
 * both take a phone; the phone is free again past the window (a manual clock), or once its contact
 * failed for good; `alreadySentWindowMs: 0` turns it off; a durable server keeps it across a restart.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock, createEngine } from '../../src/index.js';
import { runServer } from '../../src/server/index.js';
import { KEY_1, KEY_2, api, contacts, fastChannel, quietProvider, startReceiver, startServer, testFleet, waitFor } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'sendpool-already-sent-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const send = (url: string, campaignId: number, list: unknown[], key = KEY_1, businessId = key === KEY_1 ? 1 : 2) =>
  api(url, '/messenger/messages/', { key, body: { business_id: businessId, template_type_id: 10, campaign_id: campaignId, contacts: list } });

describe('already_sent', () => {
  it('refuses a phone the business took for the type in an earlier campaign, names it, counts it, and does not send it', async () => {
    // Every message reaches the device: no contact fails later and gives its phone back.
    const s = await startServer({ channel: fastChannel({ serverProbability: 1, deviceProbability: 1 }) });
    let secret = '';
    const receiver = await startReceiver(() => secret);
    try {
      await api(s.url, '/messenger/config/', { body: { url_campaign_webhook: `${receiver.url}/campaign` } });
      secret = (await api(s.url, '/messenger/config/secret/')).json.webhook_secret;
      expect((await send(s.url, 1, contacts(2))).json).toMatchObject({ accepted: 2, rejected: 0 });
      const later = await send(s.url, 2, contacts(3));
      expect(later.status).toBe(202);
      const phone = contacts(1)[0]!.phone_number;
      expect(later.json).toMatchObject({
        accepted: 1,
        rejected: 2,
        rejection_counts: { already_sent: 2, duplicated: 0 },
        rejections: [
          {
            index: 0,
            reason: 'already_sent',
            problems: [
              { path: '$.contacts[0].phone_number', expected: 'a phone business 1 has not sent template type 10 within the last 24 h (already sent)', actual: `${JSON.stringify(phone)} (string)` },
            ],
          },
          { index: 1, reason: 'already_sent', problems: [{ path: '$.contacts[1].phone_number' }] },
        ],
      });
      // Another company's business sends the same phones.
      expect((await send(s.url, 2, contacts(2), KEY_2)).json).toMatchObject({ accepted: 2 });
      await waitFor(() => s.server.sendpool.idle(), 'the sends');
      expect(s.channel.sends.filter((m) => m.to === phone)).toHaveLength(2);
      s.server.sendpool.flushCampaignStatistics();
      await waitFor(
        () =>
          (receiver.all('/campaign') as { campaigns: { campaign_id: number; count_already_sent: number; status: string }[] }[])
            .flatMap((b) => b.campaigns)
            .some((c) => c.campaign_id === 2 && c.status === 'FINISHED'),
        'campaign 2 finished',
      );
      const last = (receiver.all('/campaign') as { campaigns: Record<string, unknown>[] }[])
        .flatMap((b) => b.campaigns)
        .filter((c) => c['campaign_id'] === 2 && c['status'] === 'FINISHED')
        .at(-1);
      expect(last).toMatchObject({ count_total: 3, count_already_sent: 2, count_sent: 1, count_remaining: 0 });
    } finally {
      await s.server.close();
      await receiver.close();
    }
  });

  it('lets one of two requests taken at once take a phone, in two campaigns', async () => {
    const s = await startServer();
    try {
      const answers = await Promise.all([send(s.url, 11, contacts(50, 500)), send(s.url, 12, contacts(50, 500))]);
      expect(answers.map((a) => a.status)).toEqual([202, 202]);
      expect(answers.reduce((n, a) => n + a.json.accepted, 0)).toBe(50);
      expect(answers.reduce((n, a) => n + a.json.rejection_counts.already_sent, 0)).toBe(50);
    } finally {
      await s.server.close();
    }
  });

  it('frees the phone past the window (and a bucket, 1/24 of it), by the server clock', async () => {
    const clock = new ManualClock(Date.now());
    const s = await startServer({ engine: createEngine(testFleet(), { clock }), clock, alreadySentWindowMs: 24_000 });
    try {
      expect((await send(s.url, 1, contacts(1))).json).toMatchObject({ accepted: 1 });
      clock.advance(23_999);
      expect((await send(s.url, 2, contacts(1))).json).toMatchObject({ accepted: 0, rejection_counts: { already_sent: 1 } });
      expect((await send(s.url, 2, contacts(1))).json.rejections[0].problems[0].expected).toBe('a phone business 1 has not sent template type 10 within the last 24 s (already sent)');
      clock.advance(1_001 + 1_000);
      expect((await send(s.url, 3, contacts(1))).json).toMatchObject({ accepted: 1, rejected: 0 });
      // Taken again by campaign 3, from now.
      expect((await send(s.url, 4, contacts(1))).json).toMatchObject({ accepted: 0, rejection_counts: { already_sent: 1 } });
    } finally {
      await s.server.close();
    }
  });

  it('with alreadySentWindowMs 0 lets every campaign send the phone', async () => {
    const s = await startServer({ alreadySentWindowMs: 0 });
    try {
      expect((await send(s.url, 1, contacts(2))).json).toMatchObject({ accepted: 2 });
      expect((await send(s.url, 2, contacts(2))).json).toMatchObject({ accepted: 2, rejected: 0, rejection_counts: { already_sent: 0 } });
      expect(s.server.sendpool.snapshot().server.sentPhones).toEqual([]);
    } finally {
      await s.server.close();
    }
  });

  it('gives the phone back when its contact fails for good (131026): a corrected campaign may reach it', async () => {
    const failing = fastChannel({ sendFailureProbability: 1, failureCodes: [{ code: 131026, weight: 1 }] });
    const s = await startServer({ channel: failing });
    try {
      expect((await send(s.url, 1, contacts(2))).json).toMatchObject({ accepted: 2 });
      await waitFor(() => s.server.sendpool.engine.stats().failed === 2, 'both failed for good');
      expect((await send(s.url, 2, contacts(2))).json).toMatchObject({ accepted: 2, rejected: 0 });
    } finally {
      await s.server.close();
    }
  });

  it('keeps the phones in the snapshot an in-memory server writes, and refuses them after a restore', async () => {
    const first = await startServer({ channel: quietProvider().channel() });
    let snapshot: ReturnType<typeof first.server.sendpool.snapshot>;
    try {
      expect((await send(first.url, 1, contacts(2, 800))).json).toMatchObject({ accepted: 2 });
    } finally {
      snapshot = first.server.sendpool.snapshot();
      await first.server.close();
    }
    expect(snapshot.server.sentPhones?.flatMap((r) => r.phones)).toHaveLength(2);
    const second = await startServer({ engine: createEngine(testFleet(), { snapshot: snapshot.engine }), restore: snapshot.server, channel: quietProvider().channel() });
    try {
      expect((await send(second.url, 2, contacts(3, 800))).json).toMatchObject({ accepted: 1, rejection_counts: { already_sent: 2 } });
    } finally {
      await second.server.close();
    }
  });

  it('refuses an invalid window at start', async () => {
    await expect(startServer({ alreadySentWindowMs: -1 })).rejects.toThrow(/alreadySentWindowMs: expected an integer from 0/);
  });

  it('keeps the phones across restarts of the durable server', async () => {
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(testFleet()));
    const options = (): Parameters<typeof runServer>[0] => ({
      fleetFile,
      port: 0,
      dataDir: join(dir, 'data'),
      apiKeys: [{ key: KEY_1, companyId: 1 }],
      // Sends accepted, no later status: no contact gives its phone back.
      channel: quietProvider().channel(),
      logger: false,
      handleSignals: false,
      metrics: false,
    });
    const first = await runServer(options());
    try {
      expect((await send(first.address, 1, contacts(3, 900))).json).toMatchObject({ accepted: 3 });
    } finally {
      await first.close();
    }
    const second = await runServer(options());
    try {
      expect((await send(second.address, 2, contacts(4, 900))).json).toMatchObject({ accepted: 1, rejection_counts: { already_sent: 3 } });
    } finally {
      await second.close();
    }
    const third = await runServer(options());
    try {
      // The phone the second life took is kept too.
      expect((await send(third.address, 3, contacts(4, 900))).json).toMatchObject({ accepted: 0, rejection_counts: { already_sent: 4 } });
    } finally {
      await third.close();
    }
  });
});
