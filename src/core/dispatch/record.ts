/**
 * A submission as the dispatch queue keeps it: its options, its contacts, and per contact the state,
 * the retries used, the hand-outs made and the pair of the hand-out in flight (typed arrays: about
 * 20 bytes a contact), plus where its queued contacts stand in its queue.
 *
 * Where queued contacts stand: contacts never handed out are served in index order from `fresh`
 * (a cursor, so they cost nothing in any queue); contacts that came back (a failover, a retry that
 * fell due, a hand-out in flight at a restart) wait in `back` and go before them. `freshQueued` and
 * `backQueued` count the queued contacts of each part exactly. `back` can hold the index of a
 * contact that ended while it waited there (a late "sent" for an earlier hand-out); such an index
 * refers to a final contact of this same record, is never queued again, and is skipped.
 */
import type { ContactList } from './contact-list.js';
import type { Blocker, DispatchCounts, TerminalState } from './types.js';

// Contact states (one byte a contact; the digits of a snapshot's `state` string).
export const QUEUED = 0;
export const WAITING = 1;
export const IN_FLIGHT = 2;
export const SENT = 3;
export const FAILED = 4;
export const EXPIRED = 5;
export const REJECTED = 6;
/** States at or above this one are final. */
export const FIRST_FINAL = SENT;

export const TERMINAL_NAMES: Readonly<Record<number, TerminalState>> = { [SENT]: 'sent', [FAILED]: 'failed', [EXPIRED]: 'expired', [REJECTED]: 'rejected' };

/*
 * Where a record stands in the host's changes (`takeChanges`, tracking on): its `told`. One code,
 * not two flags, since what the next changes give of the record (nothing, the record, the record
 * with its contacts) depends on both whether it is listed and whether the host has its contacts.
 */
/** The host has not had the record's contacts, and nothing of it waits for the next changes. */
export const UNTOLD = 0;
/** The host has the record as it is now. */
export const TOLD = 1;
/** Listed for the next changes, with its contacts (the host has not had them). */
export const LISTED_NEW = 2;
/** Listed for the next changes, without its contacts (the host has them). */
export const LISTED_CHANGED = 3;
export type Told = typeof UNTOLD | typeof TOLD | typeof LISTED_NEW | typeof LISTED_CHANGED;

/** A change to `record` while tracking: listed for the next changes; answers whether it was not before. */
export function listChange(record: SubmissionRecord): boolean {
  if (record.told >= LISTED_NEW) return false;
  record.told = record.told === TOLD ? LISTED_CHANGED : LISTED_NEW;
  return true;
}

/** The host has the record's contacts (it restored them): listed or not as before. */
export function contactsTold(told: Told): Told {
  return told === UNTOLD ? TOLD : told === LISTED_NEW ? LISTED_CHANGED : told;
}

/** Taken off the list without being given (it finished meanwhile): the host has what it had. */
export function unlisted(told: Told): Told {
  return told === LISTED_CHANGED ? TOLD : told === LISTED_NEW ? UNTOLD : told;
}

/** Slot of `submitted` in a {@link Counts} array, after the states. */
export const SUBMITTED = 7;

/**
 * Contacts per state, indexed by state, and `submitted` at {@link SUBMITTED}: a typed array, so a
 * move between states is two indexed writes (named fields picked by a state cost a keyed lookup each).
 */
export type Counts = Float64Array;

export function zeroCounts(): Counts {
  return new Float64Array(8);
}

/** The counts as the API gives them. */
export function countsView(c: Counts): DispatchCounts {
  return {
    submitted: c[SUBMITTED]!,
    queued: c[QUEUED]!,
    waitingRetry: c[WAITING]!,
    inFlight: c[IN_FLIGHT]!,
    sent: c[SENT]!,
    failed: c[FAILED]!,
    expired: c[EXPIRED]!,
    rejected: c[REJECTED]!,
  };
}

/**
 * The queue a record's queued contacts wait in, as records and the dispatcher use it (PoolQueue,
 * pool-queue.ts, implements it): declared here so the record and its queue do not import each other.
 */
export interface RecordQueue {
  readonly businessId: number;
  readonly typeId: number;
  /** Queued contacts over all flows. */
  readonly ready: number;
  /** Contacts of the queue waiting for their retry time. */
  waiting: number;
  /** Clock time before which polling the queue cannot hand anything out (0: look now). */
  wakeAt: number;
  blocked: Blocker | undefined;
  retryAt: number | undefined;
  addFresh(record: SubmissionRecord, count: number, ahead?: boolean): void;
  addBack(record: SubmissionRecord, index: number): void;
  removeOne(record: SubmissionRecord, index: number): void;
  removeAll(record: SubmissionRecord): void;
}

/** Contacts of a record still to end: queued, waiting for a retry, or in flight. */
export function unfinished(c: Counts): number {
  return c[QUEUED]! + c[WAITING]! + c[IN_FLIGHT]!;
}

/** What a record is made from: a submission (defaults not applied yet) or a snapshot's submission. */
export interface RecordSource {
  readonly businessId: number;
  readonly typeId: number;
  readonly campaignId?: number | undefined;
  readonly queueId?: number | undefined;
  readonly botId?: number | undefined;
  readonly maxRetries?: number | undefined;
  readonly retryInterval?: number | undefined;
  readonly deadline?: number | undefined;
  readonly weight?: number | undefined;
  readonly retriesUsed?: number | undefined;
}

