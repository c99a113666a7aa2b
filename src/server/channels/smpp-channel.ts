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
 *
 * This file sends. The connection (bind, `enquire_link`, timeouts, reconnection with back-off) is
 * smpp-link.ts; receipts (DLR) and replies (MO), reported after the `sendSms` answer of their SMS
 * and acknowledged once what they did is written, are smpp-deliver.ts.
 */
import type { Channel, ChannelMemory, ChannelSink, OutgoingSms, SmsSendResult } from '../channel.js';
import { ChannelMemoryStore } from './memory.js';
import { encodeSubmitSm, submitParts } from './smpp-codec.js';
import { SmppDeliveries } from './smpp-deliver.js';
import { SmppInbound } from './smpp-inbound.js';
import { withSmppTlsFiles } from './smpp-connection.js';
import { backoffMs, SmppLink } from './smpp-link.js';
import { PartQueue, type Job, type Part } from './smpp-queue.js';
import { resolveSmppOptions, smppOptionProblems, type ResolvedSmppOptions, type SmppChannelOptions } from './smpp-options.js';
import { loadSmpp, SMPP_STATUS, smppStatusText } from './smpp-package.js';
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

/** Builds an SMPP channel; it connects when the server attaches it (or at the first SMS). */
export function createSmppChannel(options: SmppChannelOptions): SmppChannel {
  const problems = smppOptionProblems(options);
  if (problems.length > 0) throw new ServerOptionsError(problems);
  return new SmppChannelImpl(withSmppTlsFiles(resolveSmppOptions(options)));
}

class SmppChannelImpl implements SmppChannel {
  readonly #o: ResolvedSmppOptions;
  readonly #inbound: SmppInbound;
  readonly #link: SmppLink;
  readonly #deliveries: SmppDeliveries;
  #sink: ChannelSink | undefined;
  #started = false;
  #closed = false;
  /** Why nothing can be sent (the package could not load). */
  #fatal: string | undefined;
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

  #c = { submitted: 0, accepted: 0, resent: 0, throttled: 0, smsSent: 0, smsFailed: 0, receipts: 0, replies: 0, binds: 0, disconnects: 0 };

  constructor(o: ResolvedSmppOptions) {
    this.#o = o;
    // Until the server lends its memory (or when a host attaches none): one of the channel's own.
    this.#inbound = new SmppInbound(new ChannelMemoryStore(o.maxTrackedReceipts + o.maxTrackedReplies));
    this.#deliveries = new SmppDeliveries({
      inbound: this.#inbound,
      jobs: this.#jobs,
      counters: this.#c,
      sink: () => this.#sink,
      current: (connection) => this.#link.connection === connection,
    });
    this.#link = new SmppLink({
      options: o,
      counters: this.#c,
      bound: () => this.#pump(),
      requeue: (parts) => this.#again.unshiftAll(parts),
      submitAnswered: (part, status, messageId) => this.#onSubmitResp(part, status, messageId),
      deliver: (connection, pdu) => this.#deliveries.deliver(connection, pdu),
    });
  }

  stats(): SmppChannelStats {
    return {
      bound: this.#link.bound,
      outstanding: this.#link.outstanding.size,
      queued: this.#again.size + this.#fresh.size,
      ...this.#c,
      unmatchedReceipts: this.#inbound.unmatchedReceipts,
      unmatchedReplies: this.#inbound.unmatchedReplies,
    };
  }

  whenBound(): Promise<void> {
    this.#start();
    return this.#link.whenBound();
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
    // The reference of a long SMS: its low 8 bits in a UDH, 16 bits in `sar_msg_ref_num`.
    const ref = this.#ref++ & 0xffff;
    const built = submitParts(sms.message, sms.encoding, sms.parts, ref, this.#o);
    if ('error' in built) {
      this.#c.smsFailed++;
      return Promise.resolve({ status: 'failed', reason: `SMPP: ${built.error}` });
    }
    this.#start();
    return new Promise<SmsSendResult>((resolve) => {
      const job: Job = {
        sms,
        deadline: Date.now() + this.#o.sendTimeoutMs,
        // A receipt per PDU: `parts` of them, or one with `message_payload` (the SMS still counts `parts`).
        tracked: this.#o.deliveryReceipts ? this.#inbound.track(sms.smsId, built.shortMessages.length) : undefined,
        remaining: built.shortMessages.length,
        done: false,
        held: undefined,
        resolve,
      };
      this.#jobs.set(sms.smsId, job);
      const o = this.#o;
      for (const [i, shortMessage] of built.shortMessages.entries()) {
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
          validityPeriod: '',
          shortMessage,
          tlvs: built.tlvs?.[i],
        });
        this.#fresh.push({ job, sentAt: 0, octets });
      }
      this.#schedulePump();
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#throttleTimer);
    clearInterval(this.#tick);
    // SMS not answered yet stay unanswered: the durable server sends them again after a restart.
    await this.#link.close();
  }

  #start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    const every = Math.max(5, Math.min(1_000, Math.floor(Math.min(this.#o.enquireLinkMs, this.#o.responseTimeoutMs, this.#o.sendTimeoutMs) / 4)));
    this.#tick = setInterval(() => this.#onTick(), every);
    this.#tick.unref();
    loadSmpp().then(
      (smpp) => this.#link.start(smpp),
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

  #onTick(): void {
    const now = Date.now();
    // SMS past their deadline are answered failed (whatever of them is still queued is skipped).
    for (const job of this.#jobs.values()) {
      if (job.deadline > now) break; // jobs are in deadline order (one timeout for all)
      this.#finish(job, { status: 'failed', reason: `SMPP: the SMSC did not accept it within ${this.#o.sendTimeoutMs} ms${this.#link.bound ? '' : ' (not bound)'}` });
    }
    this.#link.check(now);
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
    const connection = this.#link.connection;
    if (!this.#link.bound || !connection || this.#closed) return;
    const now = Date.now();
    if (now < this.#throttledUntil) {
      this.#throttleTimer ??= setTimeout(() => {
        this.#throttleTimer = undefined;
        this.#pump();
      }, this.#throttledUntil - now);
      return;
    }
    const window = this.#o.window;
    const outstanding = this.#link.outstanding;
    connection.batch(() => {
      while (outstanding.size < window) {
        const part = this.#next();
        if (!part) break;
        // Numbered by this connection (a part may go again on another).
        const sequence = connection.nextSequence();
        part.octets.writeUInt32BE(sequence, 12);
        if (!connection.write(part.octets)) {
          // Not writable: the connection is going; the part goes again after the next bind.
          this.#again.unshiftAll([part]);
          break;
        }
        part.sentAt = now;
        outstanding.set(sequence, part);
        this.#c.submitted++;
      }
    });
  }

  /** The SMSC answered a part on the link's connection now (answers on a dropped one never come here). */
  #onSubmitResp(part: Part, status: number, messageId: string): void {
    const job = part.job;
    if (status === SMPP_STATUS.ESME_ROK) {
      this.#c.accepted++;
      this.#throttleLevel = 0;
      if (!job.done) {
        if (job.tracked && messageId.length > 0) {
          const early = this.#inbound.accepted(job.tracked, messageId);
          if (early) this.#deliveries.report(early);
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
      const connection = this.#link.connection;
      if (connection) this.#link.drop(connection, smppStatusText(status));
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
    for (const update of job.held ?? []) this.#deliveries.report(update);
    for (const done of job.onDone ?? []) done();
  }
}
