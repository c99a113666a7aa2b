/**
 * The SMPP channel's connection to the SMSC: one transceiver bind (`bind_transceiver`), its window
 * of unanswered PDUs, `enquire_link` after `enquireLinkMs` of silence, and a drop when a PDU (or
 * the `enquire_link`) goes unanswered for `responseTimeoutMs`; connections are made again with
 * back-off and jitter. A dropped connection hands the PDUs it had unanswered back to the channel,
 * to go again after the next bind (at least once); a PDU the SMSC answered is never sent again.
 *
 * Separate from the channel (smpp-channel.ts) because the life of a connection (connect, bind,
 * keep alive, drop, reconnect) changes for reasons of its own; the channel only asks whether it is
 * bound, writes into the window, and is told when the link is bound again or lost.
 */
import type { Part } from './smpp-queue.js';
import type { BackoffRange, ResolvedSmppOptions } from './smpp-options.js';
import { SMPP_STATUS, smppStatusText, type SmppModule, type SmppPdu, type SmppSession } from './smpp-package.js';

/** The wait before attempt `attempt` of something refused again and again (reconnect, throttling). */
export const backoffMs = (range: BackoffRange, attempt: number) => Math.min(range.maxMs, range.minMs * 2 ** Math.min(attempt, 30));

/** What the link tells the channel it belongs to. */
export interface SmppLinkHost {
  readonly options: ResolvedSmppOptions;
  /** The channel's counters the link keeps. */
  readonly counters: { binds: number; disconnects: number; resent: number };
  /** Bound (the first time or again): sending may go on. */
  bound(): void;
  /** The PDUs the dropped connection had unanswered, in the order they went: they go again first. */
  requeue(parts: Part[]): void;
  /** A `deliver_sm` or `data_sm` came (a receipt or a reply). */
  deliver(session: SmppSession, pdu: SmppPdu): void;
}

/** Answers a PDU; the answers to the PDUs of one read go out in one write. */
export function answer(session: SmppSession, pdu: SmppPdu): void {
  const socket = session.socket;
  socket.cork();
  session.send(pdu);
  process.nextTick(() => socket.uncork());
}

/** The channel's connection to the SMSC, made again whenever it drops until `close`. */
export class SmppLink {
  readonly #host: SmppLinkHost;
  readonly #o: ResolvedSmppOptions;
  readonly #address: string;
  #smpp: SmppModule | undefined;
  #closed = false;
  #session: SmppSession | undefined;
  readonly #dropReasons = new WeakMap<SmppSession, string>();
  #bound = false;
  /** The window: `submit_sm` written on this connection and not answered yet, by sequence number. */
  outstanding = new Map<number, Part>();
  #enquireSentAt = 0;
  #lastHeard = 0;
  #reconnectAttempt = 0;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #bindTimer: NodeJS.Timeout | undefined;
  #boundWaiters: (() => void)[] = [];

  constructor(host: SmppLinkHost) {
    this.#host = host;
    this.#o = host.options;
    this.#address = `${host.options.host}:${host.options.port}`;
  }

  /** The connection now, bound or not (undefined between connections). */
  get session(): SmppSession | undefined {
    return this.#session;
  }

  get bound(): boolean {
    return this.#bound;
  }

