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
import type { ChannelSink } from '../channel.js';
import { concatInfo } from './smpp-codec.js';
import type { ReceiptUpdate, SmppInbound } from './smpp-inbound.js';
import { answer } from './smpp-link.js';
import { SMPP_STATUS, type SmppPdu, type SmppSession } from './smpp-package.js';
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
  /** Whether `session` is still the channel's connection (answers go only on the one a PDU came on). */
  current(session: SmppSession): boolean;
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

  /** A `deliver_sm` or `data_sm` on `session`. */
  deliver(session: SmppSession, pdu: SmppPdu): void {
    // A server that keeps nothing: answer first (an SMSC resends what it is not answered, matched
    // or not; the answers to the PDUs of one read go out in one write). A durable one: answer once
    // what the PDU did is written, so a crash before that leaves it to the SMSC to deliver again.
    const sink = this.#host.sink();
    const durable = sink?.written !== undefined;
    if (!durable) answer(session, pdu.response());
    if (this.#host.inbound.memory.recall !== undefined && sink?.recall !== undefined) {
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
      const smsIds = await this.#host.inbound.recall({ ...(fromText ? { receiptId: fromText.messageId } : {}), ...(from !== undefined ? { from } : {}) });
      if (smsIds.length > 0) await this.#host.sink()?.recall?.({ smsIds });
    } catch {
      if (durable && this.#host.current(session)) answer(session, pdu.response({ command_status: SMPP_STATUS.ESME_RX_T_APPN }));
      return;
    }
    const heldBy = this.#read(pdu);
    if (durable) void this.#answerWhenWritten(session, pdu, heldBy);
  }

  async #answerWhenWritten(session: SmppSession, pdu: SmppPdu, heldBy: Job | undefined): Promise<void> {
    if (heldBy && !heldBy.done) await new Promise<void>((resolve) => (heldBy.onDone ??= []).push(resolve));
    if (this.#eventsQueued) await (this.#eventsRan ??= new Promise<void>((resolve) => (this.#resolveEventsRan = resolve)));
    const ok = (await this.#host.sink()?.written?.()) ?? false;
    // The connection is gone: unanswered, the SMSC delivers it again on the next one.
    if (!this.#host.current(session)) return;
    answer(session, ok ? pdu.response() : pdu.response({ command_status: SMPP_STATUS.ESME_RX_T_APPN }));
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
      this.#host.counters.receipts++;
      const update = this.#host.inbound.receipt(receipt);
      return update ? this.report(update) : undefined;
    }
    if (type !== 0) return undefined; // acknowledgements and other kinds: nothing to report
    const from = typeof pdu['source_addr'] === 'string' ? pdu['source_addr'] : '';
    const reply = this.#host.inbound.reply(from, text, body?.udh ? concatInfo(body.udh) : undefined);
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

function textOf(message: unknown): string {
  if (typeof message === 'string') return message;
  if (message instanceof Uint8Array) return Buffer.from(message).toString('latin1');
  return '';
}
