/**
 * Messages handed out into reusable buffers (`engine.pollInto`): for hosts that send from typed
 * arrays and do not need an object per message. Each message is a row `i < count`: its number (a
 * slot of `engine.phones()`), its template id, its contact's position; the message id, the text and
 * the contact are built only when asked for, row by row. The rows stay valid until the next
 * `pollInto` with this batch; report each with `engine.reportAt(batch, i, outcome)`.
 */
import { ArgumentError } from '../errors.js';
import { describeValue } from '../problems.js';
import type { SubmissionContact } from '../submission.js';
import type { CompiledTemplate } from '../template-text.js';
import { grown } from './grow.js';
import type { SubmissionRecord } from './record.js';
import type { OutgoingMessage } from './types.js';

/** What a batch reads of the engine that filled it. */
export interface BatchSource {
  phoneAt(slot: number): string;
  template(templateId: number): CompiledTemplate;
}

export class MessageBatch {
  /** Rows filled by the last `pollInto`. */
  count = 0;
  /** Clock time the rows were handed out (their capacity was charged then). */
  handedOutAt = 0;
  /** Number of each row: a slot of `engine.phones()` (see `phone(i)`). */
  numbers: Int32Array;
  /** Template of each row. */
  templateIds: Float64Array;
  /** Position of each row's contact in its submission's `contacts`. */
  indexes: Int32Array;
  /** Hand-out of each row's contact, the last part of its message id. */
  handouts: Int32Array;
  /** @internal the submission of each row */
  records: (SubmissionRecord | undefined)[];
  /** @internal what the rows' phones and texts are read from */
  source: BatchSource | undefined;

  /**
   * @param capacity most rows one `pollInto` fills (its limit).
   * @default 10000
   */
  constructor(capacity = 10_000) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new ArgumentError('new MessageBatch(capacity)', 'a whole number, 1 or more', describeValue(capacity));
    this.numbers = new Int32Array(capacity);
    this.templateIds = new Float64Array(capacity);
    this.indexes = new Int32Array(capacity);
    this.handouts = new Int32Array(capacity);
    this.records = new Array<SubmissionRecord | undefined>(capacity).fill(undefined);
  }

  /** Most rows one `pollInto` fills. */
  get capacity(): number {
    return this.numbers.length;
  }

  /** Submission of row `i`, e.g. `s12`. */
  submissionId(i: number): string {
    return this.#record(i).id;
  }

  /** Contact id of row `i`: `<submission>.<index>`. */
  contactId(i: number): string {
    return `${this.#record(i).id}.${this.indexes[i]!}`;
  }

  /** Message id of row `i`, as {@link OutgoingMessage.messageId}. */
  messageId(i: number): string {
    return `${this.#record(i).id}.${this.indexes[i]!}.${this.handouts[i]!}`;
  }

  /** Phone of row `i`'s number. */
  phone(i: number): string {
    return this.source!.phoneAt(this.numbers[i]!);
  }

  /** Row `i`'s contact. */
  contact(i: number): SubmissionContact {
    return this.#record(i).contacts.at(this.indexes[i]!);
  }

  /** Row `i`'s template text with its contact's values. */
  text(i: number): string {
    return this.#record(i).contacts.render(this.source!.template(this.templateIds[i]!), this.indexes[i]!);
  }

  /** Campaign of row `i`'s submission. */
  campaignId(i: number): number | undefined {
    return this.#record(i).campaignId;
  }

  /** Null on a contact's first try, else the index of its retry (spec 6.3 `retry_index`). */
  retryIndex(i: number): number | null {
    const retries = this.#record(i).retries[this.indexes[i]!]!;
    return retries > 0 ? retries - 1 : null;
  }

  /** Row `i` as the object `engine.poll()` hands out. */
  message(i: number): OutgoingMessage {
    const record = this.#record(i);
    const index = this.indexes[i]!;
    const contactId = `${record.id}.${index}`;
    const retries = record.retries[index]!;
    return {
      messageId: `${contactId}.${this.handouts[i]!}`,
      contactId,
      submissionId: record.id,
      index,
      businessId: record.businessId,
      typeId: record.typeId,
      campaignId: record.campaignId,
      queueId: record.queueId,
      botId: record.botId,
      contact: record.contacts.at(index),
      phone: this.phone(i),
      templateId: this.templateIds[i]!,
      text: this.text(i),
      handedOutAt: this.handedOutAt,
      isRetry: retries > 0,
      retryIndex: retries > 0 ? retries - 1 : null,
    };
  }

  /** @internal Room for at least `capacity` rows, the filled ones kept (the batch of `poll()` grows as needed). */
  reserve(capacity: number): void {
    if (capacity <= this.capacity) return;
    const size = Math.max(capacity, 2 * this.capacity);
    this.numbers = grown(this.numbers, size);
    this.templateIds = grown(this.templateIds, size);
    this.indexes = grown(this.indexes, size);
    this.handouts = grown(this.handouts, size);
    this.records.length = size;
    this.records.fill(undefined, this.count);
  }

  /** Forgets the rows' submissions, so a kept batch does not keep finished ones alive. */
  clear(): void {
    this.records.fill(undefined, 0, this.count);
    this.count = 0;
  }

  #record(i: number): SubmissionRecord {
    if (!(i >= 0 && i < this.count)) throw new ArgumentError('MessageBatch row', `a row from 0 to ${this.count - 1}`, describeValue(i));
    return this.records[i]!;
  }
}
