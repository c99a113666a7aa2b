/**
 * A growable double-ended queue on a ring of slots: O(1) at both ends, O(n) removal from the middle
 * (used only for rare eager removals, so nothing stale is ever left behind). A slot is cleared when
 * its entry leaves, so the ring keeps nothing alive that the caller let go of.
 */
export class Ring<T> {
  #items: (T | undefined)[];
  #head = 0;
  #size = 0;

  constructor(capacity = 4) {
    this.#items = new Array<T | undefined>(Math.max(2, capacity));
  }

  get size(): number {
    return this.#size;
  }

  /** The front entry, or undefined when empty. */
  peek(): T | undefined {
    return this.#size === 0 ? undefined : this.#items[this.#head];
  }

  pushBack(value: T): void {
    if (this.#size === this.#items.length) this.#grow();
    this.#items[(this.#head + this.#size) % this.#items.length] = value;
    this.#size++;
  }

  pushFront(value: T): void {
    if (this.#size === this.#items.length) this.#grow();
    this.#head = this.#head === 0 ? this.#items.length - 1 : this.#head - 1;
    this.#items[this.#head] = value;
    this.#size++;
  }

  /** Removes and returns the front entry; undefined when empty. */
  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const value = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head = this.#head + 1 === this.#items.length ? 0 : this.#head + 1;
    this.#size--;
    return value;
  }

  /** Removes the first entry equal to `value`, keeping the order of the rest; answers whether it was there. */
  remove(value: T): boolean {
    const cap = this.#items.length;
    for (let i = 0; i < this.#size; i++) {
      if (this.#items[(this.#head + i) % cap] !== value) continue;
      for (let j = i; j < this.#size - 1; j++) this.#items[(this.#head + j) % cap] = this.#items[(this.#head + j + 1) % cap];
      this.#items[(this.#head + this.#size - 1) % cap] = undefined;
      this.#size--;
      return true;
    }
    return false;
  }

  /** Entries front to back. */
  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.#size; i++) out.push(this.#items[(this.#head + i) % this.#items.length]!);
    return out;
  }

  clear(): void {
    this.#items = new Array<T | undefined>(2);
    this.#head = 0;
    this.#size = 0;
  }

  #grow(): void {
    const next = new Array<T | undefined>(this.#items.length * 2);
    for (let i = 0; i < this.#size; i++) next[i] = this.#items[(this.#head + i) % this.#items.length];
    this.#items = next;
    this.#head = 0;
  }
}
