/**
 * The SMPP receipt timeout on the server on Redis, across instances: an instance that starts after
 * another left finds in Redis the SMS whose final receipt the fleet still awaits (it walks the
 * shared memory's `sw:` entries once), and expires them at the deadline; an SMS whose receipt came
 * (to the instance that left, or to this one) does not expire. A manual clock drives the channels.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { composeChannels, createSmppChannel, type SimulatedChannel } from '../../src/server/index.js';
import { SharedMemory } from '../../src/server/backends/redis/shared-memory.js';
import { cleanup, connect, describeTargets, testPrefix, type TestClient } from '../redis/helpers.js';
import { api, fastChannel, startReceiver, startServer, waitFor, type Started } from './helpers.js';
import { startFakeSmsc } from './smpp-smsc.js';

describeTargets('SMPP receipt timeout on the server on Redis', (target) => {
  let client: TestClient;
  let prefix: string;

  beforeAll(() => {
    client = connect(target);
    prefix = testPrefix('smpp-wait');
  });
  afterAll(async () => {
    await cleanup(client, prefix);
    client.disconnect();
  });

  it("the shared memory's entries by prefix: both generations, the newer one winning, a delete hiding the older value", async () => {
    const root = `${prefix}{scan}:`;
    // Generations of two entries; 5 written: the current generation is 2, the previous 1.
    await client.set(`${root}mem:n`, '5');
    await client.hset(`${root}mem:1`, 'c:sw:gone', '1 10', 'c:sw:kept', '2 20', 'c:sw:old', '3 30', 'c:sr:30', '1 kept');
    await client.hset(`${root}mem:2`, 'c:sw:gone', '', 'c:sw:old', '4 40 41', 'c:sw:new', '5 50', 'c:so:5511', 'x', 'c:sw*', 'literal');
    // Two generations back: dropped by the fleet's next write, never read.
    await client.hset(`${root}mem:0`, 'c:sw:ancient', '0 1');
    const memory = new SharedMemory(client, root, 2);
    expect(Object.fromEntries(await memory.scan('c:sw:'))).toEqual({ 'c:sw:kept': '2 20', 'c:sw:old': '4 40 41', 'c:sw:new': '5 50' });
    // A prefix with a glob character is matched literally.
    expect(Object.fromEntries(await memory.scan('c:sw*'))).toEqual({ 'c:sw*': 'literal' });
  });

  it('an instance started after the sender left expires what the fleet still awaits, and only that', async () => {
    const smsc = await startFakeSmsc();
    const clock = new ManualClock(Date.now());
    const smpp = () =>
      composeChannels({
        messages: fastChannel(),
        sms: createSmppChannel({ host: '127.0.0.1', port: smsc.port, systemId: 'sendpool', password: 'secret1', sourceAddr: '5511300000000', clock, enquireLinkMs: 20 }),
      }) as unknown as SimulatedChannel;
    let c: Started | undefined = await startServer({ redis: { client, prefix, consumer: 'c' }, channel: smpp() });
    let d: Started | undefined;
    const receiver = await startReceiver(() => (c ?? d)!.server.sendpool.webhookSecret(1));
    try {
      const items = ['5511987654320', '5511987654321', '5511987654322'].map((phone, i) => ({
        message: `Your code is ${i}`,
        phone,
        reference: `ref-${i}`,
        url_callback_dlr: `${receiver.url}/dlr`,
      }));
      expect((await api(c.url, '/sms/messages/', { body: items })).status).toBe(202);
      const dlr = (reference: string) =>
        receiver
          .all('/dlr')
          .filter((x) => x.reference === reference)
          .map((x) => x.status as string);
      await waitFor(() => items.every((item) => dlr(item.reference).includes('SENT')), 'SENT of the three');
      const idOf = (phone: string) => smsc.accepted.find((a) => a.destination === phone)!.messageId!;
      // ref-1's receipt comes to C, the sender.
      smsc.receipt(idOf('5511987654321'), 'DELIVRD');
      await waitFor(() => dlr('ref-1').includes('DELIVERED'), 'DELIVERED of ref-1, from C');
      await waitFor(() => c!.server.sendpool.idle(), 'C idle (what it remembers is written)');
      await c.server.close();
      c = undefined;

      // D starts: it holds nothing of C's SMS, and reads what the fleet awaits from Redis.
      d = await startServer({ redis: { client, prefix, consumer: 'd' }, channel: smpp() });
      await waitFor(() => smsc.binds.filter((x) => x.ok).length === 2, "D's bind");
      smsc.receipt(idOf('5511987654322'), 'DELIVRD');
      await waitFor(() => dlr('ref-2').includes('DELIVERED'), 'DELIVERED of ref-2, from D');

      clock.advance(172_800_000);
      await waitFor(() => dlr('ref-0').includes('EXPIRED'), 'EXPIRED of ref-0, from D');
      expect(receiver.all('/dlr').find((x) => x.status === 'EXPIRED')).toMatchObject({ reference: 'ref-0', reason: 'SMPP: no delivery receipt within 172800000 ms' });

      // Its receipt after that: answered, nothing reported; D keeps ticking (enquire_link) and expires nothing more.
      const answered = smsc.deliverResps;
      smsc.receipt(idOf('5511987654320'), 'DELIVRD');
      await waitFor(() => smsc.deliverResps === answered + 1, 'the late receipt answered');
      clock.advance(172_800_000);
      const enquiries = smsc.enquiries;
      await waitFor(() => smsc.enquiries >= enquiries + 2, 'two more ticks of D');
      await waitFor(() => d!.server.sendpool.idle(), 'D idle');
      expect(dlr('ref-0').sort()).toEqual(['EXPIRED', 'SENT']);
      expect(dlr('ref-1').sort()).toEqual(['DELIVERED', 'SENT']);
      expect(dlr('ref-2').sort()).toEqual(['DELIVERED', 'SENT']);
      expect(receiver.badSignatures).toBe(0);
    } finally {
      await c?.server.close();
      await d?.server.close();
      await receiver.close();
      await smsc.close();
    }
  });
});
