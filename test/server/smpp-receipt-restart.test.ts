/**
 * The SMPP receipt timeout across kill -9 of the durable server: the SMS whose final receipt had
 * not come when it died are found again in the channel memory it loads, and end EXPIRED once the
 * timeout passes (the restarted server runs with a timeout of one second, which applies to the SMS
 * already waiting: the memory keeps when they were accepted). An SMS delivered before the kill does
 * not expire.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { smsSize } from '../../src/contract/sms-encoding.js';
import { api, waitFor } from './helpers.js';
import { startFakeSmsc } from './smpp-smsc.js';
import { killChild, startChild, startSmppChild, type Child } from './whatsapp-smpp-restart.js';

const dir = mkdtempSync(join(tmpdir(), 'sendpool-smpp-receipt-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SMPP receipt timeout across a restart of the durable server', () => {
  it('SMS sent before kill -9 without their final receipt end EXPIRED after the restart; one delivered before does not', async () => {
    // No receipt unless the test sends one.
    const smsc = await startFakeSmsc();
    const started = await startSmppChild(dir, smsc.port);
    const { cfg, receiver } = started;
    let child: Child = started.child;
    try {
      const long = `Promoção: ${'ofertas '.repeat(20)}`;
      const parts = smsSize(long).parts;
      expect(parts).toBeGreaterThan(1);
      const items = [
        { message: 'Your code is 1234', phone: '5511987654320' },
        { message: long, phone: '5511987654321' },
        { message: 'Delivered before', phone: '5511987654322' },
      ].map((item, i) => ({ ...item, reference: `ref-${i}`, url_callback_dlr: `${receiver.url}/dlr` }));
      expect((await api(child.url, '/sms/messages/', { body: items })).status).toBe(202);
      const dlr = (reference: string) =>
        receiver
          .all('/dlr')
          .filter((d) => d.reference === reference)
          .map((d) => d.status as string);
      // SENT is delivered once its step is written: what the channel awaits is on disk by then.
      await waitFor(() => items.every((_, i) => dlr(`ref-${i}`).includes('SENT')), 'SENT of the three');
      const idsOf = (phone: string) => smsc.accepted.filter((a) => a.destination === phone).map((a) => a.messageId!);
      const longIds = idsOf('5511987654321');
      expect(longIds).toHaveLength(parts);
      // The long SMS's first part delivered, and the third SMS, before the kill.
      smsc.receipt(longIds[0]!, 'DELIVRD');
      smsc.receipt(idsOf('5511987654322')[0]!, 'DELIVRD');
      await waitFor(() => smsc.deliverResps === 2 && dlr('ref-2').includes('DELIVERED'), 'the receipts answered, the third SMS DELIVERED');

      await killChild(child);
      child = await startChild({ ...cfg, smppReceiptTimeoutMs: 1_000 });
      await waitFor(() => dlr('ref-0').includes('EXPIRED') && dlr('ref-1').includes('EXPIRED'), 'EXPIRED of the two SMS without their final receipt');
      const expired = receiver.all('/dlr').filter((d) => d.status === 'EXPIRED');
      expect(expired.map((d) => d.reference).sort()).toEqual(['ref-0', 'ref-1']);
      for (const d of expired) expect(d.reason).toBe('SMPP: no delivery receipt within 1000 ms');
      expect(expired.find((d) => d.reference === 'ref-1')).toMatchObject({ parts });

      // The missing part's receipt now: answered (written first), nothing more reported.
      smsc.receipt(longIds[1]!, 'DELIVRD');
      await waitFor(() => smsc.deliverResps === 3, 'the late receipt answered');
      expect(dlr('ref-0').sort()).toEqual(['EXPIRED', 'SENT']);
      expect(dlr('ref-1').sort()).toEqual(['EXPIRED', 'SENT']);
      expect(dlr('ref-2').sort()).toEqual(['DELIVERED', 'SENT']);
      expect(receiver.badSignatures).toBe(0);
    } finally {
      await killChild(child);
      await receiver.close();
      await smsc.close();
    }
  });
});
