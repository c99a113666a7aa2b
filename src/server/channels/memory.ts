/**
 * The `ChannelMemory` the server lends its channel (channel.ts): a bounded map of short strings,
 * oldest forgotten first, that the durable server also writes to its database, so the provider's
 * ids a channel keeps (a wamid, an SMSC message id) outlive a restart.
 *
 * Two generations, as in bounded-map.ts: at least the last `max / 2` keys set are remembered, at
 * most `max`, and forgetting costs nothing per entry. With `trackChanges` every set and delete is
 * also a row numbered in order (`seq`): the step writes the rows as they are (a delete is a row
 * without a value), a new generation starts with a marker row (empty key, no value), and a
 * generation dropped from memory becomes "forget the rows numbered below its successor's marker",
 * a range delete, spread over later steps so no one step deletes a generation's worth of rows at
 * once. Loading replays the rows from the second-last marker on (older rows may be half deleted),
 * rotating at the last one: the same operations from the same empty start give the same two
 * generations, so the memory after a restart is the memory before it.
 */
import type { ChannelMemory } from '../channel.js';

/** What changed in a channel memory since the last step (the durable server writes it). */
export interface ChannelMemoryChanges {
  /** Number of the first row below. */
  readonly firstSeq: number;
  /** Keys set or deleted, in order (row `firstSeq + i`). */
  readonly keys: readonly string[];
  /** The value set, or null for a delete. */
  readonly values: readonly (string | null)[];
  /** Rows numbered below this are forgotten (dropped from memory). */
  readonly before?: number;
}

/** One row of a channel memory as the database keeps it. */
export type ChannelMemoryRow = readonly [seq: number, key: string, value: string | null];

/** The key of a marker row (a generation starts); channels' keys are never empty. */
const MARKER = '';

export class ChannelMemoryStore implements ChannelMemory {
  #current = new Map<string, string>();
  #previous = new Map<string, string>();
  readonly #half: number;
  readonly #track: boolean;
  readonly #onChange: (() => void) | undefined;
  readonly #pruneBatch: number;
  #nextSeq = 1;
  /** Number of the first row of the current generation. */
  #currentFirstSeq = 1;
  #firstPendingSeq = 1;
  #keys: string[] = [];
  #values: (string | null)[] = [];
  /** Rows below this may go (the generations forgotten so far); rows below `#pruned` are gone. */
  #pruneTo = 1;
  #pruned = 1;

  /**
   * @param max most entries held
   * @param options `trackChanges`: keep rows for {@link takeChanges} (the durable server);
   *   `onChange`: told each change (the durable server schedules a step); `pruneBatch`: most rows
   *   forgotten in one step beyond twice the rows written in it (default 20,000)
   */
  constructor(max: number, options: { readonly trackChanges?: boolean; readonly onChange?: () => void; readonly pruneBatch?: number } = {}) {
    this.#half = Math.max(1, Math.ceil(max / 2));
    this.#track = options.trackChanges === true;
    this.#onChange = options.onChange;
    this.#pruneBatch = options.pruneBatch ?? 20_000;
  }

  get(key: string): string | undefined {
    const value = this.#current.get(key);
    return value !== undefined ? value : this.#previous.get(key);
  }

  set(key: string, value: string): void {
    if (key.length === 0) throw new TypeError('ChannelMemory.set: expected a non-empty key, got ""');
    this.#current.set(key, value);
    if (this.#track) {
      this.#keys.push(key);
      this.#values.push(value);
      this.#nextSeq++;
    }
    if (this.#current.size >= this.#half) this.#rotate();
    this.#onChange?.();
  }

  delete(key: string): void {
    const a = this.#current.delete(key);
    const b = this.#previous.delete(key);
    // A key not held has no row newer than the forgotten ones: nothing to write.
    if (!(a || b) || !this.#track) return;
    this.#keys.push(key);
    this.#values.push(null);
    this.#nextSeq++;
    this.#onChange?.();
  }

  /** Entries held (a key set in both generations counts twice). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  #rotate(): void {
    this.#previous = this.#current;
    this.#current = new Map();
    if (!this.#track) return;
    // The generation just dropped held the rows below the marker of the one now previous.
    this.#pruneTo = this.#currentFirstSeq;
    this.#currentFirstSeq = this.#nextSeq;
    this.#keys.push(MARKER);
    this.#values.push(null);
    this.#nextSeq++;
  }

  /** Loads the rows the database kept, in order (call before any traffic). */
  load(rows: readonly ChannelMemoryRow[]): void {
    if (rows.length === 0) return;
    const markers: number[] = [];
    rows.forEach(([, key], i) => key === MARKER && markers.push(i));
    // From the previous generation's start: what is older is forgotten (maybe half deleted).
    const from = markers.length >= 2 ? markers[markers.length - 2]! : 0;
    this.#pruned = rows[0]![0];
    this.#pruneTo = rows[from]![0];
    this.#currentFirstSeq = rows[from]![0];
    for (let i = from; i < rows.length; i++) {
      const [seq, key, value] = rows[i]!;
      if (key === MARKER) {
        if (i === from) continue;
        this.#previous = this.#current;
        this.#current = new Map();
        this.#pruneTo = this.#currentFirstSeq;
        this.#currentFirstSeq = seq;
      } else if (value === null) {
        this.#current.delete(key);
        this.#previous.delete(key);
      } else this.#current.set(key, value);
    }
    this.#nextSeq = rows[rows.length - 1]![0] + 1;
    this.#firstPendingSeq = this.#nextSeq;
  }

  /** Rows written since the last call, and how far older rows may now be forgotten; undefined when nothing changed. */
  takeChanges(): ChannelMemoryChanges | undefined {
    const written = this.#keys.length;
    let before: number | undefined;
    if (this.#pruned < this.#pruneTo) {
      before = Math.min(this.#pruneTo, this.#pruned + this.#pruneBatch + 2 * written);
      this.#pruned = before;
    }
    if (written === 0 && before === undefined) return undefined;
    const changes: ChannelMemoryChanges = { firstSeq: this.#firstPendingSeq, keys: this.#keys, values: this.#values, ...(before !== undefined ? { before } : {}) };
    this.#firstPendingSeq = this.#nextSeq;
    this.#keys = [];
    this.#values = [];
    return changes;
  }
}
