/**
 * The SMPP channel: SMS over SMPP 3.4 to an SMSC, behind the `Channel` port (`sendSms`; template
 * messages go to another channel, see `composeChannels`). One transceiver bind carries the
 * `submit_sm` of every part, the SMSC's delivery receipts and the replies (MO).
 *
 * - Parts: the encoding and the part count the contract computed (`OutgoingSms.encoding`,
 *   `.parts`) are what is sent, one `submit_sm` per part (smpp-codec.ts).
 * - Store and forward: an SMS is tried until its validity ends (`validityMs` after its acceptance,
 *   also sent as `validity_period`). A transient answer (`transientStatuses`) sends the part again
 *   after a back-off; a dropped connection puts the PDUs it had unanswered back in the queue, to go
 *   again after the next bind (at least once); a PDU the SMSC answered is never sent again.
 *   ESME_RTHROTTLED and ESME_RMSGQFUL also pause all sending (`throttleBackoff`).
 * - `sendSms` resolves `sent` when the SMSC accepted every part, `failed` at the first permanent
 *   answer (its status in the reason), or `failed` once the validity ended with no part on the
 *   wire: a part written and not answered yet is waited for, so an SMS the SMSC accepts is never
 *   answered failed for a time that ran out before.
 *
 * This file sends. The connection (bind, `enquire_link`, timeouts, reconnection with back-off) is
 * smpp-link.ts; receipts (DLR) and replies (MO), reported after the `sendSms` answer of their SMS
 * and acknowledged once what they did is written, are smpp-deliver.ts.
 */
