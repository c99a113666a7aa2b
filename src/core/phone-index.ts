/**
 * Phone -> slot lookup in a few bytes per number: open addressing over an Int32Array whose entries
 * point into the caller's own array of phones (which it keeps anyway). A `Map` costs about 37 bytes
 * an entry; this costs 4 to 8. Lookups are off the hot path (status changes, re-opens), so a
 * string hash per lookup is fine.
 */
export class PhoneIndex {
  #table = new Int32Array(16).fill(-1);
  #mask = 15;
  #size = 0;
  readonly #keys: readonly string[];

  /** @param keys the phones by slot; the index reads them, never writes them */
  constructor(keys: readonly string[]) {
    this.#keys = keys;
  }

  get size(): number {
    return this.#size;
  }

  /** Slot of `key`, or undefined. */
  get(key: string): number | undefined {
    let i = hash(key) & this.#mask;
    for (;;) {
      const slot = this.#table[i]!;
      if (slot < 0) return undefined;
      if (this.#keys[slot] === key) return slot;
      i = (i + 1) & this.#mask;
    }
  }

  /** Records that `keys[slot]` is at `slot` (the key must not be indexed yet). */
  add(slot: number): void {
    if ((this.#size + 1) * 4 > this.#table.length * 3) this.#grow();
    this.#insert(slot);
    this.#size++;
  }

  /** Makes room for `count` keys in all, so adding them allocates once. */
  sizeFor(count: number): void {
    let length = this.#table.length;
    while (count * 4 > length * 3) length *= 2;
    if (length !== this.#table.length) this.#rehash(length);
  }

  #insert(slot: number): void {
    let i = hash(this.#keys[slot]!) & this.#mask;
    while (this.#table[i]! >= 0) i = (i + 1) & this.#mask;
    this.#table[i] = slot;
  }

  #grow(): void {
    this.#rehash(this.#table.length * 2);
  }

  #rehash(length: number): void {
    const old = this.#table;
    this.#table = new Int32Array(length).fill(-1);
    this.#mask = length - 1;
    for (const slot of old) if (slot >= 0) this.#insert(slot);
  }
}

/** FNV-1a over the UTF-16 code units. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
