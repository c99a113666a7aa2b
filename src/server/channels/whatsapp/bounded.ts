/**
 * A map that remembers the most recent entries: at least the last `max / 2` keys set, at most
 * `max` entries. Two generations: keys go into the current map; when it holds `max / 2`, it
 * becomes the previous one and the old previous is dropped whole. Forgetting costs nothing per
 * entry: a single Map evicting its oldest key with `keys().next()` and `delete` scans the holes
 * its deletions leave, and a key deleted and set again over and over makes it rehash, both of which
 * cost tens of microseconds per call on a map of 100,000 entries (measured in the channel's bench).
 */
export class BoundedMap<K, V> {
  #current = new Map<K, V>();
  #previous = new Map<K, V>();
  readonly #half: number;

  constructor(readonly max: number) {
    this.#half = Math.max(1, Math.ceil(max / 2));
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
      this.#previous = this.#current;
      this.#current = new Map();
    }
  }

  delete(key: K): void {
    this.#current.delete(key);
    this.#previous.delete(key);
  }

  /** Entries held (a key set in both generations counts twice). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }
}
