/**
 * The ceiling of the SMPP benchmark (bench/smpp.bench.ts): a plain SMPP client, the least work any
 * client must do for the channel's traffic. It binds as a transceiver over a plain `net` socket and
 * sends the same `submit_sm` PDUs as sendpool's channel (the same fields and texts, built up front by
 * the channel's own encoder, smpp-codec.ts `encodeSubmitSm`, sequence numbers written in), at most
 * `window` unanswered, answers each `deliver_sm` with a `deliver_sm_resp`, and counts until every
 * SMS's `submit_sm_resp` (and receipt, when asked for) has come.
 *
 * What it does not do, and the channel does: build each PDU when it is handed an SMS, keep a job per
 * SMS and a promise, number and time each part, rewrite `validity_period`, read the message id,
 * parse each receipt's text and match it to its SMS, report the DLR. It reads only PDU headers and
 * writes whole runs of prebuilt octets: the ratio channel / plain is what sendpool's own work costs.
 */
import { connect, type Socket } from 'node:net';
import { encodeSubmitSm, gsm7Octets, smppRelativeTime } from '../src/server/channels/smpp-codec.js';

const BIND_TRANSCEIVER = 0x09;
const BIND_TRANSCEIVER_RESP = 0x80000009;
const SUBMIT_SM_RESP = 0x80000004;
const DELIVER_SM = 0x05;
const DELIVER_SM_RESP = 0x80000005;
const ENQUIRE_LINK = 0x15;
const ENQUIRE_LINK_RESP = 0x80000015;

/** The SMS of index `i`, as bench/smpp.bench.ts hands it to the channel. */
export const benchPhone = (i: number): string => `55119${String(i % 100_000_000).padStart(8, '0')}`;
export const benchText = (i: number): string => `Your code is ${100000 + (i % 900000)}`;

/** Prebuilt `submit_sm` PDUs in one buffer: PDU `k` is `octets[offsets[k]..offsets[k + 1]]`. */
export interface PduRun {
  readonly octets: Buffer;
  readonly offsets: Uint32Array;
  readonly count: number;
}

/**
 * `count` `submit_sm` of SMS `first`.., numbered from `firstSequence`, with the fields the channel
 * sets by default for `sourceAddr` 'SENDPOOL' (smpp-options.ts): source TON 5 / NPI 0, destination
 * TON 1 / NPI 1, GSM-7 (`data_coding` 0), one part, `registered_delivery` 1 with receipts, and the
 * validity the channel writes for an SMS handed to it just now (its default `validityMs`, 1 hour).
 */
export function buildSubmits(first: number, count: number, firstSequence: number, receipts: boolean): PduRun {
  const pdus: Buffer[] = [];
  const offsets = new Uint32Array(count + 1);
  let length = 0;
  for (let k = 0; k < count; k++) {
    const pdu = encodeSubmitSm({
      sourceAddrTon: 5,
      sourceAddrNpi: 0,
      sourceAddr: 'SENDPOOL',
      destAddrTon: 1,
      destAddrNpi: 1,
      destinationAddr: benchPhone(first + k),
      esmClass: 0,
      registeredDelivery: receipts ? 1 : 0,
      dataCoding: 0,
      validityPeriod: smppRelativeTime(3_600_000),
      shortMessage: gsm7Octets(benchText(first + k)),
    });
    pdu.writeUInt32BE(firstSequence + k, 12);
    pdus.push(pdu);
    offsets[k] = length;
    length += pdu.length;
  }
  offsets[count] = length;
  return { octets: Buffer.concat(pdus, length), offsets, count };
}

function header(commandId: number, status: number, sequence: number, bodyLength: number): Buffer {
  const b = Buffer.alloc(16 + bodyLength);
  b.writeUInt32BE(16 + bodyLength, 0);
  b.writeUInt32BE(commandId, 4);
  b.writeUInt32BE(status, 8);
  b.writeUInt32BE(sequence, 12);
  return b;
}

