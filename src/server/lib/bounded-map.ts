/**
 * A map that remembers the most recent entries: at least the last `max / 2` keys set, at most
 * `max` entries. Two generations: keys go into the current map; when it holds `max / 2`, it
 * becomes the previous one and the old previous is dropped whole. Forgetting costs nothing per
 * entry: a single Map evicting its oldest key with `keys().next()` and `delete` scans the holes
 * its deletions leave, and a key deleted and set again over and over makes it rehash, both of which
 * cost tens of microseconds per call on a map of 100,000 entries (measured in the WhatsApp
 * channel's bench; the notifier's map of sent messages cost about 56 µs a send once full at
 * 1,000,000 entries).
 */
export class BoundedMap<K, V> {
  #current = new Map<K, V>();
  #previous = new Map<K, V>();
  readonly #half: number;
  readonly #onDrop: ((dropped: ReadonlyMap<K, V>) => void) | undefined;

  /**
   * @param max most entries held
   * @param onDrop told each generation dropped whole (its entries not set again since may be
   *   forgotten elsewhere too: a durable copy, say)
   */
  constructor(
    readonly max: number,
    onDrop?: (dropped: ReadonlyMap<K, V>) => void,
  ) {
    this.#half = Math.max(1, Math.ceil(max / 2));
    this.#onDrop = onDrop;
  }

  get(key: K): V | undefined {
    const value = this.#current.get(key);
    return value !== undefined ? value : this.#previous.get(key);
  }

  has(key: K): boolean {
    return this.#current.has(key) || this.#previous.has(key);
  }

  /** Sets `key` as one of the most recent entries. */
  set(key: K, value: V): void {
    this.#current.set(key, value);
    if (this.#current.size >= this.#half) {
      const dropped = this.#previous;
      this.#previous = this.#current;
      this.#current = new Map();
      if (this.#onDrop && dropped.size > 0) this.#onDrop(dropped);
    }
  }

  /** Removes `key`; true when it was held. */
  delete(key: K): boolean {
    const a = this.#current.delete(key);
    const b = this.#previous.delete(key);
    return a || b;
  }

  /** Entries held (a key set in both generations counts twice). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  /** Entries, oldest generation first (a key set again is given once, with its newest value). */
  *entries(): IterableIterator<[K, V]> {
    for (const entry of this.#previous) if (!this.#current.has(entry[0])) yield entry;
    yield* this.#current;
  }
}