export interface SubmissionRecord {
  readonly seq: number;
  readonly businessId: number;
  readonly typeId: number;
  readonly campaignId: number | undefined;
  readonly queueId: number | undefined;
  readonly botId: number | undefined;
  readonly maxRetries: number;
  readonly retryInterval: number;
  readonly deadline: number | undefined;
  readonly weight: number;
  contacts: ContactList;
  readonly id: string;
  /** The flow its contacts belong to: its campaign, or the submission alone without one. */
  readonly flowKey: string;
  readonly queue: RecordQueue;
  readonly state: Uint8Array;
  readonly retries: Uint8Array;
  readonly handouts: Uint16Array;
  /**
   * The pair of the hand-out in flight (a message id names its contact, so no table of messages is
   * kept): the number's slot in the engine's fleet (-1: none), and the template.
   */
  readonly flightSlot: Int32Array;
  readonly flightTemplate: Float64Array;
  readonly counts: Counts;
  /** Contacts from here on that are queued have never been handed out. */
  fresh: number;
  freshQueued: number;
  /** Contacts that came back, in the order they go; undefined while none did. */
  back: number[] | undefined;
  /** Read position in `back` (entries before it were served). */
  backHead: number;
  backQueued: number;
  /** Listed in its flow's `fresh` / `returning` ring. */
  inFresh: boolean;
  inReturning: boolean;
  /**
   * A time per contact (allocated at the first hand-out or retry): for a waiting contact the due time
   * of its retry, for a contact in flight the time it was handed out (when its number was charged,
   * so a refusal gives the charge back to the right 24 h bucket). Other states' values mean nothing.
   */
  retryAt: Float64Array | undefined;
  /**
   * Failures per contact that used none of its retries (transport, pair rate), for their backoff and
   * their bound (allocated at the first; not kept in snapshots: a restart starts the count again).
   */
  attempts: Uint8Array | undefined;
  /**
   * Contacts in flight at a restart and queued again: their next hand-out repeats their last message
   * id, the idempotency key a deduplicating provider sends once (allocated only by a restore).
   */
  resend: Uint8Array | undefined;
  /** Where the record stands in the host's changes: {@link UNTOLD}, {@link TOLD}, {@link LISTED_NEW} or {@link LISTED_CHANGED}. */
  told: Told;
  /** Its deadline is in the dispatcher's heap (taken out while no contact of it waits). */
  deadlineArmed: boolean;
  /** False once every contact has its final outcome: the record is out of every queue. */
  live: boolean;
}

/**
 * The one constructor of records, for submit and restore alike; every contact starts queued and
 * absent options take their defaults. Fields are written out, not spread: V8 keeps a literal's
 * named fields in the object, where the hot loops read them with one load (a spread left most of
 * them in a separate property array, measured 24 to 50 % slower dispatch loops).
 */
export function createRecord(seq: number, source: RecordSource, contacts: ContactList, queue: RecordQueue): SubmissionRecord {
  const n = contacts.length;
  const counts = zeroCounts();
  counts[SUBMITTED] = n;
  // One allocation for the five per-contact arrays (views on one buffer, widest first so each is
  // aligned): a backing store each cost more than the rest of a 100-contact submission.
  const buffer = new ArrayBuffer(16 * n);
  const flightSlot = new Int32Array(buffer, 8 * n, n).fill(-1);
  const retries = new Uint8Array(buffer, 15 * n, n);
  if (source.retriesUsed !== undefined && source.retriesUsed > 0) retries.fill(source.retriesUsed);
  return {
    seq,
    businessId: source.businessId,
    typeId: source.typeId,
    campaignId: source.campaignId,
    queueId: source.queueId,
    botId: source.botId,
    maxRetries: source.maxRetries ?? 0,
    retryInterval: source.retryInterval ?? 0,
    deadline: source.deadline,
    weight: source.weight ?? 1,
    contacts,
    id: `s${seq}`,
    flowKey: source.campaignId !== undefined ? `c${source.campaignId}` : `s${seq}`,
    queue,
    state: new Uint8Array(buffer, 14 * n, n),
    retries,
    handouts: new Uint16Array(buffer, 12 * n, n),
    flightSlot,
    flightTemplate: new Float64Array(buffer, 0, n),
    counts,
    fresh: 0,
    freshQueued: 0,
    back: undefined,
    resend: undefined,
    backHead: 0,
    backQueued: 0,
    inFresh: false,
    inReturning: false,
    retryAt: undefined,
    attempts: undefined,
    told: UNTOLD,
    deadlineArmed: false,
    live: true,
  };
}

/** A retry timer: due time, the contact, and its hand-outs when set (a later hand-out makes it stale). */
export interface RetryTimer {
  readonly at: number;
  readonly seq: number;
  readonly index: number;
  readonly handout: number;
}

/** Whether a retry timer still stands for its contact: the contact waits, and for that same retry. */
export function retryStands(record: SubmissionRecord | undefined, timer: RetryTimer): record is SubmissionRecord {
  return record !== undefined && record.state[timer.index] === WAITING && record.handouts[timer.index] === timer.handout;
}

/** `s<seq>.<index>.<hand-out>` into its numbers; undefined for anything else. */
export function parseMessageId(messageId: unknown): { seq: number; index: number; handout: number } | undefined {
  if (typeof messageId !== 'string' || messageId.charCodeAt(0) !== 115 /* s */) return undefined;
  const a = messageId.indexOf('.');
  const b = messageId.indexOf('.', a + 1);
  if (a < 2 || b <= a + 1 || b + 1 >= messageId.length) return undefined;
  const seq = Number(messageId.slice(1, a));
  const index = Number(messageId.slice(a + 1, b));
  const handout = Number(messageId.slice(b + 1));
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(index) || !Number.isSafeInteger(handout) || seq < 1 || index < 0 || handout < 0) return undefined;
  return { seq, index, handout };
}
