/**
 * The PDUs the SMPP channel reads and answers itself (smpp-frames.ts), held to the `smpp`
 * package's own encoder and decoder: what the package writes, sendpool reads the same way the
 * package would; what sendpool answers, the package reads as meant.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gsm7Octets, ucs2Octets } from '../../src/server/channels/smpp-codec.js';
import { CMD, decodeInboundSm, encodeHeaderOnly, encodeInboundResp, MAX_PDU_LENGTH, PduFramer, SmppFrameError, submitSmRespMessageId } from '../../src/server/channels/smpp-frames.js';
import { loadSmpp, type SmppPdu } from '../../src/server/channels/smpp-package.js';

const smpp = await loadSmpp();

const GSM_TEXT = fc.string({ unit: fc.constantFrom(...'@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCZÄÖÑÜ§¿abcxyzäöñüà^{}\\[~]|€'), maxLength: 120 });
const UCS2_TEXT = fc.string({ unit: fc.integer({ min: 0x20, max: 0xd7ff }).map((c) => String.fromCharCode(c)), maxLength: 60 });
const LATIN1_TEXT = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 120 });

/** A message in one of the codings the channel reads, as octets, with the text they carry. */
const message = fc.oneof(
  GSM_TEXT.map((text) => ({ dataCoding: 0, text, octets: gsm7Octets(text) })),
  UCS2_TEXT.map((text) => ({ dataCoding: 8, text, octets: ucs2Octets(text) })),
  LATIN1_TEXT.map((text) => ({ dataCoding: 3, text, octets: Buffer.from(text, 'latin1') })),
);

const inbound = fc.record({
  command: fc.constantFrom('deliver_sm', 'data_sm'),
  sequence: fc.integer({ min: 1, max: 0x7fffffff }),
  sourceAddr: fc.stringMatching(/^[0-9A-Za-z]{0,20}$/),
  esmType: fc.constantFrom(0x00, 0x04, 0x08, 0x20),
  message,
  /** Where the text goes: short_message, or message_payload (short_message empty, as SMSCs do for long texts). */
  inPayload: fc.boolean(),
  concat: fc.option(fc.tuple(fc.nat(255), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 9 })), { nil: undefined }),
  receiptedMessageId: fc.option(fc.stringMatching(/^[0-9a-f]{1,20}$/), { nil: undefined }),
  messageState: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
});

/** The text and UDH the package reads from a PDU it decoded, by the rule the channel follows. */
function packageView(pdu: SmppPdu) {
  const textOf = (m: unknown) => (typeof m === 'string' ? m : m instanceof Uint8Array ? Buffer.from(m).toString('latin1') : '');
  const content = pdu['short_message'] as { message?: unknown; udh?: Uint8Array[] } | undefined;
  const payload = pdu['message_payload'] as { message?: unknown; udh?: Uint8Array[] } | undefined;
  const body = content?.message !== undefined && textOf(content.message) !== '' ? content : (payload ?? content);
  return {
    text: textOf(body?.message),
    udh: body?.udh?.map((e) => [...e]),
    sourceAddr: pdu['source_addr'],
    receiptedMessageId: pdu['receipted_message_id'],
    messageState: pdu['message_state'],
  };
}

