/**
 * The octets of an SMS over SMPP: each part's `short_message` with the encoding the contract
 * computed and, for a long text, the concatenation header (UDH) the handset joins the parts with.
 * Pure: no I/O, no package.
 *
 * - GSM-7 goes as `data_coding` 0 (the SMSC's default alphabet, GSM 03.38), one octet per septet
 *   (unpacked: the SMSC packs it for the air); an extension character is the escape 0x1B and its
 *   code, as the contract counts it (two septets).
 * - UCS-2 goes as `data_coding` 8, UTF-16 big-endian.
 * - GSM-7 with `gsm7DataCoding` 1 goes as `data_coding` 1 (IA5): ASCII octets, one per character
 *   (an extension character too); a GSM-7 character outside ASCII cannot be sent that way.
 * - A text of more than one part (`concatenation`):
 *   - `'udh'`: each part starts with the 6-octet UDH `05 00 03 ref total seq` (8-bit reference),
 *     with `esm_class` UDHI (0x40). That header costs 7 septets in GSM-7 and 6 octets in UCS-2,
 *     which is why the contract allows 153 septets and 67 units per part. A 16-bit reference would
 *     take one more octet and break those counts.
 *   - `'sar'`: the same parts without a header, `esm_class` 0, and after `short_message` the TLVs
 *     `sar_msg_ref_num` (16-bit reference), `sar_total_segments`, `sar_segment_seqnum` (SMPP 3.4,
 *     5.3.2.22–24).
 *   - `'payload'`: one `submit_sm` for the whole text, `sm_length` 0 and the octets in the TLV
 *     `message_payload` (5.3.2.32); the SMSC cuts it.
 */
import { smsPartTexts, type SmsEncoding } from '../../contract/sms-encoding.js';

/** GSM 03.38 default alphabet by code (0x1B, the escape, is not a character). */
const GSM7_TABLE = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** GSM 03.38 extension table: character → code after the escape. */
const GSM7_EXTENSION: ReadonlyArray<readonly [string, number]> = [
  ['\f', 0x0a],
  ['^', 0x14],
  ['{', 0x28],
  ['}', 0x29],
  ['\\', 0x2f],
  ['[', 0x3c],
  ['~', 0x3d],
  [']', 0x3e],
  ['|', 0x40],
  ['€', 0x65],
];
export const GSM7_ESCAPE = 0x1b;

const BASIC_CODE = new Map<string, number>();
for (let code = 0; code < GSM7_TABLE.length; code++) if (code !== GSM7_ESCAPE) BASIC_CODE.set(GSM7_TABLE[code]!, code);
const EXTENSION_CODE = new Map(GSM7_EXTENSION);
const BASIC_CHAR = [...GSM7_TABLE];
const EXTENSION_CHAR = new Map(GSM7_EXTENSION.map(([c, code]) => [code, c]));

/** `data_coding` values (SMPP 3.4, 5.2.19). */
export const DATA_CODING = { 'GSM-7': 0x00, 'UCS-2': 0x08 } as const satisfies Record<SmsEncoding, number>;
/** `data_coding` 1: IA5 (CCITT T.50) / ASCII (ANSI X3.4), what `gsm7DataCoding: 1` announces. */
export const DATA_CODING_IA5 = 0x01;
/** `esm_class` with the UDH indicator (5.2.12). */
export const ESM_CLASS_UDHI = 0x40;

const ENCODING = Symbol.for('sendpool.SmsEncodingError');

/** A character the SMS's alphabet lacks: the SMS fails (its reason is the message), nothing was sent. */
export class SmsEncodingError extends Error {
  readonly [ENCODING] = true;
  /** The alphabet: GSM 03.38, or IA5 (ASCII) for `gsm7DataCoding: 1`. */
  readonly alphabet: 'GSM-7' | 'IA5';
  /** The character. */
  readonly char: string;

  constructor(alphabet: 'GSM-7' | 'IA5', char: string) {
    const shown = `${JSON.stringify(char)} (U+${char.codePointAt(0)!.toString(16).toUpperCase()})`;
    super(alphabet === 'GSM-7' ? `gsm7Octets: expected a GSM 03.38 character, got ${shown}` : `IA5 (gsm7DataCoding 1): ${shown} has no ASCII code`);
    this.name = 'SmsEncodingError';
    this.alphabet = alphabet;
    this.char = char;
  }
}

