/**
 * Final outcomes as rows (`engine.takeOutcomesInto`): for hosts that count or store outcomes
 * without an object per contact. The dispatcher writes outcomes as rows like these as they happen;
 * `takeOutcomes()` builds the objects from them, and `takeOutcomesInto(batch)` hands the rows over
 * whole (the batch and the queue swap buffers, so nothing is copied).
 */
import { ArgumentError } from '../errors.js';
import { describeValue } from '../problems.js';
import type { SubmissionContact } from '../submission.js';
import { grown } from './grow.js';
import { EXPIRED, FAILED, REJECTED, SENT, type SubmissionRecord, TERMINAL_NAMES } from './record.js';
import type { ContactOutcome, TerminalState } from './types.js';

const STATE_OF: Readonly<Record<TerminalState, number>> = { sent: SENT, failed: FAILED, expired: EXPIRED, rejected: REJECTED };

/** What a failure left beside its state. */
interface Detail {
  readonly reason?: string;
  readonly code?: number;
}

export class OutcomeBatch {
  /** Rows filled. */
  count = 0;
  /** State of each row: 3 sent, 4 failed, 5 expired, 6 rejected (see {@link state}). */
  states: Uint8Array;
  /** Position of each row's contact in its submission's `contacts`. */
  indexes: Int32Array;
  /** Clock time each row's outcome was reached. */
  at: Float64Array;
  /** @internal hand-out each row ended with (-1: none) */
  handouts: Int32Array;
  /** @internal the submission of each row */
  records: (SubmissionRecord | undefined)[];
  /** @internal reasons and codes, by row, for the rows that have them */
  details: Map<number, Detail> | undefined;
  /** @internal rows given as objects (outcomes restored from a snapshot: their submissions may be gone) */
  made: Map<number, ContactOutcome> | undefined;

  /** @param capacity rows before the first growth. @default 1024 */
  constructor(capacity = 1024) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new ArgumentError('new OutcomeBatch(capacity)', 'a whole number, 1 or more', describeValue(capacity));
    this.states = new Uint8Array(capacity);
    this.indexes = new Int32Array(capacity);
    this.at = new Float64Array(capacity);
    this.handouts = new Int32Array(capacity);
    this.records = [];
  }

  /** @internal appends a row */
  push(record: SubmissionRecord, index: number, state: number, at: number, handout: number, reason: string | undefined, code: number | undefined): void {
    const row = this.count;
    if (row === this.states.length) this.#grow();
    this.records[row] = record;
    this.indexes[row] = index;
    this.states[row] = state;
    this.at[row] = at;
    this.handouts[row] = handout;
    if (reason !== undefined || code !== undefined) {
      (this.details ??= new Map()).set(row, code === undefined ? { reason } : reason === undefined ? { code } : { reason, code });
    }
    this.count = row + 1;
  }

  /** @internal appends a row given as an object */
  pushMade(outcome: ContactOutcome): void {
    const row = this.count;
    if (row === this.states.length) this.#grow();
    this.records[row] = undefined;
    this.indexes[row] = outcome.index;
    this.states[row] = STATE_OF[outcome.state];
    this.at[row] = outcome.at;
    this.handouts[row] = -1;
    (this.made ??= new Map()).set(row, outcome);
    this.count = row + 1;
  }

  /** @internal gives this batch's rows to `other` and takes its (emptied) buffers */
  swap(other: OutcomeBatch): void {
    other.clear();
    const { states, indexes, at, handouts, records, details, made, count } = this;
    this.states = other.states;
    this.indexes = other.indexes;
    this.at = other.at;
    this.handouts = other.handouts;
    this.records = other.records;
    this.details = undefined;
    this.made = undefined;
    this.count = 0;
    other.states = states;
    other.indexes = indexes;
    other.at = at;
    other.handouts = handouts;
    other.records = records;
    other.details = details;
    other.made = made;
    other.count = count;
  }

  /** Forgets the rows (and the submissions they keep alive). */
  clear(): void {
    // Emptied in place, not by `length = 0`, which would free the array's storage for it to grow again.
    this.records.fill(undefined, 0, this.count);
    this.details = undefined;
    this.made = undefined;
    this.count = 0;
  }

  /** Row `i`'s final state. */
  state(i: number): TerminalState {
    this.#check(i);
    return TERMINAL_NAMES[this.states[i]!]!;
  }

  submissionId(i: number): string {
    return this.#record(i)?.id ?? this.made!.get(i)!.submissionId;
  }

  contactId(i: number): string {
    return `${this.submissionId(i)}.${this.indexes[i]!}`;
  }

  contact(i: number): SubmissionContact {
    return this.#record(i)?.contacts.at(this.indexes[i]!) ?? this.made!.get(i)!.contact;
  }

  campaignId(i: number): number | undefined {
    const record = this.#record(i);
    return record !== undefined ? record.campaignId : this.made!.get(i)!.campaignId;
  }

  /** Row `i` as the object `takeOutcomes()` gives. */
  outcome(i: number): ContactOutcome {
    const record = this.#record(i);
    if (record === undefined) return this.made!.get(i)!;
    const index = this.indexes[i]!;
    const contactId = `${record.id}.${index}`;
    const retries = record.retries[index]!;
    const handout = this.handouts[i]!;
    const last = handout >= 0 ? handout : record.handouts[index]! - 1;
    const outcome: { -readonly [K in keyof ContactOutcome]: ContactOutcome[K] } = {
      submissionId: record.id,
      index,
      contactId,
      contact: record.contacts.at(index),
      campaignId: record.campaignId,
      state: TERMINAL_NAMES[this.states[i]!]!,
      retryIndex: retries > 0 ? retries - 1 : null,
      messageId: last >= 0 ? `${contactId}.${last}` : undefined,
      at: this.at[i]!,
    };
    const detail = this.details?.get(i);
    if (detail?.reason !== undefined) outcome.reason = detail.reason;
    if (detail?.code !== undefined) outcome.code = detail.code;
    return outcome;
  }

  /** Every row as objects. */
  outcomes(): ContactOutcome[] {
    const out = new Array<ContactOutcome>(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.outcome(i);
    return out;
  }

  #grow(): void {
    const size = 2 * this.states.length;
    this.states = grown(this.states, size);
    this.indexes = grown(this.indexes, size);
    this.at = grown(this.at, size);
    this.handouts = grown(this.handouts, size);
  }

  #check(i: number): void {
    if (!(i >= 0 && i < this.count)) throw new ArgumentError('OutcomeBatch row', `a row from 0 to ${this.count - 1}`, describeValue(i));
  }

  /** The row's submission; undefined for a row given as an object. */
  #record(i: number): SubmissionRecord | undefined {
    this.#check(i);
    return this.records[i];
  }
}
