/**
 * A set of integer ids kept as sorted, disjoint half-open ranges: a host that numbers its contacts
 * from a counter admits a whole request as one range, so a campaign of a million contacts waiting
 * to be sent costs a few numbers, not a million map entries.
 */
export class IdRanges {
  /** Flat `[start0, end0, start1, end1, …]`, sorted; ranges neither overlap nor touch. */
  #r: number[] = [];
  #size = 0;

  /** The ids in the set. */
  get size(): number {
    return this.#size;
  }

  /** Index of the range that could hold `id` (the last one starting at or before it), or -1. */
  #find(id: number): number {
    const r = this.#r;
    let lo = 0;
    let hi = r.length / 2 - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (r[2 * mid]! <= id) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  has(id: number): boolean {
    const i = this.#find(id);
    return i >= 0 && id < this.#r[2 * i + 1]!;
  }

  /** How many ids of `[start, end)` are in the set. */
  countWithin(start: number, end: number): number {
    let n = 0;
    const r = this.#r;
    for (let i = Math.max(0, this.#find(start)); 2 * i < r.length && r[2 * i]! < end; i++) {
      n += Math.max(0, Math.min(end, r[2 * i + 1]!) - Math.max(start, r[2 * i]!));
    }
    return n;
  }

  /** The ids of `[start, end)` in the set, removed from it (for sets of few ids). */
  takeWithin(start: number, end: number): number[] {
    const out: number[] = [];
    for (const [a, b] of this.ranges()) {
      for (let id = Math.max(a, start); id < Math.min(b, end); id++) out.push(id);
    }
    for (const id of out) this.#remove(id);
    return out;
  }

  #remove(id: number): void {
    const i = this.#find(id);
    const r = this.#r;
    if (i < 0 || id >= r[2 * i + 1]!) return;
    const a = r[2 * i]!;
    const b = r[2 * i + 1]!;
    const parts: number[] = [];
    if (a < id) parts.push(a, id);
    if (id + 1 < b) parts.push(id + 1, b);
    r.splice(2 * i, 2, ...parts);
    this.#size--;
  }

  /**
   * Adds `[start, end)` when none of it is in the set (`'added'`); a range wholly in the set is
   * `'covered'` and changes nothing; a range partly in it is an `'overlap'` and changes nothing.
   */
  add(start: number, end: number): 'added' | 'covered' | 'overlap' {
    if (end <= start) return 'covered';
    const r = this.#r;
    const last = r.length - 1;
    // The common case: ids from a counter arrive in order.
    if (r.length === 0 || start >= r[last]!) {
      if (r.length > 0 && start === r[last]!) r[last] = end;
      else r.push(start, end);
      this.#size += end - start;
      return 'added';
    }
    const inSet = this.countWithin(start, end);
    if (inSet === end - start) return 'covered';
    if (inSet > 0) return 'overlap';
    const i = this.#find(start) + 1; // the new range goes before range i
    const joinsBefore = i > 0 && r[2 * i - 1] === start;
    const joinsAfter = 2 * i < r.length && r[2 * i] === end;
    if (joinsBefore && joinsAfter) r.splice(2 * i - 1, 2);
    else if (joinsBefore) r[2 * i - 1] = end;
    else if (joinsAfter) r[2 * i] = start;
    else r.splice(2 * i, 0, start, end);
    this.#size += end - start;
    return 'added';
  }

  /** The ranges as `[start, end)` pairs, in order. */
  *ranges(): IterableIterator<[number, number]> {
    const r = this.#r;
    for (let i = 0; i < r.length; i += 2) yield [r[i]!, r[i + 1]!];
  }

  /** The flat `[start, end, …]` form (JSON-safe). */
  toArray(): number[] {
    return [...this.#r];
  }

  clear(): void {
    this.#r = [];
    this.#size = 0;
  }

  /**
   * The set of a flat `[start, end, …]` array, in any order; ranges that overlap or touch are joined.
   * @throws {RangeError} for an odd length, a bound that is not a safe integer, or an end before its start
   */
  static from(flat: readonly number[]): IdRanges {
    if (flat.length % 2 !== 0) throw new RangeError(`id ranges: an even number of bounds expected, got ${flat.length}`);
    const pairs: [number, number][] = [];
    for (let i = 0; i < flat.length; i += 2) {
      const a = flat[i]!;
      const b = flat[i + 1]!;
      if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b) || b < a) throw new RangeError(`id ranges: [${a}, ${b}) is not a range of safe integers`);
      if (b > a) pairs.push([a, b]);
    }
    pairs.sort((x, y) => x[0] - y[0]);
    const s = new IdRanges();
    for (const [a, b] of pairs) {
      const r = s.#r;
      const lastEnd = r[r.length - 1];
      if (lastEnd !== undefined && a <= lastEnd) {
        if (b > lastEnd) {
          s.#size += b - lastEnd;
          r[r.length - 1] = b;
        }
      } else {
        r.push(a, b);
        s.#size += b - a;
      }
    }
    return s;
  }
}
