/**
 * What comes back from the SMSC, matched to the SMS the server sent: delivery receipts by the
 * SMSC's message id (one per part), replies (MO) by the phone that sent them. Bounded maps in
 * memory, oldest forgotten first; pure (no I/O, no timers).
 *
 * A long SMS is delivered when every part's receipt says DELIVRD; the first part that does not
 * deliver decides its status (FAILED or EXPIRED), and later receipts of its parts are ignored.
 */
import type { SmsStatus } from '../channel.js';
import type { ConcatInfo } from './smpp-codec.js';
import { alternateIds, receiptReason, type Receipt } from './smpp-receipt.js';

/** A delivery status to report for an SMS. */
export interface ReceiptUpdate {
  readonly smsId: string;
  readonly status: Exclude<SmsStatus, 'SENT'>;
  readonly reason: string | null;
}

/** An SMS whose parts' receipts are awaited (opaque outside this file). */
export interface TrackedSms {
  readonly smsId: string;
}

interface Tracked extends TrackedSms {
  readonly smsId: string;
  readonly parts: number;
  delivered: number;
  done: boolean;
}

/** Receipts that came before the `submit_sm_resp` naming their id was read. */
const MAX_EARLY_RECEIPTS = 1_000;
/** Unfinished concatenated replies kept at once. */
const MAX_PARTIAL_REPLIES = 10_000;

/** Sets `key` as the newest entry of `map`, forgetting the oldest past `max`. */
function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (!map.delete(key) && map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}

/** Digits only: `+55 11 98765-4321` and `5511987654321` are one phone. */
export function phoneDigits(address: string): string {
  return address.replace(/\D/g, '');
}

export class SmppInbound {
  readonly #byMessageId = new Map<string, Tracked>();
  readonly #early = new Map<string, Receipt>();
  readonly #lastSmsTo = new Map<string, string>();
  readonly #partial = new Map<string, (string | undefined)[]>();
  readonly #maxReceipts: number;
  readonly #maxReplies: number;
  /** Receipts that named an id the channel did not know when they came. */
  unmatchedReceipts = 0;
  /** Replies from a phone the channel sent nothing to (or forgot). */
  unmatchedReplies = 0;

  constructor(maxReceipts: number, maxReplies: number) {
    this.#maxReceipts = maxReceipts;
    this.#maxReplies = maxReplies;
  }

  /** Message ids kept for receipts (for tests and stats). */
  get trackedReceipts(): number {
    return this.#byMessageId.size;
  }

  /** An SMS about to be sent in `parts` parts: the handle its accepted parts are recorded under. */
  track(smsId: string, parts: number): TrackedSms {
    const t: Tracked = { smsId, parts, delivered: 0, done: false };
    return t;
  }

  /**
   * The SMSC accepted a part of the SMS under `messageId`. Returns the update a receipt that came
   * before this answer now gives, if any.
   */
  accepted(t: TrackedSms, messageId: string): ReceiptUpdate | undefined {
    setBounded(this.#byMessageId, messageId, t as Tracked, this.#maxReceipts);
    const early = this.#early.get(messageId);
    if (early === undefined) return undefined;
    this.#early.delete(messageId);
    this.unmatchedReceipts--;
    return this.receipt(early);
  }

  /** A receipt: the SMS status to report, or undefined (not final, unknown id, already decided). */
  receipt(r: Receipt): ReceiptUpdate | undefined {
    if (!r.outcome.final) return undefined;
    let id = r.messageId;
    let t = this.#byMessageId.get(id);
    if (!t) {
      for (const alt of alternateIds(id)) {
        t = this.#byMessageId.get(alt);
        if (t) {
          id = alt;
          break;
        }
      }
    }
    if (!t) {
      this.unmatchedReceipts++;
      setBounded(this.#early, r.messageId, r, MAX_EARLY_RECEIPTS);
      return undefined;
    }
    this.#byMessageId.delete(id);
    if (t.done) return undefined;
    if (r.outcome.status === 'DELIVERED') {
      t.delivered++;
      if (t.delivered < t.parts) return undefined;
      t.done = true;
      return { smsId: t.smsId, status: 'DELIVERED', reason: null };
    }
    t.done = true;
    const reason = receiptReason(r);
    return { smsId: t.smsId, status: r.outcome.status, reason: t.parts > 1 && reason !== null ? `part of ${t.parts}: ${reason}` : reason };
  }

  /** An SMS went to `phone` (digits, as the contract gives it): a reply from it belongs to this SMS until another is sent. */
  sentTo(phone: string, smsId: string): void {
    setBounded(this.#lastSmsTo, phone, smsId, this.#maxReplies);
  }

  /**
   * A reply (MO) from `phone`. A part of a concatenated reply is kept until all its parts came.
   * Returns the reply to report, or undefined (waiting for parts, or no SMS went to that phone).
   */
  reply(phone: string, text: string, concat: ConcatInfo | undefined): { readonly smsId: string; readonly text: string } | undefined {
    const from = phoneDigits(phone);
    let whole = text;
    if (concat !== undefined && concat.total > 1 && concat.seq >= 1 && concat.seq <= concat.total) {
      const key = `${from}|${concat.ref}|${concat.total}`;
      const parts = this.#partial.get(key) ?? new Array<string | undefined>(concat.total).fill(undefined);
      parts[concat.seq - 1] = text;
      if (parts.some((p) => p === undefined)) {
        setBounded(this.#partial, key, parts, MAX_PARTIAL_REPLIES);
        return undefined;
      }
      this.#partial.delete(key);
      whole = parts.join('');
    }
    const smsId = this.#lastSmsTo.get(from);
    if (smsId === undefined) {
      this.unmatchedReplies++;
      return undefined;
    }
    return { smsId, text: whole };
  }
}
