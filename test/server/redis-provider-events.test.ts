/**
 * The server on Redis with the WhatsApp and SMPP channels: the provider's statuses, receipts and
 * replies reach whichever instance its webhook (or bind) hits, and that instance finds the messages
 * another instance sent (their provider ids, what was tracked of them) in what the fleet remembers
 * in Redis.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWhatsAppChannel } from '../../src/server/channels/whatsapp/index.js';
import { composeChannels, createSmppChannel, type SimulatedChannel } from '../../src/server/index.js';
import { cleanup, connect, describeTargets, testPrefix, type TestClient } from '../redis/helpers.js';
import { api, fastChannel, startReceiver, startServer, testFleet, waitFor, type Receiver, type Started } from './helpers.js';
import { startFakeSmsc } from './smpp-smsc.js';
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

describeTargets('the server on Redis: provider events reach any instance', (target) => {
  let client: TestClient;
  let base: string;
  let graph: FakeGraph;
  let a: Started;
  let b: Started | undefined;
  let receiver: Receiver;

  const whatsapp = () => createWhatsAppChannel({ fleet, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url }) as unknown as SimulatedChannel;

  beforeAll(async () => {
    client = connect(target);
    base = testPrefix('wa');
    graph = await startFakeGraph(account);
    a = await startServer({ fleet, redis: { client, prefix: base, consumer: 'a' }, channel: whatsapp() });
    receiver = await startReceiver(() => a.server.sendpool.webhookSecret(1));
    expect((await api(a.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);
  });
  afterAll(async () => {
    await a?.server.close();
    await b?.server.close();
    await receiver?.close();
    await graph?.close();
    await cleanup(client, base);
    client.disconnect();
  });

  it('statuses and replies posted to an instance that did not send the messages find them', async () => {
    const phones = ['5511981000001', '5511981000002', '5511981000003'];
    const sent = await api(a.url, '/messenger/messages/', {
      body: { business_id: 1, template_type_id: 10, campaign_id: 3, contacts: phones.map((phone_number, i) => ({ phone_number, template_variables: [`Client ${i}`] })) },
    });
    expect(sent.status).toBe(202);
    const hsm = () => receiver.all('/hsm');
    await waitFor(() => hsm().filter((x) => x.status === 'SENT').length === 3, 'three SENT notifications');
    await waitFor(() => a.server.sendpool.idle(), 'A idle (its step with what it remembers is written)');
    // B starts after A sent everything: it holds nothing of those messages.
    b = await startServer({ fleet, redis: { client, prefix: base, consumer: 'b' }, channel: whatsapp() });
    const hook = `${b.url}/whatsapp/webhook`;
    const requests = graph.requests.filter((r) => phones.includes(r.body?.to) && r.wamid);
    expect(requests).toHaveLength(3);
    const numberOf = (r: (typeof requests)[number]): GraphNumber => account.numbers.find((n) => n.phoneNumberId === r.phoneNumberId)!;
    const [one, two, three] = requests as [(typeof requests)[number], (typeof requests)[number], (typeof requests)[number]];
    // Found by the platform's id alone (no opaque data): the wamid the sender remembered.
    expect((await deliver(hook, statusNotification(numberOf(one), { wamid: one.wamid!, status: 'delivered', recipient: one.body.to }))).status).toBe(200);
    expect((await deliver(hook, statusNotification(numberOf(two), { wamid: two.wamid!, status: 'read', recipient: two.body.to }))).status).toBe(200);
    // A reply in context of the third message: REPLIED.
    expect((await deliver(hook, messageNotification(numberOf(three), { from: three.body.to, text: 'ok', contextId: three.wamid! }))).status).toBe(200);
    const idOf = (phone: string) => hsm().find((x) => x.to === phone && x.status === 'SENT')!.id as number;
    const statuses = (phone: string) =>
      hsm()
        .filter((x) => x.id === idOf(phone))
        .map((x) => x.status);
    await waitFor(() => statuses(one.body.to).includes('DEVICE') && statuses(two.body.to).includes('READ') && statuses(three.body.to).includes('REPLIED'), 'DEVICE, READ and REPLIED from B');
    expect(statuses(one.body.to)).toEqual(['ENQUEUED', 'SENT', 'DEVICE']);
    expect(statuses(three.body.to)).toEqual(['ENQUEUED', 'SENT', 'REPLIED']);
    // The notifications built on B carry what A tracked: the sending number and the text.
    const device = hsm().find((x) => x.id === idOf(one.body.to) && x.status === 'DEVICE');
    const sentOne = hsm().find((x) => x.id === idOf(one.body.to) && x.status === 'SENT');
    expect(device.from).toBe(sentOne.from);
    expect(device.message).toBe(sentOne.message);
    // The same reply again, now to A: B's REPLIED is in what the fleet remembers, so it is not repeated.
    expect((await deliver(`${a.url}/whatsapp/webhook`, messageNotification(numberOf(three), { from: three.body.to, text: 'ok again', contextId: three.wamid! }))).status).toBe(200);
    await waitFor(() => a.server.sendpool.idle() && b!.server.sendpool.idle(), 'both idle');
    expect(statuses(three.body.to).filter((s) => s === 'REPLIED')).toHaveLength(1);
    expect(receiver.badSignatures).toBe(0);
  });

  it('a failure posted by webhook to an instance that did not send the message sends the contact again, under a new id', async () => {
    const phone = '5511981000009';
    const hsm = () => receiver.all('/hsm').filter((x) => x.to === phone);
    expect(
      (await api(a.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 4, contacts: [{ phone_number: phone, template_variables: ['Late'] }] } })).status,
    ).toBe(202);
    await waitFor(() => hsm().some((x) => x.status === 'SENT'), 'SENT');
    await waitFor(() => a.server.sendpool.idle() && b!.server.sendpool.idle(), 'both idle (what they remember is written)');
    const first = graph.requests.find((r) => r.body?.to === phone && r.wamid)!;
    const number = account.numbers.find((n) => n.phoneNumberId === first.phoneNumberId)!;
    // The platform pauses the template and says so in the message's status: posted to B.
    const failed = statusNotification(number, { wamid: first.wamid!, status: 'failed', recipient: phone, opaque: first.body.biz_opaque_callback_data, errorCode: 132015 });
    expect((await deliver(`${b!.url}/whatsapp/webhook`, failed)).status).toBe(200);
    await waitFor(() => graph.requests.filter((r) => r.body?.to === phone && r.wamid).length === 2, 'the contact sent again by an instance');
    const second = graph.requests.filter((r) => r.body?.to === phone && r.wamid)[1]!;
    // The same contact, its next hand-out: `<contact id>.0`, then `<contact id>.1`.
    const [contactId, handout] = String(first.body.biz_opaque_callback_data).split('.');
    expect(second.body.biz_opaque_callback_data).toBe(`${contactId}.${Number(handout) + 1}`);
    expect(second.body.template.name).not.toBe(first.body.template.name);
    await waitFor(() => hsm().filter((x) => x.status === 'SENT').length === 2, 'the second SENT');
    expect(hsm().map((x) => x.status)).toEqual(['ENQUEUED', 'SENT', 'FAILED', 'SENT']);
    // The same FAILED again, now to A: what the fleet remembers says it was acted on.
    expect((await deliver(`${a.url}/whatsapp/webhook`, failed)).status).toBe(200);
    await waitFor(() => a.server.sendpool.idle() && b!.server.sendpool.idle(), 'both idle');
    expect(graph.requests.filter((r) => r.body?.to === phone && r.wamid)).toHaveLength(2);
  });

  it('a delivery receipt and a reply that come on the bind of an instance that did not send the SMS find it', async () => {
    const smsc = await startFakeSmsc();
    const smpp = () =>
      composeChannels({
        messages: fastChannel(),
        sms: createSmppChannel({ host: '127.0.0.1', port: smsc.port, systemId: 'sendpool', password: 'secret1', sourceAddr: '5511300000000' }),
      }) as unknown as SimulatedChannel;
    const prefix = `${base}sms:`;
    let c: Started | undefined = await startServer({ redis: { client, prefix, consumer: 'c' }, channel: smpp() });
    let d: Started | undefined;
    const dlr = await startReceiver(() => (c ?? d)!.server.sendpool.webhookSecret(1));
    try {
      const item = { message: 'Your code is 1234', phone: '5511987654329', reference: 'ref-9', url_callback_dlr: `${dlr.url}/dlr`, url_callback_mo: `${dlr.url}/mo` };
      expect((await api(c.url, '/sms/messages/', { body: [item] })).status).toBe(202);
      await waitFor(() => dlr.all('/dlr').some((x) => x.status === 'SENT'), 'SENT');
      await waitFor(() => c!.server.sendpool.idle(), 'C idle');
      // C leaves; D binds, and the SMSC delivers the receipt and the reply on D's bind.
      await c.server.close();
      c = undefined;
      d = await startServer({ redis: { client, prefix, consumer: 'd' }, channel: smpp() });
      await waitFor(() => smsc.binds.filter((x) => x.ok).length === 2, "D's bind");
      smsc.receipt(smsc.accepted[0]!.messageId!, 'DELIVRD');
      smsc.mo('5511987654329', 'STOP promos');
      await waitFor(() => dlr.all('/dlr').some((x) => x.status === 'DELIVERED') && dlr.all('/mo').length === 1, 'DELIVERED and the reply, from D');
      expect(
        dlr
          .all('/dlr')
          .map((x) => x.status)
          .sort(),
      ).toEqual(['DELIVERED', 'SENT']);
      expect(dlr.all('/mo')[0]).toMatchObject({ event: 'sms.reply', reference: 'ref-9', phone: '5511987654329', text: 'STOP promos' });
      expect(smsc.deliverRespStatuses).toEqual([0, 0]);
    } finally {
      await c?.server.close();
      await d?.server.close();
      await dlr.close();
      await smsc.close();
    }
  });
});