  /** Resolves once bound (the first time, or again after a drop). */
  whenBound(): Promise<void> {
    if (this.#bound) return Promise.resolve();
    return new Promise((resolve) => this.#boundWaiters.push(resolve));
  }

  /** Connects, with the `smpp` package loaded. */
  start(smpp: SmppModule): void {
    this.#smpp = smpp;
    this.#connect();
  }

  #connect(): void {
    if (this.#closed || !this.#smpp) return;
    const o = this.#o;
    const session = this.#smpp.connect({ host: o.host, port: o.port, ...(o.tls ? { tls: true } : {}) });
    this.#session = session;
    this.outstanding = new Map();
    this.#enquireSentAt = 0;
    this.#bindTimer = setTimeout(() => {
      if (this.#session === session && !this.#bound) this.drop(session, `not bound within ${o.bindTimeoutMs} ms`);
    }, o.bindTimeoutMs);
    let lastError = '';
    session.on(o.tls ? 'secureConnect' : 'connect', () => {
      // PDUs are written in batches (cork/uncork): Nagle's delay would only hold answers back.
      session.socket.setNoDelay(true);
      const bind = new this.#smpp!.PDU('bind_transceiver', { system_id: o.systemId, password: o.password, system_type: o.systemType });
      session.send(bind, (resp) => this.#onBound(session, resp));
    });
    session.on('error', (e: Error) => {
      lastError = (e as NodeJS.ErrnoException).code ?? e.message;
      // A PDU the package could not read leaves the stream out of step: start over.
      if (this.#session === session) session.destroy();
    });
    session.on('close', () => this.#onClosed(session, lastError));
    session.on('pdu', () => {
      this.#lastHeard = Date.now();
    });
    session.on('deliver_sm', (pdu: SmppPdu) => this.#host.deliver(session, pdu));
    session.on('data_sm', (pdu: SmppPdu) => this.#host.deliver(session, pdu));
    session.on('enquire_link', (pdu: SmppPdu) => answer(session, pdu.response()));
    session.on('unbind', (pdu: SmppPdu) => {
      session.send(pdu.response());
      session.close();
    });
  }

  #onBound(session: SmppSession, resp: SmppPdu): void {
    if (this.#session !== session) return;
    clearTimeout(this.#bindTimer);
    if (resp.command_status !== SMPP_STATUS.ESME_ROK) {
      const reason = smppStatusText(resp.command_status);
      this.#o.onEvent?.({ type: 'bind-failed', address: this.#address, reason });
      this.drop(session, `bind refused: ${reason}`);
      return;
    }
    this.#bound = true;
    this.#reconnectAttempt = 0;
    this.#lastHeard = Date.now();
    this.#host.counters.binds++;
    this.#o.onEvent?.({ type: 'bound', address: this.#address });
    const waiters = this.#boundWaiters;
    this.#boundWaiters = [];
    for (const w of waiters) w();
    this.#host.bound();
  }

  /** Ends a session; its `close` puts its unanswered PDUs back and connects again. */
  drop(session: SmppSession, reason: string): void {
    this.#dropReasons.set(session, reason);
    session.destroy();
  }

  #onClosed(session: SmppSession, lastError: string): void {
    if (this.#session !== session) return;
    clearTimeout(this.#bindTimer);
    this.#session = undefined;
    const wasBound = this.#bound;
    this.#bound = false;
    // Unanswered PDUs go again, in the order they went, before anything else.
    const requeue: Part[] = [];
    for (const part of this.outstanding.values()) if (!part.job.done) requeue.push(part);
    this.outstanding = new Map();
    if (requeue.length > 0) {
      this.#host.requeue(requeue);
      this.#host.counters.resent += requeue.length;
    }
    this.#host.counters.disconnects++;
    if (this.#closed) return;
    const retryInMs = Math.round(backoffMs(this.#o.reconnectBackoff, this.#reconnectAttempt++) * (0.5 + Math.random() / 2));
    const reason = this.#dropReasons.get(session) ?? (lastError || (wasBound ? 'connection closed' : 'could not connect'));
    this.#o.onEvent?.({ type: 'disconnected', address: this.#address, reason, requeued: requeue.length, retryInMs });
    this.#reconnectTimer = setTimeout(() => this.#connect(), retryInMs);
  }

  /** On the channel's tick: drops a connection that stopped answering, asks a silent one whether it lives. */
  check(now: number): void {
    const session = this.#session;
    if (!session || !this.#bound) return;
    const oldest = this.outstanding.values().next().value;
    const timeout = this.#o.responseTimeoutMs;
    if ((oldest && now - oldest.sentAt > timeout) || (this.#enquireSentAt > 0 && now - this.#enquireSentAt > timeout)) {
      this.#o.onEvent?.({ type: 'response-timeout', outstanding: this.outstanding.size });
      this.drop(session, `no answer within ${timeout} ms`);
      return;
    }
    if (this.#enquireSentAt === 0 && now - this.#lastHeard >= this.#o.enquireLinkMs) {
      this.#enquireSentAt = now;
      session.send(new this.#smpp!.PDU('enquire_link', {}), () => {
        this.#enquireSentAt = 0;
      });
    }
  }

  /** Unbinds and closes the connection; no other is made. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    clearTimeout(this.#bindTimer);
    const session = this.#session;
    this.#session = undefined;
    this.#bound = false;
    if (!session) return;
    await new Promise<void>((resolve) => {
      const done = setTimeout(() => session.destroy(), 1_000);
      session.once('close', () => {
        clearTimeout(done);
        resolve();
      });
      if (!session.socket.writable) session.destroy();
      else if (!session.send(new this.#smpp!.PDU('unbind', {}), () => session.close())) session.destroy();
    });
  }
}
