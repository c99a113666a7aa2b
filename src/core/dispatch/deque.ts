/**
 * A double-ended queue of numbers on a growable ring of doubles: 8 bytes an entry, O(1) at both
 * ends, no allocation per entry. Queued contacts are stored as numeric references, so a million of
 * them cost 8 MB here and nothing per contact on the heap. It shrinks when mostly empty, so a
 * drained campaign gives its memory back.
 */
export class NumberDeque {
  #buf: Float64Array;
  #head = 0;
  #size = 0;

  constructor(capacity = 16) {
    this.#buf = new Float64Array(Math.max(4, capacity));
  }

  get size(): number {
    return this.#size;
  }

  pushBack(value: number): void {
    if (this.#size === this.#buf.length) this.#resize(this.#buf.length * 2);
    let at = this.#head + this.#size;
    if (at >= this.#buf.length) at -= this.#buf.length;
    this.#buf[at] = value;
    this.#size++;
  }

  pushFront(value: number): void {
    if (this.#size === this.#buf.length) this.#resize(this.#buf.length * 2);
    this.#head = this.#head === 0 ? this.#buf.length - 1 : this.#head - 1;
    this.#buf[this.#head] = value;
    this.#size++;
  }

  /** Removes and returns the front entry; undefined when empty. */
  popFront(): number | undefined {
    if (this.#size === 0) return undefined;
    const value = this.#buf[this.#head]!;
    this.#buf[this.#head] = 0;
    this.#head = this.#head + 1 === this.#buf.length ? 0 : this.#head + 1;
    this.#size--;
    if (this.#buf.length > 64 && this.#size < this.#buf.length >>> 2) this.#resize(this.#buf.length >>> 1);
    return value;
  }

  /** Entries front to back (snapshots). */
  toArray(): number[] {
    const out: number[] = new Array<number>(this.#size);
    for (let i = 0; i < this.#size; i++) out[i] = this.#buf[(this.#head + i) % this.#buf.length]!;
    return out;
  }

  /** Bytes held by the ring (benchmarks). */
  get byteLength(): number {
    return this.#buf.byteLength;
  }

  #resize(capacity: number): void {
    const next = new Float64Array(capacity);
    for (let i = 0; i < this.#size; i++) next[i] = this.#buf[(this.#head + i) % this.#buf.length]!;
    this.#buf = next;
    this.#head = 0;
  }
}
