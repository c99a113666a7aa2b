/**
 * One bind of the SMPP channel's pool (smpp-pool.ts) to an SMSC account: a transceiver,
 * transmitter or receiver bind, its window of unanswered PDUs, `enquire_link` after `enquireLinkMs` of silence, and a drop when a PDU (or
 * the `enquire_link`) goes unanswered for `responseTimeoutMs`; connections are made again with
 * back-off and jitter. A dropped connection hands the PDUs it had unanswered back to the channel,
 * to go again after the next bind (at least once); a PDU the SMSC answered is never sent again.
 *
 * Separate from the channel (smpp-channel.ts) because the life of a connection (connect, bind,
 * keep alive, drop, reconnect) changes for reasons of its own; the channel only asks whether it is
 * bound, writes into the window, and is told when the link is bound again or lost.
 */
import { CMD, decodeInboundSm, encodeHeaderOnly, ESME_RINVCMDID, submitSmRespMessageId, type InboundSm } from './smpp-frames.js';
import { SmppConnection } from './smpp-connection.js';
import type { Part } from './smpp-queue.js';
import type { BackoffRange, ResolvedSmppOptions } from './smpp-options.js';
import type { ResolvedSmsc } from './smpp-smscs.js';
import type { SecureContext } from 'node:tls';
import { SMPP_STATUS, smppStatusText, type SmppModule } from './smpp-package.js';

/** The wait before attempt `attempt` of something refused again and again (reconnect, throttling). */
export const backoffMs = (range: BackoffRange, attempt: number) => Math.min(range.maxMs, range.minMs * 2 ** Math.min(attempt, 30));

/** The kind of bind: what it may carry (a transmitter sends only, a receiver receives only). */
export type SmppBindKind = 'transceiver' | 'transmitter' | 'receiver';

/** What the link tells the channel it belongs to. */
export interface SmppLinkHost {
  readonly options: ResolvedSmppOptions;
  /** The channel's counters the link keeps. */
  readonly counters: { binds: number; disconnects: number; resent: number };
  /** Bound (the first time or again): sending may go on. */
  bound(): void;
  /** The PDUs the dropped connection had unanswered, in the order they went: they go again first. */
  requeue(parts: Part[], reason: string): void;
  /** The SMSC answered a `submit_sm` of the window (`messageId` '' when it gave none). */
  submitAnswered(link: SmppLink, part: Part, status: number, messageId: string): void;
  /** A `deliver_sm` or `data_sm` came (a receipt or a reply). */
  deliver(link: SmppLink, connection: SmppConnection, pdu: InboundSm): void;
}

/** The channel's connection to the SMSC, made again whenever it drops until `close`. */
export class SmppLink {
  readonly #host: SmppLinkHost;
  readonly #o: ResolvedSmppOptions;
  /** The account it binds to. */
  readonly smsc: ResolvedSmsc;
  readonly kind: SmppBindKind;
  /** `<account name> <kind> <n>`, for events. */
  readonly label: string;
  readonly #address: string;
  #smpp: SmppModule | undefined;
  #closed = false;
  #connection: SmppConnection | undefined;
  #bound = false;
  /** The window: `submit_sm` written on this connection and not answered yet, by sequence number. */
  outstanding = new Map<number, Part>();
  #enquireSentAt = 0;
  #lastHeard = 0;
  /** The SMSC unbound this connection (its close is then no failure to connect). */
  #unbound = false;
  #reconnectAttempt = 0;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #bindTimer: NodeJS.Timeout | undefined;

  constructor(host: SmppLinkHost, smsc: ResolvedSmsc, kind: SmppBindKind, n: number) {
    this.#host = host;
    this.#o = host.options;
    this.smsc = smsc;
    this.kind = kind;
    this.label = `${smsc.name} ${kind} ${n}`;
    this.#address = `${smsc.host}:${smsc.port}`;
  }

  /** The connection now, bound or not (undefined between connections). */
  get connection(): SmppConnection | undefined {
    return this.#connection;
  }

  get bound(): boolean {
    return this.#bound;
  }