/** True when `e` is a {@link SmsEncodingError}, from this copy of sendpool or another. */
export function isSmsEncodingError(e: unknown): e is SmsEncodingError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[ENCODING] === true;
}

/** GSM-7 text as unpacked septets (one octet each); throws {@link SmsEncodingError} on a character outside GSM 03.38. */
export function gsm7Octets(text: string): Buffer {
  const out: number[] = [];
  for (const char of text) {
    const basic = BASIC_CODE.get(char);
    if (basic !== undefined) {
      out.push(basic);
      continue;
    }
    const ext = EXTENSION_CODE.get(char);
    if (ext === undefined) throw new SmsEncodingError('GSM-7', char);
    out.push(GSM7_ESCAPE, ext);
  }
  return Buffer.from(out);
}

/** Unpacked GSM-7 octets back to text (an unknown code reads as a space). */
export function gsm7Text(octets: Uint8Array): string {
  let text = '';
  for (let i = 0; i < octets.length; i++) {
    const code = octets[i]!;
    if (code === GSM7_ESCAPE && i + 1 < octets.length) {
      text += EXTENSION_CHAR.get(octets[++i]!) ?? ' ';
    } else text += BASIC_CHAR[code] ?? ' ';
  }
  return text;
}

/**
 * IA5 (ASCII) octets of a GSM-7 text, one per character; throws {@link SmsEncodingError} on a character outside ASCII (the
 * GSM 03.38 letters IA5 lacks: `é`, `£`, `Δ`, `€`…).
 */
export function ia5Octets(text: string): Buffer {
  for (const char of text) {
    if (!BASIC_CODE.has(char) && !EXTENSION_CODE.has(char)) gsm7Octets(char); // throws: not GSM 03.38
    if (char.charCodeAt(0) > 0x7f) throw new SmsEncodingError('IA5', char);
  }
  return Buffer.from(text, 'latin1');
}

/** UCS-2 (UTF-16 big-endian) octets of a text. */
export function ucs2Octets(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

/** UTF-16 big-endian octets back to text. */
export function ucs2Text(octets: Uint8Array): string {
  const copy = Buffer.from(octets.subarray(0, octets.length - (octets.length % 2)));
  return copy.swap16().toString('utf16le');
}

/** The concatenation UDH of part `seq` (1-based) of `total`, 8-bit reference. */
export function concatUdh(ref: number, total: number, seq: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, ref & 0xff, total, seq]);
}

/** TLV tags of `submit_sm` sendpool writes (SMPP 3.4, 5.3.2). */
export const TLV = { SAR_MSG_REF_NUM: 0x020c, SAR_TOTAL_SEGMENTS: 0x020e, SAR_SEGMENT_SEQNUM: 0x020f, MESSAGE_PAYLOAD: 0x0424 } as const;

/** One TLV: tag (2 octets), length (2 octets), value. */
export function tlv(tag: number, value: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(4 + value.length);
  b.writeUInt16BE(tag, 0);
  b.writeUInt16BE(value.length, 2);
  b.set(value, 4);
  return b;
}

/** The SAR TLVs of part `seq` (1-based) of `total`: 16-bit reference, 1-octet count and place. */
export function sarTlvs(ref: number, total: number, seq: number): Buffer {
  const b = Buffer.allocUnsafe(6 + 5 + 5);
  b.writeUInt16BE(TLV.SAR_MSG_REF_NUM, 0);
  b.writeUInt16BE(2, 2);
  b.writeUInt16BE(ref & 0xffff, 4);
  b.writeUInt16BE(TLV.SAR_TOTAL_SEGMENTS, 6);
  b.writeUInt16BE(1, 8);
  b[10] = total;
  b.writeUInt16BE(TLV.SAR_SEGMENT_SEQNUM, 11);
  b.writeUInt16BE(1, 13);
  b[15] = seq;
  return b;
}

/** How a long SMS goes: a UDH in each part, SAR TLVs on each part, or one PDU with `message_payload`. */
export type Concatenation = 'udh' | 'sar' | 'payload';

/** Options of {@link submitParts}. */
export interface SubmitPartsOptions {
  /** `data_coding` of a GSM-7 text: 0 (GSM 03.38 octets) or 1 (IA5, ASCII octets). @default 0 */
  readonly gsm7DataCoding?: 0 | 1;
  /** @default 'udh' */
  readonly concatenation?: Concatenation;
}

