/**
 * Rows that each name one contact of a submission: what the batches of the dispatch loop share
 * (message-batch.ts, outcome-batch.ts). A row is the contact's position and hand-out in typed
 * arrays, and its submission's record; ids and the contact are built from them on demand.
 */
import { ArgumentError } from '../errors.js';
import { describeValue } from '../problems.js';
import type { SubmissionContact } from '../submission.js';
import { grown } from './grow.js';
import type { SubmissionRecord } from './record.js';
import type { ContactOutcome } from './types.js';

export abstract class ContactRows {
  /** Rows filled. */
  count = 0;
  /** Position of each row's contact in its submission's `contacts`. */
  indexes: Int32Array;
  /** @internal hand-out of each row (its message id's last part; -1: none) */
  handouts: Int32Array;
  /** @internal the submission of each row */
  records: (SubmissionRecord | undefined)[];

  /** @param what the constructor, for the error naming a bad capacity */
  constructor(what: string, capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new ArgumentError(`${what}(capacity)`, 'a whole number, 1 or more', describeValue(capacity));
    this.indexes = new Int32Array(capacity);
    this.handouts = new Int32Array(capacity);
    this.records = new Array<SubmissionRecord | undefined>(capacity).fill(undefined);
  }

  /** Submission of row `i`, e.g. `s12`. */
  submissionId(i: number): string {
    return this.record(i)?.id ?? this.made(i)!.submissionId;
  }

  /** Contact id of row `i`: `<submission>.<index>`. */
  contactId(i: number): string {
    return `${this.submissionId(i)}.${this.indexes[i]!}`;
  }

  /** Row `i`'s contact. */
  contact(i: number): SubmissionContact {
    return this.record(i)?.contacts.at(this.indexes[i]!) ?? this.made(i)!.contact;
  }

  /** Campaign of row `i`'s submission. */
  campaignId(i: number): number | undefined {
    const record = this.record(i);
    return record !== undefined ? record.campaignId : this.made(i)!.campaignId;
  }

  /** Forgets the rows (and the submissions they keep alive); the arrays stay for the next fill. */
  clear(): void {
    this.records.fill(undefined, 0, this.count);
    this.count = 0;
  }

  /** Room for `size` rows in the shared arrays, what they hold kept. */
  protected growRows(size: number): void {
    this.indexes = grown(this.indexes, size);
    this.handouts = grown(this.handouts, size);
    this.records.length = size;
    this.records.fill(undefined, this.count);
  }

  /** @internal The row's submission (undefined for a row given whole, see {@link made}); refuses rows not filled. */
  protected record(i: number): SubmissionRecord | undefined {
    if (!(i >= 0 && i < this.count)) throw new ArgumentError(`${this.constructor.name} row`, `a row from 0 to ${this.count - 1}`, describeValue(i));
    return this.records[i];
  }

  /** A row given whole rather than by its submission (outcomes restored from a snapshot). */
  protected made(_i: number): ContactOutcome | undefined {
    return undefined;
  }
}
