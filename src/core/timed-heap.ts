/**
 * A min-heap of (time, id, generation) entries in typed arrays, ordered by time then id. The
 * engine's waiting numbers and timed resumes live here: pushing allocates nothing, and `peek` on
 * every call stays monomorphic (a generic heap shared by differently shaped items deoptimises on
 * the hot path). A generation lets the owner drop entries invalidated since they were pushed.
 */
export class TimedHeap {
  #at = new Float64Array(16);
  #id = new Int32Array(16);
  #gen = new Uint32Array(16);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Time of the earliest entry; Infinity when empty. */
  topAt(): number {
    return this.#size > 0 ? this.#at[0]! : Infinity;
  }

  topId(): number {
    return this.#id[0]!;
  }

  topGen(): number {
    return this.#gen[0]!;
  }

  push(at: number, id: number, gen: number): void {
    if (this.#size === this.#at.length) this.#grow();
    let i = this.#size++;
    // Sift up.
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(at, id, parent)) break;
      this.#move(parent, i);
      i = parent;
    }
    this.#at[i] = at;
    this.#id[i] = id;
    this.#gen[i] = gen;
  }

  /** Removes the earliest entry. */
  pop(): void {
    if (this.#size === 0) return;
    const last = --this.#size;
    if (last === 0) return;
    const at = this.#at[last]!;
    const id = this.#id[last]!;
    const gen = this.#gen[last]!;
    let i = 0;
    // Sift down.
    for (;;) {
      let child = 2 * i + 1;
      if (child >= last) break;
      if (child + 1 < last && this.#less(child + 1, child)) child++;
      if (!this.#lessThan(child, at, id)) break;
      this.#move(child, i);
      i = child;
    }
    this.#at[i] = at;
    this.#id[i] = id;
    this.#gen[i] = gen;
  }

  clear(): void {
    this.#size = 0;
  }

  /** Entries in no particular order (snapshots). */
  entries(): [at: number, id: number, gen: number][] {
    const out: [number, number, number][] = [];
    for (let i = 0; i < this.#size; i++) out.push([this.#at[i]!, this.#id[i]!, this.#gen[i]!]);
    return out;
  }

  /** Whether (at, id) comes before the entry at `slot`. */
  #before(at: number, id: number, slot: number): boolean {
    const other = this.#at[slot]!;
    return at < other || (at === other && id < this.#id[slot]!);
  }

  /** Whether the entry at `slot` comes before (at, id). */
  #lessThan(slot: number, at: number, id: number): boolean {
    const mine = this.#at[slot]!;
    return mine < at || (mine === at && this.#id[slot]! < id);
  }

  #less(a: number, b: number): boolean {
    return this.#lessThan(a, this.#at[b]!, this.#id[b]!);
  }

  #move(from: number, to: number): void {
    this.#at[to] = this.#at[from]!;
    this.#id[to] = this.#id[from]!;
    this.#gen[to] = this.#gen[from]!;
  }

  #grow(): void {
    const n = this.#at.length * 2;
    const at = new Float64Array(n);
    at.set(this.#at);
    const id = new Int32Array(n);
    id.set(this.#id);
    const gen = new Uint32Array(n);
    gen.set(this.#gen);
    this.#at = at;
    this.#id = id;
    this.#gen = gen;
  }
}
