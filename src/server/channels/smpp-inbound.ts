/**
 * What comes back from the SMSC, matched to the SMS the server sent: delivery receipts by the
 * SMSC's message id (one per part), replies (MO) by the phone that sent them. The ids are kept in
 * a `ChannelMemory` (the server's, written to its database when it has one, so receipts and replies
 * for SMS sent before a restart still match), bounded, oldest forgotten first; no I/O, no timers.
 *
 * Keys: `sr:<SMSC message id>` holds `<parts> <SMS id>` until the part's final receipt;
 * `sn:<SMS id>` the parts of a long SMS delivered so far (`x` once one failed: its status is
 * decided); `sw:<SMS id>` holds `<accepted at ms> <message id>…` from its `sent` answer until its
 * status is decided (the receipt wait, smpp-receipt-wait.ts, expires it); `so:<phone digits>` the
 * last SMS sent to the phone.
 *
 * A long SMS is delivered when every part's receipt says DELIVRD; the first part that does not
 * deliver decides its status (FAILED or EXPIRED), and later receipts of its parts are ignored.
 */
import type { ChannelMemory, SmsStatus } from '../ports/channel.js';
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
  /** The SMSC's message ids of its accepted parts. */
  readonly ids: string[];
}

/** An SMS whose final receipt is awaited, as `sw:` keeps it. */
export interface AwaitedReceipts {
  /** When its last part was accepted (the channel's clock). */
  readonly at: number;
  /** The message ids of its parts whose final receipt had not come then. */
  readonly ids: readonly string[];
}

const RECEIPT_KEY = 'sr:';
const PROGRESS_KEY = 'sn:';
/** Prefix of the keys of SMS whose final receipt is awaited. */
export const WAIT_KEY = 'sw:';
const REPLY_KEY = 'so:';
/** `sn:` of a long SMS whose status is decided. */
const DECIDED = 'x';

/** Receipts that came before the `submit_sm_resp` naming their id was read. */
const MAX_EARLY_RECEIPTS = 1_000;
/** Unfinished concatenated replies kept at once. */
const MAX_PARTIAL_REPLIES = 10_000;

/** Sets `key` as the newest entry of `map`, forgetting the oldest past `max`. */
function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (!map.delete(key) && map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}

/** Reads a `sw:` value (`<accepted at ms> <message id>…`); undefined when it is not one. */
export function parseAwaited(value: string): AwaitedReceipts | undefined {
  const [at, ...ids] = value.split(' ');
  const time = Number(at);
  return Number.isSafeInteger(time) ? { at: time, ids } : undefined;
}

/** The keys' ids of a message id of the account `scope` names: as written, and its other spellings (hex, decimal). */
function spellings(messageId: string, scope: string): string[] {
  return [messageId, ...alternateIds(messageId)].map((id) => scope + id);
}

/** Digits only: `+55 11 98765-4321` and `5511987654321` are one phone. */
export function phoneDigits(address: string): string {
  return address.replace(/\D/g, '');
}

export class SmppInbound {
  readonly #early = new Map<string, Receipt>();
  readonly #partial = new Map<string, (string | undefined)[]>();
  /** Where the ids are kept: the server's memory once attached. */
  memory: ChannelMemory;
  /** Receipts that named an id the channel did not know when they came. */
  unmatchedReceipts = 0;
  /** Replies from a phone the channel sent nothing to (or forgot). */
  unmatchedReplies = 0;
  /** Told when a receipt decided an SMS's status (the receipt wait stops waiting for it). */
  decided: ((smsId: string) => void) | undefined;

  constructor(memory: ChannelMemory) {
    this.memory = memory;
  }

  /**
   * Before a receipt (its SMSC message id) or a reply (its sender's address) is read: holds what the
   * fleet remembers of it (on the server on Redis another instance may have sent the SMS), and
   * answers the SMS ids it names, for the server to recall too.
   */
  async recall(about: { readonly receiptId?: string; readonly from?: string; readonly scope?: string }): Promise<string[]> {
    const memory = this.memory;
    if (memory.recall === undefined) return [];
    const keys: string[] = [];
    if (about.receiptId !== undefined) keys.push(...spellings(about.receiptId, about.scope ?? '').map((id) => RECEIPT_KEY + id));
    if (about.from !== undefined) keys.push(REPLY_KEY + phoneDigits(about.from));
    await memory.recall(keys);
    const smsIds: string[] = [];
    for (const key of keys) {
      const value = memory.get(key);
      if (value === undefined) continue;
      smsIds.push(key.startsWith(REPLY_KEY) ? value : value.slice(value.indexOf(' ') + 1));
    }
    if (smsIds.length > 0) await memory.recall(smsIds.flatMap((id) => [PROGRESS_KEY + id, WAIT_KEY + id]));
    return smsIds;
  }

  /** An SMS about to be sent in `parts` parts: the handle its accepted parts are recorded under. */
  track(smsId: string, parts: number): TrackedSms {
    const t: Tracked = { smsId, parts, ids: [] };
    return t;
  }

