/**
 * Merging the HSM status notifications of one message (one send attempt).
 *
 * Notifications arrive duplicated and out of order (WhatsApp may send `read` without `delivered`,
 * or `delivered` after `read`). So the merged state is not "the last status received" but the set
 * of statuses ever observed, kept as a bit mask, and the current status is a function of that set.
 * Set union is commutative, associative and idempotent: any permutation or duplication of the same
 * notifications gives the same state, hence the same status and statistics, by construction.
 *
 * The current status of a set:
 * 1. REPLIED if a reply was seen: the recipient answering is the strongest evidence there is, so a
 *    late FAILED or EXPIRED does not undo it;
 * 2. else FAILED, else EXPIRED, if seen: they end the message, and a later (or late) progress
 *    notification does not reopen it; FAILED wins over EXPIRED as it names the cause;
 * 3. else the highest of ENQUEUED < SENT < SERVER < DEVICE < READ seen.
 * A status never moves back: adding a notification can only keep or raise it in this order.
 *
 * Fill-in (a decision, see docs/decisions.md, webhook events): a status implies every progress status
 * before it, so a READ without DEVICE counts as delivered, and a REPLIED as read and delivered.
 */
import type { HsmStatus } from './schemas/hsm.js';

/** The progress chain, lowest first (spec 3 meanings: queued, sent, at server, at device, read, replied). */
/** A contact's progress, lowest first: ENQUEUED, SENT, SERVER, DEVICE, READ, REPLIED. */
export type ProgressStatus = 'ENQUEUED' | 'SENT' | 'SERVER' | 'DEVICE' | 'READ' | 'REPLIED';
const PROGRESS_ORDER: readonly ProgressStatus[] = ['ENQUEUED', 'SENT', 'SERVER', 'DEVICE', 'READ', 'REPLIED'];

const BIT: Readonly<Record<HsmStatus, number>> = {
  ENQUEUED: 1 << 0,
  SENT: 1 << 1,
  SERVER: 1 << 2,
  DEVICE: 1 << 3,
  READ: 1 << 4,
  REPLIED: 1 << 5,
  EXPIRED: 1 << 6,
  FAILED: 1 << 7,
};
/** Flag: a FAILED was reported with a code meaning the number is not on the channel. */
const DOES_NOT_EXIST = 1 << 8;
/** Flag: a REPLIED was reported as a blocklist response. */
const BLOCKLIST = 1 << 9;

/**
 * Everything known about one message's statuses: a bit set of observed statuses and flags. Plain
 * number, so it serialises as is. `0` is "nothing observed yet".
 */
export type MessageProgress = number;

/** The empty progress: no notification observed. */
export const NO_PROGRESS: MessageProgress = 0;

/** What one notification says, as far as merging is concerned. */
export interface StatusObservation {
  readonly status: HsmStatus;
  /** For FAILED: the failure means the number does not exist on the channel. @default false */
  readonly doesNotExist?: boolean;
  /** For REPLIED: the reply is a blocklist response. @default false */
  readonly blocklistResponse?: boolean;
}

/** Adds one observation. Flags join too (true wins), so contradicting duplicates resolve the same way in any order. */
export function observe(progress: MessageProgress, o: StatusObservation): MessageProgress {
  let next = progress | BIT[o.status];
  if (o.status === 'FAILED' && o.doesNotExist === true) next |= DOES_NOT_EXIST;
  if (o.status === 'REPLIED' && o.blocklistResponse === true) next |= BLOCKLIST;
  return next;
}

/** True when the status itself was observed (no fill-in). */
export function hasObserved(progress: MessageProgress, status: HsmStatus): boolean {
  return (progress & BIT[status]) !== 0;
}

/** The highest progress status observed, or null (ending statuses are not progress). */
function highestProgress(progress: MessageProgress): ProgressStatus | null {
  for (let i = PROGRESS_ORDER.length - 1; i >= 0; i--) {
    const s = PROGRESS_ORDER[i] as ProgressStatus;
    if ((progress & BIT[s]) !== 0) return s;
  }
  return null;
}

/**
 * True when the message reached `status` or beyond on the progress chain, with fill-in: a READ
 * reached DEVICE, SERVER and SENT even if those notifications never came.
 */
export function reached(progress: MessageProgress, status: ProgressStatus): boolean {
  const highest = highestProgress(progress);
  return highest !== null && PROGRESS_ORDER.indexOf(highest) >= PROGRESS_ORDER.indexOf(status);
}

