/**
 * A set of phones (8 to 15 digits, no leading 0: each is a distinct integer below 2^53) in one
 * Float64Array with open addressing: 16 to 32 bytes per phone, against about 100 for a `Set` of
 * strings (up to 48 while it grows, and for a set of over 24 K phones from 3/8 load, when the next
 * table is prepared), because a campaign of millions of contacts remembers every phone it took.
 */
const EMPTY = 0; // no phone is 0
/** A phone deleted from the table being emptied by a growth (no phone is negative): probes pass it. */
const GONE = -1;
const MIN_CAPACITY = 16;
/**
 * Slots of the old table moved to the new one by each `add` and `delete` while the set grows. A
 * growth starts at half load with `old.length / 2` phones and the next one is due after another
 * `old.length / 2` adds, while the old table is emptied in `old.length / MOVE_PER_CHANGE` changes:
 * any value of 2 or more finishes in time. 4 spreads the move over half the time to the next
 * growth, about two inserts more per add. More per change would crowd the whole rehash into the
 * first few requests after a doubling: with 16, the 8,192 adds after a doubling to 4 M slots took
 * 100 ms together (each insert into the fresh 32 MB table faults a page in).
 */
const MOVE_PER_CHANGE = 4;
/**
 * The next table is allocated at 3/8 load and its memory touched one page (512 slots) every 16
 * adds, so it is in place when the doubling comes at 1/2 load (it needs `length / 16` adds of the
 * `length / 8` there are). A fresh table's pages are faulted in by their first write: on the
 * reference machine (a VM) 32 µs a page, 265 ms for the 8,192 pages of 32 MB, which random inserts
 * into a fresh table would pay within the first requests after the doubling.
 */
const PREPARE_AT_EIGHTHS = 3;
const ADDS_PER_PAGE = 16;
/** Smaller next tables (under 1 MB: 8 ms of faults at most) are allocated at the doubling, as before. */
const PREPARED_MIN_SLOTS = 1 << 17;
const SLOTS_PER_PAGE = 512;

/** The integer a normalised phone spells (digits only, as the contract writes them). */
export function phoneKey(phone: string): number {
  return Number(phone);
}

/**
 * Grows incrementally: when it doubles, the new table is allocated and the old one is emptied into it
 * a few slots per later `add` or `delete` ({@link MOVE_PER_CHANGE}), rather than rehashed at once (a
 * set of 1 M phones took 150 ms to rehash in one piece, holding every other request). Meanwhile a
 * lookup probes the new table, then the old one from where its moving has reached: the old table is
 * never written but for {@link GONE} marks of phones deleted before they moved, so its probe runs
 * stay whole.
 */
export class PhoneHashSet {
  #slots: Float64Array;
  /** The table being emptied into `#slots` while the set grows; slots below `#moved` are done. */
  #old: Float64Array | undefined;
  #moved = 0;
  /** The table of the next growth, being prepared (its pages touched up to `#touched`). */
  #next: Float64Array | undefined;
  #touched = 0;
  #adds = 0;
  #size = 0;

  constructor(capacity = MIN_CAPACITY) {
    let c = MIN_CAPACITY;
    while (c < capacity * 2) c *= 2;
    this.#slots = new Float64Array(c);
  }

  get size(): number {
    return this.#size;
  }

  /** Bytes held (for the memory figures): both tables while the set grows, and the next one once prepared. */
  get bytes(): number {
    return this.#slots.byteLength + (this.#old?.byteLength ?? 0) + (this.#next?.byteLength ?? 0);
  }

  /** Whether a growth is still moving phones (tests). */
  get growing(): boolean {
    return this.#old !== undefined;
  }

