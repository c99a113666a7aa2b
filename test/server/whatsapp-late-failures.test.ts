/**
 * Failures the platform reports later, in a status webhook (`statuses[].errors`), go through the one
 * error table, as the send's answer does: 132015 pauses the template and the contact goes again on
 * another, 131048 takes the number out, 131000 is a contact retry within `max_retries`, 131026
 * ends the contact, and a FAILED delivered twice is acted on once. Over HTTP, against the fake
 * Graph API, with the webhook receiver as the independent record.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWhatsAppChannel } from '../../src/server/channels/whatsapp/index.js';
import type { SimulatedChannel } from '../../src/server/index.js';
import { decideLate } from '../../src/server/late-failures.js';
import { MAX_TRANSPORT_ATTEMPTS, ManualClock, actionForCode, createEngine } from '../../src/index.js';
import { api, startReceiver, startServer, testFleet, waitFor, type Receiver, type Started } from './helpers.js';
import { ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN, deliver, graphAccount, startFakeGraph, statusNotification, whatsappFleet, type FakeGraph, type GraphRequest } from './whatsapp-fake-graph.js';

describe('the contact side of a failure reported later (decideLate)', () => {
  const W = 600_000;
  /** A message sent at 0, not delivered, `used` retries of `max`, `followUps` made. */
  const f = (used: number, max: number, followUps = 0, retryIntervalMs = 60_000) => ({ used, followUps, maxRetries: max, retryIntervalMs, sentAt: 0, delivered: false });

  it.each([
    [131026, 0, 0, { kind: 'end', why: 'ended' }],
    [131000, 0, 1, { kind: 'again', retriesUsed: 1, retry: true }],
    [131000, 1, 1, { kind: 'end', why: 'ended' }],
    [132015, 0, 0, { kind: 'again', retriesUsed: 0, retry: false }],
    [131048, 1, 3, { kind: 'again', retriesUsed: 1, retry: false }],
    [131056, 0, 0, { kind: 'again', retriesUsed: 0, retry: false }],
    [190, 0, 0, { kind: 'again', retriesUsed: 0, retry: false }],
  ])('code %i with %i retries used of %i', (code, used, max, expected) => {
    expect(decideLate(actionForCode(code), f(used, max), W, 1_000)).toMatchObject(expected);
  });

  it('waits as the action says: a retry after the interval, the pair rate limit 6 s doubling, a rest', () => {
    expect(decideLate(actionForCode(131000), f(0, 1), W, 1_000)).toMatchObject({ notBefore: 61_000 });
    expect(decideLate(actionForCode(131056), f(0, 0, 0, 0), W, 1_000)).toMatchObject({ notBefore: 7_000 });
    expect(decideLate(actionForCode(131056), f(0, 0, 2, 0), W, 1_000)).toMatchObject({ notBefore: 25_000 });
    expect(decideLate(actionForCode(80007), f(0, 0, 0, 0), W, 1_000)).toMatchObject({ notBefore: 61_000 });
  });

  it('bounds the contact sent again without a retry, as transport tries are', () => {
    expect(decideLate(actionForCode(132015), f(0, 0, MAX_TRANSPORT_ATTEMPTS - 1, 0), W, 0)).toEqual({ kind: 'end', why: 'ended' });
    expect(decideLate(actionForCode(131000), f(0, 1, MAX_TRANSPORT_ATTEMPTS - 1, 0), W, 0)).toMatchObject({ kind: 'again' });
  });

  it('sends again only within the window: a failure reported the window or more after the send ends the contact', () => {
    for (const code of [131000, 132015, 131048, 131056, 190, 80007]) {
      expect(decideLate(actionForCode(code), f(0, 3), W, W - 1)).toMatchObject({ kind: 'again' });
      expect(decideLate(actionForCode(code), f(0, 3), W, W)).toEqual({ kind: 'end', why: 'past-window' });
      expect(decideLate(actionForCode(code), { ...f(0, 3), sentAt: 5_000 }, W, W + 4_999)).toMatchObject({ kind: 'again' });
      expect(decideLate(actionForCode(code), f(0, 3), 0, 0)).toEqual({ kind: 'end', why: 'past-window' });
    }
  });

  it('never sends again a message that reached the device, however soon the failure comes', () => {
    for (const code of [131000, 132015, 131048, 131026]) {
      expect(decideLate(actionForCode(code), { ...f(0, 3), delivered: true }, W, 1)).toEqual({ kind: 'end', why: 'after-delivery' });
    }
  });
});

