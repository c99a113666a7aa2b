/**
 * Output of every (business, template type) over the last hour, sampled on a period, for the
 * dashboard's charts. One ring of sample times shared by every pool and one ring of values per
 * pool (typed arrays: 8 bytes a sample), so an hour of a fleet's samples costs a few megabytes at
 * most and a read copies only what the page has not seen yet (`since`).
 */

/** One pool's samples: times (epoch ms) and the output at each, oldest first. */
export interface OutputSamples {
  readonly t: number[];
  readonly output: number[];
}

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

  /** The sum of the pools' samples taken after `since` (a pool without a sample at a time counts 0 there). */
  sum(keys: readonly string[], since: number): OutputSamples {
    const rings = keys.flatMap((k) => this.#values.get(k) ?? []);
    const t: number[] = [];
    const output: number[] = [];
    const first = (this.#head - this.#count + this.#capacity) % this.#capacity;
    for (let i = 0; i < this.#count; i++) {
      const slot = (first + i) % this.#capacity;
      const at = this.#times[slot]!;
      if (at <= since) continue;
      let total = 0;
      for (const ring of rings) {
        const v = ring[slot]!;
        if (!Number.isNaN(v)) total += v;
      }
      t.push(at);
      output.push(total);
    }
    return { t, output };
  }

  /** The samples of a pool taken after `since` (all kept when 0), oldest first. */
  samples(key: string, since: number): OutputSamples {
    const ring = this.#values.get(key);
    const t: number[] = [];
    const output: number[] = [];
    if (ring === undefined) return { t, output };
    const first = (this.#head - this.#count + this.#capacity) % this.#capacity;
    for (let i = 0; i < this.#count; i++) {
      const slot = (first + i) % this.#capacity;
      const at = this.#times[slot]!;
      const value = ring[slot]!;
      if (at <= since || Number.isNaN(value)) continue;
      t.push(at);
      output.push(value);
    }
    return { t, output };
  }
}