/** The fields of the `submit_sm` PDUs of one SMS (besides the addresses). */
export interface SubmitParts {
  readonly dataCoding: number;
  readonly esmClass: number;
  /**
   * `short_message` of each PDU, in order: one per part, or a single empty one with `'payload'`
   * (the number of PDUs, and of receipts to await, is its length).
   */
  readonly shortMessages: readonly Buffer[];
  /** TLV octets written after each PDU's `short_message` (as many as `shortMessages`), when any. */
  readonly tlvs?: readonly Buffer[];
}

/**
 * The PDUs of an SMS: with `'udh'` and `'sar'` exactly `parts` of them, cut by the contract's rule;
 * with `'payload'` one for a text of several parts. `{ error }` when the text does not give the
 * parts the contract reported (a text changed after it was counted) or has none, or has more than
 * 255 (a UDH or `sar_total_segments` counts to 255), or a character its alphabet lacks. `ref` is
 * the SMS's reference: its low 8 bits go in a UDH, its low 16 bits in `sar_msg_ref_num`.
 */
export function submitParts(text: string, encoding: SmsEncoding, parts: number, ref: number, options: SubmitPartsOptions = {}): SubmitParts | { readonly error: string } {
  const texts = smsPartTexts(text, encoding);
  if (texts.length !== parts) return { error: `the text makes ${texts.length} ${encoding} part(s), the contract counted ${parts}` };
  if (parts === 0) return { error: 'empty message' };
  if (parts > 255) return { error: `${parts} parts: at most 255 fit a concatenation header` };
  const ia5 = encoding === 'GSM-7' && options.gsm7DataCoding === DATA_CODING_IA5;
  const encode = encoding === 'UCS-2' ? ucs2Octets : ia5 ? ia5Octets : gsm7Octets;
  const dataCoding = ia5 ? DATA_CODING_IA5 : DATA_CODING[encoding];
  let octets: Buffer[];
  try {
    octets = texts.map(encode);
  } catch (e) {
    if (!isSmsEncodingError(e)) throw e;
    return { error: e.message };
  }
  if (parts === 1) return { dataCoding, esmClass: 0, shortMessages: octets };
  switch (options.concatenation ?? 'udh') {
    case 'sar':
      return { dataCoding, esmClass: 0, shortMessages: octets, tlvs: octets.map((_, i) => sarTlvs(ref, parts, i + 1)) };
    case 'payload':
      return { dataCoding, esmClass: 0, shortMessages: [Buffer.alloc(0)], tlvs: [tlv(TLV.MESSAGE_PAYLOAD, Buffer.concat(octets))] };
    default:
      return { dataCoding, esmClass: ESM_CLASS_UDHI, shortMessages: octets.map((o, i) => Buffer.concat([concatUdh(ref, parts, i + 1), o])) };
  }
}

/** Where a part of a concatenated message sits: reference, parts in all, its 1-based place. */
export interface ConcatInfo {
  readonly ref: number;
  readonly total: number;
  readonly seq: number;
}

/**
 * The concatenation information element among a UDH's elements (each `[iei, length, ...data]`, as
 * the smpp package decodes them): 8-bit (IEI 0) or 16-bit (IEI 8) reference.
 */
export function concatInfo(elements: readonly Uint8Array[]): ConcatInfo | undefined {
  for (const e of elements) {
    if (e[0] === 0x00 && e[1] === 3 && e.length >= 5) return { ref: e[2]!, total: e[3]!, seq: e[4]! };
    if (e[0] === 0x08 && e[1] === 4 && e.length >= 6) return { ref: (e[2]! << 8) | e[3]!, total: e[4]!, seq: e[5]! };
  }
  return undefined;
}

/** The fields of one `submit_sm` (SMPP 3.4, 4.4.1) sendpool sets; the others are 0 or empty. */
export interface SubmitSmFields {
  readonly sourceAddrTon: number;
  readonly sourceAddrNpi: number;
  readonly sourceAddr: string;
  readonly destAddrTon: number;
  readonly destAddrNpi: number;
  readonly destinationAddr: string;
  readonly esmClass: number;
  readonly registeredDelivery: number;
  readonly dataCoding: number;
  /**
   * `validity_period`: 16 characters (an SMPP time, {@link smppRelativeTime}) or '' for the SMSC's
   * default. Rewritten in place before each try by {@link writeValidityPeriod}.
   */
  readonly validityPeriod: string;
  readonly shortMessage: Uint8Array;
  /** TLVs after `short_message` (already encoded: {@link sarTlvs}, {@link tlv}). @default none */
  readonly tlvs?: Uint8Array;
}

