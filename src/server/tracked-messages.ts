/**
 * What the notifier remembers of what the channel accepted: each message, whose later statuses
 * (spec 6.3) and the attendance its reply opens (6.2) are built from it, and each SMS, whose DLR
 * and MO callbacks are. Both under a bound: at least the last `maxTracked / 2` of each, at most
 * `maxTracked` (two generations, lib/bounded-map.ts: evicting one key a send from a full Map cost
 * tens of microseconds a send).
 *
 * Separate from the notifier, which only asks and tells, because keeping these rows is its own
 * concern on the durable server: the rows changed since the last step, the bounded deletion of
 * the rows of forgotten messages, and, on the server on Redis, the rows another instance wrote.
 * Rows are keyed `m:` + message id and `s:` + SMS id.
 */
import { BoundedMap } from './lib/bounded-map.js';
import type { OutgoingSms } from './ports/channel.js';
import type { TrackedMessage } from './ports/tracked-message.js';

export type { SendAgain, TrackedMessage } from './ports/tracked-message.js';

export interface TrackedMessagesOptions {
  readonly maxTracked: number;
  /** Remember what changed for {@link TrackedMessages.takeChanges} (the durable server). @default false */
  readonly trackChanges?: boolean;
  /**
   * With `trackChanges`: messages and SMS forgotten here are deleted from the copy kept elsewhere
   * too. The server on Redis bounds its copy itself (shared-memory.ts). @default true
   */
  readonly forgetRows?: boolean;
  /** Reads rows kept elsewhere by key, the rows `takeChanges` gave (the server on Redis). @default none */
  readonly recall?: (keys: readonly string[]) => Promise<ReadonlyMap<string, unknown>>;
}

/** Most rows of forgotten messages deleted in one step beyond twice the rows written in it. */
const FORGET_BASE = 20_000;

/** The sent messages and SMS whose later events may still come, by message id and SMS id. */
export class TrackedMessages {
  readonly #o: TrackedMessagesOptions;
  readonly #messages: BoundedMap<string, TrackedMessage>;
  readonly #sms: BoundedMap<string, OutgoingSms>;
  /** With trackChanges: rows changed since the last step (null: gone). */
  readonly #changes = new Map<string, TrackedMessage | OutgoingSms | null>();
  /**
   * With trackChanges: generations dropped from memory whose rows are still to delete, a bounded
   * number a step (a whole generation in one step would hold the event loop).
   */
  #forgotten: { readonly prefix: string; readonly ids: Iterator<string> }[] = [];

  constructor(o: TrackedMessagesOptions, snapshot?: { readonly tracked: readonly (readonly [string, TrackedMessage])[]; readonly sms: readonly (readonly [string, OutgoingSms])[] }) {
    this.#o = o;
    const onDrop = (prefix: string) => (dropped: ReadonlyMap<string, unknown>) => {
      if (o.trackChanges === true && o.forgetRows !== false) this.#forgotten.push({ prefix, ids: dropped.keys() });
    };
    this.#messages = new BoundedMap<string, TrackedMessage>(o.maxTracked, onDrop('m:'));
    this.#sms = new BoundedMap<string, OutgoingSms>(o.maxTracked, onDrop('s:'));
    for (const [id, t] of snapshot?.tracked ?? []) this.#messages.set(id, t);
    for (const [id, s] of snapshot?.sms ?? []) this.#sms.set(id, s);
  }

  #changed(key: string, row: TrackedMessage | OutgoingSms | null): void {
    if (this.#o.trackChanges === true) this.#changes.set(key, row);
  }

  message(messageId: string): TrackedMessage | undefined {
    return this.#messages.get(messageId);
  }

  keepMessage(messageId: string, tracked: TrackedMessage): void {
    this.#messages.set(messageId, tracked);
    this.#changed(`m:${messageId}`, tracked);
  }

  /** The message's story is over (FAILED, EXPIRED, or its attendance closed). */
  forgetMessage(messageId: string): void {
    this.#messages.delete(messageId);
    this.#changed(`m:${messageId}`, null);
  }

  sms(smsId: string): OutgoingSms | undefined {
    return this.#sms.get(smsId);
  }

  keepSms(sms: OutgoingSms): void {
    this.#sms.set(sms.smsId, sms);
    this.#changed(`s:${sms.smsId}`, sms);
  }

  forgetSms(smsId: string): void {
    this.#sms.delete(smsId);
    this.#changed(`s:${smsId}`, null);
  }

  /** The rows to keep and to drop since the last call (every row held with `full`). */
  takeChanges(full: boolean): { trackedPut: (readonly [string, unknown])[]; trackedDelete: string[] } {
    const trackedPut: (readonly [string, unknown])[] = [];
    const trackedDelete: string[] = [];
    if (full) {
      for (const [id, t] of this.#messages.entries()) trackedPut.push([`m:${id}`, t]);
      for (const [id, t] of this.#sms.entries()) trackedPut.push([`s:${id}`, t]);
      this.#forgotten = [];
    } else {
      for (const [key, row] of this.#changes) {
        if (row === null) trackedDelete.push(key);
        else trackedPut.push([key, row]);
      }
      this.#forget(trackedDelete, FORGET_BASE + 2 * trackedPut.length);
    }
    this.#changes.clear();
    return { trackedPut, trackedDelete };
  }

  /** Adds to `deletes` the rows of up to `budget` forgotten messages no longer held. */
  #forget(deletes: string[], budget: number): void {
    while (budget > 0 && this.#forgotten.length > 0) {
      const { prefix, ids } = this.#forgotten[0]!;
      const map: { has(id: string): boolean } = prefix === 'm:' ? this.#messages : this.#sms;
      for (; budget > 0; budget--) {
        const next = ids.next();
        if (next.done === true) {
          this.#forgotten.shift();
          break;
        }
        // Set again since (a message resent under its id after a restart): its row stays.
        if (!map.has(next.value)) deletes.push(prefix + next.value);
      }
    }
  }

  /** Rows changed since the last `takeChanges`. */
  get changesPending(): boolean {
    return this.#changes.size > 0;
  }

  /** Holds the rows kept elsewhere of these messages and SMS that are not held here. */
  async recall(ids: { readonly messageIds?: readonly string[]; readonly smsIds?: readonly string[] }): Promise<void> {
    const read = this.#o.recall;
    if (read === undefined) return;
    const keys = [...(ids.messageIds ?? []).filter((id) => !this.#messages.has(id)).map((id) => `m:${id}`), ...(ids.smsIds ?? []).filter((id) => !this.#sms.has(id)).map((id) => `s:${id}`)];
    if (keys.length === 0) return;
    for (const [key, row] of await read(keys)) {
      // Set again here since the read was sent: what this instance holds is newer.
      if (key.startsWith('m:') && !this.#messages.has(key.slice(2))) this.#messages.set(key.slice(2), row as TrackedMessage);
      else if (key.startsWith('s:') && !this.#sms.has(key.slice(2))) this.#sms.set(key.slice(2), row as OutgoingSms);
    }
  }

  /** Loads rows the durable server kept (before any traffic). */
  load(rows: readonly (readonly [string, unknown])[]): void {
    for (const [key, row] of rows) {
      if (key.startsWith('m:')) this.#messages.set(key.slice(2), row as TrackedMessage);
      else if (key.startsWith('s:')) this.#sms.set(key.slice(2), row as OutgoingSms);
    }
  }

  snapshot(): { tracked: [string, TrackedMessage][]; sms: [string, OutgoingSms][] } {
    return { tracked: [...this.#messages.entries()], sms: [...this.#sms.entries()] };
  }
}
