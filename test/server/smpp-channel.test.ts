/**
 * The SMPP channel against a local SMSC (the smpp package's server side): binds, parts as the
 * contract counts them, delivery receipts to DLR statuses, replies to MO, and the whole path over
 * HTTP (POST /sms/messages/ → submit_sm → receipt → callbacks).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { smsSize } from '../../src/contract/sms-encoding.js';
import { composeChannels, createSmppChannel, type SmppChannel, type SmppChannelOptions } from '../../src/server/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { api, fastChannel, startReceiver, startServer, waitFor } from './helpers.js';
import { outgoingSms, smscAndChannel, startFakeSmsc, type Cleanup, type FakeSmsc } from './smpp-smsc.js';

const cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function setup(smscOptions: Parameters<typeof startFakeSmsc>[0] = {}, channelOptions: Partial<SmppChannelOptions> = {}) {
  return smscAndChannel(cleanup, smscOptions, channelOptions);
}

/** Texts of each SMS joined from the parts the SMSC accepted, by destination. */
function joined(smsc: FakeSmsc): Map<string, string> {
  const by = new Map<string, { seq: number; text: string }[]>();
  for (const s of smsc.accepted) {
    const list = by.get(s.destination) ?? [];
    list.push({ seq: s.concat?.[2] ?? 1, text: s.text });
    by.set(s.destination, list);
  }
  return new Map(
    [...by].map(([d, parts]) => [
      d,
      parts
        .sort((a, b) => a.seq - b.seq)
        .map((p) => p.text)
        .join(''),
    ]),
  );
}

describe('SMPP channel: bind and submit', () => {
  it('binds as a transceiver with the account and sends an SMS as one submit_sm', async () => {
    const { smsc, channel, events } = await setup();
    await channel.whenBound();
    expect(smsc.binds).toMatchObject([{ systemId: 'sendpool', password: 'secret1', ok: true, kind: 'transceiver' }]);
    expect(events).toContainEqual({ type: 'bound', address: `127.0.0.1:${smsc.port}`, bind: `127.0.0.1:${smsc.port} transceiver 1` });

    const result = await channel.sendSms(outgoingSms(0, 'Your code is 1234'));
    expect(result).toEqual({ status: 'sent' });
    expect(smsc.accepted).toHaveLength(1);
    expect(smsc.accepted[0]).toMatchObject({
      destination: '5511970000000',
      source: 'SENDPOOL',
      sourceTon: 5,
      dataCoding: 0,
      esmClass: 0,
      registeredDelivery: 1,
      text: 'Your code is 1234',
      concat: undefined,
    });
    expect(channel.stats()).toMatchObject({ bound: true, submitted: 1, accepted: 1, smsSent: 1, outstanding: 0, queued: 0 });
  });

  it('a refused bind is reported without the password, retried, and SMS fail once their validity ends', async () => {
    const clock = new ManualClock(1_000_000);
    const { smsc, channel, events } = await setup({ password: 'other' }, { validityMs: 60_000, clock });
    const sent = channel.sendSms(outgoingSms(0, 'hello'));
    await waitFor(() => smsc.binds.length >= 2, 'a second bind');
    clock.advance(60_000);
    const result = await sent;
    expect(result).toEqual({ status: 'failed', reason: 'SMPP: not accepted within its validity of 60000 ms (last: not bound)' });
    expect(smsc.binds.every((b) => !b.ok)).toBe(true);
    const failed = events.filter((e) => e.type === 'bind-failed');
    expect(failed[0]).toEqual({ type: 'bind-failed', address: `127.0.0.1:${smsc.port}`, bind: `127.0.0.1:${smsc.port} transceiver 1`, reason: 'SMPP 0x0000000e ESME_RINVPASWD' });
    expect(JSON.stringify(events)).not.toContain('secret1');
    expect(smsc.accepted).toHaveLength(0);
  });

  it('options are checked, every problem named, the password never shown', () => {
    expect(() => createSmppChannel({ host: '', systemId: 'x'.repeat(16), password: 'p'.repeat(65), sourceAddr: 'S', window: 0 })).toThrow(
      /smpp\.host: expected a string of 1 to 253.*smpp\.systemId: expected a string of 1 to 15.*smpp\.password: expected a string of 0 to 64 characters, got a string of 65 characters.*smpp\.window: expected an integer from 1 to 10000, got 0/,
    );
    try {
      createSmppChannel({ host: 'h', systemId: 's', password: 'hunter2-is-long-enough-to-be-refused-because-it-is-over-64-chars!!', sourceAddr: 'S' });
    } catch (e) {
      expect(String(e)).not.toContain('hunter2');
    }
  });

  it('template messages are not for this channel: send rejects', async () => {
    const { channel } = await setup();
    await expect(channel.send({} as never)).rejects.toThrow(/SMS only/);
  });
});

