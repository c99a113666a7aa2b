/** The octets of SMS parts over SMPP, and receipts read back (pure parts of the SMPP channel). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gsm7Septets, smsSize } from '../../src/contract/sms-encoding.js';
import { concatInfo, encodeSubmitSm, gsm7Octets, gsm7Text, submitParts, ucs2Octets, ucs2Text, smppRelativeTime, writeValidityPeriod } from '../../src/server/channels/smpp-codec.js';
import { loadSmpp } from '../../src/server/channels/smpp-package.js';
import { alternateIds, parseReceipt, receiptReason, RECEIPT_STATES } from '../../src/server/channels/smpp-receipt.js';

const GSM_SAMPLE = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCZÄÖÑÜ§¿abcxyzäöñüà^{}\\[~]|€\f';

describe('GSM-7 and UCS-2 octets', () => {
  it('every GSM-7 character of the contract encodes to as many octets as the septets it counts', () => {
    for (const c of GSM_SAMPLE) expect(gsm7Octets(c).length, JSON.stringify(c)).toBe(gsm7Septets(c));
    expect([...gsm7Octets('@A€')]).toEqual([0x00, 0x41, 0x1b, 0x65]);
    expect(() => gsm7Octets('ã')).toThrow(/expected a GSM 03.38 character, got "ã" \(U\+E3\)/);
    expect(() => gsm7Octets('ã')).toThrow(expect.objectContaining({ name: 'SmsEncodingError', alphabet: 'GSM-7', char: 'ã' }));
  });

  it('round-trips GSM-7 and UCS-2 texts', () => {
    expect(gsm7Text(gsm7Octets(GSM_SAMPLE))).toBe(GSM_SAMPLE);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...GSM_SAMPLE) }), (t) => {
        expect(gsm7Text(gsm7Octets(t))).toBe(t);
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (t) => {
        expect(ucs2Text(ucs2Octets(t))).toBe(t);
        expect(ucs2Octets(t).length).toBe(2 * t.length);
      }),
    );
  });
});

describe('submitParts', () => {
  it('one part: no UDH; several: a 6-octet UDH per part, UDHI set, octets within 140 (UCS-2) or 160 septets (GSM-7)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 1600, unit: fc.constantFrom('a', '€', 'ç', '😀', ' ') }), fc.nat(255), (text, ref) => {
        const size = smsSize(text);
        const built = submitParts(text, size.encoding, size.parts, ref);
        if ('error' in built) throw new Error(built.error);
        expect(built.shortMessages).toHaveLength(size.parts);
        expect(built.dataCoding).toBe(size.encoding === 'GSM-7' ? 0 : 8);
        expect(built.esmClass).toBe(size.parts > 1 ? 0x40 : 0);
        built.shortMessages.forEach((octets, i) => {
          if (size.parts > 1) expect([...octets.subarray(0, 6)]).toEqual([5, 0, 3, ref, size.parts, i + 1]);
          const body = size.parts > 1 ? octets.length - 6 : octets.length;
          const limit = size.encoding === 'GSM-7' ? (size.parts > 1 ? 153 : 160) : size.parts > 1 ? 134 : 140;
          expect(body).toBeLessThanOrEqual(limit);
        });
      }),
    );
  });

  it('refuses a count that is not the contract rule, an empty text, and more than 255 parts', () => {
    expect(submitParts('a'.repeat(161), 'GSM-7', 1, 0)).toEqual({ error: 'the text makes 2 GSM-7 part(s), the contract counted 1' });
    expect(submitParts('', 'GSM-7', 0, 0)).toEqual({ error: 'empty message' });
    expect(submitParts('ç'.repeat(67 * 256), 'UCS-2', 256, 0)).toEqual({ error: '256 parts: at most 255 fit a concatenation header' });
    expect(submitParts('aã', 'GSM-7', 1, 0)).toMatchObject({ error: expect.stringMatching(/GSM 03.38/) });
  });

  it('reads 8- and 16-bit concatenation elements', () => {
    expect(concatInfo([Uint8Array.from([0x00, 3, 9, 2, 1])])).toEqual({ ref: 9, total: 2, seq: 1 });
    expect(concatInfo([Uint8Array.from([0x0a, 1, 0]), Uint8Array.from([0x08, 4, 1, 2, 3, 3])])).toEqual({ ref: 258, total: 3, seq: 3 });
    expect(concatInfo([])).toBeUndefined();
  });
});

describe('encodeSubmitSm', () => {
  it('writes a submit_sm the smpp package reads back field by field', async () => {
    const smpp = await loadSmpp();
    const built = submitParts(`Olá ${'ç'.repeat(80)}`, 'UCS-2', 2, 42);
    if ('error' in built) throw new Error(built.error);
    const octets = encodeSubmitSm({
      sourceAddrTon: 5,
      sourceAddrNpi: 0,
      sourceAddr: 'SENDPOOL',
      destAddrTon: 1,
      destAddrNpi: 1,
      destinationAddr: '5511987654321',
      esmClass: built.esmClass,
      registeredDelivery: 1,
      dataCoding: built.dataCoding,
      validityPeriod: smppRelativeTime(3_600_000),
      shortMessage: built.shortMessages[1]!,
    });
    octets.writeUInt32BE(7, 12);
    // The time left is written again before a later try: 90 minutes 5 seconds now.
    expect(writeValidityPeriod(octets, smppRelativeTime(5_405_000))).toBe(true);
    const pdu = new (smpp.PDU as unknown as new (b: Buffer) => Record<string, unknown>)(octets);
    expect(pdu).toMatchObject({
      command: 'submit_sm',
      command_length: octets.length,
      sequence_number: 7,
      service_type: '',
      source_addr_ton: 5,
      source_addr_npi: 0,
      source_addr: 'SENDPOOL',
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      destination_addr: '5511987654321',
      esm_class: 0x40,
      protocol_id: 0,
      priority_flag: 0,
      registered_delivery: 1,
      data_coding: 8,
    });
    const sm = pdu['short_message'] as { udh: Buffer[]; message: string };
    expect([...sm.udh[0]!]).toEqual([0, 3, 42, 2, 2]);
    // The package reads a relative time as now plus it.
    const validUntil = (pdu['validity_period'] as Date).getTime() - Date.now();
    expect(validUntil).toBeGreaterThan(5_405_000 - 60_000);
    expect(validUntil).toBeLessThanOrEqual(5_405_000);
    expect(sm.message).toBe('ç'.repeat(17)); // 'Olá ' and 63 ç in part 1
  });
});

describe('smppRelativeTime', () => {
  it('writes days, hours, minutes and seconds of a relative time', () => {
    expect(smppRelativeTime(3_600_000)).toBe('000000010000000R');
    expect(smppRelativeTime(48 * 3_600_000 + 61_999)).toBe('000002000101000R');
    expect(smppRelativeTime(0)).toBe('000000000001000R'); // at least a second
    expect(smppRelativeTime(1e12)).toBe('000099000000000R'); // at most 99 days
  });

  it('is not written over a submit_sm that has no validity_period', () => {
    const octets = encodeSubmitSm({
      sourceAddrTon: 1,
      sourceAddrNpi: 1,
      sourceAddr: '123',
      destAddrTon: 1,
      destAddrNpi: 1,
      destinationAddr: '456',
      esmClass: 0,
      registeredDelivery: 0,
      dataCoding: 0,
      validityPeriod: '',
      shortMessage: Buffer.from('hi'),
    });
    expect(writeValidityPeriod(octets, smppRelativeTime(1000))).toBe(false);
    expect(octets.subarray(octets.length - 2).toString()).toBe('hi');
  });
});

describe('receipts', () => {
  const text = (stat: string, err = '000') => `id:0123456789 sub:001 dlvrd:001 submit date:2501011200 done date:2501011201 stat:${stat} err:${err} text:Hello`;

  it('maps every stat: of SMPP 3.4 Appendix B', () => {
    const table = Object.fromEntries(Object.entries(RECEIPT_STATES).map(([k, v]) => [k, v.final ? v.status : 'not final']));
    expect(table).toEqual({
      DELIVRD: 'DELIVERED',
      EXPIRED: 'EXPIRED',
      UNDELIV: 'FAILED',
      REJECTD: 'FAILED',
      DELETED: 'FAILED',
      UNKNOWN: 'FAILED',
      SKIPPED: 'FAILED',
      ENROUTE: 'not final',
      ACCEPTD: 'not final',
      SCHEDULED: 'not final',
    });
    for (const [stat, outcome] of Object.entries(RECEIPT_STATES)) expect(parseReceipt(text(stat))?.outcome).toEqual(outcome);
  });

  it('reads the id, stat and err; TLVs win over the text; an unknown state fails', () => {
    expect(parseReceipt(text('UNDELIV', '012'))).toEqual({ messageId: '0123456789', stat: 'UNDELIV', err: '012', outcome: { final: true, status: 'FAILED' } });
    expect(parseReceipt(text('DELIVRD'), { receiptedMessageId: 'abc', messageState: 5 })).toMatchObject({ messageId: 'abc', stat: 'UNDELIV' });
    expect(parseReceipt('id:7 stat:weird')).toMatchObject({ stat: 'WEIRD', outcome: { final: true, status: 'FAILED' } });
    expect(parseReceipt('no id here stat:DELIVRD')).toBeUndefined();
    expect(receiptReason(parseReceipt(text('DELIVRD'))!)).toBeNull();
    expect(receiptReason(parseReceipt('id:1 stat:EXPIRED')!)).toBe('EXPIRED');
  });

  it('other spellings of an id: decimal and hexadecimal', () => {
    expect(alternateIds('1000')).toEqual(['3e8', '3E8', '4096']);
    expect(alternateIds('3e8')).toEqual(['1000']);
    expect(alternateIds('msg-1')).toEqual([]);
  });
});
