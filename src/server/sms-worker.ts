/**
 * The SMS worker: a bounded queue of accepted SMS, sent through the channel with bounded
 * concurrency; the gateway's answer and later delivery reports and replies go to the item's
 * callback URLs through the notifier (and so through the signed, retried outbox).
 */
import type { Clock } from '../core/clock.js';
import { systemClock } from '../runtime/system-clock.js';
import type { Channel, OutgoingSms } from './ports/channel.js';
import { DrainRate } from './drain-rate.js';
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
  /** The gateway's recent pace, for the wait told to a client the queue refuses. */
  readonly #pace: DrainRate;

  /**
   * @param onAnswered called once the gateway answered an SMS (the durable server drops its row)
   * @param clock measures the gateway's pace (wall time: the gateway answers in it)
   */
  constructor(channel: Channel, notifier: Notifier, options: SmsOptions = {}, restored: readonly OutgoingSms[] = [], onAnswered?: (smsId: string) => void, clock: Clock = systemClock) {
    this.#onAnswered = onAnswered;
    this.#pace = new DrainRate(() => clock.now());
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

  /**
   * Seconds the gateway needs for `count` more SMS at its pace of the last minute; undefined when
   * it answered none in that minute (no pace to go by).
   */
  drainSeconds(count: number): number | undefined {
    const perSecond = this.#pace.perSecond();
    return perSecond === undefined ? undefined : count / perSecond;
  }

  /** SMS a store kept, accepted and not answered by the gateway: they go again (at least once), from the next turn. */
  restore(items: readonly OutgoingSms[]): void {
    for (const s of items) this.#queue.push(s);
    if (items.length > 0) setImmediate(() => this.#pump());
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
    this.#pace.record();
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