describe('SMPP channel: parts', () => {
  const texts = {
    gsmShort: 'a'.repeat(160),
    gsmLong: `Olá not here: ${'Hello [world] {x} ~ € | ^ \\ '.repeat(14)}`.replace('Olá', 'Ola'),
    gsmEdge: `${'a'.repeat(152)}€${'a'.repeat(152)}`,
    ucs2Short: 'Olá, João! Ação às 10h.',
    ucs2Long: `${'Promoção 😀 '.repeat(40)}fim`,
    ucs2Edge: `${'ç'.repeat(66)}😀${'ç'.repeat(66)}`,
  };

  it('sends exactly the parts the contract counts, joined by one UDH reference, in the contract encoding', async () => {
    const { smsc, channel } = await setup();
    const entries = Object.entries(texts);
    const sms = entries.map(([, text], i) => outgoingSms(i, text));
    const results = await Promise.all(sms.map((s) => channel.sendSms(s)));
    expect(results.every((r) => r.status === 'sent')).toBe(true);
    const text = joined(smsc);
    for (const s of sms) {
      const size = smsSize(s.message);
      const parts = smsc.accepted.filter((a) => a.destination === s.phone);
      expect(parts.length, s.message).toBe(size.parts);
      expect(s.parts).toBe(size.parts);
      expect(text.get(s.phone)).toBe(s.message);
      for (const p of parts) {
        expect(p.dataCoding).toBe(size.encoding === 'GSM-7' ? 0 : 8);
        if (size.parts === 1) {
          expect(p.esmClass).toBe(0);
          expect(p.concat).toBeUndefined();
        } else {
          expect(p.esmClass & 0x40).toBe(0x40);
          expect(p.concat?.[1]).toBe(size.parts);
          expect(p.concat?.[0]).toBe(parts[0]!.concat?.[0]);
        }
      }
      if (size.parts > 1) expect(parts.map((p) => p.concat?.[2]).sort()).toEqual(Array.from({ length: size.parts }, (_, i) => i + 1));
    }
    // Different SMS, different references.
    const refs = sms.filter((s) => s.parts > 1).map((s) => smsc.accepted.find((a) => a.destination === s.phone)!.concat![0]);
    expect(new Set(refs).size).toBe(refs.length);
  });

  it('a text that does not give the parts the contract reported is failed, not sent', async () => {
    const { smsc, channel } = await setup();
    const sms = { ...outgoingSms(0, 'a'.repeat(200)), parts: 1 };
    expect(await channel.sendSms(sms)).toEqual({ status: 'failed', reason: 'SMPP: the text makes 2 GSM-7 part(s), the contract counted 1' });
    expect(smsc.received).toHaveLength(0);
  });
});

