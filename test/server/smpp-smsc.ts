/**
 * A local SMSC for the SMPP tests and the benchmark, on the `smpp` package's server side: binds
 * (one account), `submit_sm` answered with message ids, delivery receipts and replies (MO) on
 * demand, and faults on demand: throttling answers, answers held back, connections killed.
 */
import type { AddressInfo } from 'node:net';
import { smsSize } from '../../src/contract/sms-encoding.js';
import { createSmppChannel, type SmppChannel, type SmppChannelOptions, type SmppEvent } from '../../src/server/index.js';
import { loadSmpp, type SmppModule, type SmppPdu, type SmppServer, type SmppSession } from '../../src/server/channels/smpp-package.js';

/** A `submit_sm` as the SMSC read it. */
export interface Submit {
  readonly destination: string;
  readonly source: string;
  readonly sourceTon: number;
  readonly dataCoding: number;
  readonly esmClass: number;
  readonly registeredDelivery: number;
  /** Text of this part (decoded by the package from data_coding). */
  readonly text: string;
  /** Concatenation header, when the part has one: `[ref, total, seq]`. */
  readonly concat: readonly [number, number, number] | undefined;
  /** Octets of the short_message after the UDH. */
  readonly octets: number;
  /** SAR TLVs, when the part has them: `[sar_msg_ref_num, sar_total_segments, sar_segment_seqnum]`. */
  readonly sar: readonly [number, number, number] | undefined;
  /** Text of the TLV `message_payload` (decoded by the package from data_coding), when present. */
  readonly payload: string | undefined;
  /** Which connection (1, 2, …) it came on. */
  readonly connection: number;
  /** Milliseconds of validity its `validity_period` gave when read (undefined: none, the SMSC's default). */
  readonly validityMs: number | undefined;
  /** The message id it was answered with (ESME_ROK only). */
  messageId?: string;
}

export interface FakeSmscOptions {
  readonly systemId?: string;
  readonly password?: string;
  /** Send a receipt for each accepted part at once: the `stat:` word for a destination, or none. */
  readonly autoReceipt?: (submit: Submit) => string | undefined;
  /** Write ids in hex in submit_sm_resp and in decimal in receipts. */
  readonly hexIds?: boolean;
  /** Put `receipted_message_id` and `message_state` TLVs in receipts. @default false */
  readonly receiptTlvs?: boolean;
  /** Keep every submit in `received` and `accepted` (off for the benchmark: counts only). @default true */
  readonly record?: boolean;
  /**
   * Where receipts go: on the bind the submit came on when it receives (`'same'`, else another
   * that does), or on a receiving bind other than that one whenever there is one (`'other'`).
   * @default 'same'
   */
  readonly receiptsOn?: 'same' | 'other';
}

export interface FakeSmsc {
  readonly port: number;
  readonly binds: { systemId: string; password: string; ok: boolean; kind?: string; interfaceVersion?: number }[];
  /** Refuse every bind (ESME_RBINDFAIL) while set. */
  refuseBinds: boolean;
  /** Receipts sent, by the connection (1, 2, …) they went on. */
  readonly receiptsBy: Map<number, number>;
  /** An outage: every connection dropped and new ones closed at once until {@link up}. */
  down(): void;
  up(): void;
  /** `interface_version` of each bind read, in order. */
  readonly bindVersions: number[];
  /** Every submit_sm read, answered or not, in order. */
  readonly received: Submit[];
  /** Every submit_sm answered ESME_ROK, in order. */
  readonly accepted: Submit[];
  /** How many submit_sm were answered ESME_ROK (also with `record: false`). */
  acceptedCount: number;
  /** Submits read and not answered (held), on the current connections. */
  readonly held: Submit[];
  /** Most submits unanswered at once on one connection (the client's window). */
  maxUnanswered: number;
  /** deliver_sm_resp read. */
  deliverResps: number;
  /** `command_status` of each deliver_sm_resp read, in order. */
  readonly deliverRespStatuses: number[];
  /** enquire_link read. */
  enquiries: number;
  /** `command_status` of each generic_nack read, in order. */
  readonly nacks: number[];
  /** Writes raw octets on a bound connection (a PDU the package would not write, a broken one). */
  sendRaw(octets: Buffer): void;
  /** Answer the next `n` submits with `status` (ESME_RTHROTTLED by default). */
  throttleNext(n: number, status?: number): void;
  /** Answer the next `n` submits with `status` for good (a refusal). */
  refuseNext(n: number, status: number): void;
  /** Read submits but answer none until {@link release} (or a kill). */
  hold(): void;
  /** Answer the next `n` submits, then hold the ones after. */
  holdAfter(n: number): void;
  /** Answer the held submits and stop holding. */
  release(): void;
  /** Stop holding without answering what is held (a later connection is answered). */
  stopHolding(): void;
  /** Destroys every connection (held submits stay unanswered) and stops holding. */
  kill(): void;
  /** Asks every bound client to unbind (an SMSC going down for maintenance). */
  unbind(): void;
  /** Sends a receipt for a message id. */
  receipt(messageId: string, stat: string, err?: string): void;
  /** Sends a reply (MO) from `from`; with `concat`, as part `seq` of `total`. */
  mo(from: string, text: string, options?: { ucs2?: boolean; concat?: [ref: number, total: number, seq: number] }): void;
  readonly connections: number;
  close(): Promise<void>;
}