/** `bind_transceiver` (SMPP 3.4, 4.1.5): system_id, password, system_type '', version 0x34, TON/NPI 0, address_range ''. */
function bindTransceiver(systemId: string, password: string): Buffer {
  const body = Buffer.concat([Buffer.from(`${systemId}\0${password}\0\0`, 'latin1'), Buffer.from([0x34, 0, 0, 0])]);
  const b = header(BIND_TRANSCEIVER, 0, 1, body.length);
  body.copy(b, 16);
  return b;
}

/** A bound plain client. */
export interface PlainClient {
  /** Sends `run` with at most `window` unanswered; resolves once every answer (and receipt) came. */
  send(run: PduRun, window: number, receipts: boolean): Promise<void>;
  close(): void;
}

export async function connectPlainClient(port: number, systemId = 'sendpool', password = 'secret1'): Promise<PlainClient> {
  const socket: Socket = connect({ host: '127.0.0.1', port, noDelay: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  // One handler for the whole life of the socket; what it does with each PDU is `onPdu`.
  let pending: Buffer | undefined;
  let onPdu: (commandId: number, status: number, sequence: number) => void = () => undefined;
  let afterRead: () => void = () => undefined;
  let failed: (e: Error) => void = () => undefined;
  socket.on('error', (e) => failed(e));
  socket.on('close', () => failed(new Error('SMSC closed the connection')));
  socket.on('data', (chunk: Buffer) => {
    const buf = pending ? Buffer.concat([pending, chunk]) : chunk;
    pending = undefined;
    let at = 0;
    while (buf.length - at >= 16) {
      const length = buf.readUInt32BE(at);
      if (buf.length - at < length) break;
      onPdu(buf.readUInt32BE(at + 4), buf.readUInt32BE(at + 8), buf.readUInt32BE(at + 12));
      at += length;
    }
    if (at < buf.length) pending = Buffer.from(buf.subarray(at));
    afterRead();
  });
  await new Promise<void>((resolve, reject) => {
    failed = reject;
    onPdu = (commandId, status) => {
      if (commandId !== BIND_TRANSCEIVER_RESP) return;
      if (status === 0) resolve();
      else reject(new Error(`bind_transceiver answered status 0x${status.toString(16)}`));
    };
    socket.write(bindTransceiver(systemId, password));
  });

  return {
    send(run, window, receipts) {
      return new Promise<void>((resolve, reject) => {
        let sent = 0;
        let answered = 0;
        let received = 0;
        // Sequence numbers of the deliver_sm of one read: their deliver_sm_resp go out in one write,
        // with the next submits.
        const delivers: number[] = [];
        const others: Buffer[] = [];
        failed = reject;
        const fill = () => {
          const upTo = Math.min(run.count, answered + window);
          if (upTo > sent) {
            socket.write(run.octets.subarray(run.offsets[sent], run.offsets[upTo]));
            sent = upTo;
          }
        };
        onPdu = (commandId, status, sequence) => {
          if (commandId === SUBMIT_SM_RESP) {
            if (status !== 0) return reject(new Error(`submit_sm answered status 0x${status.toString(16)}`));
            answered++;
          } else if (commandId === DELIVER_SM) {
            received++;
            delivers.push(sequence);
          } else if (commandId === ENQUIRE_LINK) others.push(header(ENQUIRE_LINK_RESP, 0, sequence, 0));
        };
        afterRead = () => {
          socket.cork();
          if (delivers.length > 0) {
            // deliver_sm_resp: a header and an empty message_id (17 octets each).
            const b = Buffer.alloc(17 * delivers.length);
            for (let k = 0; k < delivers.length; k++) {
              b.writeUInt32BE(17, 17 * k);
              b.writeUInt32BE(DELIVER_SM_RESP, 17 * k + 4);
              b.writeUInt32BE(delivers[k]!, 17 * k + 12);
            }
            socket.write(b);
            delivers.length = 0;
          }
          for (const o of others) socket.write(o);
          others.length = 0;
          fill();
          socket.uncork();
          if (answered === run.count && (!receipts || received >= run.count)) {
            onPdu = () => undefined;
            afterRead = () => undefined;
            resolve();
          }
        };
        fill();
      });
    },
    close() {
      failed = () => undefined;
      socket.destroy();
    },
  };
}
