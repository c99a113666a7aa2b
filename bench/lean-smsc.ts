/**
 * A lean local SMSC for the SMPP benchmark (not for the tests, which use the `smpp` package's server
 * side: test/server/smpp-smsc.ts). It takes one transceiver bind (any credentials), answers every
 * `submit_sm` with a message id and, with `receipts`, sends a DELIVRD receipt for it, and answers
 * `enquire_link` and `unbind`. It reads only the PDU headers and writes prebuilt octets, so the
 * benchmark measures the instance rather than the fake: the package's server decodes every
 * `submit_sm` field by field and cost more CPU than the instance it served (docs/benchmarks.md).
 *
 * Written apart from sendpool's own PDU code (src/server/channels/smpp-frames.ts) on purpose: a
 * fake that shared the instance's codec could not catch its mistakes.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';

/** A request's response id: bit 31 set (as an unsigned number). */
const resp = (commandId: number) => (commandId | 0x80000000) >>> 0;
const BIND_TRANSCEIVER = 0x09;
const SUBMIT_SM = 0x04;
const DELIVER_SM = 0x05;
const DELIVER_SM_RESP = 0x80000005;
const UNBIND = 0x06;
const ENQUIRE_LINK = 0x15;

export interface LeanSmsc {
  readonly port: number;
  /** `submit_sm` answered ESME_ROK. */
  readonly accepted: number;
  /** `deliver_sm_resp` read. */
  readonly deliverResps: number;
  close(): Promise<void>;
}

function pdu(commandId: number, status: number, sequence: number, body: Buffer | undefined): Buffer {
  const length = 16 + (body?.length ?? 0);
  const b = Buffer.allocUnsafe(length);
  b.writeUInt32BE(length, 0);
  b.writeUInt32BE(commandId, 4);
  b.writeUInt32BE(status, 8);
  b.writeUInt32BE(sequence, 12);
  body?.copy(b, 16);
  return b;
}

/** A `deliver_sm` receipt of message `id` (text form, esm_class 0x04, SMSC default alphabet). */
function receipt(id: string, sequence: number): Buffer {
  const text = Buffer.from(`id:${id} sub:001 dlvrd:001 submit date:2501011200 done date:2501011201 stat:DELIVRD err:000 text:`, 'latin1');
  // service_type\0, ton, npi, source\0, ton, npi, destination\0, esm_class, protocol_id, priority,
  // schedule\0, validity\0, registered_delivery, replace, data_coding, default_msg_id, sm_length, text
  const head = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, text.length]);
  return pdu(DELIVER_SM, 0, sequence, Buffer.concat([head, text]));
}

export async function startLeanSmsc(options: { readonly receipts: boolean }): Promise<LeanSmsc> {
  let accepted = 0;
  let deliverResps = 0;
  let nextId = 100_000;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    let pending: Buffer | undefined;
    let sequence = 0;
    socket.on('data', (chunk: Buffer) => {
      const buf = pending ? Buffer.concat([pending, chunk]) : chunk;
      pending = undefined;
      let at = 0;
      socket.cork();
      while (buf.length - at >= 16) {
        const length = buf.readUInt32BE(at);
        if (length < 16) return void socket.destroy();
        if (buf.length - at < length) break;
        const commandId = buf.readUInt32BE(at + 4);
        const seq = buf.readUInt32BE(at + 12);
        if (commandId === SUBMIT_SM) {
          const id = String(nextId++);
          accepted++;
          socket.write(pdu(resp(SUBMIT_SM), 0, seq, Buffer.from(`${id}\0`, 'latin1')));
          if (options.receipts) socket.write(receipt(id, (sequence = sequence >= 0x7fffffff ? 1 : sequence + 1)));
        } else if (commandId === DELIVER_SM_RESP) deliverResps++;
        else if (commandId === BIND_TRANSCEIVER) socket.write(pdu(resp(BIND_TRANSCEIVER), 0, seq, Buffer.from('lean-smsc\0', 'latin1')));
        else if (commandId === ENQUIRE_LINK) socket.write(pdu(resp(ENQUIRE_LINK), 0, seq, undefined));
        else if (commandId === UNBIND) {
          socket.write(pdu(resp(UNBIND), 0, seq, undefined));
          socket.end();
        }
        at += length;
      }
      process.nextTick(() => socket.uncork());
      if (at < buf.length) pending = Buffer.from(buf.subarray(at));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    get accepted() {
      return accepted;
    },
    get deliverResps() {
      return deliverResps;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
