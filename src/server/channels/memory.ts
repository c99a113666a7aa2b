/**
 * The `ChannelMemory` the server lends its channel (channel.ts): a bounded map of short strings,
 * oldest forgotten first, that the durable server also writes to its database, so the provider's
 * ids a channel keeps (a wamid, an SMSC message id) outlive a restart.
 *
 * Two generations, as in ../lib/bounded-map.ts: at least the last `max / 2` keys set are remembered, at
 * most `max`, and forgetting costs nothing per entry. With `trackChanges` every set and delete is
 * also an entry numbered in order (`seq`; a delete has no value, and a marker entry, an empty key
 * without a value, starts each generation). A step writes its entries as one chunk (one row: a
 * row per entry made the database the larger part of a send's cost), and a generation dropped
 * from memory becomes "forget the chunks before the one holding its successor's marker", a range
 * delete of a few rows. Loading replays the entries from the second-last marker on (what is older
 * may be half gone), rotating at the last one: the same operations from the same empty start give
 * the same two generations, so the memory after a restart is the memory before it.
 */
import type { ChannelMemory } from '../ports/channel.js';

/** Entries of a channel memory numbered from `firstSeq`: a step's changes, or a chunk the database kept. */
export interface ChannelMemoryChunk {
  /** Number of the first entry. */
  readonly firstSeq: number;
  /** Keys set or deleted, in order (entry `firstSeq + i`). */
  readonly keys: readonly string[];
  /** The value set, or null for a delete. */
  readonly values: readonly (string | null)[];
}

/** What changed in a channel memory since the last step (the durable server writes it). */
export interface ChannelMemoryChanges extends ChannelMemoryChunk {
  /** Chunks whose first entry is numbered below this are forgotten. */
  readonly before?: number;
}

/** The key of a marker entry (a generation starts); channels' keys are never empty. */
const MARKER = '';

export class ChannelMemoryStore implements ChannelMemory {
  #current = new Map<string, string>();
  #previous = new Map<string, string>();
  readonly #half: number;
  readonly #track: boolean;
  readonly #onChange: (() => void) | undefined;
  #nextSeq = 1;
  /** Number of the marker of the current generation (1 for the first, which has none). */
  #currentFirstSeq = 1;
  #firstPendingSeq = 1;
  #keys: string[] = [];
  #values: (string | null)[] = [];
  /** First entry numbers of the chunks the database holds, oldest first (from `#chunkHead`). */
  #chunks: number[] = [];
  #chunkHead = 0;
  /** Entries below this may go (the generations forgotten so far). */
  #pruneTo = 1;
  /** Chunks below this are gone. */
  #pruned = 1;

  /**
   * @param max most entries held
   * @param options `trackChanges`: keep entries for {@link takeChanges} (the durable server);
   *   `onChange`: told each change (the durable server schedules a step)
   */
  constructor(
    max: number,
    options: {
      readonly trackChanges?: boolean;
      readonly onChange?: () => void;
      readonly recall?: (keys: readonly string[]) => Promise<ReadonlyMap<string, string>>;
      readonly scan?: (prefix: string) => Promise<ReadonlyMap<string, string>>;
    } = {},
  ) {
    this.#half = Math.max(1, Math.ceil(max / 2));
    this.#track = options.trackChanges === true;
    this.#onChange = options.onChange;
    this.#read = options.recall;
    this.#scan = options.scan;
    // Only where a copy is kept elsewhere: without one, what is held is all there is.
    if (options.recall !== undefined) this.reread = (keys) => this.#reread(keys);
  }

  /**
   * Reads these keys again from the copy kept elsewhere, held or not: what it answers replaces
   * what is held (an absent key is dropped here), as entries read, not changes. A key changed here
   * and not yet taken by {@link takeChanges} keeps its value: it is newer than the copy. Absent
   * without such a copy (`recall` option).
   */
  readonly reread?: (keys: readonly string[]) => Promise<void>;

  readonly #read: ((keys: readonly string[]) => Promise<ReadonlyMap<string, string>>) | undefined;
  /** Entries by key prefix in the copy kept elsewhere (the server on Redis). */
  readonly #scan: ((prefix: string) => Promise<ReadonlyMap<string, string>>) | undefined;

  /** Changes not yet taken by {@link takeChanges}. */
  get changed(): boolean {
    return this.#keys.length > 0;
  }