describe('SMPP channel: delivery receipts', () => {
  const statByPhoneEnd: Record<string, string> = { '1': 'UNDELIV', '2': 'EXPIRED', '3': 'REJECTD', '4': 'ENROUTE' };

  it.each([
    ['text receipts', {}],
    ['TLV receipts (receipted_message_id, message_state)', { receiptTlvs: true }],
    ['hex ids in answers, decimal in receipts', { hexIds: true }],
  ])('maps stat: to DLR statuses (%s)', async (_name, smscOptions) => {
    const { channel, rec } = await setup({ ...smscOptions, autoReceipt: (s) => statByPhoneEnd[s.destination.slice(-1)] ?? 'DELIVRD' });
    const sms = [0, 1, 2, 3, 4].map((i) => outgoingSms(i, `Message ${i}`, `551198765432${i}`));
    await Promise.all(sms.map((s) => channel.sendSms(s)));
    await waitFor(() => rec.statuses.length === 4 && channel.stats().receipts === 5, 'five receipts, four final');
    const by = new Map(rec.statuses.map((s) => [s.smsId, s]));
    expect(by.get('req-1:0')).toEqual({ smsId: 'req-1:0', status: 'DELIVERED', reason: null });
    expect(by.get('req-1:1')).toEqual({ smsId: 'req-1:1', status: 'FAILED', reason: 'UNDELIV err:000' });
    expect(by.get('req-1:2')).toEqual({ smsId: 'req-1:2', status: 'EXPIRED', reason: 'EXPIRED err:000' });
    expect(by.get('req-1:3')).toEqual({ smsId: 'req-1:3', status: 'FAILED', reason: 'REJECTD err:000' });
    // ENROUTE is not final: nothing reported for SMS 4.
    expect(by.has('req-1:4')).toBe(false);
    expect(channel.stats()).toMatchObject({ receipts: 5, unmatchedReceipts: 0 });
  });

  it('a long SMS is DELIVERED once every part is; a failed part fails it once', async () => {
    const { smsc, channel, rec } = await setup();
    const ok = outgoingSms(0, 'x'.repeat(400));
    const bad = outgoingSms(1, 'y'.repeat(400));
    await Promise.all([channel.sendSms(ok), channel.sendSms(bad)]);
    const idsOf = (phone: string) => smsc.accepted.filter((a) => a.destination === phone).map((a) => a.messageId!);
    const okIds = idsOf(ok.phone);
    const badIds = idsOf(bad.phone);
    expect(okIds).toHaveLength(3);
    smsc.receipt(okIds[0]!, 'DELIVRD');
    smsc.receipt(okIds[1]!, 'DELIVRD');
    smsc.receipt(badIds[0]!, 'DELIVRD');
    smsc.receipt(badIds[1]!, 'UNDELIV', '012');
    await waitFor(() => rec.statuses.length === 1, 'the failed SMS');
    expect(rec.statuses[0]).toEqual({ smsId: bad.smsId, status: 'FAILED', reason: 'part of 3: UNDELIV err:012' });
    smsc.receipt(badIds[2]!, 'DELIVRD');
    smsc.receipt(okIds[2]!, 'DELIVRD');
    smsc.receipt(okIds[2]!, 'DELIVRD'); // a duplicate receipt
    await waitFor(() => rec.statuses.length === 2, 'the delivered SMS');
    await waitFor(() => channel.stats().receipts === 7, 'every receipt read');
    expect(rec.statuses).toEqual([
      { smsId: bad.smsId, status: 'FAILED', reason: 'part of 3: UNDELIV err:012' },
      { smsId: ok.smsId, status: 'DELIVERED', reason: null },
    ]);
  });

  it('a receipt that comes before the last part was answered is reported after the answer', async () => {
    const { smsc, channel, rec } = await setup({ autoReceipt: () => 'UNDELIV' });
    await channel.whenBound();
    const log: string[] = [];
    const sms = outgoingSms(0, 'z'.repeat(400));
    smsc.holdAfter(1);
    const answered = channel.sendSms(sms).then((r) => log.push(`answer ${r.status}`));
    // Part 1 accepted and its receipt read while parts 2 and 3 wait for their answers.
    await waitFor(() => smsc.held.length === 2 && channel.stats().receipts === 1, 'part 1 receipted, parts 2 and 3 held');
    const sink = rec.sink.smsStatus;
    rec.sink.smsStatus = (u) => {
      log.push(`dlr ${u.status}`);
      sink(u);
    };
    smsc.release();
    await answered;
    await waitFor(() => rec.statuses.length === 1, 'the DLR');
    expect(log).toEqual(['answer sent', 'dlr FAILED']);
    expect(rec.statuses).toEqual([{ smsId: sms.smsId, status: 'FAILED', reason: 'part of 3: UNDELIV err:000' }]);
  });

  it('a receipt for an id the channel never sent is answered and counted, not reported', async () => {
    const { smsc, channel, rec } = await setup();
    await channel.whenBound();
    smsc.receipt('999999', 'DELIVRD');
    await waitFor(() => smsc.deliverResps === 1, 'the deliver_sm answered');
    expect(channel.stats()).toMatchObject({ receipts: 1, unmatchedReceipts: 1 });
    expect(rec.statuses).toEqual([]);
  });
});

