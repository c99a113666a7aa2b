/**
 * A Map that keeps at most `max` entries, dropping the oldest inserted: the channel's memory of
 * sent messages and of webhook events seen stays bounded however long it runs.
 */
export class BoundedMap<K, V> {
  readonly #map = new Map<K, V>();

  constructor(readonly max: number) {}

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** Sets `key`, as the newest entry (a key set again moves to the end). */
  set(key: K, value: V): void {
    if (this.#map.has(key)) this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  get size(): number {
    return this.#map.size;
  }
}
