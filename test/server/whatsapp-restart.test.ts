/**
 * The WhatsApp channel on the durable server across kill -9: a reply to a message sent before the
 * restart still finds its message (by `context.id`, or as the last message to the user), becomes
 * REPLIED, opens an attendance, and an opt-out still blocklists the phone; a reply Meta delivers
 * again after another restart gives no second REPLIED. And a notification whose effects could not
 * be written is not acknowledged (503), so Meta delivers it again.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { createWhatsAppChannel } from '../../src/server/channels/whatsapp/index.js';
import { openSqliteStorage, type ServerStorage, type SimulatedChannel } from '../../src/server/index.js';
import { KEY_1, api, startReceiver, startServer, testFleet, waitFor } from './helpers.js';
import { ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN, deliver, graphAccount, messageNotification, startFakeGraph, statusNotification, whatsappFleet, type GraphNumber } from './whatsapp-fake-graph.js';
import { killChild, startChild, type Child } from './whatsapp-smpp-restart.js';

const dir = mkdtempSync(join(tmpdir(), 'sendpool-whatsapp-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fleet = whatsappFleet(testFleet());
const account = graphAccount(fleet);
const numberOf = (phoneNumberId: string): GraphNumber => account.numbers.find((n) => n.phoneNumberId === phoneNumberId)!;

describe('WhatsApp channel across a restart of the durable server', () => {
  it('a reply to a message sent before kill -9 gives REPLIED and an attendance, an opt-out blocklists, a redelivery gives nothing twice', async () => {
    const graph = await startFakeGraph(account);
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(fleet));
    const cfg = { fleetFile, dataDir: join(dir, 'data'), key: KEY_1, whatsapp: { graphUrl: graph.url, attendanceIdleMs: 100 } };
    let secret = '';
    const receiver = await startReceiver(() => secret);
    let child: Child | undefined = await startChild(cfg);
    try {
      expect((await api(child.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm`, url_attendance_callback: `${receiver.url}/attendance` } })).status).toBe(200);
      secret = (await api(child.url, '/messenger/config/secret/')).json.webhook_secret;
      const phones = ['5511980000011', '5511980000012', '5511980000013'];
      const sent = await api(child.url, '/messenger/messages/', {
        body: { business_id: 1, template_type_id: 10, campaign_id: 5, contacts: phones.map((phone_number, i) => ({ phone_number, template_variables: [`Client ${i}`] })) },
      });
      expect(sent.status).toBe(202);
      const hsm = () => receiver.all('/hsm');
      // A SENT is delivered once its step is written: the platform ids are on disk by then.
      await waitFor(() => hsm().filter((n) => n.status === 'SENT').length === 3, 'three SENT');
      const request = (phone: string) => graph.requests.find((r) => r.body?.to === phone && r.wamid)!;
      const [a, b, c] = phones.map(request) as [ReturnType<typeof request>, ReturnType<typeof request>, ReturnType<typeof request>];
      const idOf = (phone: string) => hsm().find((n) => n.to === phone && n.status === 'SENT')!.id as number;
      const statuses = (phone: string) =>
        hsm()
          .filter((n) => n.id === idOf(phone))
          .map((n) => n.status as string);

      await killChild(child);
      child = await startChild(cfg);
      const hook = `${child.url}/whatsapp/webhook`;

      // A reply with context to a, an opt-out without context from b (the last message to b from
      // that number), and a status of c without biz_opaque_callback_data (found by its wamid).
      const replyOfA = messageNotification(numberOf(a.phoneNumberId), { from: a.body.to, text: 'Can I pay next week?', contextId: a.wamid! });
      expect(await deliver(hook, replyOfA)).toEqual({ status: 200, text: 'EVENT_RECEIVED' });
      const optOutOfB = messageNotification(numberOf(b.phoneNumberId), { from: b.body.to, text: 'SAIR' });
      expect((await deliver(hook, optOutOfB)).status).toBe(200);
      expect((await deliver(hook, statusNotification(numberOf(c.phoneNumberId), { wamid: c.wamid!, status: 'delivered', recipient: c.body.to }))).status).toBe(200);
      await waitFor(() => statuses(a.body.to).includes('REPLIED') && statuses(b.body.to).includes('REPLIED') && statuses(c.body.to).includes('DEVICE'), 'REPLIED of a and b, DEVICE of c');
      expect(hsm().find((n) => n.id === idOf(a.body.to) && n.status === 'REPLIED')).toMatchObject({ blocklistResponse: false, campaign_id: 5 });
      expect(hsm().find((n) => n.id === idOf(b.body.to) && n.status === 'REPLIED')).toMatchObject({ blocklistResponse: true });

      // a's reply opened an attendance: it starts with the message sent before the restart, then the reply.
      await waitFor(() => receiver.all('/attendance').length === 1, "a's attendance");
      const attendance = receiver.all('/attendance')[0];
      expect(attendance).toMatchObject({ number: a.body.to, campaign_id: 5 });
      expect(attendance.messages.map((m: { from_me: boolean; text: string }) => [m.from_me, m.text])).toEqual([
        [true, hsm().find((n) => n.id === idOf(a.body.to) && n.status === 'SENT').message],
        [false, 'Can I pay next week?'],
      ]);

      // b's opt-out is on the blocklist: b is refused in a new campaign.
      expect((await api(child.url, '/operator/blocklist/')).json.phones.map((p: { phone: string }) => p.phone)).toEqual([b.body.to]);
      const again = await api(child.url, '/messenger/messages/', {
        body: { business_id: 1, template_type_id: 10, campaign_id: 6, contacts: [{ phone_number: b.body.to, template_variables: ['x'] }] },
      });
      expect(again.json).toMatchObject({ accepted: 0, rejections: [{ index: 0, reason: 'blocked' }] });

      // Meta delivers the replies again after another restart (the channel's memory of webhook
      // events seen is gone): no second REPLIED, no second attendance. A status of c delivered
      // after them shows they were taken.
      await killChild(child);
      child = await startChild(cfg);
      const hook2 = `${child.url}/whatsapp/webhook`;
      expect((await deliver(hook2, replyOfA)).status).toBe(200);
      expect((await deliver(hook2, optOutOfB)).status).toBe(200);
      expect((await deliver(hook2, statusNotification(numberOf(c.phoneNumberId), { wamid: c.wamid!, status: 'read', recipient: c.body.to, opaque: c.body.biz_opaque_callback_data }))).status).toBe(
        200,
      );
      await waitFor(() => statuses(c.body.to).includes('READ'), 'READ of c');
      expect(statuses(a.body.to).filter((s) => s === 'REPLIED')).toHaveLength(1);
      expect(statuses(b.body.to).filter((s) => s === 'REPLIED')).toHaveLength(1);
      expect(receiver.all('/attendance')).toHaveLength(1);
      expect(receiver.badSignatures).toBe(0);
    } finally {
      if (child) await killChild(child);
      await receiver.close();
      await graph.close();
    }
  });

  it('answers 503, not 200, to a notification whose effects could not be written', async () => {
    const graph = await startFakeGraph(account);
    const storage = await openSqliteStorage(join(dir, 'failing'));
    let failing = false;
    const flaky: ServerStorage = {
      load: () => storage.load(),
      write(step) {
        if (failing) throw new Error('disk full (test)');
        storage.write(step);
      },
      close: () => storage.close(),
    };
    const channel = createWhatsAppChannel({ fleet, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url, attendanceIdleMs: false });
    const s = await startServer({ fleet, engine: createEngine(fleet, { trackChanges: true }), storage: flaky, channel: channel as unknown as SimulatedChannel });
    const receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    try {
      expect((await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);
      expect(
        (await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: [{ phone_number: '5511980000021', template_variables: ['x'] }] } })).status,
      ).toBe(202);
      await waitFor(() => receiver.all('/hsm').some((n) => n.status === 'SENT'), 'SENT');
      const a = graph.requests.find((r) => r.body?.to === '5511980000021' && r.wamid)!;
      const hook = `${s.url}/whatsapp/webhook`;
      failing = true;
      const reply = messageNotification(numberOf(a.phoneNumberId), { from: a.body.to, text: 'STOP', contextId: a.wamid! });
      expect(await deliver(hook, reply)).toEqual({ status: 503, text: 'not written' });
      // Delivered again: acted on again (not dropped as seen), and still not acknowledged.
      expect((await deliver(hook, reply)).status).toBe(503);
      expect((await deliver(hook, statusNotification(numberOf(a.phoneNumberId), { wamid: a.wamid!, status: 'delivered', recipient: a.body.to, opaque: a.body.biz_opaque_callback_data }))).status).toBe(
        503,
      );
      expect(channel.stats().duplicates).toBe(0);
      // Nothing the notification did went out: the server failed closed before its step was written.
      expect(receiver.all('/hsm').map((n) => n.status)).toEqual(['ENQUEUED', 'SENT']);
    } finally {
      await s.server.close();
      await receiver.close();
      await graph.close();
    }
  });
});