/** Length of an SMPP time (SMPP 3.4, 7.1.1), without its terminating NUL. */
export const SMPP_TIME_LENGTH = 16;
/** Longest relative time {@link smppRelativeTime} writes: 99 days (two digits of days). */
export const MAX_RELATIVE_MS = 99 * 86_400_000;

/**
 * A relative SMPP time (SMPP 3.4, 7.1.1.2, `YYMMDDhhmmss000R`): `ms` from now, in whole seconds
 * (at least one), as days, hours, minutes and seconds. Relative rather than absolute so the
 * SMSC's clock and ours need not agree.
 */
export function smppRelativeTime(ms: number): string {
  let s = Math.max(1, Math.min(Math.floor(ms / 1000), MAX_RELATIVE_MS / 1000));
  const days = Math.floor(s / 86_400);
  s -= days * 86_400;
  const hours = Math.floor(s / 3_600);
  s -= hours * 3_600;
  const minutes = Math.floor(s / 60);
  s -= minutes * 60;
  const two = (n: number) => (n < 10 ? `0${n}` : String(n));
  return `0000${two(days)}${two(hours)}${two(minutes)}${two(s)}000R`;
}

export const SUBMIT_SM = 0x00000004;
const HEADER = 16;

/**
 * A whole `submit_sm` PDU (header and body, then its TLVs) with sequence number 0: the channel writes the
 * sequence number into octets 12–15 when it sends it. Built once per part, because the smpp
 * package's generic encoder cost more CPU than the rest of a send (docs/decisions.md).
 */
export function encodeSubmitSm(f: SubmitSmFields): Buffer {
  const source = Buffer.from(f.sourceAddr, 'latin1');
  const dest = Buffer.from(f.destinationAddr, 'latin1');
  // service_type(1) ton npi source\0 ton npi dest\0 esm pid prio sched(1) valid(1) reg replace dcs default_id sm_length
  const validity = f.validityPeriod.length === SMPP_TIME_LENGTH ? f.validityPeriod : '';
  const tlvs = f.tlvs?.length ?? 0;
  const length = HEADER + 1 + 2 + source.length + 1 + 2 + dest.length + 1 + 3 + 1 + validity.length + 1 + 5 + f.shortMessage.length + tlvs;
  const b = Buffer.allocUnsafe(length);
  b.writeUInt32BE(length, 0);
  b.writeUInt32BE(SUBMIT_SM, 4);
  b.writeUInt32BE(0, 8);
  b.writeUInt32BE(0, 12);
  let at = HEADER;
  b[at++] = 0; // service_type: SMSC default
  b[at++] = f.sourceAddrTon;
  b[at++] = f.sourceAddrNpi;
  at += source.copy(b, at);
  b[at++] = 0;
  b[at++] = f.destAddrTon;
  b[at++] = f.destAddrNpi;
  at += dest.copy(b, at);
  b[at++] = 0;
  b[at++] = f.esmClass;
  b[at++] = 0; // protocol_id
  b[at++] = 0; // priority_flag
  b[at++] = 0; // schedule_delivery_time: now
  at += b.write(validity, at, 'latin1'); // validity_period ('' : the SMSC's default)
  b[at++] = 0;
  b[at++] = f.registeredDelivery;
  b[at++] = 0; // replace_if_present_flag
  b[at++] = f.dataCoding;
  b[at++] = 0; // sm_default_msg_id
  b[at++] = f.shortMessage.length;
  b.set(f.shortMessage, at);
  if (f.tlvs) b.set(f.tlvs, at + f.shortMessage.length);
  return b;
}

/**
 * Writes `period` (16 characters) over the `validity_period` of a `submit_sm` built by
 * {@link encodeSubmitSm} with one: the time left changes between tries of the same part. False
 * (nothing written) when the PDU has none.
 */
export function writeValidityPeriod(pdu: Buffer, period: string): boolean {
  // service_type\0 ton npi source_addr\0 ton npi destination_addr\0 esm pid priority schedule\0 validity
  let at = pdu.indexOf(0, HEADER) + 3;
  at = pdu.indexOf(0, at) + 3;
  at = pdu.indexOf(0, at) + 4;
  at = pdu.indexOf(0, at) + 1;
  if (at <= 0 || pdu[at + SMPP_TIME_LENGTH] !== 0 || pdu[at] === 0) return false;
  pdu.write(period, at, SMPP_TIME_LENGTH, 'latin1');
  return true;
}
