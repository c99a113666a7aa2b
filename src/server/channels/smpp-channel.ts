/**
 * The SMPP channel: SMS over SMPP 3.4 to an SMSC, behind the `Channel` port (`sendSms`; template
 * messages go to another channel, see `composeChannels`). One transceiver bind carries the
 * `submit_sm` of every part, the SMSC's delivery receipts and the replies (MO).
 *
 * - Parts: the encoding and the part count the contract computed (`OutgoingSms.encoding`,
 *   `.parts`) are what is sent, one `submit_sm` per part (smpp-codec.ts).
 * - `sendSms` resolves when the SMSC answered every part: `sent` when all were accepted, `failed`
 *   with the SMSC's status at the first refused part, or `failed` when no answer came within
 *   `sendTimeoutMs`.
 * - A window of `window` unanswered PDUs. A dropped connection puts the PDUs it had unanswered back
 *   in the queue, to go again after the next bind (at least once); a PDU the SMSC answered is never
 *   sent again.
 * - ESME_RTHROTTLED and ESME_RMSGQFUL pause sending (`throttleBackoff`) and the PDU goes again: a
 *   throttled SMS is slowed down, not failed.
 * - `enquire_link` after `enquireLinkMs` of silence; a PDU unanswered for `responseTimeoutMs` drops
 *   the connection; connections are made again with back-off and jitter.
 *
 * Receipts and replies are reported to the sink after the `sendSms` answer of their SMS (so a DLR
 * `DELIVERED` never precedes its `SENT`). The SMSC's message ids and the last SMS to each phone are
 * kept in the `ChannelMemory` the server lends (smpp-inbound.ts); on a durable server a
 * `deliver_sm` is answered only once what it did is written (`sink.written`), and with
 * ESME_RX_T_APPN (a temporary error: the SMSC delivers it again) when that failed.
 */
import type { Channel, ChannelMemory, ChannelSink, OutgoingSms, SmsSendResult } from '../channel.js';
import { ChannelMemoryStore } from './memory.js';
import { concatInfo, encodeSubmitSm, submitParts } from './smpp-codec.js';
import { SmppInbound, type ReceiptUpdate } from './smpp-inbound.js';
import { EncodedSubmit, PartQueue, type Job, type Part } from './smpp-queue.js';
import { resolveSmppOptions, smppOptionProblems, type BackoffRange, type ResolvedSmppOptions, type SmppChannelOptions } from './smpp-options.js';
import { loadSmpp, SMPP_STATUS, smppStatusText, type SmppModule, type SmppPdu, type SmppSession } from './smpp-package.js';
import { ESM_TYPE_INTERMEDIATE, ESM_TYPE_MASK, ESM_TYPE_RECEIPT, parseReceipt } from './smpp-receipt.js';
import { ServerOptionsError } from '../options-error.js';

/** Counters of an SMPP channel. */
export interface SmppChannelStats {
  /** Bound now. */
  readonly bound: boolean;
  /** `submit_sm` sent and not yet answered. */
  readonly outstanding: number;
  /** Parts waiting to be sent (new, or again after a drop or throttling). */
  readonly queued: number;
  /** `submit_sm` written (each try counts). */
  readonly submitted: number;
  /** `submit_sm` the SMSC accepted (ESME_ROK). */
  readonly accepted: number;
  /** `submit_sm` put back in the queue because their connection dropped unanswered. */
  readonly resent: number;
  /** `submit_sm` answered ESME_RTHROTTLED or ESME_RMSGQFUL (sent again after a pause). */
  readonly throttled: number;
  /** SMS answered `sent` / `failed`. */
  readonly smsSent: number;
  readonly smsFailed: number;
  readonly receipts: number;
  readonly unmatchedReceipts: number;
  readonly replies: number;
  readonly unmatchedReplies: number;
  /** Successful binds, and connections lost or refused. */
  readonly binds: number;
  readonly disconnects: number;
}

