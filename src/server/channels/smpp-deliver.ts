/**
 * What the SMSC delivers to the SMPP channel (`deliver_sm`, `data_sm`): delivery receipts (DLR) of
 * the parts it sent, and replies (MO). Both are matched to their SMS in the `ChannelMemory` the
 * server lends (smpp-inbound.ts) and reported to the sink after the `sendSms` answer of their SMS,
 * so a DLR `DELIVERED` never precedes its `SENT`.
 *
 * When the PDU is answered is the point of this file: a server that keeps nothing answers at once;
 * a durable one answers once what the PDU did is written (`sink.written`), and with ESME_RX_T_APPN
 * (a temporary error: the SMSC delivers it again) when that failed; the server on Redis first reads
 * what the fleet remembers of the SMS named (another instance may have sent it).
 *
 * Separate from the channel (smpp-channel.ts), which sends: receipts and replies come on the same
 * bind but follow their own rules of matching, ordering and acknowledgement.
 */
import type { ChannelSink } from '../ports/channel.js';
import { concatInfo } from './smpp-codec.js';
import type { SmppConnection } from './smpp-connection.js';
import { CMD, encodeInboundResp, type InboundSm } from './smpp-frames.js';
import type { ReceiptUpdate, SmppInbound } from './smpp-inbound.js';
import { SMPP_STATUS } from './smpp-package.js';
import type { Job } from './smpp-queue.js';
import { ESM_TYPE_INTERMEDIATE, ESM_TYPE_MASK, ESM_TYPE_RECEIPT, parseReceipt } from './smpp-receipt.js';

/** What the receipts and replies need of the channel. */
export interface SmppDeliveriesHost {
  /** Matches receipts and replies to the SMS sent. */
  readonly inbound: SmppInbound;
  /** SMS not answered yet, by id: a receipt that comes before the answer waits for it. */
  readonly jobs: ReadonlyMap<string, Job>;
  /** The channel's counters of receipts and replies read. */
  readonly counters: { receipts: number; replies: number };
  /** Where receipts and replies are reported (once the server attached the channel). */
  sink(): ChannelSink | undefined;
  /** Whether `connection` is still the channel's (answers go only on the one a PDU came on). */
  current(connection: SmppConnection): boolean;
}

/** Reads receipts and replies, reports them in order, and answers their PDUs when it is safe. */
export class SmppDeliveries {
  readonly #host: SmppDeliveriesHost;
  #events: (() => void)[] = [];
  #eventsQueued = false;
  /** Resolved once the queued sink calls ran (made only when a `deliver_sm` waits for them). */
  #eventsRan: Promise<void> | undefined;
  #resolveEventsRan: (() => void) | undefined;

  constructor(host: SmppDeliveriesHost) {
    this.#host = host;
  }

  /** A `deliver_sm` or `data_sm` on `connection`, a bind of the account `scope` names ('' for the first). */
  deliver(connection: SmppConnection, pdu: InboundSm, scope = ''): void {
    // A server that keeps nothing: answer first (an SMSC resends what it is not answered, matched
    // or not; the answers to the PDUs of one read go out in one write). A durable one: answer once
    // what the PDU did is written, so a crash before that leaves it to the SMSC to deliver again.
    const sink = this.#host.sink();
    const durable = sink?.written !== undefined;
    if (!durable) answer(connection, pdu, SMPP_STATUS.ESME_ROK);
    if (this.#host.inbound.memory.recall !== undefined && sink?.recall !== undefined) {
      void this.#recallThenRead(connection, pdu, durable, scope);
      return;
    }
    const heldBy = this.#read(pdu, scope);
    if (durable) void this.#answerWhenWritten(connection, pdu, heldBy);
  }

  /**
   * The server on Redis: the SMS a receipt or reply names may have been sent by another instance;
   * what the fleet remembers of it is read first. Not readable (Redis away): answered with a
   * temporary error, so the SMSC delivers it again.
   */
  async #recallThenRead(connection: SmppConnection, pdu: InboundSm, durable: boolean, scope: string): Promise<void> {
    try {
      const fromText = parseReceipt(pdu.text, { receiptedMessageId: pdu.receiptedMessageId, messageState: pdu.messageState });
      const smsIds = await this.#host.inbound.recall({ ...(fromText ? { receiptId: fromText.messageId } : {}), from: pdu.sourceAddr, scope });
      if (smsIds.length > 0) await this.#host.sink()?.recall?.({ smsIds });
    } catch {
      if (durable && this.#host.current(connection)) answer(connection, pdu, SMPP_STATUS.ESME_RX_T_APPN);
      return;
    }
    const heldBy = this.#read(pdu, scope);
    if (durable) void this.#answerWhenWritten(connection, pdu, heldBy);
  }

  async #answerWhenWritten(connection: SmppConnection, pdu: InboundSm, heldBy: Job | undefined): Promise<void> {
    if (heldBy && !heldBy.done) await new Promise<void>((resolve) => (heldBy.onDone ??= []).push(resolve));
    if (this.#eventsQueued) await (this.#eventsRan ??= new Promise<void>((resolve) => (this.#resolveEventsRan = resolve)));
    const ok = (await this.#host.sink()?.written?.()) ?? false;
    // The connection is gone: unanswered, the SMSC delivers it again on the next one.
    if (!this.#host.current(connection)) return;
    answer(connection, pdu, ok ? SMPP_STATUS.ESME_ROK : SMPP_STATUS.ESME_RX_T_APPN);
  }

  /** Reads a `deliver_sm` / `data_sm` and reports it; the job its receipt waits for, if any. */
  #read(pdu: InboundSm, scope: string): Job | undefined {
    const type = pdu.esmClass & ESM_TYPE_MASK;
    const text = pdu.text;
    if (type === ESM_TYPE_RECEIPT || type === ESM_TYPE_INTERMEDIATE || (pdu.command === 'data_sm' && pdu.receiptedMessageId !== undefined)) {
      const receipt = parseReceipt(text, { receiptedMessageId: pdu.receiptedMessageId, messageState: pdu.messageState });
      if (!receipt) return undefined;
      this.#host.counters.receipts++;
      const update = this.#host.inbound.receipt(receipt, scope);
      return update ? this.report(update) : undefined;
    }
    if (type !== 0) return undefined; // acknowledgements and other kinds: nothing to report
    const reply = this.#host.inbound.reply(pdu.sourceAddr, text, pdu.udh ? concatInfo(pdu.udh) : undefined);
    if (!reply) return undefined;
    this.#host.counters.replies++;
    this.#later(() => this.#host.sink()?.smsReply(reply));
    return undefined;
  }

  /** Reports a receipt's status now, or after its SMS is answered (the job returned). */
  report(update: ReceiptUpdate): Job | undefined {
    const job = this.#host.jobs.get(update.smsId);
    if (job && !job.done) {
      // A part's receipt before the last part's answer: the DLR follows the answer, never precedes it.
      (job.held ??= []).push(update);
      return job;
    }
    this.#later(() => this.#host.sink()?.smsStatus(update));
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

/** Answers a `deliver_sm` / `data_sm` on the connection it came on. */
function answer(connection: SmppConnection, pdu: InboundSm, status: number): void {
  connection.answer(encodeInboundResp(pdu.command === 'data_sm' ? CMD.DATA_SM : CMD.DELIVER_SM, status, pdu.sequence));
}
