/**
 * The SMPP channel's receipt timeout: an SMS the SMSC accepted (every part) whose final delivery
 * receipt has not come within `receiptTimeoutMs` ends as EXPIRED (`SMPP: no delivery receipt
 * within … ms`), reported as receipts are (`SmppDeliveries.report`); its ids are forgotten, so a
 * receipt after that is ignored.
 *
 * Separate from smpp-inbound.ts, which matches receipts as they come (no time, no I/O), and from
 * the channel, which sends: this is the part of receipts driven by the clock, and the one that must
 * find after a restart what the process before it was waiting for. What is awaited is in the
 * channel memory (`sw:<SMS id>` → `<accepted at> <message id>…`, smpp-inbound.ts), so it is
 * written with each step on the durable server and shared in Redis on the server on Redis; in this
 * process a FIFO in acceptance order (one timeout for all: the oldest expires first), swept on the
 * channel's tick, trimmed at its head as the bounded memory forgets. At start (and when the server
 * lends its memory) the SMS found in the memory's `sw:` entries (`ChannelMemory.entries`) are a
 * second FIFO.
 *
 * The deadline is the acceptance time plus the `receiptTimeoutMs` in force, not a deadline written
 * at the send: a timeout changed across a restart applies to the SMS already waiting.
 *
 * On Redis another instance may have decided the SMS (its receipt came there) or expired it: the
 * `sw:` entry is read again from Redis (`ChannelMemory.reread`) before it expires, and the SMS is
 * skipped when the fleet no longer awaits it.
 */
import type { ChannelSink } from '../ports/channel.js';
import type { SmppDeliveries } from './smpp-deliver.js';
import { parseAwaited, WAIT_KEY, type AwaitedReceipts, type SmppInbound, type TrackedSms } from './smpp-inbound.js';
import type { ResolvedSmppOptions } from './smpp-options.js';

/** What the receipt wait needs of the channel. */
export interface SmppReceiptWaitHost {
  readonly options: Pick<ResolvedSmppOptions, 'receiptTimeoutMs' | 'deliveryReceipts' | 'clock'>;
  /** Matches receipts; holds the memory the awaited SMS are kept in. */
  readonly inbound: SmppInbound;
  /** Where an expiry is reported (after the SMS's `sent` answer, as receipts are). */
  readonly deliveries: Pick<SmppDeliveries, 'report'>;
  /** The server's sink, once attached (its `recall` on Redis). */
  sink(): ChannelSink | undefined;
}

interface Waiting {
  readonly at: number;
  readonly smsId: string;
}

/** Awaited SMS in acceptance order. */
class Fifo {
  #items: Waiting[] = [];
  #head = 0;

  get empty(): boolean {
    return this.#head >= this.#items.length;
  }

  peek(): Waiting | undefined {
    return this.#items[this.#head];
  }

  shift(): Waiting | undefined {
    const w = this.#items[this.#head];
    if (w === undefined) return undefined;
    this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return w;
  }

  push(w: Waiting): void {
    this.#items.push(w);
  }

  /** Puts entries back at the head (a failed read), in their order. */
  unshift(entries: readonly Waiting[]): void {
    this.#items.splice(this.#head, 0, ...entries);
  }
}

/** SMS expired in one sweep at most (the rest in the next ticks). */
const MAX_EXPIRED_AT_ONCE = 1_000;
/** Wait before reading the memory again after a failed read (Redis away). */
const RETRY_MS = 1_000;

/** The receipt timeout of an SMPP channel. */
export class SmppReceiptWait {
  readonly #host: SmppReceiptWaitHost;
  /**
   * Awaited SMS in acceptance order, those this process accepted and those found in the memory at
   * start (older, mostly; two queues, so the first can be trimmed at its head alone). An entry no
   * longer in `#at` (or with another time) is skipped.
   */
  readonly #own = new Fifo();
  #found = new Fifo();
  /** Awaited SMS by id: when their last part was accepted. */
  readonly #at = new Map<string, number>();
  /** The memory the found SMS were read from (read again when the server lends another). */
  #loadedFrom: unknown;
  /** A read of the memory is under way (the rebuild, or the checks before expiring on Redis). */
  #busy = false;
  /** No read before this clock time (one failed). */
  #notBefore = 0;
  /** SMS expired so far. */
  expired = 0;

  constructor(host: SmppReceiptWaitHost) {
    this.#host = host;
    host.inbound.decided = (smsId) => this.#at.delete(smsId);
  }

  /** SMS awaited now (in this process). */
  get size(): number {
    return this.#at.size;
  }