import type { Channel, ChannelMemory, ChannelSink, OutgoingSms, SmsSendResult } from '../ports/channel.js';
import { ChannelMemoryStore } from './memory.js';
import { Heap } from 'mnemonist';
import { encodeSubmitSm, smppRelativeTime, submitParts, writeValidityPeriod } from './smpp-codec.js';
import { SmppDeliveries } from './smpp-deliver.js';
import { SmppInbound } from './smpp-inbound.js';
import { backoffMs, type SmppLink } from './smpp-link.js';
import { SmppPool, type SmscStats } from './smpp-pool.js';
import { withSmppTlsFiles, type SmppConnection } from './smpp-connection.js';
import { SmppReceiptWait } from './smpp-receipt-wait.js';
import { PartQueue, type DelayedPart, type Job, type Part } from './smpp-queue.js';
import { resolveSmppOptions, smppOptionProblems, type ResolvedSmppOptions, type SmppChannelOptions } from './smpp-options.js';
import { loadSmpp, SMPP_STATUS, smppStatusText } from './smpp-package.js';
import { ServerOptionsError } from '../ports/errors.js';

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
  /** `submit_sm` answered with another transient status (`transientStatuses`), sent again after `retryBackoff`. */
  readonly retried: number;
  /** Parts waiting for their next try after a transient answer. */
  readonly delayed: number;
  /** SMS answered `sent` / `failed`. */
  readonly smsSent: number;
  readonly smsFailed: number;
  readonly receipts: number;
  readonly unmatchedReceipts: number;
  readonly replies: number;
  readonly unmatchedReplies: number;
  /** Successful binds, and connections lost or refused (all binds of the pool). */
  readonly binds: number;
  readonly disconnects: number;
  /** Each SMSC account: its binds up, whether it sends now, its unanswered `submit_sm`. */
  readonly smscs: readonly SmscStats[];
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
  readonly #pool: SmppPool;
  #tokenTimer: NodeJS.Timeout | undefined;
  readonly #deliveries: SmppDeliveries;
  readonly #receiptWait: SmppReceiptWait;
  #sink: ChannelSink | undefined;
  #started = false;
  #closed = false;
  /** Why nothing can be sent (the package could not load). */
  #fatal: string | undefined;
  #tick: NodeJS.Timeout | undefined;

  readonly #again = new PartQueue();
  readonly #fresh = new PartQueue();
  /** Parts answered with a transient status, by the clock time they go again. */
  readonly #delayed = new Heap<DelayedPart>((a, b) => a.at - b.at);
  /** SMS not answered yet, by id, in deadline order. */
  readonly #jobs = new Map<string, Job>();
  #ref = 0;
  #throttledUntil = 0;
  #throttleLevel = 0;
  #throttleTimer: NodeJS.Timeout | undefined;
  #pumpQueued = false;

  #c = { submitted: 0, accepted: 0, resent: 0, throttled: 0, retried: 0, smsSent: 0, smsFailed: 0, receipts: 0, replies: 0, binds: 0, disconnects: 0 };

  constructor(o: ResolvedSmppOptions) {
    this.#o = o;
    // Until the server lends its memory (or when a host attaches none): one of the channel's own.
    this.#inbound = new SmppInbound(new ChannelMemoryStore(o.maxTrackedReceipts + o.maxTrackedReplies));
    this.#deliveries = new SmppDeliveries({
      inbound: this.#inbound,
      jobs: this.#jobs,
      counters: this.#c,
      sink: () => this.#sink,
      current: (connection) => this.#pool.isCurrent(connection),
    });
    this.#receiptWait = new SmppReceiptWait({ options: o, inbound: this.#inbound, deliveries: this.#deliveries, sink: () => this.#sink });
    this.#pool = new SmppPool(
      {
        options: o,
        counters: this.#c,
        bound: () => this.#pump(),
        requeue: (parts, reason) => this.#requeue(parts, reason),
        submitAnswered: (link, part, status, messageId) => this.#onSubmitResp(link, part, status, messageId),
        deliver: (link, connection, pdu) => this.#deliveries.deliver(connection, pdu, link.smsc.idScope),
      },
      (from, to) => o.onEvent?.({ type: 'failover', from, to }),
    );
  }

  stats(): SmppChannelStats {
    return {
      bound: this.#pool.bound,
      outstanding: this.#pool.outstanding,
      queued: this.#again.size + this.#fresh.size,
      delayed: this.#delayed.size,
      ...this.#c,
      unmatchedReceipts: this.#inbound.unmatchedReceipts,
      unmatchedReplies: this.#inbound.unmatchedReplies,
      smscs: this.#pool.stats(),
    };
  }

  whenBound(): Promise<void> {
    this.#start();
    return this.#pool.whenBound();
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
    const now = this.#o.clock.now();
    const validUntil = (sms.acceptedAt ?? now) + this.#o.validityMs;
    if (validUntil <= now) {
      // Kept past its validity (a restart after a long stop): the SMSC would not deliver it either.
      this.#c.smsFailed++;
      return Promise.resolve({ status: 'failed', reason: `SMPP: its validity of ${this.#o.validityMs} ms ended before it could be sent` });
    }
    this.#start();
    return new Promise<SmsSendResult>((resolve) => {
      const job: Job = {
        sms,
        validUntil,
        // A receipt per PDU: `parts` of them, or one with `message_payload` (the SMS still counts `parts`).
        tracked: this.#o.deliveryReceipts ? this.#inbound.track(sms.smsId, built.shortMessages.length) : undefined,
        pdus: built.shortMessages.length,
        remaining: built.shortMessages.length,
        inFlight: 0,
        retries: 0,
        lastProblem: undefined,
        done: false,
        held: undefined,
        resolve,
      };
      this.#jobs.set(sms.smsId, job);
      const o = this.#o;
      const validityPeriod = smppRelativeTime(validUntil - now);
      const validityS = Math.floor((validUntil - now) / 1000);
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
          validityPeriod,
          shortMessage,
          tlvs: built.tlvs?.[i],
        });
        this.#fresh.push({ job, sentAt: 0, octets, validityS });
      }
      this.#schedulePump();
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#throttleTimer);
    clearTimeout(this.#tokenTimer);
    clearInterval(this.#tick);
    // SMS not answered yet stay unanswered: the durable server sends them again after a restart.
    await this.#pool.close();
  }

  #start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    const every = Math.max(5, Math.min(250, Math.floor(Math.min(this.#o.enquireLinkMs, this.#o.responseTimeoutMs) / 4)));
    this.#tick = setInterval(() => this.#onTick(), every);
    this.#tick.unref();
    loadSmpp().then(
      (smpp) => this.#pool.start(smpp),
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
    const now = this.#o.clock.now();
    // Parts whose back-off is over go again (behind the parts put back by a drop).
    let due = false;
    while (this.#delayed.size > 0 && this.#delayed.peek()!.at <= now) {
      const { part } = this.#delayed.pop()!;
      if (part.job.done) continue;
      this.#again.push(part);
      due = true;
    }
    // SMS whose validity ended are answered failed, but only with no part on the wire: a part the
    // SMSC may still accept is waited for (its answer, or the drop of its connection).
    for (const job of this.#jobs.values()) {
      if (job.validUntil > now || job.inFlight > 0) continue;
      const last = job.lastProblem ?? (this.#pool.bound ? 'no answer' : 'not bound');
      const accepted = job.pdus > 1 && job.remaining < job.pdus ? `, ${job.pdus - job.remaining} of ${job.pdus} parts accepted` : '';
      this.#finish(job, { status: 'failed', reason: `SMPP: not accepted within its validity of ${this.#o.validityMs} ms (last: ${last}${accepted})` });
    }
    this.#receiptWait.sweep(now);
    this.#pool.check(Date.now());
    if (due) this.#pump();
  }

  /** Parts a dropped connection had unanswered: they go again first, after the next bind. */
  #requeue(parts: Part[], reason: string): void {
    for (const part of parts) {
      part.job.inFlight--;
      part.job.lastProblem = `connection lost (${reason})`;
    }
    this.#again.unshiftAll(parts);
    // Another bind of the pool may take them now.
    this.#schedulePump();
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

  /** The next part to write: not of an SMS answered already, nor of one whose validity ended (the tick fails it). */
  #next(now: number): Part | undefined {
    for (;;) {
      const p = this.#again.shift() ?? this.#fresh.shift();
      if (p === undefined) return p;
      if (!p.job.done && p.job.validUntil > now) return p;
    }
  }

  #pump(): void {
    if (this.#closed) return;
    const now = Date.now();
    if (now < this.#throttledUntil) {
      this.#throttleTimer ??= setTimeout(() => {
        this.#throttleTimer = undefined;
        this.#pump();
      }, this.#throttledUntil - now);
      return;
    }
    const clockNow = this.#o.clock.now();
    const { slots, tokens, tokenAt } = this.#pool.sendable(clockNow);
    // Parts are dealt to the binds in turn (one each, round and round) while they have room and
    // their account has tokens: a burst is spread over the pool, each bind's writes in one write.
    const live = slots.filter((s) => s.connection.socket.writable);
    const corked = [...live];
    for (const s of corked) s.connection.socket.cork();
    const taken = new Map<object, number>();
    let left = true;
    try {
      deal: while (live.length > 0) {
        for (let i = 0; i < live.length;) {
          const slot = live[i]!;
          const tokensLeft = tokens.get(slot.account)!;
          if (slot.room === 0 || tokensLeft === 0) {
            live.splice(i, 1);
            continue;
          }
          const part = this.#next(clockNow);
          if (!part) {
            left = false;
            break deal;
          }
          if (!this.#write(slot.link, slot.connection, part, now, clockNow)) {
            live.splice(i, 1);
            continue;
          }
          slot.room--;
          tokens.set(slot.account, tokensLeft - 1);
          taken.set(slot.account, (taken.get(slot.account) ?? 0) + 1);
          i++;
        }
      }
    } finally {
      for (const s of corked) s.connection.socket.uncork();
    }
    for (const [account, n] of taken) this.#pool.charge(account, n, clockNow);
    // An account out of tokens: try again when its next one comes (the tick would, later).
    if (left && tokenAt !== undefined && this.#tokenTimer === undefined && this.#again.size + this.#fresh.size > 0) {
      this.#tokenTimer = setTimeout(
        () => {
          this.#tokenTimer = undefined;
          this.#pump();
        },
        Math.max(1, tokenAt - clockNow),
      );
    }
  }

  /** Writes one part on a bind; false (the part put back) when the connection cannot be written. */
  #write(link: SmppLink, connection: SmppConnection, part: Part, now: number, clockNow: number): boolean {
    // Numbered by this connection (a part may go again on another).
    const sequence = connection.nextSequence();
    part.octets.writeUInt32BE(sequence, 12);
    // What is left of its validity, not what was left when it was built (rewritten only when the
    // seconds changed: formatting it for every part cost a microsecond a part).
    const left = part.job.validUntil - clockNow;
    const seconds = Math.floor(left / 1000);
    if (seconds !== part.validityS) {
      writeValidityPeriod(part.octets, smppRelativeTime(left));
      part.validityS = seconds;
    }
    if (!connection.write(part.octets)) {
      // Not writable: the connection is going; the part goes again after the next bind.
      this.#again.unshiftAll([part]);
      return false;
    }
    part.sentAt = now;
    part.job.inFlight++;
    link.outstanding.set(sequence, part);
    this.#c.submitted++;
    return true;
  }

  /** The SMSC answered a part on the link's connection now (answers on a dropped one never come here). */
  #onSubmitResp(link: SmppLink, part: Part, status: number, messageId: string): void {
    const job = part.job;
    job.inFlight--;
    if (status === SMPP_STATUS.ESME_ROK) {
      this.#c.accepted++;
      this.#throttleLevel = 0;
      if (!job.done) {
        if (job.tracked && messageId.length > 0) {
          const early = this.#inbound.accepted(job.tracked, messageId, link.smsc.idScope);
          if (early) this.#deliveries.report(early);
        }
        if (--job.remaining === 0) {
          this.#inbound.sentTo(job.sms.phone, job.sms.smsId);
          if (job.tracked) this.#receiptWait.sent(job.tracked);
          this.#finish(job, { status: 'sent' });
        }
      }
    } else if ((status === SMPP_STATUS.ESME_RTHROTTLED || status === SMPP_STATUS.ESME_RMSGQFUL) && this.#o.transientStatuses.has(status)) {
      this.#c.throttled++;
      job.lastProblem = smppStatusText(status);
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
      const connection = link.connection;
      if (connection) link.drop(connection, smppStatusText(status));
      // Another bind of the pool may take it now.
      this.#schedulePump();
      return;
    } else if (this.#o.transientStatuses.has(status)) {
      // Not now, not never: the part goes again after a back-off that grows with the SMS's
      // transient answers (jittered, so a burst of refusals does not come back as one burst).
      this.#c.retried++;
      job.lastProblem = smppStatusText(status);
      const wait = Math.round(backoffMs(this.#o.retryBackoff, job.retries++) * (0.5 + Math.random() / 2));
      if (!job.done) this.#delayed.push({ at: this.#o.clock.now() + wait, part });
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
