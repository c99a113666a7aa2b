/**
 * The SMPP 3.4 PDUs the channel reads and answers itself, as octets: the framing of the byte
 * stream, the header, `submit_sm_resp`, `deliver_sm` and `data_sm` (receipts and replies), and the
 * answers to the SMSC's requests. Pure: no I/O, no package.
 *
 * Why not the `smpp` package's reader: it decodes every PDU field by field through generic tables
 * and its GSM 03.38 decoder rebuilds its index on every call; with a receipt per SMS that was a
 * fifth of a whole instance's CPU (docs/decisions.md, "SMPP: sendpool reads the PDUs"). The
 * package still encodes the PDUs that are rare (bind, `enquire_link`, `unbind`).
 *
 * Decoding is lenient as the package's is: a field past the end of the PDU reads as 0 or empty, a
 * C-string without its NUL ends with the PDU. Only a `command_length` that cannot be (below 16 or
 * above {@link MAX_PDU_LENGTH}) is an error, because the stream cannot be cut into PDUs after it.
 */
import { gsm7Text, ucs2Text } from './smpp-codec.js';

/** `command_id` values (SMPP 3.4, 5.1.2.1); a response is its request's id with bit 31 set. */
export const CMD = {
  GENERIC_NACK: 0x80000000,
  BIND_TRANSCEIVER: 0x00000009,
  BIND_TRANSCEIVER_RESP: 0x80000009,
  SUBMIT_SM: 0x00000004,
  SUBMIT_SM_RESP: 0x80000004,
  DELIVER_SM: 0x00000005,
  DELIVER_SM_RESP: 0x80000005,
  UNBIND: 0x00000006,
  UNBIND_RESP: 0x80000006,
  ENQUIRE_LINK: 0x00000015,
  ENQUIRE_LINK_RESP: 0x80000015,
  ALERT_NOTIFICATION: 0x00000102,
  DATA_SM: 0x00000103,
  DATA_SM_RESP: 0x80000103,
} as const;

/** ESME_RINVCMDID: the answer (`generic_nack`) to a request the channel does not take. */
export const ESME_RINVCMDID = 0x03;

export const HEADER_LENGTH = 16;
/** Longest PDU read (the package's limit too): a longer `command_length` is a stream out of step. */
export const MAX_PDU_LENGTH = 16_384;

const TLV_RECEIPTED_MESSAGE_ID = 0x001e;
const TLV_MESSAGE_PAYLOAD = 0x0424;
const TLV_MESSAGE_STATE = 0x0427;
const ESM_CLASS_UDHI = 0x40;

/** A PDU's header. */
export interface PduHeader {
  readonly length: number;
  readonly commandId: number;
  readonly status: number;
  readonly sequence: number;
}

export function readHeader(frame: Buffer): PduHeader {
  return { length: frame.readUInt32BE(0), commandId: frame.readUInt32BE(4), status: frame.readUInt32BE(8), sequence: frame.readUInt32BE(12) };
}

const FRAME_ERROR = Symbol.for('sendpool.SmppFrameError');

/** The stream is out of step: its connection must be dropped. */
export class SmppFrameError extends Error {
  readonly [FRAME_ERROR] = true;

  constructor(message: string) {
    super(message);
    this.name = 'SmppFrameError';
  }
}

/** True when `e` is a {@link SmppFrameError}, from this copy of sendpool or another. */
export function isSmppFrameError(e: unknown): e is SmppFrameError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[FRAME_ERROR] === true;
}

/**
 * Cuts a byte stream into whole PDUs. Each frame handed out is a view of the octets read; it is
 * valid during the call only (what is kept of it is copied by the decoders).
 */
export class PduFramer {
  #pending: Buffer | undefined;