/** The SMPP channel, with its counters. */
export interface SmppChannel extends Channel {
  stats(): SmppChannelStats;
  /** Resolves once bound (the first time, or again after a drop). */
  whenBound(): Promise<void>;
  /** Unbinds and closes the connection. SMS not answered yet stay unanswered (see docs/channels.md). */
  close(): Promise<void>;
}

const backoffMs = (range: BackoffRange, attempt: number) => Math.min(range.maxMs, range.minMs * 2 ** Math.min(attempt, 30));

/** Builds an SMPP channel; it connects when the server attaches it (or at the first SMS). */
export function createSmppChannel(options: SmppChannelOptions): SmppChannel {
  const problems = smppOptionProblems(options);
  if (problems.length > 0) throw new ServerOptionsError(problems);
  return new SmppChannelImpl(resolveSmppOptions(options));
}

class SmppChannelImpl implements SmppChannel {
  readonly #o: ResolvedSmppOptions;
  readonly #address: string;
  readonly #inbound: SmppInbound;
  #smpp: SmppModule | undefined;
  #sink: ChannelSink | undefined;
  #started = false;
  #closed = false;
  /** Why nothing can be sent (the package could not load). */
  #fatal: string | undefined;

  #session: SmppSession | undefined;
  readonly #dropReasons = new WeakMap<SmppSession, string>();
  #bound = false;
  #outstanding = new Map<number, Part>();
  #enquireSentAt = 0;
  #lastHeard = 0;
  #reconnectAttempt = 0;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #bindTimer: NodeJS.Timeout | undefined;
  #tick: NodeJS.Timeout | undefined;

  readonly #again = new PartQueue();
  readonly #fresh = new PartQueue();
  /** SMS not answered yet, by id, in deadline order. */
  readonly #jobs = new Map<string, Job>();
  #ref = 0;
  #throttledUntil = 0;
  #throttleLevel = 0;
  #throttleTimer: NodeJS.Timeout | undefined;
  #pumpQueued = false;

  #events: (() => void)[] = [];
  #eventsQueued = false;
  /** Resolved once the queued sink calls ran (made only when a `deliver_sm` waits for them). */
  #eventsRan: Promise<void> | undefined;
  #resolveEventsRan: (() => void) | undefined;
  #boundWaiters: (() => void)[] = [];

  #c = { submitted: 0, accepted: 0, resent: 0, throttled: 0, smsSent: 0, smsFailed: 0, receipts: 0, replies: 0, binds: 0, disconnects: 0 };

  constructor(o: ResolvedSmppOptions) {
    this.#o = o;
    this.#address = `${o.host}:${o.port}`;
    // Until the server lends its memory (or when a host attaches none): one of the channel's own.
    this.#inbound = new SmppInbound(new ChannelMemoryStore(o.maxTrackedReceipts + o.maxTrackedReplies));
  }

  stats(): SmppChannelStats {
    return {
      bound: this.#bound,
      outstanding: this.#outstanding.size,
      queued: this.#again.size + this.#fresh.size,
      ...this.#c,
      unmatchedReceipts: this.#inbound.unmatchedReceipts,
      unmatchedReplies: this.#inbound.unmatchedReplies,
    };
  }

