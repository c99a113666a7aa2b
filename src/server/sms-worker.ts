/**
 * The SMS worker: a bounded queue of accepted SMS, sent through the channel with bounded
 * concurrency; the gateway's answer and later delivery reports and replies go to the item's
 * callback URLs through the notifier (and so through the signed, retried outbox).
 */
import type { Channel, OutgoingSms } from './channel.js';
import type { Notifier } from './notifier.js';

/** Options of the SMS worker. */
export interface SmsOptions {
  /** Most SMS waiting to be sent; a request that would pass it gets 429. @default 100_000 */
  readonly maxQueued?: number;
  /** SMS handed to the gateway at once. @default 64 */
  readonly maxInFlight?: number;
}

export class SmsWorker {
  readonly #channel: Channel;
  readonly #notifier: Notifier;
  readonly #maxInFlight: number;
  readonly maxQueued: number;
  #queue: OutgoingSms[] = [];
  #head = 0;
  #inFlight = 0;
  #stopped = false;
  readonly #running = new Set<Promise<void>>();

  readonly #onAnswered: ((smsId: string) => void) | undefined;

  /** @param onAnswered called once the gateway answered an SMS (the durable server drops its row) */
  constructor(channel: Channel, notifier: Notifier, options: SmsOptions = {}, restored: readonly OutgoingSms[] = [], onAnswered?: (smsId: string) => void) {
    this.#onAnswered = onAnswered;
    this.#channel = channel;
    this.#notifier = notifier;
    this.#maxInFlight = options.maxInFlight ?? 64;
    this.maxQueued = options.maxQueued ?? 100_000;
    this.#queue = [...restored];
    // SMS restored from a snapshot go out without waiting for the next request.
    if (this.#queue.length > 0) setImmediate(() => this.#pump());
  }

  /** SMS waiting (not yet handed to the gateway). */
  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** SMS handed to the gateway whose answer has not come back yet. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Queues SMS; the caller has checked the bound. */
  enqueue(items: readonly OutgoingSms[]): void {
    for (const s of items) this.#queue.push(s);
    this.#pump();
  }

  #pump(): void {
    while (!this.#stopped && this.#inFlight < this.#maxInFlight && this.#head < this.#queue.length) {
      const sms = this.#queue[this.#head]!;
      this.#queue[this.#head++] = undefined as never; // release the slot
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      this.#inFlight++;
      const run = this.#send(sms).finally(() => {
        this.#inFlight--;
        this.#running.delete(run);
        this.#pump();
      });
      this.#running.add(run);
    }
  }

  async #send(sms: OutgoingSms): Promise<void> {
    this.#notifier.trackSms(sms);
    let result;
    try {
      result = await this.#channel.sendSms(sms);
    } catch (e) {
      result = { status: 'failed' as const, reason: e instanceof Error ? e.message.slice(0, 200) : 'gateway error' };
    }
    if (result.status === 'sent') this.#notifier.smsStatus(sms.smsId, 'SENT', null);
    else this.#notifier.smsStatus(sms.smsId, 'FAILED', result.reason);
    this.#onAnswered?.(sms.smsId);
  }

  /** Stops sending; waits up to `drainMs` for SMS in flight. The queue left is returned for the snapshot. */
  async stop(drainMs: number): Promise<void> {
    this.#stopped = true;
    if (this.#running.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.#running]), new Promise((r) => (timer = setTimeout(r, drainMs)))]);
      if (timer) clearTimeout(timer);
    }
  }

  pending(): OutgoingSms[] {
    return this.#queue.slice(this.#head);
  }
}
