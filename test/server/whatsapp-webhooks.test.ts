/**
 * Meta's webhooks on the server with the WhatsApp channel, over HTTP: the subscription handshake,
 * signatures valid and forged, statuses turned into HSM notifications (deduplicated, found by the
 * message id the send carried or by the platform's id), replies turned into REPLIED and
 * attendances, and an opt-out reply; statuses out of order never move a contact's notifications
 * back, and a message held for quality assessment changes no status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWhatsAppChannel, type WhatsAppChannel } from '../../src/server/channels/whatsapp/index.js';
import type { SimulatedChannel } from '../../src/server/index.js';
import { api, startReceiver, startServer, testFleet, waitFor, type Receiver, type Started } from './helpers.js';
import {
  ACCESS_TOKEN,
  APP_SECRET,
  VERIFY_TOKEN,
  deliver,
  graphAccount,
  messageNotification,
  startFakeGraph,
  statusNotification,
  whatsappFleet,
  type FakeGraph,
  type GraphNumber,
} from './whatsapp-fake-graph.js';

const fleet = whatsappFleet(testFleet());
const account = graphAccount(fleet);

describe('WhatsApp webhooks on the server', () => {
  let graph: FakeGraph;
  let channel: WhatsAppChannel;
  let s: Started;
  let receiver: Receiver;
  let hook: string;

  beforeAll(async () => {
    graph = await startFakeGraph(account);
    channel = createWhatsAppChannel({ fleet, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url, attendanceIdleMs: 50 });
    s = await startServer({ fleet, channel: channel as unknown as SimulatedChannel });
    receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    hook = `${s.url}/whatsapp/webhook`;
    const config = await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm`, url_attendance_callback: `${receiver.url}/attendance` } });
    expect(config.status).toBe(200);
  });
  afterAll(async () => {
    await s.server.close();
    await receiver.close();
    await graph.close();
  });

  it('answers the verification handshake with the challenge, and only with the right token', async () => {
    const ok = await fetch(`${hook}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=${VERIFY_TOKEN}`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('1158201444');
    const wrongToken = await fetch(`${hook}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=guess`);
    expect(wrongToken.status).toBe(403);
    expect(await wrongToken.text()).not.toContain('1158201444');
    const wrongMode = await fetch(`${hook}?hub.mode=unsubscribe&hub.challenge=1&hub.verify_token=${VERIFY_TOKEN}`);
    expect(wrongMode.status).toBe(403);
    const noToken = await fetch(`${hook}?hub.mode=subscribe&hub.challenge=1`);
    expect(noToken.status).toBe(403);
  });

  it('takes notifications signed with the app secret and refuses forged ones', async () => {
    const n = account.numbers[0]!;
    const payload = statusNotification(n, { wamid: 'wamid.unknown-1', status: 'delivered', recipient: '5511980000000' });
    const forgedBefore = channel.stats().forged;
    expect(await deliver(hook, payload)).toEqual({ status: 200, text: 'EVENT_RECEIVED' });
    expect((await deliver(hook, payload, { secret: 'another-app-secret-0000' })).status).toBe(401);
    expect((await deliver(hook, payload, { secret: null })).status).toBe(401);
    expect((await deliver(hook, payload, { tamper: true })).status).toBe(401);
    // A signature over a body that is not the one sent, and a malformed header.
    const body = JSON.stringify(payload);
    const bad = await fetch(hook, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=zz' }, body });
    expect(bad.status).toBe(401);
    expect(channel.stats().forged - forgedBefore).toBe(4);
  });

  it('turns statuses into HSM notifications, once each, with the 7.1 reason on FAILED', async () => {
    const sent = await api(s.url, '/messenger/messages/', {
      body: {
        business_id: 1,
        template_type_id: 10,
        campaign_id: 7,
        contacts: ['5511980000001', '5511980000002', '5511980000003', '5511980000004'].map((phone_number, i) => ({ phone_number, template_variables: [`Client ${i}`] })),
      },
    });
    expect(sent.status).toBe(202);
    await waitFor(() => receiver.all('/hsm').filter((x) => x.status === 'SENT').length === 4, 'four SENT notifications');
    const requests = graph.requests.filter((r) => r.body?.to?.startsWith('55119800000') && r.wamid);
    expect(requests).toHaveLength(4);
    expect(requests.every((r) => r.problems.length === 0)).toBe(true);
    const byPhone = new Map(requests.map((r) => [r.body.to as string, r]));
    const numberOf = (r: (typeof requests)[number]): GraphNumber => account.numbers.find((n) => n.phoneNumberId === r.phoneNumberId)!;
    const idOf = (phone: string) => receiver.all('/hsm').find((x) => x.to === phone && x.status === 'SENT')!.id as number;

    const a = byPhone.get('5511980000001')!;
    const b = byPhone.get('5511980000002')!;
    const c = byPhone.get('5511980000003')!;
    const statusOf = (r: typeof a, status: 'sent' | 'delivered' | 'read' | 'failed', extra: { opaque?: boolean; errorCode?: number } = {}) =>
      statusNotification(numberOf(r), {
        wamid: r.wamid!,
        status,
        recipient: r.body.to,
        userId: `BR.${r.body.to.slice(-6)}`,
        ...(extra.opaque === false ? {} : { opaque: r.body.biz_opaque_callback_data }),
        ...(extra.errorCode !== undefined ? { errorCode: extra.errorCode } : {}),
      });
    for (const st of ['sent', 'delivered', 'read'] as const) expect((await deliver(hook, statusOf(a, st))).status).toBe(200);
    // Meta delivers a notification again: acted on once.
    expect((await deliver(hook, statusOf(a, 'delivered'))).status).toBe(200);
    expect((await deliver(hook, statusOf(b, 'failed', { errorCode: 131026 }))).status).toBe(200);
    // Without biz_opaque_callback_data the platform's message id finds the message.
    expect((await deliver(hook, statusOf(c, 'delivered', { opaque: false }))).status).toBe(200);

    const hsm = () => receiver.all('/hsm');
    await waitFor(() => hsm().some((x) => x.id === idOf(c.body.to) && x.status === 'DEVICE') && hsm().some((x) => x.status === 'FAILED') && hsm().some((x) => x.status === 'READ'), 'the statuses');
    await waitFor(() => s.server.sendpool.stats().webhooksPending === 0, 'webhooks delivered');
    const of = (r: typeof a) =>
      hsm()
        .filter((x) => x.id === idOf(r.body.to))
        .map((x) => x.status);
    expect(of(a)).toEqual(['ENQUEUED', 'SENT', 'SERVER', 'DEVICE', 'READ']);
    expect(of(b)).toEqual(['ENQUEUED', 'SENT', 'FAILED']);
    expect(of(c)).toEqual(['ENQUEUED', 'SENT', 'DEVICE']);
    const failed = hsm().find((x) => x.id === idOf(b.body.to) && x.status === 'FAILED');
    expect(failed.reason).toBe('WhatsApp, 131026, Message undeliverable');
    const device = hsm().find((x) => x.id === idOf(a.body.to) && x.status === 'DEVICE');
    expect(device.bsuid).toBe('BR.000001');
    expect(channel.stats().duplicates).toBeGreaterThanOrEqual(1);

    // Replies: with context (to a), without (c: the last message to that user from that number),
    // and an opt-out (d).
    const d = byPhone.get('5511980000004')!;
    expect((await deliver(hook, messageNotification(numberOf(a), { from: a.body.to, text: 'Can I pay tomorrow?', contextId: a.wamid! }))).status).toBe(200);
    expect((await deliver(hook, messageNotification(numberOf(a), { from: a.body.to, text: 'Thanks' }))).status).toBe(200);
    expect((await deliver(hook, messageNotification(numberOf(c), { from: c.body.to, text: 'ok' }))).status).toBe(200);
    expect((await deliver(hook, messageNotification(numberOf(d), { from: d.body.to, text: ' stop ' }))).status).toBe(200);
    await waitFor(() => hsm().filter((x) => x.status === 'REPLIED').length === 3, 'three REPLIED');
    const replied = (r: typeof a) => hsm().find((x) => x.id === idOf(r.body.to) && x.status === 'REPLIED');
    expect(replied(a).blocklistResponse).toBe(false);
    expect(replied(c).blocklistResponse).toBe(false);
    expect(replied(d).blocklistResponse).toBe(true);

    // The replies of a and c opened attendances that close when the users go quiet.
    await waitFor(() => receiver.all('/attendance').length === 2, 'two attendances');
    const attendanceOfA = receiver.all('/attendance').find((x) => x.number === a.body.to);
    expect(attendanceOfA).toMatchObject({ from_me: true, campaign_id: 7 });
    expect(attendanceOfA.messages.map((m: any) => [m.from_me, m.text])).toEqual([
      [true, hsm().find((x) => x.id === idOf(a.body.to) && x.status === 'SENT').message],
      [false, 'Can I pay tomorrow?'],
      [false, 'Thanks'],
    ]);
    expect(receiver.all('/attendance').some((x) => x.number === d.body.to)).toBe(false);
    expect(receiver.badSignatures).toBe(0);
  });
  it('never moves a contact back: a READ before its delivered makes READ and no DEVICE after it; a held message changes nothing', async () => {
    const phonesOf = ['5511980000101', '5511980000102'];
    const sent = await api(s.url, '/messenger/messages/', {
      body: { business_id: 1, template_type_id: 10, campaign_id: 8, contacts: phonesOf.map((phone_number) => ({ phone_number, template_variables: ['Client'] })) },
    });
    expect(sent.status).toBe(202);
    await waitFor(() => phonesOf.every((p) => receiver.all('/hsm').some((x) => x.to === p && x.status === 'SENT')), 'two SENT notifications');
    const requestOf = (phone: string) => graph.requests.find((r) => r.body?.to === phone && r.wamid)!;
    const numberOf = (r: { phoneNumberId: string }): GraphNumber => account.numbers.find((n) => n.phoneNumberId === r.phoneNumberId)!;
    const note = (phone: string, status: 'sent' | 'delivered' | 'read' | 'held_for_quality_assessment') => {
      const r = requestOf(phone);
      return statusNotification(numberOf(r), { wamid: r.wamid!, status, recipient: phone, opaque: r.body.biz_opaque_callback_data });
    };
    const [early, held] = phonesOf as [string, string];
    // Out of order: read, then delivered, then sent.
    for (const st of ['read', 'delivered', 'sent'] as const) expect((await deliver(hook, note(early, st))).status).toBe(200);
    // Held for the template's feedback, then released (sent) and delivered.
    const heldBefore = channel.stats().held;
    for (const st of ['held_for_quality_assessment', 'sent', 'delivered'] as const) expect((await deliver(hook, note(held, st))).status).toBe(200);
    expect(channel.stats().held).toBe(heldBefore + 1);
    await waitFor(() => receiver.all('/hsm').some((x) => x.to === held && x.status === 'DEVICE') && receiver.all('/hsm').some((x) => x.to === early && x.status === 'READ'), 'the statuses');
    await waitFor(() => s.server.sendpool.stats().webhooksPending === 0, 'webhooks delivered');
    const of = (phone: string) =>
      receiver
        .all('/hsm')
        .filter((x) => x.to === phone)
        .map((x) => x.status);
    expect(of(early)).toEqual(['ENQUEUED', 'SENT', 'READ']);
    expect(of(held)).toEqual(['ENQUEUED', 'SENT', 'SERVER', 'DEVICE']);
  });
});
