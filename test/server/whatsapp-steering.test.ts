/**
 * The platform steering the engine through the WhatsApp channel's webhooks, over HTTP: a template
 * paused by a `message_template_status_update` in the middle of a campaign takes the rest of the
 * campaign to the other templates without one FAILED (the sends already at the platform meet
 * 132015 and fail over), approved again it comes back; a `phone_number_quality_update` that
 * lowers a number's messaging-limit tier lowers the output of GET /messenger/businesses/, and a
 * throughput upgrade raises a number paced at the platform's default 80/s to 1,000/s; an
 * `account_update` restricting the account pauses all its numbers (output falls to 0, nothing is
 * sent) and its lifting resumes them (but not a number an operator paused meanwhile); a portfolio's
 * messaging limit is shown as the portfolio's, and a flagged number on the dashboard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWhatsAppChannel, type WhatsAppChannel } from '../../src/server/channels/whatsapp/index.js';
import type { SimulatedChannel } from '../../src/server/index.js';
import { api, contacts, startReceiver, startServer, testFleet, waitFor, type Receiver, type Started } from './helpers.js';
import {
  ACCESS_TOKEN,
  APP_SECRET,
  VERIFY_TOKEN,
  WABA_ID,
  accountNotification,
  deliver,
  graphAccount,
  qualityNotification,
  startFakeGraph,
  templateNotification,
  whatsappFleet,
  type FakeGraph,
} from './whatsapp-fake-graph.js';

const HOUR = 3_600_000;

async function startWhatsAppServer(fleet: any, over: Record<string, unknown> = {}) {
  const graph = await startFakeGraph(graphAccount(fleet));
  const channel = createWhatsAppChannel({ fleet, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url, attendanceIdleMs: false });
  const s = await startServer({ fleet, channel: channel as unknown as SimulatedChannel, ...over });
  return { graph, channel, s, hook: `${s.url}/whatsapp/webhook` };
}

describe('a template paused by webhook mid-campaign', () => {
  const fleet = whatsappFleet(testFleet());
  let graph: FakeGraph;
  let channel: WhatsAppChannel;
  let s: Started;
  let hook: string;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ graph, channel, s, hook } = await startWhatsAppServer(fleet, { dispatch: { maxInFlight: 20, pollLimit: 20 } }));
    receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    expect((await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);
  });
  afterAll(async () => {
    await s.server.close();
    await receiver.close();
    await graph.close();
  });

  it('fails the rest over to the other templates without one FAILED', async () => {
    // The platform pauses billing_a when a send of it arrives after the 200th: the webhook is in
    // before that send is answered (132015), and from then on the platform refuses billing_a.
    let pausedAt = -1;
    let pausedTime = 0;
    graph.respond = async (r) => {
      if (pausedAt < 0 && graph.requests.length >= 200 && r.body.template.name === 'billing_a') {
        pausedTime = Math.floor(Date.now() / 1000);
        const answer = await deliver(
          hook,
          templateNotification({
            name: 'billing_a',
            language: 'pt_BR',
            event: 'PAUSED',
            title: 'FIRST_PAUSE',
            description: 'Your WhatsApp message template has been paused for 3 hours.',
            time: pausedTime,
          }),
        );
        expect(answer.status).toBe(200);
        pausedAt = graph.requests.indexOf(r);
      }
      if (pausedAt >= 0 && r.body.template.name === 'billing_a') return { kind: 'error', code: 132015, details: 'Template is paused' };
      return { kind: 'accept' };
    };
    const sent = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 5, max_retries: 0, contacts: contacts(600) } });
    expect(sent.status).toBe(202);
    await waitFor(() => s.server.sendpool.idle(), 'the campaign to finish');
    await waitFor(() => receiver.all('/hsm').filter((x) => x.status === 'SENT').length === 600, 'every SENT notification');

    const stats = s.server.sendpool.stats().dispatch;
    expect(stats).toMatchObject({ submitted: 600, sent: 600, failed: 0 });
    expect(receiver.all('/hsm').filter((x) => x.status === 'FAILED')).toEqual([]);
    expect(graph.requests.every((r) => r.problems.length === 0)).toBe(true);

    // The engine took the pause with its end: FIRST_PAUSE lasts 3 hours from the event (a 132015
    // answered after it pauses for 3 hours from then, which ends no earlier).
    const template = s.server.sendpool.engine.templates().find((t) => t.id === 100)!;
    expect(template.status).toBe('paused');
    expect(template.pausedUntil).toBeGreaterThanOrEqual(pausedTime * 1000 + 3 * HOUR);
    // From the send that met the pause on, billing_a went only to sends already handed out (at most
    // 20 in flight), each refused with 132015 and sent again with another template.
    const after = graph.requests.slice(pausedAt);
    const stale = after.filter((r) => r.body.template.name === 'billing_a');
    expect(stale.length).toBeGreaterThanOrEqual(1);
    expect(stale.length).toBeLessThanOrEqual(21);
    const accepted = graph.requests.filter((r) => r.wamid !== undefined);
    expect(accepted).toHaveLength(600);
    expect(new Set(accepted.map((r) => r.body.to)).size).toBe(600);
    for (const r of stale) {
      const again = accepted.find((x) => x.body.to === r.body.to);
      expect(again?.body.template.name, `contact ${r.body.to}`).not.toBe('billing_a');
    }
    expect(channel.stats().sent).toBe(600);
  });

  it('brings the template back when the platform approves it again', async () => {
    const answer = await deliver(hook, templateNotification({ name: 'billing_a', language: 'pt_BR', event: 'APPROVED' }));
    expect(answer.status).toBe(200);
    await waitFor(() => s.server.sendpool.engine.templates().find((t) => t.id === 100)!.status === 'active', 'template 100 active again');
  });

  it('disables a template on DISABLED, matching the locale written with a hyphen', async () => {
    expect((await deliver(hook, templateNotification({ name: 'billing_c', language: 'pt-BR', event: 'DISABLED' }))).status).toBe(200);
    await waitFor(() => s.server.sendpool.engine.templates().find((t) => t.id === 102)!.status === 'disabled', 'template 102 disabled');
  });
});

describe('a quality downgrade', () => {
  const fleet = whatsappFleet(testFleet());
  let graph: FakeGraph;
  let s: Started;
  let hook: string;

  beforeAll(async () => {
    ({ graph, s, hook } = await startWhatsAppServer(fleet));
  });
  afterAll(async () => {
    await s.server.close();
    await graph.close();
  });

  const output = async () => {
    const answer = await api(s.url, '/messenger/businesses/');
    return answer.json.find((b: any) => b.id === 1).template_types.find((t: any) => t.id === 10).output as number;
  };

  it('lowers the output of the number’s pools, and an upgrade raises it again', async () => {
    // The fleet gives no per-second rate: each number is paced at the platform's default, 80/s,
    // and what may go at once is 80 a number.
    expect(await output()).toBe(240);
    const down = await deliver(hook, qualityNotification({ display: '5511990000001', event: 'DOWNGRADE', oldLimit: 'TIER_10K', currentLimit: 'TIER_50' }));
    expect(down.status).toBe(200);
    await waitFor(async () => (await output()) === 210, 'output lowered by the downgrade');
    expect(s.server.sendpool.engine.numbers().find((n) => n.phone === '5511990000001')).toMatchObject({ messagingLimit24h: 50 });

    // Formatted display numbers are read as their digits.
    const up = await deliver(hook, qualityNotification({ display: '+55 11 99000-0001', event: 'UPGRADE', oldLimit: 'TIER_50', currentLimit: 'TIER_1K' }));
    expect(up.status).toBe(200);
    await waitFor(async () => (await output()) === 240, 'output raised by the upgrade');

    // A throughput upgrade raises the default 80/s to 1,000/s (the 24 h limit of 1,000 holds it there).
    expect((await deliver(hook, qualityNotification({ display: '5511990000001', event: 'THROUGHPUT_UPGRADE', currentLimit: 'TIER_UNLIMITED' }))).status).toBe(200);
    await waitFor(async () => (await output()) === 1_160, 'output raised by the throughput upgrade');
    expect(s.server.sendpool.engine.numbers().find((n) => n.phone === '5511990000001')).toMatchObject({ messagesPerSecond: 1_000 });
  });

  it('shows operators a quality rating that changes no limit, and steers nothing with it', async () => {
    expect((await deliver(hook, qualityNotification({ display: '5511990000002', event: 'FLAGGED' }))).status).toBe(200);
    const provider = async () => (await api(s.url, '/dashboard/api/numbers/?q=5511990000002')).json.numbers[0]?.provider;
    await waitFor(async () => (await provider())?.reason === 'FLAGGED', 'the rating on the dashboard');
    expect(await provider()).not.toHaveProperty('messaging_limit_24h');
    expect(await output()).toBe(1_160);
  });
});

describe('an account restricted and its restriction lifted (each number paced at the default 80/s: output 240)', () => {
  const fleet = whatsappFleet(testFleet());
  let graph: FakeGraph;
  let s: Started;
  let hook: string;
  let receiver: Receiver;
  const phones = ['5511990000001', '5511990000002', '5511990000003'];

  beforeAll(async () => {
    ({ graph, s, hook } = await startWhatsAppServer(fleet));
    receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    expect((await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);
  });
  afterAll(async () => {
    await s.server.close();
    await receiver.close();
    await graph.close();
  });

  const output = async () => {
    const answer = await api(s.url, '/messenger/businesses/');
    return answer.json.find((b: any) => b.id === 1).template_types.find((t: any) => t.id === 10).output as number;
  };
  const numberRow = async (phone: string) => (await api(s.url, `/dashboard/api/numbers/?q=${phone}`)).json.numbers[0];

  it('pauses every number of the account until the expiration, sends nothing meanwhile, and resumes them when lifted', async () => {
    expect(await output()).toBe(240);
    const expiration = Math.floor(Date.now() / 1000) + 24 * 3600;
    const restricted = await deliver(
      hook,
      accountNotification({
        event: 'ACCOUNT_RESTRICTION',
        restrictions: [
          { type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration },
          { type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', expiration },
        ],
      }),
    );
    expect(restricted.status).toBe(200);
    await waitFor(async () => (await output()) === 0, 'output down to 0');
    for (const phone of phones) {
      expect(s.server.sendpool.engine.numbers().find((n) => n.phone === phone)).toMatchObject({ status: 'paused', pausedUntil: expiration * 1000 });
      const row = await numberRow(phone);
      expect(row.last_change.source).toBe('channel');
      expect(row.provider.reason).toBe('ACCOUNT_RESTRICTION RESTRICTED_BIZ_INITIATED_MESSAGING RESTRICTED_ADD_PHONE_NUMBER_ACTION');
    }
    // Business 2's numbers belong to no account of the event: untouched.
    expect(s.server.sendpool.engine.numbers().filter((n) => n.businessId === 2 && n.status === 'paused')).toEqual([]);

    // Contacts accepted meanwhile wait: nothing reaches the platform.
    const before = graph.requests.length;
    expect((await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 9, contacts: contacts(5) } })).status).toBe(202);
    await waitFor(() => s.server.sendpool.engine.queueStatus(1, 10).queued === 5, 'the contacts queued');
    expect(graph.requests.length).toBe(before);

    // An operator pauses one number meanwhile: the lifting does not undo the operator's pause.
    expect((await api(s.url, '/operator/numbers/5511990000003/pause/', { body: {} })).status).toBe(200);

    // Lifted: the account's restrictions no longer include the one that stopped sending.
    const lifted = await deliver(hook, accountNotification({ event: 'ACCOUNT_RESTRICTION', restrictions: [{ type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', expiration }] }));
    expect(lifted.status).toBe(200);
    await waitFor(async () => (await output()) === 160, 'output back for the two numbers the restriction paused');
    expect(s.server.sendpool.engine.numbers().find((n) => n.phone === '5511990000003')!.status).toBe('paused');
    await waitFor(() => receiver.all('/hsm').filter((x) => x.status === 'SENT').length === 5, 'the waiting contacts sent');
    expect(graph.requests.slice(before).every((r) => r.problems.length === 0 && r.phoneNumberId !== '106540352242922')).toBe(true);
  });

  it('pauses the account’s numbers without an end when it is disabled, and resumes them when reinstated', async () => {
    expect((await api(s.url, '/operator/numbers/5511990000003/resume/', { body: {} })).status).toBe(200);
    await waitFor(async () => (await output()) === 240, 'all three numbers active');
    expect((await deliver(hook, accountNotification({ event: 'DISABLED_UPDATE', banState: 'DISABLE' }))).status).toBe(200);
    await waitFor(async () => (await output()) === 0, 'output down to 0');
    expect(s.server.sendpool.engine.numbers().find((n) => n.phone === phones[0])!.pausedUntil).toBeUndefined();
    expect((await deliver(hook, accountNotification({ event: 'DISABLED_UPDATE', banState: 'REINSTATE' }))).status).toBe(200);
    await waitFor(async () => (await output()) === 240, 'output back');
  });

  it('shows a violation on the dashboard and steers nothing with it', async () => {
    expect((await deliver(hook, accountNotification({ event: 'ACCOUNT_VIOLATION', violation: 'SCAM' }))).status).toBe(200);
    const accounts = async () => (await api(s.url, '/dashboard/api/accounts/')).json.accounts;
    await waitFor(async () => (await accounts())[0]?.notice?.reason === 'ACCOUNT_VIOLATION SCAM', 'the violation on the dashboard');
    expect((await accounts())[0]).toMatchObject({ account_id: WABA_ID, phones });
    expect(await output()).toBe(240);
  });
});

describe('a portfolio messaging limit and a flagged number', () => {
  const fleet = whatsappFleet(testFleet());
  let graph: FakeGraph;
  let s: Started;
  let hook: string;

  beforeAll(async () => {
    ({ graph, s, hook } = await startWhatsAppServer(fleet));
  });
  afterAll(async () => {
    await s.server.close();
    await graph.close();
  });

  it('reports the portfolio’s limit as the portfolio’s, and leaves each number’s own limit', async () => {
    const limitBefore = s.server.sendpool.engine.numbers().find((n) => n.phone === '5511990000001')!.messagingLimit24h;
    const answer = await deliver(hook, qualityNotification({ display: '5511990000001', event: 'DOWNGRADE', oldLimit: 'TIER_10K', currentLimit: 'TIER_10K', businessLimit: 'TIER_2K' }));
    expect(answer.status).toBe(200);
    const accounts = async () => (await api(s.url, '/dashboard/api/accounts/')).json.accounts;
    await waitFor(async () => (await accounts())[0]?.business_limit?.limit === 2_000, 'the portfolio limit on the dashboard');
    expect((await accounts())[0].business_limit).toMatchObject({ tier: 'TIER_2K', applied: false });
    expect(s.server.sendpool.engine.numbers().find((n) => n.phone === '5511990000001')!.messagingLimit24h).toBe(limitBefore);
  });

  it('sets the limit of the portfolio the fleet gives the account’s numbers', async () => {
    const withPortfolio = { ...fleet, portfolios: [{ id: 'acme', messagingLimit24h: 10_000 }], businesses: fleet.businesses.map((b: any) => (b.id === 1 ? { ...b, portfolioId: 'acme' } : b)) };
    const p = await startWhatsAppServer(withPortfolio);
    try {
      const answer = await deliver(p.hook, qualityNotification({ display: '5511990000001', event: 'DOWNGRADE', currentLimit: 'TIER_10K', businessLimit: 'TIER_2K' }));
      expect(answer.status).toBe(200);
      await waitFor(() => p.s.server.sendpool.engine.portfolios()[0]?.messagingLimit24h === 2_000, 'the portfolio at 2,000');
      const accounts = (await api(p.s.url, '/dashboard/api/accounts/')).json.accounts;
      expect(accounts[0].business_limit).toMatchObject({ tier: 'TIER_2K', applied: true, portfolios: ['acme'] });
    } finally {
      await p.s.server.close();
      await p.graph.close();
    }
  });

  it('shows a flagged number with the time and reason, and UNFLAGGED clears it', async () => {
    const flagged = async () => (await api(s.url, '/dashboard/api/numbers/?q=5511990000002')).json.numbers[0].flagged;
    expect(await flagged()).toBeNull();
    expect((await deliver(hook, qualityNotification({ display: '5511990000002', event: 'FLAGGED', currentLimit: 'TIER_10K' }))).status).toBe(200);
    await waitFor(async () => (await flagged())?.reason === 'FLAGGED TIER_10K', 'the flag on the dashboard');
    expect(typeof (await flagged()).at).toBe('number');
    expect((await deliver(hook, qualityNotification({ display: '5511990000002', event: 'UNFLAGGED', currentLimit: 'TIER_10K' }))).status).toBe(200);
    await waitFor(async () => (await flagged()) === null, 'the flag cleared');
  });
});
