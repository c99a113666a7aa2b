/**
 * Messages handed out into reusable buffers (`engine.pollInto`): for hosts that send from typed
 * arrays and do not need an object per message. Each message is a row `i < count`: its number (a
 * slot of `engine.phones()`), its template id, its contact's position; the message id, the text and
 * the contact are built only when asked for, row by row. The rows stay valid until the next
 * `pollInto` with this batch; report each with `engine.reportAt(batch, i, outcome)`.
 */
import type { CompiledTemplate } from '../template-text.js';
import { ContactRows } from './contact-rows.js';
import { grown } from './grow.js';
import type { SubmissionRecord } from './record.js';
import type { OutgoingMessage } from './types.js';

/** What a batch reads of the engine that filled it. */
export interface BatchSource {
  phoneAt(slot: number): string;
  template(templateId: number): CompiledTemplate;
}

export class MessageBatch extends ContactRows {
  /** Clock time the rows were handed out (their capacity was charged then). */
  handedOutAt = 0;
  /** Number of each row: a slot of `engine.phones()` (see `phone(i)`). */
  numbers: Int32Array;
  /** Template of each row. */
  templateIds: Float64Array;
  /** @internal what the rows' phones and texts are read from */
  source: BatchSource | undefined;

  /**
   * @param capacity most rows one `pollInto` fills (its limit).
   * @default 10000
   */
  constructor(capacity = 10_000) {
    super('new MessageBatch', capacity);
    this.numbers = new Int32Array(capacity);
    this.templateIds = new Float64Array(capacity);
  }

  /** Most rows one `pollInto` fills. */
  get capacity(): number {
    return this.numbers.length;
  }

  /** Message id of row `i`, as {@link OutgoingMessage.messageId}. */
  messageId(i: number): string {
    return `${this.#record(i).id}.${this.indexes[i]!}.${this.handouts[i]!}`;
  }

  /** Phone of row `i`'s number. */
  phone(i: number): string {
    return this.source!.phoneAt(this.numbers[i]!);
  }

  /** Row `i`'s template text with its contact's values. */
  text(i: number): string {
    return this.#record(i).contacts.render(this.source!.template(this.templateIds[i]!), this.indexes[i]!);
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
      maxRetries: record.maxRetries,
      retryInterval: record.retryInterval,
    };
  }

  /** @internal Room for at least `capacity` rows, the filled ones kept (the batch of `poll()` grows as needed). */
  reserve(capacity: number): void {
    if (capacity <= this.capacity) return;
    const size = Math.max(capacity, 2 * this.capacity);
    this.numbers = grown(this.numbers, size);
    this.templateIds = grown(this.templateIds, size);
    this.growRows(size);
  }

  /** A row's submission: every row of a message batch has one. */
  #record(i: number): SubmissionRecord {
    return this.record(i)!;
  }
}