  whenBound(): Promise<void> {
    this.#start();
    if (this.#bound) return Promise.resolve();
    return new Promise((resolve) => this.#boundWaiters.push(resolve));
  }

  attach(sink: ChannelSink, memory?: ChannelMemory): void {
    this.#sink = sink;
    if (memory) this.#inbound.memory = memory;
    this.#start();
  }

  send(): Promise<never> {
    return Promise.reject(new Error('The SMPP channel sends SMS only: compose it with a template-message channel (composeChannels)'));
  }

  sendSms(sms: OutgoingSms): Promise<SmsSendResult> {
    if (this.#closed) return Promise.resolve({ status: 'failed', reason: this.#fatal ?? 'SMPP channel closed' });
    const ref = this.#ref++ & 0xff;
    const built = submitParts(sms.message, sms.encoding, sms.parts, ref);
    if ('error' in built) {
      this.#c.smsFailed++;
      return Promise.resolve({ status: 'failed', reason: `SMPP: ${built.error}` });
    }
    this.#start();
    return new Promise<SmsSendResult>((resolve) => {
      const job: Job = {
        sms,
        deadline: Date.now() + this.#o.sendTimeoutMs,
        tracked: this.#o.deliveryReceipts ? this.#inbound.track(sms.smsId, sms.parts) : undefined,
        remaining: built.shortMessages.length,
        done: false,
        held: undefined,
        resolve,
      };
      this.#jobs.set(sms.smsId, job);
      const o = this.#o;
      for (const shortMessage of built.shortMessages) {
        const octets = encodeSubmitSm({
          sourceAddrTon: o.sourceAddrTon,
          sourceAddrNpi: o.sourceAddrNpi,
          sourceAddr: o.sourceAddr,
          destAddrTon: o.destAddrTon,
          destAddrNpi: o.destAddrNpi,
          destinationAddr: sms.phone,
          esmClass: built.esmClass,
          registeredDelivery: o.deliveryReceipts ? 1 : 0,
          dataCoding: built.dataCoding,
          shortMessage,
        });
        this.#fresh.push({ job, sentAt: 0, pdu: new EncodedSubmit(octets) });
      }
      this.#schedulePump();
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    clearTimeout(this.#bindTimer);
    clearTimeout(this.#throttleTimer);
    clearInterval(this.#tick);
    const session = this.#session;
    this.#session = undefined;
    this.#bound = false;
    // SMS not answered yet stay unanswered: the durable server sends them again after a restart.
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

  // --- connection ---------------------------------------------------------------------------

  #start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    const every = Math.max(5, Math.min(1_000, Math.floor(Math.min(this.#o.enquireLinkMs, this.#o.responseTimeoutMs, this.#o.sendTimeoutMs) / 4)));
    this.#tick = setInterval(() => this.#onTick(), every);
    this.#tick.unref();
    loadSmpp().then(
      (smpp) => {
        this.#smpp = smpp;
        this.#connect();
      },
      (e: unknown) => {
        // Without the package nothing can be sent: answer every SMS at once.
        const reason = e instanceof Error ? e.message : String(e);
        this.#fatal = reason;
        this.#closed = true;
        clearInterval(this.#tick);
        for (const job of this.#jobs.values()) this.#finish(job, { status: 'failed', reason });
      },
    );
  }

  #connect(): void {
    if (this.#closed || !this.#smpp) return;
    const o = this.#o;
    const session = this.#smpp.connect({ host: o.host, port: o.port, ...(o.tls ? { tls: true } : {}) });
    this.#session = session;
    this.#outstanding = new Map();
    this.#enquireSentAt = 0;
    this.#bindTimer = setTimeout(() => {
      if (this.#session === session && !this.#bound) this.#drop(session, `not bound within ${o.bindTimeoutMs} ms`);
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
    session.on('deliver_sm', (pdu: SmppPdu) => this.#onDeliver(session, pdu));
    session.on('data_sm', (pdu: SmppPdu) => this.#onDeliver(session, pdu));
    session.on('enquire_link', (pdu: SmppPdu) => this.#answer(session, pdu.response()));
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
      this.#drop(session, `bind refused: ${reason}`);
      return;
    }
    this.#bound = true;
    this.#reconnectAttempt = 0;
    this.#lastHeard = Date.now();
    this.#c.binds++;
    this.#o.onEvent?.({ type: 'bound', address: this.#address });
    const waiters = this.#boundWaiters;
    this.#boundWaiters = [];
    for (const w of waiters) w();
    this.#pump();
  }

  /** Ends a session; its `close` puts its unanswered PDUs back and connects again. */
  #drop(session: SmppSession, reason: string): void {
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
    for (const part of this.#outstanding.values()) if (!part.job.done) requeue.push(part);
    this.#outstanding = new Map();
    if (requeue.length > 0) {
      this.#again.unshiftAll(requeue);
      this.#c.resent += requeue.length;
    }
    this.#c.disconnects++;
    if (this.#closed) return;
    const retryInMs = Math.round(backoffMs(this.#o.reconnectBackoff, this.#reconnectAttempt++) * (0.5 + Math.random() / 2));
    const reason = this.#dropReasons.get(session) ?? (lastError || (wasBound ? 'connection closed' : 'could not connect'));
    this.#o.onEvent?.({ type: 'disconnected', address: this.#address, reason, requeued: requeue.length, retryInMs });
    this.#reconnectTimer = setTimeout(() => this.#connect(), retryInMs);
  }

  #onTick(): void {
    const now = Date.now();
    // SMS past their deadline are answered failed (whatever of them is still queued is skipped).
    for (const job of this.#jobs.values()) {
      if (job.deadline > now) break; // jobs are in deadline order (one timeout for all)
      this.#finish(job, { status: 'failed', reason: `SMPP: the SMSC did not accept it within ${this.#o.sendTimeoutMs} ms${this.#bound ? '' : ' (not bound)'}` });
    }
    const session = this.#session;
    if (!session || !this.#bound) return;
    const oldest = this.#outstanding.values().next().value;
    const timeout = this.#o.responseTimeoutMs;
    if ((oldest && now - oldest.sentAt > timeout) || (this.#enquireSentAt > 0 && now - this.#enquireSentAt > timeout)) {
      this.#o.onEvent?.({ type: 'response-timeout', outstanding: this.#outstanding.size });
      this.#drop(session, `no answer within ${timeout} ms`);
      return;
    }
    if (this.#enquireSentAt === 0 && now - this.#lastHeard >= this.#o.enquireLinkMs) {
      this.#enquireSentAt = now;
      session.send(new this.#smpp!.PDU('enquire_link', {}), () => {
        this.#enquireSentAt = 0;
      });
    }
  }

  // --- sending ------------------------------------------------------------------------------

  #schedulePump(): void {
    if (this.#pumpQueued) return;
    this.#pumpQueued = true;
    queueMicrotask(() => {
      this.#pumpQueued = false;
      this.#pump();
    });
  }

  #next(): Part | undefined {
    for (;;) {
      const p = this.#again.shift() ?? this.#fresh.shift();
      if (p === undefined || !p.job.done) return p;
    }
  }

  #pump(): void {
    const session = this.#session;
    if (!this.#bound || !session || this.#closed) return;
    const now = Date.now();
    if (now < this.#throttledUntil) {
      this.#throttleTimer ??= setTimeout(() => {
        this.#throttleTimer = undefined;
        this.#pump();
      }, this.#throttledUntil - now);
      return;
    }
    const window = this.#o.window;
    const socket = session.socket;
    socket.cork();
    try {
      while (this.#outstanding.size < window) {
        const part = this.#next();
        if (!part) break;
        const pdu = part.pdu;
        pdu.sequence_number = 0; // numbered by this session (a part may go again on another)
        if (!session.send(pdu as unknown as SmppPdu, (resp) => this.#onSubmitResp(session, part, resp))) {
          // Not writable: the connection is going; the part goes again after the next bind.
          this.#again.unshiftAll([part]);
          break;
        }
        part.sentAt = now;
        this.#outstanding.set(pdu.sequence_number, part);
        this.#c.submitted++;
      }
    } finally {
      socket.uncork();
    }
  }

  #onSubmitResp(session: SmppSession, part: Part, resp: SmppPdu): void {
    if (this.#session !== session) return;
    this.#outstanding.delete(resp.sequence_number);
    const status = resp.command === 'generic_nack' && resp.command_status === 0 ? 0x03 : resp.command_status;
    const job = part.job;
    if (status === SMPP_STATUS.ESME_ROK) {
      this.#c.accepted++;
      this.#throttleLevel = 0;
      if (!job.done) {
        const messageId = resp['message_id'];
        if (job.tracked && typeof messageId === 'string' && messageId.length > 0) {
          const early = this.#inbound.accepted(job.tracked, messageId);
          if (early) this.#report(early);
        }
        if (--job.remaining === 0) {
          this.#inbound.sentTo(job.sms.phone, job.sms.smsId);
          this.#finish(job, { status: 'sent' });
        }
      }
    } else if (status === SMPP_STATUS.ESME_RTHROTTLED || status === SMPP_STATUS.ESME_RMSGQFUL) {
      this.#c.throttled++;
      this.#again.push(part);
      const now = Date.now();
      // Answers to PDUs of the same burst extend the pause once, not once each.
      if (now >= this.#throttledUntil) {
        const wait = backoffMs(this.#o.throttleBackoff, this.#throttleLevel++);
        this.#throttledUntil = now + wait;
        this.#o.onEvent?.({ type: 'throttled', reason: smppStatusText(status), backoffMs: wait });
      }
    } else if (status === SMPP_STATUS.ESME_RINVBNDSTS) {
      // The SMSC no longer counts us bound: bind again, and the part goes again.
      this.#again.push(part);
      this.#drop(session, smppStatusText(status));
      return;
    } else if (!job.done) {
      this.#finish(job, { status: 'failed', reason: smppStatusText(status) });
    }
    this.#schedulePump();
  }

  #finish(job: Job, result: SmsSendResult): void {
    if (job.done) return;
    job.done = true;
    if (this.#jobs.get(job.sms.smsId) === job) this.#jobs.delete(job.sms.smsId);
    if (result.status === 'sent') this.#c.smsSent++;
    else this.#c.smsFailed++;
    job.resolve(result);
    for (const update of job.held ?? []) this.#report(update);
    for (const done of job.onDone ?? []) done();
  }

  // --- receipts and replies -----------------------------------------------------------------

  #onDeliver(session: SmppSession, pdu: SmppPdu): void {
    // A server that keeps nothing: answer first (an SMSC resends what it is not answered, matched
    // or not; the answers to the PDUs of one read go out in one write). A durable one: answer once
    // what the PDU did is written, so a crash before that leaves it to the SMSC to deliver again.
    const durable = this.#sink?.written !== undefined;
    if (!durable) this.#answer(session, pdu.response());
    if (this.#inbound.memory.recall !== undefined && this.#sink?.recall !== undefined) {
      void this.#recallThenRead(session, pdu, durable);
      return;
    }
    const heldBy = this.#read(pdu);
    if (durable) void this.#answerWhenWritten(session, pdu, heldBy);
  }

  /**
   * The server on Redis: the SMS a receipt or reply names may have been sent by another instance;
   * what the fleet remembers of it is read first. Not readable (Redis away): answered with a
   * temporary error, so the SMSC delivers it again.
   */
  async #recallThenRead(session: SmppSession, pdu: SmppPdu, durable: boolean): Promise<void> {
    try {
      const receiptId = typeof pdu['receipted_message_id'] === 'string' ? pdu['receipted_message_id'] : undefined;
      const fromText = parseReceipt(textOf((pdu['short_message'] as { message?: unknown } | undefined)?.message), { receiptedMessageId: receiptId, messageState: pdu['message_state'] });
      const from = typeof pdu['source_addr'] === 'string' ? pdu['source_addr'] : undefined;
      const smsIds = await this.#inbound.recall({ ...(fromText ? { receiptId: fromText.messageId } : {}), ...(from !== undefined ? { from } : {}) });
      if (smsIds.length > 0) await this.#sink?.recall?.({ smsIds });
    } catch {
      if (durable && this.#session === session) this.#answer(session, pdu.response({ command_status: SMPP_STATUS.ESME_RX_T_APPN }));
      return;
    }
    const heldBy = this.#read(pdu);
    if (durable) void this.#answerWhenWritten(session, pdu, heldBy);
  }

  async #answerWhenWritten(session: SmppSession, pdu: SmppPdu, heldBy: Job | undefined): Promise<void> {
    if (heldBy && !heldBy.done) await new Promise<void>((resolve) => (heldBy.onDone ??= []).push(resolve));
    if (this.#eventsQueued) await (this.#eventsRan ??= new Promise<void>((resolve) => (this.#resolveEventsRan = resolve)));
    const ok = (await this.#sink?.written?.()) ?? false;
    // The connection is gone: unanswered, the SMSC delivers it again on the next one.
    if (this.#session !== session) return;
    this.#answer(session, ok ? pdu.response() : pdu.response({ command_status: SMPP_STATUS.ESME_RX_T_APPN }));
  }

  /** Reads a `deliver_sm` / `data_sm` and reports it; the job its receipt waits for, if any. */
  #read(pdu: SmppPdu): Job | undefined {
    const esmClass = typeof pdu['esm_class'] === 'number' ? pdu['esm_class'] : 0;
    const type = esmClass & ESM_TYPE_MASK;
    const content = (pdu['short_message'] as { message?: unknown; udh?: Uint8Array[] } | undefined) ?? undefined;
    const payload = pdu['message_payload'] as { message?: unknown; udh?: Uint8Array[] } | undefined;
    const body = content?.message !== undefined && textOf(content.message) !== '' ? content : (payload ?? content);
    const text = textOf(body?.message);
    if (type === ESM_TYPE_RECEIPT || type === ESM_TYPE_INTERMEDIATE || (pdu.command === 'data_sm' && pdu['receipted_message_id'] !== undefined)) {
      const receipt = parseReceipt(text, { receiptedMessageId: pdu['receipted_message_id'], messageState: pdu['message_state'] });
      if (!receipt) return undefined;
      this.#c.receipts++;
      const update = this.#inbound.receipt(receipt);
      return update ? this.#report(update) : undefined;
    }
    if (type !== 0) return undefined; // acknowledgements and other kinds: nothing to report
    const from = typeof pdu['source_addr'] === 'string' ? pdu['source_addr'] : '';
    const reply = this.#inbound.reply(from, text, body?.udh ? concatInfo(body.udh) : undefined);
    if (!reply) return undefined;
    this.#c.replies++;
    this.#later(() => this.#sink?.smsReply(reply));
    return undefined;
  }

  #answer(session: SmppSession, pdu: SmppPdu): void {
    const socket = session.socket;
    socket.cork();
    session.send(pdu);
    process.nextTick(() => socket.uncork());
  }

  /** Reports a receipt's status now, or after its SMS is answered (the job returned). */
  #report(update: ReceiptUpdate): Job | undefined {
    const job = this.#jobs.get(update.smsId);
    if (job && !job.done) {
      // A part's receipt before the last part's answer: the DLR follows the answer, never precedes it.
      (job.held ??= []).push(update);
      return job;
    }
    this.#later(() => this.#sink?.smsStatus(update));
    return undefined;
  }

  /** Runs sink calls after the current turn, when the `sendSms` answers of this turn were taken. */
  #later(fn: () => void): void {
    this.#events.push(fn);
    if (this.#eventsQueued) return;
    this.#eventsQueued = true;
    setImmediate(() => {
      this.#eventsQueued = false;
      const events = this.#events;
      this.#events = [];
      for (const e of events) e();
      const ran = this.#resolveEventsRan;
      this.#eventsRan = undefined;
      this.#resolveEventsRan = undefined;
      ran?.();
    });
  }
}

function textOf(message: unknown): string {
  if (typeof message === 'string') return message;
  if (message instanceof Uint8Array) return Buffer.from(message).toString('latin1');
  return '';
}