describe('failures reported by webhook, over HTTP', () => {
  const fleet = whatsappFleet(testFleet());
  const account = graphAccount(fleet);
  let graph: FakeGraph;
  let s: Started;
  let hook: string;
  let receiver: Receiver;
  let phoneSeq = 0;

  beforeAll(async () => {
    graph = await startFakeGraph(account);
    const channel = createWhatsAppChannel({ fleet, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url, attendanceIdleMs: false });
    s = await startServer({ fleet, channel: channel as unknown as SimulatedChannel });
    hook = `${s.url}/whatsapp/webhook`;
    receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    expect((await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);
  });
  afterAll(async () => {
    await s.server.close();
    await receiver.close();
    await graph.close();
  });
  beforeEach(async () => {
    // Every template and number active again, whatever the last case did.
    for (const t of s.server.sendpool.engine.templates()) if (t.status !== 'active') s.server.sendpool.engine.setTemplateStatus(t.id, 'active');
    for (const n of s.server.sendpool.engine.numbers()) if (n.status !== 'active') s.server.sendpool.engine.setNumberStatus(n.phone, 'active');
  });

  /** Sends one contact and answers the send it makes with the platform's acceptance. */
  async function sendOne(maxRetries = 0): Promise<{ phone: string; first: GraphRequest }> {
    const phone = `55119700${String(10_000 + phoneSeq++)}`;
    const before = graph.requests.length;
    const answer = await api(s.url, '/messenger/messages/', {
      body: { business_id: 1, template_type_id: 10, campaign_id: 900 + phoneSeq, max_retries: maxRetries, retry_interval: 0, contacts: [{ phone_number: phone, template_variables: ['Ana'] }] },
    });
    expect(answer.status).toBe(202);
    expect(answer.json.accepted).toBe(1);
    await waitFor(() => graph.requests.slice(before).some((r) => r.body.to === phone && r.wamid !== undefined), 'the first send');
    return { phone, first: graph.requests.slice(before).find((r) => r.body.to === phone)! };
  }

  const failedBy = (r: GraphRequest, code: number) =>
    statusNotification(
      account.numbers.find((n) => n.phoneNumberId === r.phoneNumberId)!,
      {
        wamid: r.wamid!,
        status: 'failed',
        recipient: r.body.to,
        opaque: r.body.biz_opaque_callback_data,
        errorCode: code,
      },
    );
  const sendsTo = (phone: string) => graph.requests.filter((r) => r.body.to === phone);
  const hsmOf = (phone: string) => receiver.all('/hsm').filter((x) => x.to === phone);

  it('132015 by webhook pauses the template and sends the contact again on another one, not as a retry', async () => {
    const { phone, first } = await sendOne();
    const template = first.body.template.name as string;
    expect((await deliver(hook, failedBy(first, 132015))).status).toBe(200);
    await waitFor(() => sendsTo(phone).length === 2 && sendsTo(phone)[1]!.wamid !== undefined, 'the contact sent again');
    const second = sendsTo(phone)[1]!;
    expect(second.body.template.name).not.toBe(template);
    expect(second.body.biz_opaque_callback_data).not.toBe(first.body.biz_opaque_callback_data);
    const paused = account.templates.filter((t) => t.name === template);
    expect(paused.length).toBeGreaterThan(0);
    const states = s.server.sendpool.engine.templates().filter((t) => t.status === 'paused');
    expect(states).toHaveLength(1);
    await waitFor(() => hsmOf(phone).filter((x) => x.status === 'SENT').length === 2, 'two SENT');
    const statuses = hsmOf(phone).map((x) => [x.status, x.is_retry]);
    expect(statuses).toEqual([
      ['ENQUEUED', false],
      ['SENT', false],
      ['FAILED', false],
      ['SENT', false],
    ]);
    expect(new Set(hsmOf(phone).map((x) => x.id)).size).toBe(1); // one contact, one id
  });

  it('131048 by webhook takes the number out, and the contact goes on another number', async () => {
    const { phone, first } = await sendOne();
    expect((await deliver(hook, failedBy(first, 131048))).status).toBe(200);
    await waitFor(() => sendsTo(phone).length === 2, 'the contact sent again');
    expect(sendsTo(phone)[1]!.phoneNumberId).not.toBe(first.phoneNumberId);
    const number = account.numbers.find((n) => n.phoneNumberId === first.phoneNumberId)!;
    const view = s.server.sendpool.engine.numbers().find((n) => n.phone === number.phone)!;
    expect(view).toMatchObject({ status: 'paused' });
    // Out for the hour 131048 gives, by a failover.
    expect(view.pausedUntil! - Date.now()).toBeGreaterThan(59 * 60_000);
  });

  it('131000 by webhook is a contact retry within max_retries: is_retry, retry_index 0', async () => {
    const { phone, first } = await sendOne(1);
    expect((await deliver(hook, failedBy(first, 131000))).status).toBe(200);
    await waitFor(() => hsmOf(phone).filter((x) => x.status === 'SENT').length === 2, 'the retry sent');
    const retry = hsmOf(phone).filter((x) => x.status === 'SENT')[1]!;
    expect(retry).toMatchObject({ is_retry: true, retry_index: 0 });
    // Its failure by webhook again: no retry left, the FAILED stands.
    const second = sendsTo(phone)[1]!;
    expect((await deliver(hook, failedBy(second, 131000))).status).toBe(200);
    await waitFor(() => hsmOf(phone).filter((x) => x.status === 'FAILED').length === 2, 'the second FAILED');
    expect(sendsTo(phone)).toHaveLength(2);
  });

  it('a failure reported after the message was delivered does not send it again', async () => {
    const { phone, first } = await sendOne(1);
    const number = account.numbers.find((n) => n.phoneNumberId === first.phoneNumberId)!;
    const delivered = statusNotification(number, { wamid: first.wamid!, status: 'delivered', recipient: phone, opaque: first.body.biz_opaque_callback_data });
    expect((await deliver(hook, delivered)).status).toBe(200);
    await waitFor(() => hsmOf(phone).some((x) => x.status === 'DEVICE'), 'DEVICE');
    expect((await deliver(hook, failedBy(first, 131000))).status).toBe(200);
    await waitFor(() => s.server.sendpool.idle(), 'nothing left to send');
    expect(sendsTo(phone)).toHaveLength(1);
  });

  it('131000 by webhook with max_retries 0, and 131026, end the contact FAILED; a FAILED delivered twice is acted on once', async () => {
    const a = await sendOne(0);
    const b = await sendOne(3);
    expect((await deliver(hook, failedBy(a.first, 131000))).status).toBe(200);
    expect((await deliver(hook, failedBy(b.first, 131026))).status).toBe(200);
    const c = await sendOne(0);
    expect((await deliver(hook, failedBy(c.first, 132015))).status).toBe(200);
    expect((await deliver(hook, failedBy(c.first, 132015))).status).toBe(200);
    await waitFor(() => sendsTo(c.phone).length === 2, 'c sent again');
    await waitFor(() => s.server.sendpool.idle(), 'nothing left to send');
    expect(sendsTo(a.phone)).toHaveLength(1);
    expect(sendsTo(b.phone)).toHaveLength(1);
    expect(sendsTo(c.phone)).toHaveLength(2);
    expect(hsmOf(a.phone).at(-1)?.status).toBe('FAILED');
  });
});

describe('the failure window, over HTTP with a manual clock', () => {
  const fleet = whatsappFleet(testFleet());
  const account = graphAccount(fleet);
  const WINDOW = 600_000;
  let graph: FakeGraph;
  let s: Started;
  let hook: string;
  let receiver: Receiver;
  let clock: ManualClock;
  let phoneSeq = 0;

  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    graph = await startFakeGraph(account);
    const channel = createWhatsAppChannel({ fleet, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url, attendanceIdleMs: false, now: () => clock.now() });
    s = await startServer({ fleet, clock, engine: createEngine(fleet, { clock }), channel: channel as unknown as SimulatedChannel, failureWindowMs: WINDOW });
    hook = `${s.url}/whatsapp/webhook`;
    receiver = await startReceiver(
      () => s.server.sendpool.webhookSecret(1),
      0,
      () => clock.now(),
    );
    expect((await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);
  });
  afterAll(async () => {
    await s.server.close();
    await receiver.close();
    await graph.close();
  });

  async function sendOne(): Promise<{ phone: string; first: GraphRequest }> {
    const phone = `55119710${String(10_000 + phoneSeq++)}`;
    const before = graph.requests.length;
    const answer = await api(s.url, '/messenger/messages/', {
      body: { business_id: 1, template_type_id: 10, campaign_id: 1900 + phoneSeq, max_retries: 2, retry_interval: 0, contacts: [{ phone_number: phone, template_variables: ['Ana'] }] },
    });
    expect(answer.status).toBe(202);
    s.server.sendpool.wake();
    await waitFor(() => graph.requests.slice(before).some((r) => r.body.to === phone && r.wamid !== undefined), 'the first send');
    await waitFor(() => receiver.all('/hsm').some((x) => x.to === phone && x.status === 'SENT'), 'SENT');
    return { phone, first: graph.requests.slice(before).find((r) => r.body.to === phone)! };
  }
  const statusOf = (r: GraphRequest, status: 'failed' | 'delivered', code?: number) =>
    statusNotification(
      account.numbers.find((n) => n.phoneNumberId === r.phoneNumberId)!,
      {
        wamid: r.wamid!,
        status,
        recipient: r.body.to,
        opaque: r.body.biz_opaque_callback_data,
        ...(code === undefined ? {} : { errorCode: code }),
      },
    );
  const sendsTo = (phone: string) => graph.requests.filter((r) => r.body.to === phone);
  const hsmOf = (phone: string) => receiver.all('/hsm').filter((x) => x.to === phone);
  const lateFailures = async () => {
    const text = (await api(s.url, '/metrics', { key: null })).text;
    return Object.fromEntries([...text.matchAll(/^sendpool_late_failures_total\{outcome="([a-z-]+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
  };

  it('a retryable failure within the window sends the contact again; the same past the window does not, and is notified FAILED', async () => {
    const within = await sendOne();
    clock.advance(WINDOW - 1);
    expect((await deliver(hook, statusOf(within.first, 'failed', 131000))).status).toBe(200);
    s.server.sendpool.wake();
    await waitFor(() => sendsTo(within.phone).length === 2, 'sent again within the window');

    const past = await sendOne();
    clock.advance(WINDOW);
    expect((await deliver(hook, statusOf(past.first, 'failed', 131000))).status).toBe(200);
    await waitFor(() => hsmOf(past.phone).some((x) => x.status === 'FAILED'), 'FAILED notified');
    s.server.sendpool.wake();
    await waitFor(() => s.server.sendpool.idle(), 'nothing left to send');
    expect(sendsTo(past.phone)).toHaveLength(1);
    expect(hsmOf(past.phone).map((x) => x.status)).toEqual(['ENQUEUED', 'SENT', 'FAILED']);
    expect(await lateFailures()).toMatchObject({ resent: 1, 'past-window': 1 });
  });

  it('past the window the fleet still hears the failure: 132015 pauses the template, and the contact is not sent again', async () => {
    const { phone, first } = await sendOne();
    clock.advance(WINDOW + 1);
    const template = first.body.template.name as string;
    expect((await deliver(hook, statusOf(first, 'failed', 132015))).status).toBe(200);
    await waitFor(() => s.server.sendpool.engine.templates().some((t) => t.status === 'paused'), 'the template paused');
    expect(account.templates.some((t) => t.name === template)).toBe(true);
    await waitFor(() => s.server.sendpool.idle(), 'nothing left to send');
    expect(sendsTo(phone)).toHaveLength(1);
    for (const t of s.server.sendpool.engine.templates()) if (t.status !== 'active') s.server.sendpool.engine.setTemplateStatus(t.id, 'active');
  });

  it('a failure after DEVICE, within the window, does not send the contact again and is counted after-delivery', async () => {
    const { phone, first } = await sendOne();
    expect((await deliver(hook, statusOf(first, 'delivered'))).status).toBe(200);
    await waitFor(() => hsmOf(phone).some((x) => x.status === 'DEVICE'), 'DEVICE');
    expect((await deliver(hook, statusOf(first, 'failed', 131000))).status).toBe(200);
    await waitFor(() => hsmOf(phone).some((x) => x.status === 'FAILED'), 'FAILED notified');
    s.server.sendpool.wake();
    await waitFor(() => s.server.sendpool.idle(), 'nothing left to send');
    expect(sendsTo(phone)).toHaveLength(1);
    expect(await lateFailures()).toMatchObject({ 'after-delivery': 1 });
  });
});