  has(key: number): boolean {
    return find(this.#slots, key) >= 0 || this.#oldIndex(key) >= 0;
  }

  /** Adds a phone; false when it was there. */
  add(key: number): boolean {
    if (this.#old !== undefined) this.#move(MOVE_PER_CHANGE);
    else this.#prepare();
    if ((this.#size + 1) * 2 > this.#slots.length) this.#grow();
    // A phone not moved yet is in the old table only.
    if (this.#oldIndex(key) >= 0 || !insert(this.#slots, key)) return false;
    this.#size++;
    return true;
  }

  /** Removes a phone; false when it was not there. Later entries of its probe run move back (no tombstones). */
  delete(key: number): boolean {
    if (this.#old !== undefined) {
      this.#move(MOVE_PER_CHANGE);
      const i = this.#oldIndex(key);
      if (i >= 0) {
        this.#old[i] = GONE;
        this.#size--;
        return true;
      }
    }
    if (!remove(this.#slots, key)) return false;
    this.#size--;
    return true;
  }

  *values(): IterableIterator<number> {
    for (const v of this.#slots) if (v !== EMPTY) yield v;
    const old = this.#old;
    if (old) for (let i = this.#moved; i < old.length; i++) if (old[i]! > 0) yield old[i]!;
  }

  /** Index of `key` in the old table when it is still there (not moved, not deleted), else -1. */
  #oldIndex(key: number): number {
    const old = this.#old;
    if (old === undefined) return -1;
    const i = find(old, key);
    return i >= this.#moved ? i : -1;
  }

  /** Moves up to `slots` slots of the old table into the new one. */
  #move(slots: number): void {
    const old = this.#old!;
    const end = Math.min(old.length, this.#moved + slots);
    for (let i = this.#moved; i < end; i++) {
      const v = old[i]!;
      if (v > 0) insert(this.#slots, v);
    }
    this.#moved = end;
    if (end === old.length) {
      this.#old = undefined;
      this.#moved = 0;
    }
  }

  /** From 3/8 load: the next table allocated, one more of its pages touched every ADDS_PER_PAGE adds. */
  #prepare(): void {
    const length = this.#slots.length * 2;
    if (this.#next === undefined) {
      if (length < PREPARED_MIN_SLOTS || this.#size * 8 < this.#slots.length * PREPARE_AT_EIGHTHS) return;
      this.#next = new Float64Array(length);
      this.#touched = 0;
    }
    if (this.#touched < length && ++this.#adds % ADDS_PER_PAGE === 0) {
      this.#next[this.#touched] = EMPTY;
      this.#touched += SLOTS_PER_PAGE;
    }
  }

  #grow(): void {
    // Never two growths at once (MOVE_PER_CHANGE makes this a no-op): the rest moves now.
    if (this.#old !== undefined) this.#move(this.#old.length);
    this.#old = this.#slots;
    this.#moved = 0;
    this.#slots = this.#next?.length === this.#old.length * 2 ? this.#next : new Float64Array(this.#old.length * 2);
    this.#next = undefined;
  }
}

/** Slot index of a phone in a table of 2^k slots. */
function home(key: number, mask: number): number {
  // Mix the low and high 32 bits (a phone is up to 50 bits) into a slot index.
  const lo = (key % 4294967296) | 0;
  const hi = (key / 4294967296) | 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 13;
  return h & mask;
}

/** Index of `key` in `slots`, or -1 (probes pass GONE marks). */
function find(slots: Float64Array, key: number): number {
  const mask = slots.length - 1;
  for (let i = home(key, mask); ; i = (i + 1) & mask) {
    const v = slots[i]!;
    if (v === key) return i;
    if (v === EMPTY) return -1;
  }
}

/** Puts `key` in `slots` (never full: at most half load); false when it was there. */
function insert(slots: Float64Array, key: number): boolean {
  const mask = slots.length - 1;
  for (let i = home(key, mask); ; i = (i + 1) & mask) {
    const v = slots[i]!;
    if (v === key) return false;
    if (v === EMPTY) {
      slots[i] = key;
      return true;
    }
  }
}

/** Removes `key` from `slots` (which hold no GONE marks); later entries of its probe run move back. */
function remove(slots: Float64Array, key: number): boolean {
  const mask = slots.length - 1;
  let i = home(key, mask);
  for (; ; i = (i + 1) & mask) {
    const v = slots[i]!;
    if (v === EMPTY) return false;
    if (v === key) break;
  }
  slots[i] = EMPTY;
  for (let j = (i + 1) & mask; slots[j] !== EMPTY; j = (j + 1) & mask) {
    const v = slots[j]!;
    const h = home(v, mask);
    // Move v into the hole when its home is not cyclically within (i, j].
    if (i <= j ? h <= i || h > j : h <= i && h > j) {
      slots[i] = v;
      slots[j] = EMPTY;
      i = j;
    }
  }
  return true;
}
