/**
 * What waits in the SMPP channel: an SMS being sent (a job) and its parts, each a `submit_sm`
 * encoded once, in FIFO queues.
 */
import type { OutgoingSms, SmsSendResult } from '../ports/channel.js';
import type { ReceiptUpdate, TrackedSms } from './smpp-inbound.js';

export interface Job {
  readonly sms: OutgoingSms;
  /** Clock time its validity ends (`validityMs` after its acceptance): tried until then, never after. */
  readonly validUntil: number;
  readonly tracked: TrackedSms | undefined;
  /** Its `submit_sm`: its parts, or one with `message_payload`. */
  readonly pdus: number;
  /** PDUs not accepted yet. */
  remaining: number;
  /** Parts written on the connection and not answered yet: the SMS is not failed while one is. */
  inFlight: number;
  /** Transient answers it got so far: the wait before its next try grows with them. */
  retries: number;
  /** Why its last try did not go through, for the reason if its validity ends. */
  lastProblem: string | undefined;
  done: boolean;
  /** Receipts that came before every part was answered: reported after the answer. */
  held: ReceiptUpdate[] | undefined;
  /** Told once the job is answered and its held receipts reported (a `deliver_sm` waiting to be answered). */
  onDone?: (() => void)[];
  resolve(result: SmsSendResult): void;
}

export interface Part {
  readonly job: Job;
  /** The `submit_sm` encoded once (smpp-codec.ts); its sequence number is written each time it goes. */
  readonly octets: Buffer;
  sentAt: number;
  /** Whole seconds of validity its `validity_period` says now: rewritten only when that changes. */
  validityS: number;
}

/** A part waiting to go again after a transient answer, at clock time `at`. */
export interface DelayedPart {
  readonly at: number;
  readonly part: Part;
}

/** A FIFO of parts that clears the slots it hands out. */
export class PartQueue {
  #items: (Part | undefined)[] = [];
  #head = 0;
  get size(): number {
    return this.#items.length - this.#head;
  }
  push(p: Part): void {
    this.#items.push(p);
  }
  shift(): Part | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const p = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return p;
  }
  unshiftAll(parts: readonly Part[]): void {
    this.#items = [...parts, ...this.#items.slice(this.#head)];
    this.#head = 0;
  }
}
