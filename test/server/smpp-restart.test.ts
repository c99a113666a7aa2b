/**
 * The SMPP channel on the durable server across kill -9, against the local SMSC: a delivery
 * receipt for an SMS sent before the restart still becomes its DLR callback (one part and a long
 * SMS whose parts' receipts straddle the restart), and a reply (MO) from its phone its MO callback.
 * On the durable server a `deliver_sm` is answered once what it did is written, and with a
 * temporary error (ESME_RX_T_APPN, the SMSC delivers it again) when that failed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { smsSize } from '../../src/contract/sms-encoding.js';
import { createEngine } from '../../src/engine.js';
import { composeChannels, createSmppChannel, openSqliteStorage, type ServerStorage, type SimulatedChannel } from '../../src/server/index.js';
import { KEY_1, api, fastChannel, startReceiver, startServer, testFleet, waitFor } from './helpers.js';
import { startFakeSmsc } from './smpp-smsc.js';
import { killChild, startChild, type Child } from './whatsapp-smpp-restart.js';

const dir = mkdtempSync(join(tmpdir(), 'sendpool-smpp-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SMPP channel across a restart of the durable server', () => {
  it('receipts and replies for SMS sent before kill -9 become their DLR and MO callbacks', async () => {
    const smsc = await startFakeSmsc();
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(testFleet()));
    const cfg = { fleetFile, dataDir: join(dir, 'data'), key: KEY_1, smppPort: smsc.port };
    let secret = '';
    const receiver = await startReceiver(() => secret);
    let child: Child | undefined = await startChild(cfg);
    try {
      secret = (await api(child.url, '/messenger/config/secret/')).json.webhook_secret;
      const long = `Promoção: ${'ofertas '.repeat(20)}`;
      const items = [
        { message: 'Your code is 1234', phone: '5511987654320' },
        { message: long, phone: '5511987654321' },
      ].map((item, i) => ({ ...item, reference: `ref-${i}`, url_callback_dlr: `${receiver.url}/dlr`, url_callback_mo: `${receiver.url}/mo` }));
      expect((await api(child.url, '/sms/messages/', { body: items })).status).toBe(202);
      const parts = smsSize(long).parts;
      expect(parts).toBeGreaterThan(1);
      const dlr = (reference: string) =>
        receiver
          .all('/dlr')
          .filter((d) => d.reference === reference)
          .map((d) => d.status as string);
      // SENT is delivered once its step is written: the SMSC's message ids are on disk by then.
      await waitFor(() => dlr('ref-0').includes('SENT') && dlr('ref-1').includes('SENT'), 'SENT of both');
      const idsOf = (phone: string) => smsc.accepted.filter((a) => a.destination === phone).map((a) => a.messageId!);
      const [short] = idsOf('5511987654320');
      const longIds = idsOf('5511987654321');
      expect(longIds).toHaveLength(parts);
      // The first part of the long SMS is delivered before the restart.
      const answered = smsc.deliverResps;
      smsc.receipt(longIds[0]!, 'DELIVRD');
      await waitFor(() => smsc.deliverResps === answered + 1, 'the receipt answered');

      await killChild(child);
      child = await startChild(cfg);
      await waitFor(() => smsc.binds.filter((b) => b.ok).length === 2, 'bound again');

      smsc.receipt(short!, 'DELIVRD');
      for (const id of longIds.slice(1)) smsc.receipt(id, 'DELIVRD');
      smsc.mo('5511987654321', 'STOP promos');
      await waitFor(() => dlr('ref-0').includes('DELIVERED') && dlr('ref-1').includes('DELIVERED') && receiver.all('/mo').length === 1, 'both DELIVERED and the MO');
      expect(receiver.all('/dlr').find((d) => d.reference === 'ref-1' && d.status === 'DELIVERED')).toMatchObject({ parts, reason: null });
      expect(receiver.all('/mo')[0]).toMatchObject({ event: 'sms.reply', reference: 'ref-1', phone: '5511987654321', text: 'STOP promos' });
      // Each SMS has one final DLR: the receipt read before the restart was not counted twice.
      expect(dlr('ref-0').sort()).toEqual(['DELIVERED', 'SENT']);
      expect(dlr('ref-1').sort()).toEqual(['DELIVERED', 'SENT']);
      expect(receiver.badSignatures).toBe(0);
    } finally {
      if (child) await killChild(child);
      await receiver.close();
      await smsc.close();
    }
  });

  it('answers a deliver_sm with ESME_RX_T_APPN, not ESME_ROK, when its effects could not be written', async () => {
    const smsc = await startFakeSmsc();
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
    const smpp = createSmppChannel({ host: '127.0.0.1', port: smsc.port, systemId: 'sendpool', password: 'secret1', sourceAddr: '5511300000000' });
    const channel = composeChannels({ messages: fastChannel(), sms: smpp });
    const s = await startServer({ engine: createEngine(testFleet(), { trackChanges: true }), storage: flaky, channel: channel as unknown as SimulatedChannel });
    const receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    try {
      const item = { message: 'Your code is 1234', phone: '5511987654320', reference: 'ref-0', url_callback_dlr: `${receiver.url}/dlr`, url_callback_mo: `${receiver.url}/mo` };
      expect((await api(s.url, '/sms/messages/', { body: [item] })).status).toBe(202);
      await waitFor(() => receiver.all('/dlr').some((d) => d.status === 'SENT'), 'SENT');
      // Written: the receipt is answered ESME_ROK.
      smsc.mo('5511987654320', 'first');
      await waitFor(() => smsc.deliverResps === 1, 'the MO answered');
      failing = true;
      smsc.receipt(smsc.accepted[0]!.messageId!, 'DELIVRD');
      smsc.mo('5511987654320', 'second');
      await waitFor(() => smsc.deliverResps === 3, 'the receipt and the MO answered');
      expect(smsc.deliverRespStatuses).toEqual([0, 0x64, 0x64]);
      expect(receiver.all('/dlr').map((d) => d.status)).toEqual(['SENT']);
    } finally {
      await s.server.close();
      await receiver.close();
      await smsc.close();
    }
  });
});