  /** Connects, with the `smpp` package loaded (it encodes the bind, `enquire_link` and `unbind`). */
  start(smpp: SmppModule): void {
    this.#smpp = smpp;
    this.#connect();
  }

  /** A request the package encodes, numbered on `connection`, its answer's status to `onAnswer`. */
  #request(connection: SmppConnection, command: string, fields: Record<string, unknown>, onAnswer: (status: number) => void): boolean {
    const sequence = connection.nextSequence();
    const pdu = new this.#smpp!.PDU(command, { ...fields, sequence_number: sequence });
    return connection.request(pdu.toBuffer(), sequence, onAnswer);
  }

  #connect(): void {
    if (this.#closed || !this.#smpp) return;
    const o = this.#o;
    this.outstanding = new Map();
    this.#enquireSentAt = 0;
    this.#unbound = false;
    const smsc = this.smsc;
    // The account's address; the TLS settings (files read once, withSmppTlsFiles) are the channel's.
    const tlsContext = (o as { readonly tlsContext?: SecureContext }).tlsContext;
    const address = { host: smsc.host, port: smsc.port, tls: smsc.tls, tlsRejectUnauthorized: o.tlsRejectUnauthorized, ...(tlsContext ? { tlsContext } : {}) };
    const connection: SmppConnection = new SmppConnection(address, {
      open: () => {
        // Closed while connecting: nothing to bind (an unbind must not precede a bind).
        if (this.#closed) return connection.destroy();
        this.#request(connection, `bind_${this.kind}`, { system_id: smsc.systemId, password: smsc.password, system_type: smsc.systemType, interface_version: o.interfaceVersion }, (status) =>
          this.#onBound(connection, status),
        );
      },
      frame: (frame) => this.#onFrame(connection, frame),
      closed: (reason) => this.#onClosed(connection, reason),
    });
    this.#connection = connection;
    this.#bindTimer = setTimeout(() => {
      if (this.#connection === connection && !this.#bound) this.drop(connection, `not bound within ${o.bindTimeoutMs} ms`);
    }, o.bindTimeoutMs);
  }

  /** One PDU read: the hot ones (`submit_sm_resp`, `deliver_sm`) first. */
  #onFrame(connection: SmppConnection, frame: Buffer): void {
    if (this.#connection !== connection) return;
    this.#lastHeard = Date.now();
    const commandId = frame.readUInt32BE(4);
    const status = frame.readUInt32BE(8);
    const sequence = frame.readUInt32BE(12);
    switch (commandId) {
      case CMD.SUBMIT_SM_RESP:
        this.#submitAnswered(sequence, status, status === 0 ? submitSmRespMessageId(frame) : '');
        return;
      case CMD.DELIVER_SM:
      case CMD.DATA_SM:
        this.#host.deliver(this, connection, decodeInboundSm(frame));
        return;
      case CMD.ENQUIRE_LINK:
        connection.answer(encodeHeaderOnly(CMD.ENQUIRE_LINK_RESP, 0, sequence));
        return;
      case CMD.UNBIND:
        // Nothing more goes on it; its close (when the SMSC ends it) binds again. An SMSC that
        // never closes its side is closed after `responseTimeoutMs`: its unanswered PDUs go again.
        this.#bound = false;
        this.#unbound = true;
        connection.answer(encodeHeaderOnly(CMD.UNBIND_RESP, 0, sequence));
        connection.end();
        setTimeout(() => this.drop(connection, 'unbound by the SMSC, its side never closed'), this.#o.responseTimeoutMs).unref();
        return;
      case CMD.GENERIC_NACK:
        // A nack names the PDU it refuses by number; a nack of status 0 still refuses it.
        if (this.outstanding.has(sequence)) this.#submitAnswered(sequence, status || ESME_RINVCMDID, '');
        else connection.answered(sequence, status || ESME_RINVCMDID);
        return;
      default:
        // Responses to the bind, `enquire_link` and `unbind`; a request the channel does not take is
        // refused (alert_notification has no response).
        if (commandId >= CMD.GENERIC_NACK) connection.answered(sequence, status);
        else if (commandId !== CMD.ALERT_NOTIFICATION) connection.answer(encodeHeaderOnly(CMD.GENERIC_NACK, ESME_RINVCMDID, sequence));
    }
  }

  #submitAnswered(sequence: number, status: number, messageId: string): void {
    const part = this.outstanding.get(sequence);
    if (!part) return;
    this.outstanding.delete(sequence);
    this.#host.submitAnswered(this, part, status, messageId);
  }

  #onBound(connection: SmppConnection, status: number): void {
    if (this.#connection !== connection) return;
    clearTimeout(this.#bindTimer);
    if (this.#closed) return connection.destroy();
    if (status !== SMPP_STATUS.ESME_ROK) {
      const reason = smppStatusText(status);
      this.#o.onEvent?.({ type: 'bind-failed', address: this.#address, bind: this.label, reason });
      this.drop(connection, `bind refused: ${reason}`);
      return;
    }
    this.#bound = true;
    this.#reconnectAttempt = 0;
    this.#lastHeard = Date.now();
    this.#host.counters.binds++;
    this.#o.onEvent?.({ type: 'bound', address: this.#address, bind: this.label });
    this.#host.bound();
  }

  /** Ends a connection; its close puts its unanswered PDUs back and connects again. */
  drop(connection: SmppConnection, reason: string): void {
    connection.destroy(reason);
  }

  #onClosed(connection: SmppConnection, reason: string): void {
    if (this.#connection !== connection) return;
    clearTimeout(this.#bindTimer);
    this.#connection = undefined;
    const wasBound = this.#bound;
    this.#bound = false;
    // Closed by `close`: the SMS not answered stay unanswered (the channel is going).
    if (this.#closed) return;
    // Unanswered PDUs go again, in the order they went, before anything else.
    const requeue: Part[] = [...this.outstanding.values()];
    this.outstanding = new Map();
    const why = reason || (this.#unbound ? 'unbound by the SMSC' : wasBound ? 'connection closed' : 'could not connect');
    if (requeue.length > 0) {
      this.#host.requeue(requeue, why);
      this.#host.counters.resent += requeue.length;
    }
    this.#host.counters.disconnects++;
    const retryInMs = Math.round(backoffMs(this.#o.reconnectBackoff, this.#reconnectAttempt++) * (0.5 + Math.random() / 2));
    this.#o.onEvent?.({ type: 'disconnected', address: this.#address, bind: this.label, reason: why, requeued: requeue.length, retryInMs });
    this.#reconnectTimer = setTimeout(() => this.#connect(), retryInMs);
  }

  /** On the channel's tick: drops a connection that stopped answering, asks a silent one whether it lives. */
  check(now: number): void {
    const connection = this.#connection;
    if (!connection || !this.#bound) return;
    const oldest = this.outstanding.values().next().value;
    const timeout = this.#o.responseTimeoutMs;
    if ((oldest && now - oldest.sentAt > timeout) || (this.#enquireSentAt > 0 && now - this.#enquireSentAt > timeout)) {
      this.#o.onEvent?.({ type: 'response-timeout', bind: this.label, outstanding: this.outstanding.size });
      this.drop(connection, `no answer within ${timeout} ms`);
      return;
    }
    if (this.#enquireSentAt === 0 && now - this.#lastHeard >= this.#o.enquireLinkMs) {
      this.#enquireSentAt = now;
      this.#request(connection, 'enquire_link', {}, () => {
        this.#enquireSentAt = 0;
      });
    }
  }

  /** Unbinds and closes the connection; no other is made. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    clearTimeout(this.#bindTimer);
    const connection = this.#connection;
    const wasBound = this.#bound;
    this.#bound = false;
    if (!connection) return;
    await new Promise<void>((resolve) => {
      const done = setTimeout(() => connection.destroy(), 1_000);
      connection.socket.once('close', () => {
        clearTimeout(done);
        resolve();
      });
      // Unbound (connecting, or the bind not answered yet): nothing to unbind, the connection just goes.
      if (!wasBound || !this.#request(connection, 'unbind', {}, () => connection.end())) connection.destroy();
    });
  }
}