  /**
   * The SMSC accepted a part of the SMS under `messageId` (an id of the account `scope` names, ''
   * for the first). Returns the update a receipt that came before this answer now gives, if any.
   */
  accepted(t: TrackedSms, messageId: string, scope = ''): ReceiptUpdate | undefined {
    const { smsId, parts, ids } = t as Tracked;
    const id = scope + messageId;
    this.memory.set(RECEIPT_KEY + id, `${parts} ${smsId}`);
    ids.push(id);
    const early = this.#early.get(id);
    if (early === undefined) return undefined;
    this.#early.delete(id);
    this.unmatchedReceipts--;
    return this.receipt(early, scope);
  }

  /**
   * A receipt from the account `scope` names ('' for the first): the SMS status to report, or
   * undefined (not final, unknown id, already decided).
   */
  receipt(r: Receipt, scope = ''): ReceiptUpdate | undefined {
    if (!r.outcome.final) return undefined;
    const memory = this.memory;
    let key = RECEIPT_KEY + scope + r.messageId;
    let tracked = memory.get(key);
    if (tracked === undefined) {
      for (const alt of alternateIds(r.messageId)) {
        tracked = memory.get(RECEIPT_KEY + scope + alt);
        if (tracked !== undefined) {
          key = RECEIPT_KEY + scope + alt;
          break;
        }
      }
    }
    const space = tracked === undefined ? -1 : tracked.indexOf(' ');
    if (tracked === undefined || space < 0) {
      this.unmatchedReceipts++;
      setBounded(this.#early, scope + r.messageId, r, MAX_EARLY_RECEIPTS);
      return undefined;
    }
    memory.delete(key);
    const parts = Number(tracked.slice(0, space));
    const smsId = tracked.slice(space + 1);
    const delivered = r.outcome.status === 'DELIVERED';
    if (parts > 1) {
      // A long SMS: its parts' receipts are counted under its id until one decides.
      const progressKey = PROGRESS_KEY + smsId;
      const progress = memory.get(progressKey);
      if (progress === DECIDED) return undefined;
      if (delivered) {
        const count = (progress === undefined ? 0 : Number(progress)) + 1;
        if (count < parts) {
          memory.set(progressKey, String(count));
          return undefined;
        }
        memory.delete(progressKey);
        return this.#decide({ smsId, status: 'DELIVERED', reason: null });
      }
      memory.set(progressKey, DECIDED);
    } else if (delivered) return this.#decide({ smsId, status: 'DELIVERED', reason: null });
    const reason = receiptReason(r);
    return this.#decide({ smsId, status: r.outcome.status, reason: parts > 1 && reason !== null ? `part of ${parts}: ${reason}` : reason });
  }

  /** A receipt decided the SMS's status: no longer awaited. */
  #decide(update: ReceiptUpdate): ReceiptUpdate {
    this.memory.delete(WAIT_KEY + update.smsId);
    this.decided?.(update.smsId);
    return update;
  }

  /**
   * Every part of the SMS was accepted (its `sent` answer) at `at`: its final receipt is awaited
   * from now on, under `sw:`. Returns false when a receipt read before this answer already decided
   * its status (or when every part's id was forgotten, which no receipt would match either).
   */
  awaitReceipts(t: TrackedSms, at: number): boolean {
    const { smsId, ids } = t as Tracked;
    const memory = this.memory;
    if (memory.get(PROGRESS_KEY + smsId) === DECIDED) return false;
    const open = ids.filter((id) => memory.get(RECEIPT_KEY + id) !== undefined);
    // Ids given and every part's final receipt read: decided. No id given (an SMSC that answers
    // without one): no receipt can match, and it expires like any SMS without a receipt.
    if (ids.length > 0 && open.length === 0) return false;
    memory.set(WAIT_KEY + smsId, [String(at), ...open].join(' '));
    return true;
  }

  /** What `sw:` holds of an SMS: undefined when its status is decided (or it was forgotten). */
  awaited(smsId: string): AwaitedReceipts | undefined {
    const value = this.memory.get(WAIT_KEY + smsId);
    if (value === undefined) return undefined;
    return parseAwaited(value);
  }

  /** The keys expiring the SMS reads and removes (for a memory to recall first). */
  expiryKeys(smsId: string, awaited: AwaitedReceipts): string[] {
    return [WAIT_KEY + smsId, PROGRESS_KEY + smsId, ...awaited.ids.map((id) => RECEIPT_KEY + id)];
  }

  /** The SMS's receipt did not come in time: forgets it, so a receipt after this is ignored. */
  expire(smsId: string, awaited: AwaitedReceipts): void {
    for (const key of this.expiryKeys(smsId, awaited)) this.memory.delete(key);
  }

  /** An SMS went to `phone` (digits, as the contract gives it): a reply from it belongs to this SMS until another is sent. */
  sentTo(phone: string, smsId: string): void {
    this.memory.set(REPLY_KEY + phone, smsId);
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
    const smsId = this.memory.get(REPLY_KEY + from);
    if (smsId === undefined) {
      this.unmatchedReplies++;
      return undefined;
    }
    return { smsId, text: whole };
  }
}
