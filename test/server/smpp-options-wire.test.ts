/**
 * Options of the SMPP channel as the SMSC reads them (the smpp package's decoder, independent of
 * sendpool's encoder): the bind's `interface_version`, the `data_coding` of GSM-7 texts, and how a
 * long SMS goes (`concatenation`: UDH, SAR TLVs, or one `message_payload`).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { smsPartTexts, smsSize } from '../../src/contract/sms-encoding.js';
import { encodeSubmitSm, gsm7Octets, submitParts, ucs2Octets } from '../../src/server/channels/smpp-codec.js';
import { loadSmpp } from '../../src/server/channels/smpp-package.js';
import { composeChannels, createSmppChannel, type SmppChannelOptions } from '../../src/server/index.js';
import { api, fastChannel, startReceiver, startServer, waitFor } from './helpers.js';
import { outgoingSms, smscAndChannel, startFakeSmsc, type Cleanup, type FakeSmscOptions } from './smpp-smsc.js';

const cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const setup = (channelOptions: Partial<SmppChannelOptions> = {}, smscOptions: FakeSmscOptions = {}) => smscAndChannel(cleanup, smscOptions, channelOptions);

const base = { host: '127.0.0.1', systemId: 'sendpool', password: 'secret1', sourceAddr: 'SENDPOOL' };

/** The package's GSM 03.38 table ("ASCII" in the package), to get back the octets it decoded. */
async function packageGsmOctets(text: string): Promise<Buffer> {
  const smpp = (await loadSmpp()) as unknown as { encodings: { ASCII: { encode(t: string): Buffer } } };
  return smpp.encodings.ASCII.encode(text);
}

describe('interfaceVersion: the bind announces SMPP 3.4', () => {
  it('bind_transceiver carries interface_version 0x34 by default, the configured octet when set', async () => {
    const { smsc, channel } = await setup();
    await channel.whenBound();
    expect(smsc.bindVersions).toEqual([0x34]);
    for (const version of [0x33, 0x50, 0x00, 0xff]) {
      const other = await setup({ interfaceVersion: version });
      await other.channel.whenBound();
      expect(other.smsc.bindVersions).toEqual([version]);
    }
  });

  it('is an octet, named when it is not', () => {
    for (const bad of [-1, 256, 0x34 + 0.5, '0x34']) {
      expect(() => createSmppChannel({ ...base, interfaceVersion: bad as number })).toThrow(`smpp.interfaceVersion: expected an integer from 0 to 255, got ${JSON.stringify(bad)}`);
    }
  });
});

describe('gsm7DataCoding', () => {
  // Characters whose GSM 03.38 code differs from their ASCII code, and extension characters.
  const text = 'Code @home_$5 {ok} [x] ~|^\\ 1234';

  it('0 by default: GSM 03.38 octets, data_coding 0', async () => {
    const { smsc, channel } = await setup();
    expect(await channel.sendSms(outgoingSms(0, text))).toEqual({ status: 'sent' });
    expect(smsc.accepted[0]).toMatchObject({ dataCoding: 0, text });
  });

  it('1: data_coding 1 with ASCII octets, one per character; UCS-2 stays 8; a GSM-7 letter IA5 lacks fails the SMS', async () => {
    const { smsc, channel } = await setup({ gsm7DataCoding: 1 });
    expect(await channel.sendSms(outgoingSms(0, text))).toEqual({ status: 'sent' });
    const [ia5] = smsc.accepted;
    expect(ia5?.dataCoding).toBe(1);
    // The package reads data_coding 1 with its GSM table: its encoder gives back the octets it read.
    expect((await packageGsmOctets(ia5!.text)).toString('latin1')).toBe(text);
    expect(await channel.sendSms(outgoingSms(1, 'Olá, João'))).toEqual({ status: 'sent' });
    expect(smsc.accepted[1]).toMatchObject({ dataCoding: 8, text: 'Olá, João' });
    const refused = await channel.sendSms(outgoingSms(2, 'Café £5'));
    expect(refused).toEqual({ status: 'failed', reason: 'SMPP: IA5 (gsm7DataCoding 1): "é" (U+E9) has no ASCII code' });
    expect(smsc.received).toHaveLength(2);
  });

  it('a long GSM-7 text in IA5 keeps the contract parts (153 septets, fewer octets)', async () => {
    const { smsc, channel } = await setup({ gsm7DataCoding: 1 });
    const long = `${'{x} '.repeat(60)}end`; // 243 characters, 363 septets: 3 parts
    const sms = outgoingSms(0, long);
    expect(sms.parts).toBe(3);
    expect(await channel.sendSms(sms)).toEqual({ status: 'sent' });
    expect(smsc.accepted.map((a) => [a.dataCoding, a.esmClass & 0x40, a.concat?.[2]])).toEqual([
      [1, 0x40, 1],
      [1, 0x40, 2],
      [1, 0x40, 3],
    ]);
    const texts = await Promise.all(smsc.accepted.map(async (a) => (await packageGsmOctets(a.text)).toString('latin1')));
    expect(texts).toEqual(smsPartTexts(long, 'GSM-7'));
  });

  it('anything but 0 or 1 is named', () => {
    expect(() => createSmppChannel({ ...base, gsm7DataCoding: 8 as 0 })).toThrow('smpp.gsm7DataCoding: expected 0 (SMSC default alphabet) or 1 (IA5/ASCII), got 8');
  });
});