describe('decodeInboundSm', () => {
  it('reads every deliver_sm and data_sm the package writes as the package reads it: text by data_coding, UDH, source, receipt TLVs', () => {
    fc.assert(
      fc.property(inbound, (m) => {
        const udh = m.concat ? Buffer.from([0x05, 0x00, 0x03, ...m.concat]) : undefined;
        const octets = udh ? Buffer.concat([udh, m.message.octets]) : m.message.octets;
        const fields: Record<string, unknown> = {
          sequence_number: m.sequence,
          source_addr: m.sourceAddr,
          destination_addr: 'SENDPOOL',
          esm_class: m.esmType | (udh ? 0x40 : 0),
          data_coding: m.message.dataCoding,
          ...(m.receiptedMessageId === undefined ? {} : { receipted_message_id: m.receiptedMessageId }),
          ...(m.messageState === undefined ? {} : { message_state: m.messageState }),
        };
        if (m.command === 'data_sm' || m.inPayload) fields['message_payload'] = octets;
        else fields['short_message'] = octets;
        const frame = new smpp.PDU(m.command, fields).toBuffer();
        const mine = decodeInboundSm(frame);
        const theirs = packageView(new smpp.PDU(frame as unknown as string));
        expect(mine.command).toBe(m.command);
        expect(mine.sequence).toBe(m.sequence);
        expect(mine.esmClass).toBe(fields['esm_class']);
        expect(mine.dataCoding).toBe(m.message.dataCoding);
        expect(mine.text).toBe(m.message.text);
        expect(mine.text).toBe(theirs.text);
        expect(mine.udh?.map((e) => [...e])).toEqual(theirs.udh);
        expect(mine.sourceAddr).toBe(theirs.sourceAddr);
        expect(mine.receiptedMessageId).toBe(theirs.receiptedMessageId);
        expect(mine.messageState).toBe(theirs.messageState);
      }),
    );
  });

  it('reads a PDU cut short as the package does: missing fields empty, no text', () => {
    const full = new smpp.PDU('deliver_sm', { source_addr: '5511999990000', short_message: Buffer.from('hello') }).toBuffer();
    const cut = Buffer.from(full.subarray(0, 20));
    cut.writeUInt32BE(20, 0);
    // Header (16), service_type (1), ton and npi (2): one octet of source_addr is left.
    const pdu = decodeInboundSm(cut);
    expect(pdu).toMatchObject({ command: 'deliver_sm', sourceAddr: '5', text: '', udh: undefined, receiptedMessageId: undefined });
    expect(packageView(new smpp.PDU(cut as unknown as string))).toMatchObject({ sourceAddr: '5', text: '' });
  });
});

describe('answers and submit_sm_resp', () => {
  it('deliver_sm_resp and data_sm_resp read by the package: command, status, sequence; a refusal has no body', () => {
    for (const [request, command] of [
      [CMD.DELIVER_SM, 'deliver_sm_resp'],
      [CMD.DATA_SM, 'data_sm_resp'],
    ] as const) {
      const ok = new smpp.PDU(encodeInboundResp(request, 0, 77) as unknown as string);
      expect([ok.command, ok.command_status, ok.sequence_number, ok['message_id']]).toEqual([command, 0, 77, '']);
      const refused = encodeInboundResp(request, 0x64, 78);
      expect(refused.length).toBe(16);
      const read = new smpp.PDU(refused as unknown as string);
      expect([read.command, read.command_status, read.sequence_number]).toEqual([command, 0x64, 78]);
    }
    const nack = new smpp.PDU(encodeHeaderOnly(CMD.GENERIC_NACK, 0x03, 9) as unknown as string);
    expect([nack.command, nack.command_status, nack.sequence_number]).toEqual(['generic_nack', 0x03, 9]);
  });

  it('the message id of a submit_sm_resp the package writes; empty when refused without body', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9A-Za-z-]{0,64}$/), (id) => {
        expect(submitSmRespMessageId(new smpp.PDU('submit_sm_resp', { message_id: id }).toBuffer())).toBe(id);
      }),
    );
    expect(submitSmRespMessageId(new smpp.PDU('submit_sm_resp', { command_status: 0x45 }).toBuffer())).toBe('');
  });
});

describe('PduFramer', () => {
  it('cuts a stream into the PDUs written, however it is split into reads', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 20 }), fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 40 }), (bodies, cuts) => {
        const pdus = bodies.map((n, i) => {
          const b = Buffer.alloc(16 + n, i & 0xff);
          b.writeUInt32BE(16 + n, 0);
          b.writeUInt32BE(i, 12);
          return b;
        });
        const stream = Buffer.concat(pdus);
        const framer = new PduFramer();
        const frames: Buffer[] = [];
        let at = 0;
        for (const cut of [...cuts, stream.length]) {
          const end = Math.min(stream.length, at + cut);
          // Copied frames: each is valid during its call only.
          framer.push(stream.subarray(at, end), (f) => frames.push(Buffer.from(f)));
          at = end;
          if (at === stream.length) break;
        }
        expect(frames).toEqual(pdus);
        expect(framer.pendingLength).toBe(0);
      }),
    );
  });

  it('a command_length that cannot be is an error (the stream is out of step)', () => {
    const framer = new PduFramer();
    const short = Buffer.alloc(16);
    short.writeUInt32BE(15, 0);
    expect(() => framer.push(short, () => undefined)).toThrow(SmppFrameError);
    const long = Buffer.alloc(16);
    long.writeUInt32BE(MAX_PDU_LENGTH + 1, 0);
    expect(() => new PduFramer().push(long, () => undefined)).toThrow(/command_length 16385: expected 16 to 16384/);
  });
});