const ESME_RTHROTTLED = 0x58;
const ESME_RINVPASWD = 0x0e;
const ESME_RBINDFAIL = 0x0d;

export async function startFakeSmsc(options: FakeSmscOptions = {}): Promise<FakeSmsc> {
  const smpp: SmppModule = await loadSmpp();
  const systemId = options.systemId ?? 'sendpool';
  const password = options.password ?? 'secret1';
  const sessions = new Set<SmppSession>();
  const bound = new Set<SmppSession>();
  /** Bound sessions that may receive (transceivers and receivers), with their connection number. */
  const receiving = new Map<SmppSession, number>();
  let isDown = false;
  const heldPdus: { session: SmppSession; pdu: SmppPdu; submit: Submit }[] = [];
  let nextId = 100_000;
  let connectionSeq = 0;
  let throttle = { left: 0, status: ESME_RTHROTTLED };
  let refuse = { left: 0, status: 0 };
  let holding = false;
  let answerBeforeHold = Infinity;
  const record = options.record ?? true;

  const idText = (n: number) => (options.hexIds ? n.toString(16) : String(n));
  const receiptPdu = (messageId: string, stat: string, err = '000') => {
    const n = options.hexIds ? String(parseInt(messageId, 16)) : messageId;
    const fields: Record<string, unknown> = {
      source_addr: '',
      destination_addr: '',
      esm_class: 0x04,
      short_message: { message: `id:${n} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} submit date:2501011200 done date:2501011201 stat:${stat} err:${err} text:` },
    };
    if (options.receiptTlvs) {
      const states = ['SCHEDULED', 'ENROUTE', 'DELIVRD', 'EXPIRED', 'DELETED', 'UNDELIV', 'ACCEPTD', 'UNKNOWN', 'REJECTD', 'SKIPPED'];
      fields['receipted_message_id'] = n;
      fields['message_state'] = states.indexOf(stat);
    }
    return new smpp.PDU('deliver_sm', fields);
  };
  const anyBound = () => [...receiving.keys()].find((s) => s.socket.writable) ?? [...bound].find((s) => s.socket.writable);
  /** The session a receipt for a submit on `session` goes on. */
  const receiptSession = (session: SmppSession): SmppSession | undefined => {
    const others = [...receiving.keys()].filter((s) => s !== session && s.socket.writable);
    if (options.receiptsOn === 'other' && others.length > 0) return others[0];
    return receiving.has(session) ? session : others[0];
  };
  const sendReceipt = (session: SmppSession | undefined, pdu: SmppPdu) => {
    if (!session) return;
    const n = receiving.get(session) ?? 0;
    fake.receiptsBy.set(n, (fake.receiptsBy.get(n) ?? 0) + 1);
    session.send(pdu);
  };

  const answer = (session: SmppSession, pdu: SmppPdu, submit: Submit) => {
    if (!session.socket.writable) return;
    // The answers to the PDUs of one read go out in one write.
    const socket = session.socket;
    socket.cork();
    process.nextTick(() => socket.uncork());
    if (throttle.left > 0) {
      throttle.left--;
      session.send(pdu.response({ command_status: throttle.status }));
      return;
    }
    if (refuse.left > 0) {
      refuse.left--;
      session.send(pdu.response({ command_status: refuse.status }));
      return;
    }
    const id = idText(nextId++);
    submit.messageId = id;
    fake.acceptedCount++;
    if (record) fake.accepted.push(submit);
    session.send(pdu.response({ message_id: id }));
    const stat = options.autoReceipt?.(submit);
    if (stat !== undefined) sendReceipt(receiptSession(session), receiptPdu(id, stat));
  };

  const server: SmppServer = smpp.createServer((session) => {
    const connection = ++connectionSeq;
    if (isDown) {
      session.destroy();
      return;
    }
    sessions.add(session);
    session.socket.setNoDelay(true);
    session.on('error', () => undefined);
    session.on('close', () => {
      sessions.delete(session);
      bound.delete(session);
      receiving.delete(session);
      for (let i = heldPdus.length - 1; i >= 0; i--) if (heldPdus[i]!.session === session) heldPdus.splice(i, 1);
      fake.held.splice(0, fake.held.length, ...heldPdus.map((h) => h.submit));
    });
    const onBind = (kind: string) => (pdu: SmppPdu) => {
      const ok = pdu['system_id'] === systemId && pdu['password'] === password && !fake.refuseBinds;
      fake.binds.push({ systemId: String(pdu['system_id']), password: String(pdu['password']), ok, kind, interfaceVersion: pdu['interface_version'] as number });
      fake.bindVersions.push(pdu['interface_version'] as number);
      if (ok) {
        bound.add(session);
        if (kind !== 'transmitter') receiving.set(session, connection);
        session.send(pdu.response({ system_id: 'fake-smsc' }));
      } else session.send(pdu.response({ command_status: fake.refuseBinds ? ESME_RBINDFAIL : ESME_RINVPASWD }));
    };
    session.on('bind_transceiver', onBind('transceiver'));
    session.on('bind_transmitter', onBind('transmitter'));
    session.on('bind_receiver', onBind('receiver'));
    session.on('enquire_link', (pdu: SmppPdu) => {
      fake.enquiries++;
      session.send(pdu.response());
    });
    session.on('unbind', (pdu: SmppPdu) => {
      session.send(pdu.response());
      session.close();
    });
    session.on('generic_nack', (pdu: SmppPdu) => void fake.nacks.push(pdu.command_status));
    session.on('deliver_sm_resp', (pdu: SmppPdu) => {
      fake.deliverResps++;
      fake.deliverRespStatuses.push(pdu.command_status);
    });
    session.on('submit_sm', (pdu: SmppPdu) => {
      const sm = pdu['short_message'] as { message: string; udh?: Buffer[] };
      const udh = sm.udh?.find((e) => e[0] === 0x00);
      const submit: Submit = {
        destination: String(pdu['destination_addr']),
        source: String(pdu['source_addr']),
        sourceTon: pdu['source_addr_ton'] as number,
        dataCoding: pdu['data_coding'] as number,
        esmClass: pdu['esm_class'] as number,
        registeredDelivery: pdu['registered_delivery'] as number,
        text: sm.message,
        concat: udh ? [udh[2]!, udh[3]!, udh[4]!] : undefined,
        octets: (pdu['data_coding'] === 8 ? 2 : 1) * sm.message.length,
        sar: pdu['sar_msg_ref_num'] === undefined ? undefined : [pdu['sar_msg_ref_num'] as number, pdu['sar_total_segments'] as number, pdu['sar_segment_seqnum'] as number],
        payload: (pdu['message_payload'] as { message: string } | undefined)?.message,
        connection,
        validityMs: pdu['validity_period'] instanceof Date ? pdu['validity_period'].getTime() - Date.now() : undefined,
      };
      if (record) fake.received.push(submit);
      if (answerBeforeHold !== Infinity && answerBeforeHold-- <= 0) {
        answerBeforeHold = Infinity;
        holding = true;
      }
      if (holding) {
        heldPdus.push({ session, pdu, submit });
        fake.maxUnanswered = Math.max(fake.maxUnanswered, heldPdus.filter((h) => h.session === session).length);
        fake.held.push(submit);
        return;
      }
      fake.maxUnanswered = Math.max(fake.maxUnanswered, 1);
      answer(session, pdu, submit);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));

  const fake: FakeSmsc = {
    port: (server.address() as AddressInfo).port,
    binds: [],
    refuseBinds: false,
    receiptsBy: new Map(),
    bindVersions: [],
    received: [],
    accepted: [],
    acceptedCount: 0,
    held: [],
    maxUnanswered: 0,
    deliverResps: 0,
    deliverRespStatuses: [],
    enquiries: 0,
    nacks: [],
    sendRaw(octets) {
      anyBound()?.socket.write(octets);
    },
    get connections() {
      return connectionSeq;
    },
    throttleNext(n, status = ESME_RTHROTTLED) {
      throttle = { left: n, status };
    },
    refuseNext(n, status) {
      refuse = { left: n, status };
    },
    hold() {
      holding = true;
    },
    holdAfter(n) {
      answerBeforeHold = n;
    },
    stopHolding() {
      holding = false;
      answerBeforeHold = Infinity;
    },
    release() {
      holding = false;
      const held = heldPdus.splice(0);
      fake.held.splice(0);
      for (const h of held) answer(h.session, h.pdu, h.submit);
    },
    kill() {
      holding = false;
      answerBeforeHold = Infinity;
      for (const s of sessions) s.destroy();
    },
    down() {
      isDown = true;
      holding = false;
      answerBeforeHold = Infinity;
      for (const s of sessions) s.destroy();
    },
    up() {
      isDown = false;
    },
    unbind() {
      for (const s of bound) s.send(new smpp.PDU('unbind', {}));
    },
    receipt(messageId, stat, err) {
      sendReceipt(anyBound(), receiptPdu(messageId, stat, err));
    },
    mo(from, text, opts = {}) {
      const message: Record<string, unknown> = { message: text };
      if (opts.concat) message['udh'] = Buffer.from([0x05, 0x00, 0x03, ...opts.concat]);
      anyBound()?.send(
        new smpp.PDU('deliver_sm', {
          source_addr_ton: 1,
          source_addr_npi: 1,
          source_addr: from,
          destination_addr: 'SENDPOOL',
          esm_class: 0,
          ...(opts.ucs2 ? { data_coding: 8 } : {}),
          short_message: message,
        }),
      );
    },
    async close() {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

/** What a channel reported to its sink. */
export interface RecordedSink {
  readonly statuses: { smsId: string; status: string; reason?: string | null }[];
  readonly replies: { smsId: string; text: string }[];
  readonly sink: import('../../src/server/ports/channel.js').ChannelSink;
}

export function recordingSink(): RecordedSink {
  const statuses: RecordedSink['statuses'] = [];
  const replies: RecordedSink['replies'] = [];
  return {
    statuses,
    replies,
    sink: {
      messageStatus: () => undefined,
      attendanceClosed: () => undefined,
      smsStatus: (u) => void statuses.push({ smsId: u.smsId, status: u.status, reason: u.reason ?? null }),
      smsReply: (r) => void replies.push({ smsId: r.smsId, text: r.text }),
    },
  };
}

/** An SMS as the server hands it to the channel, with the contract's encoding and parts. */
export function outgoingSms(index: number, message: string, phone = `55119${String(70_000_000 + index).padStart(8, '0')}`): import('../../src/server/ports/channel.js').OutgoingSms {
  const size = smsSize(message);
  return { smsId: `req-1:${index}`, requestId: 'req-1', companyId: 1, index, phone, message, encoding: size.encoding, parts: size.parts, callbacks: {} };
}

/** Where a test registers what to close after it. */
export type Cleanup = (() => unknown)[];

/**
 * A local SMSC and an SMPP channel to it (fast reconnects, events recorded, a recording sink
 * attached), both registered in `cleanup`. Not waited for the bind: tests that need it call
 * `channel.whenBound()`.
 */
export async function smscAndChannel(
  cleanup: Cleanup,
  smscOptions: FakeSmscOptions = {},
  channelOptions: Partial<SmppChannelOptions> = {},
): Promise<{ smsc: FakeSmsc; channel: SmppChannel; events: SmppEvent[]; rec: RecordedSink }> {
  const smsc = await startFakeSmsc(smscOptions);
  cleanup.push(() => smsc.close());
  const events: SmppEvent[] = [];
  const channel = createSmppChannel({
    host: '127.0.0.1',
    port: smsc.port,
    systemId: 'sendpool',
    password: 'secret1',
    sourceAddr: 'SENDPOOL',
    reconnectBackoff: { minMs: 5, maxMs: 50 },
    onEvent: (e) => events.push(e),
    ...channelOptions,
  });
  cleanup.push(() => channel.close());
  const rec = recordingSink();
  channel.attach(rec.sink);
  return { smsc, channel, events, rec };
}
