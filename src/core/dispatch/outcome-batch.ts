/**
 * Final outcomes as rows (`engine.takeOutcomesInto`): for hosts that count or store outcomes
 * without an object per contact. The dispatcher writes outcomes as rows like these as they happen;
 * `takeOutcomes()` builds the objects from them, and `takeOutcomesInto(batch)` hands the rows over
 * whole (the batch and the queue swap buffers, so nothing is copied).
 */
import { ContactRows } from './contact-rows.js';
import { grown } from './grow.js';
import { EXPIRED, FAILED, REJECTED, SENT, type SubmissionRecord, TERMINAL_NAMES } from './record.js';
import type { ContactOutcome, TerminalState } from './types.js';

const STATE_OF: Readonly<Record<TerminalState, number>> = { sent: SENT, failed: FAILED, expired: EXPIRED, rejected: REJECTED };

/** What a failure left beside its state. */
interface Detail {
  readonly reason?: string;
  readonly code?: number;
}

export class OutcomeBatch extends ContactRows {
  /** State of each row: 3 sent, 4 failed, 5 expired, 6 rejected (see {@link state}). */
  states: Uint8Array;
  /** Clock time each row's outcome was reached. */
  at: Float64Array;
  /** @internal reasons and codes, by row, for the rows that have them */
  details: Map<number, Detail> | undefined;
  /** @internal rows given as objects (outcomes restored from a snapshot: their submissions may be gone) */
  madeRows: Map<number, ContactOutcome> | undefined;

  /** @param capacity rows before the first growth. @default 1024 */
  constructor(capacity = 1024) {
    super('new OutcomeBatch', capacity);
    this.states = new Uint8Array(capacity);
    this.at = new Float64Array(capacity);
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
    (this.madeRows ??= new Map()).set(row, outcome);
    this.count = row + 1;
  }

  /** @internal gives this batch's rows to `other` and takes its (emptied) buffers */
  swap(other: OutcomeBatch): void {
    other.clear();
    const { states, indexes, at, handouts, records, details, madeRows, count } = this;
    this.states = other.states;
    this.indexes = other.indexes;
    this.at = other.at;
    this.handouts = other.handouts;
    this.records = other.records;
    this.details = undefined;
    this.madeRows = undefined;
    this.count = 0;
    other.states = states;
    other.indexes = indexes;
    other.at = at;
    other.handouts = handouts;
    other.records = records;
    other.details = details;
    other.madeRows = madeRows;
    other.count = count;
  }

  /** Forgets the rows (and the submissions they keep alive). */
  override clear(): void {
    super.clear();
    this.details = undefined;
    this.madeRows = undefined;
  }

  /** Row `i`'s final state. */
  state(i: number): TerminalState {
    this.record(i);
    return TERMINAL_NAMES[this.states[i]!]!;
  }

  /** Row `i` as the object `takeOutcomes()` gives. */
  outcome(i: number): ContactOutcome {
    const record = this.record(i);
    if (record === undefined) return this.made(i)!;
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
    this.at = grown(this.at, size);
    this.growRows(size);
  }

  protected override made(i: number): ContactOutcome | undefined {
    return this.madeRows?.get(i);
  }
}