/** The merged current status (rules in the module comment), or null when nothing was observed. */
export function currentStatus(progress: MessageProgress): HsmStatus | null {
  if ((progress & BIT.REPLIED) !== 0) return 'REPLIED';
  if ((progress & BIT.FAILED) !== 0) return 'FAILED';
  if ((progress & BIT.EXPIRED) !== 0) return 'EXPIRED';
  return highestProgress(progress);
}

/** True when a FAILED of this message was reported as "number does not exist". */
export function failedAsDoesNotExist(progress: MessageProgress): boolean {
  return (progress & DOES_NOT_EXIST) !== 0;
}

/** True when a REPLIED of this message was reported as a blocklist response. */
export function repliedAsBlocklist(progress: MessageProgress): boolean {
  return (progress & BLOCKLIST) !== 0;
}

/** Rank of a status in the "never moves back" order: ENQUEUED 0 … READ 4, EXPIRED 5, FAILED 6, REPLIED 7. */
export function statusRank(status: HsmStatus): number {
  switch (status) {
    case 'EXPIRED':
      return 5;
    case 'FAILED':
      return 6;
    case 'REPLIED':
      return 7;
    default:
      return PROGRESS_ORDER.indexOf(status);
  }
}

/** A notification handed to {@link StatusMerger.apply}. */
export interface StatusNotification extends StatusObservation {
  /** `event_id` of the notification. */
  readonly eventId: string;
  /** The message (send attempt) it is about; see {@link attemptKey}. */
  readonly messageKey: string;
}

/** What applying one notification did. */
export type MergeOutcome =
  /** This `event_id` was applied before: nothing changed. */
  | { readonly kind: 'duplicate-event'; readonly status: HsmStatus | null }
  /** This (message, status) was applied before (under another event id): nothing changed. */
  | { readonly kind: 'duplicate-status'; readonly status: HsmStatus | null }
  /** Recorded, but the current status stays (it arrived after a later one, e.g. DEVICE after READ). */
  | { readonly kind: 'late'; readonly status: HsmStatus }
  /** The current status moved forward. */
  | { readonly kind: 'advanced'; readonly from: HsmStatus | null; readonly to: HsmStatus };

/**
 * The key of one send attempt of a message: a retry is a new send with its own status lifecycle,
 * so its statuses must not merge with the first try's (a FAILED first try and a delivered retry).
 */
export function attemptKey(messageId: string, retryIndex: number | null): string {
  return retryIndex === null ? messageId : `${messageId}#retry${retryIndex}`;
}

/**
 * Merges notifications of many messages: idempotent by `event_id` and by (message, status), never
 * moving a message back. Memory grows with messages; {@link StatusMerger.forget} drops finished ones.
 */
export class StatusMerger {
  readonly #progress = new Map<string, MessageProgress>();
  readonly #events = new Map<string, Set<string>>();
  readonly #seenEvents = new Set<string>();

  /** Applies one notification. */
  apply(n: StatusNotification): MergeOutcome {
    const before = this.#progress.get(n.messageKey) ?? NO_PROGRESS;
    const beforeStatus = currentStatus(before);
    if (this.#seenEvents.has(n.eventId)) return { kind: 'duplicate-event', status: beforeStatus };
    this.#seenEvents.add(n.eventId);
    let ids = this.#events.get(n.messageKey);
    if (!ids) this.#events.set(n.messageKey, (ids = new Set()));
    ids.add(n.eventId);

    const after = observe(before, n);
    if (after === before) return { kind: 'duplicate-status', status: beforeStatus };
    this.#progress.set(n.messageKey, after);
    const afterStatus = currentStatus(after) as HsmStatus;
    return afterStatus === beforeStatus ? { kind: 'late', status: afterStatus } : { kind: 'advanced', from: beforeStatus, to: afterStatus };
  }

  /** The merged progress of a message (`NO_PROGRESS` when unknown). */
  progress(messageKey: string): MessageProgress {
    return this.#progress.get(messageKey) ?? NO_PROGRESS;
  }

  /** The current status of a message, or null when no notification was applied. */
  status(messageKey: string): HsmStatus | null {
    return currentStatus(this.progress(messageKey));
  }

  /** Drops a message and the event ids seen for it (after it ended and no more notifications can come). */
  forget(messageKey: string): void {
    for (const id of this.#events.get(messageKey) ?? []) this.#seenEvents.delete(id);
    this.#events.delete(messageKey);
    this.#progress.delete(messageKey);
  }

  /** Number of messages tracked. */
  get size(): number {
    return this.#progress.size;
  }
}