describe('concatenation', () => {
  const texts = {
    gsmLong: `${'Hello [world] {x} ~ € | ^ \\ '.repeat(14)}end`,
    gsmEdge: `${'a'.repeat(152)}€${'a'.repeat(152)}`,
    ucs2Long: `${'Promoção 😀 '.repeat(40)}fim`,
  };

  it("'udh' by default: the header in each part, esm_class 0x40, no SAR or payload", async () => {
    const { smsc, channel } = await setup();
    expect(await channel.sendSms(outgoingSms(0, texts.gsmLong))).toEqual({ status: 'sent' });
    expect(smsc.accepted.length).toBeGreaterThan(1);
    for (const p of smsc.accepted) {
      expect(p.esmClass).toBe(0x40);
      expect(p.concat).toBeDefined();
      expect(p).toMatchObject({ sar: undefined, payload: undefined });
    }
  });

  it("'sar': each part's text without a header, esm_class 0, joined by sar_msg_ref_num / sar_total_segments / sar_segment_seqnum", async () => {
    const { smsc, channel } = await setup({ concatenation: 'sar' });
    const sms = Object.values(texts).map((t, i) => outgoingSms(i, t));
    expect(await Promise.all(sms.map((s) => channel.sendSms(s)))).toEqual(sms.map(() => ({ status: 'sent' })));
    const refs: number[] = [];
    for (const s of sms) {
      const parts = smsc.accepted.filter((a) => a.destination === s.phone);
      expect(parts).toHaveLength(s.parts);
      expect(parts.map((p) => p.text)).toEqual(smsPartTexts(s.message, s.encoding));
      for (const [i, p] of parts.entries()) {
        expect(p).toMatchObject({ esmClass: 0, concat: undefined, payload: undefined, dataCoding: s.encoding === 'GSM-7' ? 0 : 8 });
        expect(p.sar).toEqual([parts[0]!.sar![0], s.parts, i + 1]);
        expect(p.octets).toBeLessThanOrEqual(s.encoding === 'GSM-7' ? 153 : 134);
      }
      refs.push(parts[0]!.sar![0]);
    }
    expect(new Set(refs).size).toBe(refs.length);
    // A one-part SMS has no SAR TLVs.
    expect(await channel.sendSms(outgoingSms(9, 'short'))).toEqual({ status: 'sent' });
    expect(smsc.accepted.at(-1)).toMatchObject({ text: 'short', sar: undefined, esmClass: 0 });
  });

  it('the three ways carry the same octets: SAR parts are the UDH parts without the header, the payload is their whole', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 1600, unit: fc.constantFrom('a', '€', '{', 'ç', '😀', ' ') }), fc.nat(0xffff), (text, ref) => {
        const size = smsSize(text);
        const built = (concatenation: 'udh' | 'sar' | 'payload') => {
          const b = submitParts(text, size.encoding, size.parts, ref, { concatenation });
          if ('error' in b) throw new Error(b.error);
          return b;
        };
        const [udh, sar, payload] = [built('udh'), built('sar'), built('payload')];
        const whole = size.encoding === 'GSM-7' ? gsm7Octets(text) : ucs2Octets(text);
        if (size.parts === 1) {
          for (const b of [sar, payload]) expect(b).toEqual(udh);
          expect(udh.tlvs).toBeUndefined();
          return;
        }
        expect(sar.shortMessages).toEqual(udh.shortMessages.map((m) => m.subarray(6)));
        expect(sar.tlvs).toHaveLength(size.parts);
        expect(payload.shortMessages).toEqual([Buffer.alloc(0)]);
        expect(payload.tlvs).toEqual([Buffer.concat([Buffer.from([0x04, 0x24, whole.length >> 8, whole.length & 0xff]), whole])]);
        expect([sar.esmClass, payload.esmClass, udh.esmClass]).toEqual([0, 0, 0x40]);
      }),
    );
  });

  it("'sar' writes a 16-bit reference, read back by the package's decoder", async () => {
    const smpp = await loadSmpp();
    const text = 'x'.repeat(400);
    const built = submitParts(text, 'GSM-7', 3, 0x12345, { concatenation: 'sar' });
    if ('error' in built) throw new Error(built.error);
    const fields = {
      sourceAddrTon: 5,
      sourceAddrNpi: 0,
      sourceAddr: 'S',
      destAddrTon: 1,
      destAddrNpi: 1,
      destinationAddr: '5511',
      esmClass: built.esmClass,
      registeredDelivery: 1,
      dataCoding: built.dataCoding,
      validityPeriod: '',
    };
    const decoded = built.shortMessages.map(
      (shortMessage, i) => new (smpp.PDU as unknown as new (b: Buffer) => Record<string, unknown>)(encodeSubmitSm({ ...fields, shortMessage, tlvs: built.tlvs?.[i] })),
    );
    expect(decoded.map((d) => [d['sar_msg_ref_num'], d['sar_total_segments'], d['sar_segment_seqnum']])).toEqual([
      [0x2345, 3, 1],
      [0x2345, 3, 2],
      [0x2345, 3, 3],
    ]);
    expect(decoded.map((d) => (d['short_message'] as { message: string }).message).join('')).toBe(text);
  });

  it("'payload': one submit_sm per SMS, sm_length 0, the whole text in message_payload; one receipt decides", async () => {
    const { smsc, channel, rec } = await setup({ concatenation: 'payload' }, { autoReceipt: (s) => (s.destination.endsWith('1') ? 'UNDELIV' : 'DELIVRD') });
    const sms = Object.values(texts).map((t, i) => outgoingSms(i, t));
    expect(await Promise.all(sms.map((s) => channel.sendSms(s)))).toEqual(sms.map(() => ({ status: 'sent' })));
    expect(smsc.accepted).toHaveLength(sms.length);
    for (const s of sms) {
      expect(s.parts).toBeGreaterThan(1);
      const [pdu, ...more] = smsc.accepted.filter((a) => a.destination === s.phone);
      expect(more).toHaveLength(0);
      expect(pdu).toMatchObject({ text: '', octets: 0, esmClass: 0, concat: undefined, sar: undefined, payload: s.message, dataCoding: s.encoding === 'GSM-7' ? 0 : 8 });
    }
    expect(channel.stats()).toMatchObject({ submitted: 3, accepted: 3, smsSent: 3 });
    // One receipt per PDU is awaited: the single receipt of each SMS gives its final status.
    await waitFor(() => rec.statuses.length === 3, 'a final status for each SMS');
    expect(rec.statuses.sort((a, b) => a.smsId.localeCompare(b.smsId))).toEqual([
      { smsId: 'req-1:0', status: 'DELIVERED', reason: null },
      { smsId: 'req-1:1', status: 'FAILED', reason: 'UNDELIV err:000' },
      { smsId: 'req-1:2', status: 'DELIVERED', reason: null },
    ]);
    // A one-part SMS stays in short_message.
    expect(await channel.sendSms(outgoingSms(7, 'short'))).toEqual({ status: 'sent' });
    expect(smsc.accepted.at(-1)).toMatchObject({ text: 'short', payload: undefined });
  });

  it("'payload' in the server: the SMS and its DLR keep the parts the contract counted", async () => {
    const smsc = await startFakeSmsc({ autoReceipt: () => 'DELIVRD' });
    cleanup.push(() => smsc.close());
    const smpp = createSmppChannel({ ...base, port: smsc.port, concatenation: 'payload' });
    const s = await startServer({ channel: composeChannels({ messages: fastChannel(), sms: smpp }) });
    cleanup.push(() => s.server.close());
    const receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    cleanup.push(() => receiver.close());
    const message = 'x'.repeat(500);
    const parts = smsSize(message).parts;
    const res = await api(s.url, '/sms/messages/', { body: [{ message, phone: '5511987654320', reference: 'r', url_callback_dlr: `${receiver.url}/dlr` }] });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ accepted: 1, parts });
    await waitFor(() => receiver.all('/dlr').length === 2, 'SENT and DELIVERED');
    expect(smsc.accepted).toHaveLength(1);
    expect(
      receiver
        .all('/dlr')
        .map((d) => [d.status, d.parts])
        .sort(),
    ).toEqual([
      ['DELIVERED', parts],
      ['SENT', parts],
    ]);
  });

  it('anything but udh, sar or payload is named', () => {
    expect(() => createSmppChannel({ ...base, concatenation: 'UDH' as 'udh' })).toThrow(`smpp.concatenation: expected 'udh', 'sar' or 'payload', got "UDH"`);
  });
});