  /** Adds octets read and hands out every PDU completed; throws {@link SmppFrameError} on a length that cannot be. */
  push(chunk: Buffer, onFrame: (frame: Buffer) => void): void {
    let buf = chunk;
    if (this.#pending) {
      buf = Buffer.concat([this.#pending, chunk]);
      this.#pending = undefined;
    }
    let at = 0;
    while (buf.length - at >= 4) {
      const length = buf.readUInt32BE(at);
      if (length < HEADER_LENGTH || length > MAX_PDU_LENGTH) throw new SmppFrameError(`command_length ${length}: expected ${HEADER_LENGTH} to ${MAX_PDU_LENGTH}`);
      if (buf.length - at < length) break;
      onFrame(buf.subarray(at, at + length));
      at += length;
    }
    // What is left starts a PDU: kept (copied, so the chunk it came in can go).
    if (at < buf.length) this.#pending = Buffer.from(buf.subarray(at));
  }

  /** Octets held of a PDU not complete yet. */
  get pendingLength(): number {
    return this.#pending?.length ?? 0;
  }
}

/** Reads fields in order; past the end of the PDU a field reads as 0 or empty (as the package does). */
class Cursor {
  at = HEADER_LENGTH;
  constructor(readonly frame: Buffer) {}
  get left(): number {
    return this.frame.length - this.at;
  }
  int8(): number {
    return this.at < this.frame.length ? this.frame[this.at++]! : 0;
  }
  cstring(): string {
    const f = this.frame;
    let end = this.at;
    while (end < f.length && f[end] !== 0) end++;
    const s = f.toString('latin1', this.at, end);
    this.at = Math.min(f.length, end + 1);
    return s;
  }
  octets(n: number): Buffer {
    const end = Math.min(this.frame.length, this.at + n);
    const b = this.frame.subarray(this.at, end);
    this.at = end;
    return b;
  }
}

/** `message_id` of a `submit_sm_resp` ('' when the body is absent, as it is on a refusal). */
export function submitSmRespMessageId(frame: Buffer): string {
  return new Cursor(frame).cstring();
}

/** What a `deliver_sm` or `data_sm` carries that the channel reads: a receipt or a reply. */
export interface InboundSm {
  readonly command: 'deliver_sm' | 'data_sm';
  readonly sequence: number;
  readonly esmClass: number;
  readonly dataCoding: number;
  readonly sourceAddr: string;
  /** Text of `short_message`, or of `message_payload` when `short_message` is empty. */
  readonly text: string;
  /** Information elements of the UDH (each `[iei, length, ...data]`), when the text had one. */
  readonly udh: readonly Uint8Array[] | undefined;
  /** TLV `receipted_message_id`, when present. */
  readonly receiptedMessageId: string | undefined;
  /** TLV `message_state`, when present. */
  readonly messageState: number | undefined;
}

/**
 * Text of a message's octets by `data_coding` (its low four bits, as the package reads them):
 * 0 (SMSC default) and 1 (IA5) as GSM 03.38 unpacked septets, 8 as UCS-2, anything else octet
 * by octet (Latin-1; 3 is Latin-1 by name, binary codings have no text).
 */
export function smsText(dataCoding: number, octets: Uint8Array): string {
  const coding = dataCoding & 0x0f;
  if (coding === 0 || coding === 1) return gsm7Text(octets);
  if (coding === 8) return ucs2Text(octets);
  return Buffer.from(octets.buffer, octets.byteOffset, octets.length).toString('latin1');
}

/** The UDH's information elements and the message after it (`octets` starts with UDHL). */
function splitUdh(octets: Buffer): { readonly udh: Uint8Array[]; readonly message: Buffer } {
  const udhl = octets[0]!;
  const end = Math.min(octets.length, udhl + 1);
  const udh: Uint8Array[] = [];
  let at = 1;
  while (at < end) {
    const size = (octets[at + 1] ?? 0) + 2;
    udh.push(Uint8Array.prototype.slice.call(octets, at, Math.min(end, at + size)));
    at += size;
  }
  return { udh, message: octets.subarray(end) };
}

/** Reads a `deliver_sm` (SMPP 3.4, 4.6.1) or `data_sm` (4.7.1). */
export function decodeInboundSm(frame: Buffer): InboundSm {
  const commandId = frame.readUInt32BE(4);
  const c = new Cursor(frame);
  const isData = commandId === CMD.DATA_SM;
  c.cstring(); // service_type
  c.int8(); // source_addr_ton
  c.int8(); // source_addr_npi
  const sourceAddr = c.cstring();
  c.int8(); // dest_addr_ton
  c.int8(); // dest_addr_npi
  c.cstring(); // destination_addr
  const esmClass = c.int8();
  let shortMessage: Buffer | undefined;
  let dataCoding: number;
  if (isData) {
    c.int8(); // registered_delivery
    dataCoding = c.int8();
  } else {
    c.int8(); // protocol_id
    c.int8(); // priority_flag
    c.cstring(); // schedule_delivery_time
    c.cstring(); // validity_period
    c.int8(); // registered_delivery
    c.int8(); // replace_if_present_flag
    dataCoding = c.int8();
    c.int8(); // sm_default_msg_id
    const smLength = c.int8();
    shortMessage = c.octets(smLength);
  }
  let receiptedMessageId: string | undefined;
  let messageState: number | undefined;
  let payload: Buffer | undefined;
  while (c.left >= 4) {
    const tag = frame.readUInt16BE(c.at);
    const length = frame.readUInt16BE(c.at + 2);
    c.at += 4;
    const value = c.octets(length);
    if (tag === TLV_RECEIPTED_MESSAGE_ID) {
      const nul = value.indexOf(0);
      receiptedMessageId = value.toString('latin1', 0, nul < 0 ? value.length : nul);
    } else if (tag === TLV_MESSAGE_STATE) {
      if (value.length > 0) messageState = value[0];
    } else if (tag === TLV_MESSAGE_PAYLOAD) payload = value;
  }
  // The text is short_message's; message_payload's only when short_message is empty (as the package reads them).
  const octets = shortMessage !== undefined && shortMessage.length > 0 ? shortMessage : (payload ?? shortMessage);
  let udh: Uint8Array[] | undefined;
  let message = octets ?? Buffer.alloc(0);
  if ((esmClass & ESM_CLASS_UDHI) !== 0 && message.length > 0) ({ udh, message } = splitUdh(message));
  return {
    command: isData ? 'data_sm' : 'deliver_sm',
    sequence: frame.readUInt32BE(12),
    esmClass,
    dataCoding,
    sourceAddr,
    text: smsText(dataCoding, message),
    udh,
    receiptedMessageId,
    messageState,
  };
}

/** A PDU of `length` octets with its header written (the body, if any, is the caller's to fill). */
function withHeader(length: number, commandId: number, status: number, sequence: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  b.writeUInt32BE(length, 0);
  b.writeUInt32BE(commandId, 4);
  b.writeUInt32BE(status, 8);
  b.writeUInt32BE(sequence, 12);
  return b;
}

/** A header-only PDU (a response without body, `enquire_link`, `unbind`, `generic_nack`). */
export function encodeHeaderOnly(commandId: number, status: number, sequence: number): Buffer {
  return withHeader(HEADER_LENGTH, commandId, status, sequence);
}

/**
 * The answer to a `deliver_sm` or `data_sm`: with an empty `message_id` when accepted (the field
 * is unused and NULL), header only on an error status, as a refused PDU has no body (5.1.3).
 */
export function encodeInboundResp(request: number, status: number, sequence: number): Buffer {
  const commandId = request === CMD.DATA_SM ? CMD.DATA_SM_RESP : CMD.DELIVER_SM_RESP;
  if (status !== 0) return encodeHeaderOnly(commandId, status, sequence);
  const b = withHeader(HEADER_LENGTH + 1, commandId, 0, sequence);
  b[HEADER_LENGTH] = 0;
  return b;
}
