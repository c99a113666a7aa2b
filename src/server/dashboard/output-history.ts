/**
 * Output of every (business, template type) over the last hour, sampled on a period, for the
 * dashboard's charts. One ring of sample times shared by every pool and one ring of values per
 * pool (typed arrays: 8 bytes a sample), so an hour of a fleet's samples costs a few megabytes at
 * most and a read copies only what the page has not seen yet (`since`).
 */

export class OutputHistory {
  readonly #capacity: number;
  readonly #times: Float64Array;
  readonly #values = new Map<string, Float64Array>();
  /** Index of the next sample to write. */
  #head = 0;
  #count = 0;

  /** Keeps `capacity` samples (an hour divided by the period, plus one). */
  constructor(capacity: number) {
    this.#capacity = Math.max(2, Math.ceil(capacity));
    this.#times = new Float64Array(this.#capacity);
  }

  /** Records one sample of every pool at `at`; pools that are gone are forgotten. */
  record(at: number, outputs: ReadonlyMap<string, number>): void {
    const slot = this.#head;
    for (const key of this.#values.keys()) if (!outputs.has(key)) this.#values.delete(key);
    for (const [key, output] of outputs) {
      let ring = this.#values.get(key);
      if (ring === undefined) {
        // A pool new since the last sample has no history before it.
        ring = new Float64Array(this.#capacity).fill(Number.NaN);
        this.#values.set(key, ring);
      }
      ring[slot] = output;
    }
    this.#times[slot] = at;
    this.#head = (slot + 1) % this.#capacity;
    if (this.#count < this.#capacity) this.#count++;
  }

  /**
   * The samples taken after `since` (all kept when 0): their times once, the sum over `sum` at each,
   * and the values of each pool of `each` at each (null where it had none), so a page of pools
   * costs its values only, not a copy of the times per pool.
   */
  read(sum: readonly string[], each: readonly string[], since: number): { t: number[]; total: number[]; pools: Map<string, (number | null)[]> } {
    const rings = sum.flatMap((k) => this.#values.get(k) ?? []);
    const shown = each.map((k) => [k, this.#values.get(k), [] as (number | null)[]] as const);
    const t: number[] = [];
    const total: number[] = [];
    const first = (this.#head - this.#count + this.#capacity) % this.#capacity;
    for (let i = 0; i < this.#count; i++) {
      const slot = (first + i) % this.#capacity;
      const at = this.#times[slot]!;
      if (at <= since) continue;
      let value = 0;
      for (const ring of rings) {
        const v = ring[slot]!;
        if (!Number.isNaN(v)) value += v;
      }
      t.push(at);
      total.push(value);
      for (const [, ring, out] of shown) {
        const v = ring === undefined ? Number.NaN : ring[slot]!;
        out.push(Number.isNaN(v) ? null : v);
      }
    }
    return { t, total, pools: new Map(shown.map(([k, , out]) => [k, out])) };
  }
}