describe('SMPP channel: replies (MO)', () => {
  it('a reply goes to the last SMS sent to that phone, in any coding, joined from its parts', async () => {
    const { smsc, channel, rec } = await setup();
    const first = outgoingSms(0, 'First', '5511987650000');
    const second = outgoingSms(1, 'Second', '5511987650000');
    const other = outgoingSms(2, 'Other', '5511987651111');
    await channel.sendSms(first);
    await channel.sendSms(second);
    await channel.sendSms(other);
    smsc.mo('5511987650000', 'SIM');
    await waitFor(() => rec.replies.length === 1, 'the first reply');
    smsc.mo('+5511987651111', 'Não, obrigado', { ucs2: true });
    await waitFor(() => rec.replies.length === 2, 'the second reply');
    smsc.mo('5511987651111', 'Part two.', { concat: [7, 2, 2] });
    smsc.mo('5511987651111', 'Part one, ', { concat: [7, 2, 1] });
    await waitFor(() => rec.replies.length === 3, 'the joined reply');
    smsc.mo('5511900000000', 'who are you?');
    await waitFor(() => smsc.deliverResps === 5, 'every deliver_sm answered');
    expect(rec.replies).toEqual([
      { smsId: second.smsId, text: 'SIM' },
      { smsId: other.smsId, text: 'Não, obrigado' },
      { smsId: other.smsId, text: 'Part one, Part two.' },
    ]);
    expect(channel.stats()).toMatchObject({ replies: 3, unmatchedReplies: 1 });
  });
});

describe('SMPP channel in the server', () => {
  it('POST /sms/messages/ goes out over SMPP; receipts and replies come back as DLR and MO callbacks', async () => {
    const smsc = await startFakeSmsc({ autoReceipt: (s) => (s.destination.endsWith('9') ? 'UNDELIV' : 'DELIVRD') });
    cleanup.push(() => smsc.close());
    const smpp: SmppChannel = createSmppChannel({ host: '127.0.0.1', port: smsc.port, systemId: 'sendpool', password: 'secret1', sourceAddr: '5511300000000' });
    const s = await startServer({ channel: composeChannels({ messages: fastChannel(), sms: smpp }) });
    cleanup.push(() => s.server.close());
    const receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    cleanup.push(() => receiver.close());
    const items = [
      { message: 'Your code is 1234', phone: '5511987654320' },
      { message: `Promoção: ${'ofertas '.repeat(20)}`, phone: '5511987654321' },
      { message: 'x'.repeat(500), phone: '5511987654329' },
    ].map((item, i) => ({ ...item, reference: `ref-${i}`, url_callback_dlr: `${receiver.url}/dlr`, url_callback_mo: `${receiver.url}/mo` }));
    const res = await api(s.url, '/sms/messages/', { body: items });
    expect(res.status).toBe(202);
    const expectedParts = items.map((i) => smsSize(i.message).parts);
    expect(res.json).toMatchObject({ accepted: 3, parts: expectedParts.reduce((a, b) => a + b, 0) });
    await waitFor(() => receiver.all('/dlr').length === 6, 'SENT and a final status for each SMS');
    expect(smsc.accepted.map((a) => a.destination).sort()).toEqual(items.flatMap((item, i) => Array(expectedParts[i]).fill(item.phone)).sort());
    for (const [i, item] of items.entries()) {
      const dlr = receiver.all('/dlr').filter((d) => d.reference === `ref-${i}`);
      // Webhooks are not ordered (docs/server.md): the set, not the order of arrival.
      expect(dlr.map((d) => d.status).sort()).toEqual([item.phone.endsWith('9') ? 'FAILED' : 'DELIVERED', 'SENT'].sort());
      expect(dlr.every((d) => d.parts === expectedParts[i])).toBe(true);
    }
    expect(receiver.all('/dlr').find((d) => d.status === 'FAILED').reason).toBe('part of 4: UNDELIV err:000');

    smsc.mo('5511987654320', 'OK, thanks');
    await waitFor(() => receiver.all('/mo').length === 1, 'the MO callback');
    expect(receiver.all('/mo')[0]).toMatchObject({ event: 'sms.reply', reference: 'ref-0', phone: '5511987654320', text: 'OK, thanks' });
  });
});