  /**
   * Holds the keys the copy kept elsewhere knows (the server on Redis: another instance set them),
   * as entries read, not changes: they are not written back.
   */
  async recall(keys: readonly string[]): Promise<void> {
    if (this.#read === undefined) return;
    const missing = keys.filter((key) => this.get(key) === undefined);
    if (missing.length === 0) return;
    for (const [key, value] of await this.#read(missing)) {
      // Set here since the read was sent: what this instance holds is newer.
      if (this.get(key) !== undefined) continue;
      this.#current.set(key, value);
      if (this.#current.size >= this.#half) this.#rotate();
    }
  }

  async #reread(keys: readonly string[]): Promise<void> {
    if (this.#read === undefined || keys.length === 0) return;
    const found = await this.#read(keys);
    const pending = this.#keys.length > 0 ? new Set(this.#keys) : undefined;
    for (const key of keys) {
      if (pending?.has(key)) continue;
      const value = found.get(key);
      if (value === undefined) {
        this.#current.delete(key);
        this.#previous.delete(key);
      } else if (this.get(key) !== value) {
        this.#current.set(key, value);
        if (this.#current.size >= this.#half) this.#rotate();
      }
    }
  }

  /**
   * The entries whose key starts with `prefix`: those held (the durable server holds all it loaded),
   * and those the copy kept elsewhere has (the server on Redis; a key held here wins). Reads all.
   */
  async entries(prefix: string): Promise<ReadonlyMap<string, string>> {
    const out = new Map<string, string>();
    if (this.#scan !== undefined) for (const [key, value] of await this.#scan(prefix)) out.set(key, value);
    for (const generation of [this.#previous, this.#current]) for (const [key, value] of generation) if (key.startsWith(prefix)) out.set(key, value);
    return out;
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
    // A key not held has no entry newer than the forgotten ones: nothing to write.
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
    // The generation just dropped held the entries below the marker of the one now previous.
    this.#pruneTo = this.#currentFirstSeq;
    this.#currentFirstSeq = this.#nextSeq;
    this.#keys.push(MARKER);
    this.#values.push(null);
    this.#nextSeq++;
  }

  /** Loads the chunks the database kept, in order (call before any traffic). */
  load(chunks: readonly ChannelMemoryChunk[]): void {
    const first = chunks[0];
    if (first === undefined) return;
    const markers: number[] = [];
    for (const c of chunks) c.keys.forEach((key, i) => key === MARKER && c.values[i] === null && markers.push(c.firstSeq + i));
    // From the previous generation's marker: what is older is forgotten (maybe half deleted).
    const from = markers.length >= 2 ? markers[markers.length - 2]! : first.firstSeq;
    this.#currentFirstSeq = from;
    this.#pruneTo = from;
    this.#pruned = first.firstSeq;
    for (const c of chunks) {
      this.#chunks.push(c.firstSeq);
      for (let i = 0; i < c.keys.length; i++) {
        const seq = c.firstSeq + i;
        if (seq < from) continue;
        const key = c.keys[i]!;
        const value = c.values[i]!;
        if (key === MARKER && value === null) {
          if (seq === from) continue;
          this.#previous = this.#current;
          this.#current = new Map();
          this.#pruneTo = this.#currentFirstSeq;
          this.#currentFirstSeq = seq;
        } else if (value === null) {
          this.#current.delete(key);
          this.#previous.delete(key);
        } else this.#current.set(key, value);
      }
    }
    const last = chunks[chunks.length - 1]!;
    this.#nextSeq = last.firstSeq + last.keys.length;
    this.#firstPendingSeq = this.#nextSeq;
  }

  /** Entries set since the last call, and which chunks may now be forgotten; undefined when nothing changed. */
  takeChanges(): ChannelMemoryChanges | undefined {
    const written = this.#keys.length > 0;
    if (written) this.#chunks.push(this.#firstPendingSeq);
    // The chunk holding the oldest entry still needed, and every one before it: those may go.
    while (this.#chunks.length - this.#chunkHead >= 2 && this.#chunks[this.#chunkHead + 1]! <= this.#pruneTo) this.#chunkHead++;
    if (this.#chunkHead > 1024) {
      this.#chunks = this.#chunks.slice(this.#chunkHead);
      this.#chunkHead = 0;
    }
    const oldest = this.#chunks[this.#chunkHead];
    const before = oldest !== undefined && oldest > this.#pruned ? oldest : undefined;
    if (before !== undefined) this.#pruned = before;
    if (!written && before === undefined) return undefined;
    const changes: ChannelMemoryChanges = { firstSeq: this.#firstPendingSeq, keys: this.#keys, values: this.#values, ...(before !== undefined ? { before } : {}) };
    this.#firstPendingSeq = this.#nextSeq;
    this.#keys = [];
    this.#values = [];
    return changes;
  }
}