  /** Every part of the SMS was accepted (its `sent` answer): its final receipt is awaited from now on. */
  sent(tracked: TrackedSms): void {
    if (!this.#host.options.deliveryReceipts) return;
    const at = this.#host.options.clock.now();
    if (!this.#host.inbound.awaitReceipts(tracked, at)) return;
    this.#at.set(tracked.smsId, at);
    this.#own.push({ at, smsId: tracked.smsId });
    // The memory forgets its oldest entries past its bound: so does this queue (the SMS whose
    // `sw:` entry is gone keeps SENT), so its size stays within the memory's.
    for (let i = 0; i < 2; i++) {
      const head = this.#own.peek();
      if (head === undefined || (this.#at.get(head.smsId) === head.at && this.#host.inbound.memory.get(WAIT_KEY + head.smsId) !== undefined)) break;
      this.#own.shift();
      if (this.#at.get(head.smsId) === head.at) this.#at.delete(head.smsId);
    }
  }

  /** The channel's tick: SMS whose receipt is overdue at `now` expire. */
  sweep(now: number): void {
    if (!this.#host.options.deliveryReceipts || this.#busy || now < this.#notBefore) return;
    const memory = this.#host.inbound.memory;
    if (this.#loadedFrom !== memory) {
      this.#loadedFrom = memory;
      if (memory.entries !== undefined) {
        this.#busy = true;
        void this.#rebuild(memory.entries.bind(memory)).finally(() => (this.#busy = false));
        return;
      }
    }
    const due = this.#due(now);
    if (due.length === 0) return;
    if (memory.reread === undefined) {
      this.#expire(due, now);
      return;
    }
    this.#busy = true;
    void this.#checkThenExpire(due).finally(() => (this.#busy = false));
  }

  /** The SMS overdue at `now`, taken off the FIFO (at most {@link MAX_EXPIRED_AT_ONCE}). */
  #due(now: number): Waiting[] {
    const timeout = this.#host.options.receiptTimeoutMs;
    const due: Waiting[] = [];
    for (const fifo of [this.#found, this.#own]) {
      while (due.length < MAX_EXPIRED_AT_ONCE) {
        const w = fifo.peek();
        if (w === undefined) break;
        if (this.#at.get(w.smsId) !== w.at) {
          fifo.shift();
          continue;
        }
        if (w.at + timeout > now) break;
        fifo.shift();
        due.push(w);
      }
    }
    return due;
  }

  /**
   * The server on Redis: before expiring, what the fleet keeps now of each SMS (another instance
   * may have read its receipt, or expired it), its parts' ids held so their deletes are written,
   * and the server's record of the SMS recalled. A failed read puts them back for a later sweep.
   */
  async #checkThenExpire(due: readonly Waiting[]): Promise<void> {
    const inbound = this.#host.inbound;
    const memory = inbound.memory;
    try {
      await memory.reread!(due.map((w) => WAIT_KEY + w.smsId));
      const keys: string[] = [];
      const smsIds: string[] = [];
      for (const w of due) {
        const awaited = inbound.awaited(w.smsId);
        if (awaited === undefined) continue;
        keys.push(...inbound.expiryKeys(w.smsId, awaited));
        smsIds.push(w.smsId);
      }
      if (smsIds.length > 0) {
        await memory.recall?.(keys);
        await this.#host.sink()?.recall?.({ smsIds });
      }
    } catch {
      // Back at the head of the found ones: due first at the next try.
      this.#found.unshift(due);
      this.#notBefore = this.#host.options.clock.now() + RETRY_MS;
      return;
    }
    this.#expire(due, this.#host.options.clock.now());
  }

  /** Expires the SMS still awaited (not decided by a receipt meanwhile, nor accepted again since). */
  #expire(due: readonly Waiting[], now: number): void {
    const { inbound, deliveries, options } = this.#host;
    const timeout = options.receiptTimeoutMs;
    for (const w of due) {
      if (this.#at.get(w.smsId) !== w.at) continue;
      this.#at.delete(w.smsId);
      const awaited = inbound.awaited(w.smsId);
      // Decided elsewhere, or awaited since a later time (sent again by another instance): its own.
      if (awaited === undefined || awaited.at + timeout > now) continue;
      inbound.expire(w.smsId, awaited);
      this.expired++;
      deliveries.report({ smsId: w.smsId, status: 'EXPIRED', reason: `SMPP: no delivery receipt within ${timeout} ms` });
    }
  }

  /** The SMS the memory's `sw:` entries await (a restart: the process before this one accepted them). */
  async #rebuild(entries: (prefix: string) => Promise<ReadonlyMap<string, string>>): Promise<void> {
    let found: ReadonlyMap<string, string>;
    try {
      found = await entries(WAIT_KEY);
    } catch {
      // Not readable now (Redis away): the next sweep tries again.
      this.#loadedFrom = undefined;
      this.#notBefore = this.#host.options.clock.now() + RETRY_MS;
      return;
    }
    const earlier: Waiting[] = [];
    for (const [key, value] of found) {
      const smsId = key.slice(WAIT_KEY.length);
      const awaited: AwaitedReceipts | undefined = parseAwaited(value);
      if (awaited === undefined || this.#at.has(smsId)) continue;
      this.#at.set(smsId, awaited.at);
      earlier.push({ at: awaited.at, smsId });
    }
    if (earlier.length === 0) return;
    earlier.sort((a, b) => a.at - b.at);
    const queue = new Fifo();
    for (const w of earlier) queue.push(w);
    this.#found = queue;
  }
}
