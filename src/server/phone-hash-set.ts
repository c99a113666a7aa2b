/**
 * A set of phones (8 to 15 digits, no leading 0: each is a distinct integer below 2^53) in one
 * Float64Array with open addressing: 16 to 32 bytes per phone, against about 100 for a `Set` of
 * strings, because a campaign of millions of contacts remembers every phone it took.
 */
const EMPTY = 0; // no phone is 0
const MIN_CAPACITY = 16;

/** The integer a normalised phone spells (digits only, as the contract writes them). */
export function phoneKey(phone: string): number {
  return Number(phone);
}

export class PhoneHashSet {
  #slots: Float64Array;
  #size = 0;

  constructor(capacity = MIN_CAPACITY) {
    let c = MIN_CAPACITY;
    while (c < capacity * 2) c *= 2;
    this.#slots = new Float64Array(c);
  }

  get size(): number {
    return this.#size;
  }

  /** Bytes held (for the memory figures). */
  get bytes(): number {
    return this.#slots.byteLength;
  }

  #slot(key: number): number {
    // Mix the low and high 32 bits (a phone is up to 50 bits) into a slot index.
    const lo = (key % 4294967296) | 0;
    const hi = (key / 4294967296) | 0;
    let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
    h ^= h >>> 15;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 13;
    return h & (this.#slots.length - 1);
  }

  has(key: number): boolean {
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let i = this.#slot(key); ; i = (i + 1) & mask) {
      const v = slots[i]!;
      if (v === key) return true;
      if (v === EMPTY) return false;
    }
  }

  /** Adds a phone; false when it was there. */
  add(key: number): boolean {
    if ((this.#size + 1) * 2 > this.#slots.length) this.#grow();
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let i = this.#slot(key); ; i = (i + 1) & mask) {
      const v = slots[i]!;
      if (v === key) return false;
      if (v === EMPTY) {
        slots[i] = key;
        this.#size++;
        return true;
      }
    }
  }

  /** Removes a phone; false when it was not there. Later entries of its probe run move back (no tombstones). */
  delete(key: number): boolean {
    const slots = this.#slots;
    const mask = slots.length - 1;
    let i = this.#slot(key);
    for (; ; i = (i + 1) & mask) {
      const v = slots[i]!;
      if (v === EMPTY) return false;
      if (v === key) break;
    }
    slots[i] = EMPTY;
    this.#size--;
    for (let j = (i + 1) & mask; slots[j] !== EMPTY; j = (j + 1) & mask) {
      const v = slots[j]!;
      const home = this.#slot(v);
      // Move v into the hole when its home is not cyclically within (i, j].
      if (i <= j ? home <= i || home > j : home <= i && home > j) {
        slots[i] = v;
        slots[j] = EMPTY;
        i = j;
      }
    }
    return true;
  }

  *values(): IterableIterator<number> {
    for (const v of this.#slots) if (v !== EMPTY) yield v;
  }

  #grow(): void {
    const old = this.#slots;
    this.#slots = new Float64Array(old.length * 2);
    this.#size = 0;
    for (const v of old) if (v !== EMPTY) this.add(v);
  }
}
