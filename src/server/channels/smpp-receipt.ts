/**
 * SMSC delivery receipts (`deliver_sm` with `esm_class` "MC delivery receipt"): which message they
 * are about and what they say, as an SMS delivery status. Pure.
 *
 * The receipt's text follows SMPP 3.4 Appendix B:
 * `id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E Text: …`.
 * The TLVs `receipted_message_id` and `message_state`, when the SMSC sends them, win over the text
 * (they are typed; the text's format varies between SMSCs).
 */
import type { SmsStatus } from '../ports/channel.js';

/** `esm_class` bits 2–5 (message type) of a `deliver_sm` (SMPP 3.4, 5.2.12). */
export const ESM_TYPE_MASK = 0x3c;
/** Message type "SMSC delivery receipt". */
export const ESM_TYPE_RECEIPT = 0x04;
/** Message type "intermediate delivery notification" (not final: no callback). */
export const ESM_TYPE_INTERMEDIATE = 0x20;

/** What a receipt's `stat:` (or `message_state`) means for the SMS. */
export type ReceiptOutcome =
  | { readonly final: true; readonly status: Exclude<SmsStatus, 'SENT'> }
  /** Not final (ENROUTE, ACCEPTD, SCHEDULED): no callback, a final receipt follows. */
  | { readonly final: false };

/**
 * `stat:` values (SMPP 3.4 Appendix B, and `message_state` 5.2.28) and the SMS status they give.
 * DELIVRD is the only success; EXPIRED has its own status; every other final state fails the SMS.
 */
export const RECEIPT_STATES: Readonly<Record<string, ReceiptOutcome>> = {
  DELIVRD: { final: true, status: 'DELIVERED' },
  EXPIRED: { final: true, status: 'EXPIRED' },
  UNDELIV: { final: true, status: 'FAILED' },
  REJECTD: { final: true, status: 'FAILED' },
  DELETED: { final: true, status: 'FAILED' },
  UNKNOWN: { final: true, status: 'FAILED' },
  SKIPPED: { final: true, status: 'FAILED' },
  ENROUTE: { final: false },
  ACCEPTD: { final: false },
  SCHEDULED: { final: false },
};

/** `message_state` TLV values (5.2.28) by the `stat:` word they stand for. */
const MESSAGE_STATE: readonly string[] = ['SCHEDULED', 'ENROUTE', 'DELIVRD', 'EXPIRED', 'DELETED', 'UNDELIV', 'ACCEPTD', 'UNKNOWN', 'REJECTD', 'SKIPPED'];

/** A receipt, read. */
export interface Receipt {
  /** The SMSC's message id (`receipted_message_id`, else the text's `id:`). */
  readonly messageId: string;
  /** The state word (`DELIVRD`, `UNDELIV`, …), upper case. */
  readonly stat: string;
  /** The text's `err:` (network-specific error code), when given. */
  readonly err: string | undefined;
  readonly outcome: ReceiptOutcome;
}

const ID = /(?:^|\s)id:(\S+)/i;
const STAT = /(?:^|\s)stat:(\S+)/i;
const ERR = /(?:^|\s)err:(\S+)/i;

/**
 * Reads a receipt from its text and TLVs. Undefined when it names no message. A state word that is
 * not in {@link RECEIPT_STATES} is a final failure (an SMSC that made up a state did not deliver).
 */
export function parseReceipt(text: string, tlvs: { readonly receiptedMessageId?: unknown; readonly messageState?: unknown } = {}): Receipt | undefined {
  const tlvId = typeof tlvs.receiptedMessageId === 'string' && tlvs.receiptedMessageId.length > 0 ? tlvs.receiptedMessageId : undefined;
  const messageId = tlvId ?? ID.exec(text)?.[1];
  if (messageId === undefined) return undefined;
  const tlvState = typeof tlvs.messageState === 'number' ? MESSAGE_STATE[tlvs.messageState] : undefined;
  const stat = (tlvState ?? STAT.exec(text)?.[1] ?? 'UNKNOWN').toUpperCase();
  const err = ERR.exec(text)?.[1];
  const outcome = RECEIPT_STATES[stat] ?? { final: true, status: 'FAILED' };
  return { messageId, stat, err, outcome };
}

/** The DLR `reason` of a receipt that did not deliver: `UNDELIV err:012`. Null for DELIVRD. */
export function receiptReason(receipt: Receipt): string | null {
  if (receipt.outcome.final && receipt.outcome.status === 'DELIVERED') return null;
  return receipt.err === undefined ? receipt.stat : `${receipt.stat} err:${receipt.err}`;
}

/**
 * Other spellings of a message id to try when a receipt names none the channel knows: some SMSCs
 * answer `submit_sm` with a hexadecimal id and write it in decimal in the receipt, or the reverse.
 */
export function alternateIds(id: string): string[] {
  const out: string[] = [];
  try {
    if (/^[0-9]{1,30}$/.test(id)) {
      const hex = BigInt(id).toString(16);
      out.push(hex, hex.toUpperCase());
    }
    if (/^[0-9a-f]{1,24}$/i.test(id)) out.push(BigInt(`0x${id}`).toString(10));
  } catch {
    // not a number in either base: no other spelling
  }
  return out.filter((x) => x !== id);
}
