/**
 * The in-memory {@link Store}: every window of every number in flat typed arrays, so the engine's
 * per-call work is a few array reads and the memory per number stays in the low hundreds of bytes.
 *
 * Windows of a number:
 * - per hour: GCRA, capacity `perHour` over 3,600,000 ms;
 * - per second (optional): GCRA, capacity `perSecond` over 1,000 ms;
 * - rolling 24 h: sends counted in buckets of `bucketMinutes` on a ring. The count covers the
 *   current bucket and the 24 h of buckets before it, so a send weighs on the limit for between
 *   24 h and 24 h + one bucket: never less than the channel's window, hence never over it.
 */
import { ArgumentError } from '../errors.js';
import { describeValue } from '../problems.js';
import { gcraAvailable, gcraAvailableAt, gcraGiveBack, gcraRescale, gcraTake } from './gcra.js';
import type { NumberLimits, Store, StoreSnapshot } from './store.js';

const HOUR = 3_600_000;
const SECOND = 1_000;
const DAY = 86_400_000;

// Layout of the per-number Float64 record.
const H_TAT = 0;
const H_REM = 1;
const H_CAP = 2;
const S_TAT = 3;
const S_REM = 4;
const S_CAP = 5; // 0: no per-second window
const D_LIMIT = 6;
const D_SUM = 7;
const D_HEAD = 8; // bucket index of the newest bucket counted; -1: nothing counted yet
const STRIDE = 9;

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Width of the buckets of the rolling 24 h counter, in minutes; must divide 1,440. Smaller buckets
   * give back capacity sooner after a full day; each costs 4 bytes per number.
   * @default 60
   */
  readonly bucketMinutes?: number;
}

/** One number's state in a {@link MemoryStoreSnapshot}. */
export interface MemoryStoreNumberState {
  /** [tat, rem, capacity] of the hourly window. */
  readonly hour: readonly [number, number, number];
  /** [tat, rem, capacity] of the per-second window, or null without one. */
  readonly second: readonly [number, number, number] | null;
  /** Non-empty buckets of the 24 h counter as [bucket index, count]. */
  readonly day: readonly (readonly [number, number])[];
}

/** Plain-JSON state of a {@link MemoryStore}. */
export interface MemoryStoreSnapshot extends StoreSnapshot {
  readonly kind: 'memory';
  readonly bucketMinutes: number;
  readonly numbers: Readonly<Record<string, MemoryStoreNumberState>>;
}

export class MemoryStore implements Store {
  readonly bucketMinutes: number;
  readonly #bucketMs: number;
  /** Buckets on the ring: a day of them plus the current one. */
  readonly #ring: number;
  #size = 0;
  #rec = new Float64Array(STRIDE * 16);
  #buckets: Uint32Array;
  readonly #handles = new Map<string, number>();
  #keys: string[] = [];
  /** Restored state of numbers not opened yet. */
  readonly #pending = new Map<string, MemoryStoreNumberState>();
  readonly #scratch = new Float64Array(2);

  constructor(options: MemoryStoreOptions = {}) {
    const minutes = options.bucketMinutes ?? 60;
    if (!Number.isInteger(minutes) || minutes < 1 || 1440 % minutes !== 0) {
      throw new ArgumentError('MemoryStore({ bucketMinutes })', 'a whole number of minutes dividing 1440 (1, 5, 15, 30, 60, …)', describeValue(minutes));
    }
    this.bucketMinutes = minutes;
    this.#bucketMs = minutes * 60_000;
    this.#ring = DAY / this.#bucketMs + 1;
    this.#buckets = new Uint32Array(this.#ring * 16);
  }

  open(key: string, limits: NumberLimits, now: number): number {
    let h = this.#handles.get(key);
    if (h === undefined) {
      h = this.#size++;
      this.#grow();
      this.#handles.set(key, h);
      this.#keys[h] = key;
      const r = h * STRIDE;
      this.#rec[r + H_CAP] = limits.perHour;
      this.#rec[r + S_CAP] = limits.perSecond ?? 0;
      this.#rec[r + D_LIMIT] = limits.per24h;
      this.#rec[r + D_HEAD] = -1;
      const pending = this.#pending.get(key);
      if (pending) {
        this.#pending.delete(key);
        this.#load(h, pending, now);
      }
      return h;
    }
    const r = h * STRIDE;
    const rec = this.#rec;
    if (rec[r + H_CAP] !== limits.perHour) {
      gcraRescale(rec[r + H_TAT]!, rec[r + H_REM]!, rec[r + H_CAP]!, limits.perHour, now, this.#scratch, 0);
      rec[r + H_TAT] = this.#scratch[0]!;
      rec[r + H_REM] = this.#scratch[1]!;
      rec[r + H_CAP] = limits.perHour;
    }
    const perSecond = limits.perSecond ?? 0;
    if (rec[r + S_CAP] !== perSecond) {
      if (rec[r + S_CAP]! > 0 && perSecond > 0) {
        gcraRescale(rec[r + S_TAT]!, rec[r + S_REM]!, rec[r + S_CAP]!, perSecond, now, this.#scratch, 0);
        rec[r + S_TAT] = this.#scratch[0]!;
        rec[r + S_REM] = this.#scratch[1]!;
      } else {
        rec[r + S_TAT] = 0;
        rec[r + S_REM] = 0;
      }
      rec[r + S_CAP] = perSecond;
    }
    rec[r + D_LIMIT] = limits.per24h;
    return h;
  }

  available(handle: number, now: number): number {
    const rec = this.#rec;
    const r = handle * STRIDE;
    let a = gcraAvailable(rec[r + H_TAT]!, rec[r + H_REM]!, rec[r + H_CAP]!, HOUR, now);
    const sCap = rec[r + S_CAP]!;
    if (sCap > 0) {
      const s = gcraAvailable(rec[r + S_TAT]!, rec[r + S_REM]!, sCap, SECOND, now);
      if (s < a) a = s;
    }
    const d = rec[r + D_LIMIT]! - this.#daySum(handle, now);
    return d < a ? (d > 0 ? d : 0) : a;
  }

  reserve(handle: number, want: number, now: number): number {
    const rec = this.#rec;
    const r = handle * STRIDE;
    const hTat = rec[r + H_TAT]!;
    const hRem = rec[r + H_REM]!;
    const hCap = rec[r + H_CAP]!;
    let granted = gcraAvailable(hTat, hRem, hCap, HOUR, now);
    const sCap = rec[r + S_CAP]!;
    if (sCap > 0) {
      const s = gcraAvailable(rec[r + S_TAT]!, rec[r + S_REM]!, sCap, SECOND, now);
      if (s < granted) granted = s;
    }
    const d = rec[r + D_LIMIT]! - this.#daySum(handle, now);
    if (d < granted) granted = d;
    if (want < granted) granted = want;
    if (granted <= 0) return 0;
    gcraTake(hTat, hRem, hCap, HOUR, now, granted, rec, r + H_TAT);
    if (sCap > 0) gcraTake(rec[r + S_TAT]!, rec[r + S_REM]!, sCap, SECOND, now, granted, rec, r + S_TAT);
    // #daySum above moved the head to the current bucket.
    this.#buckets[handle * this.#ring + (rec[r + D_HEAD]! % this.#ring)]! += granted;
    rec[r + D_SUM]! += granted;
    return granted;
  }

  release(handle: number, count: number, now: number): void {
    if (count <= 0) return;
    const rec = this.#rec;
    const r = handle * STRIDE;
    gcraGiveBack(rec[r + H_TAT]!, rec[r + H_REM]!, rec[r + H_CAP]!, HOUR, count, rec, r + H_TAT);
    const sCap = rec[r + S_CAP]!;
    if (sCap > 0) gcraGiveBack(rec[r + S_TAT]!, rec[r + S_REM]!, sCap, SECOND, count, rec, r + S_TAT);
    this.#daySum(handle, now);
    const slot = handle * this.#ring + (rec[r + D_HEAD]! % this.#ring);
    const back = Math.min(count, this.#buckets[slot]!);
    this.#buckets[slot]! -= back;
    rec[r + D_SUM]! -= back;
  }

  availableAt(handle: number, count: number, now: number): number {
    const rec = this.#rec;
    const r = handle * STRIDE;
    let t = gcraAvailableAt(rec[r + H_TAT]!, rec[r + H_REM]!, rec[r + H_CAP]!, HOUR, now, count);
    const sCap = rec[r + S_CAP]!;
    if (sCap > 0) t = Math.max(t, gcraAvailableAt(rec[r + S_TAT]!, rec[r + S_REM]!, sCap, SECOND, now, count));
    return Math.max(t, this.#dayAvailableAt(handle, count, now));
  }

  snapshot(): MemoryStoreSnapshot {
    const numbers: Record<string, MemoryStoreNumberState> = {};
    for (let h = 0; h < this.#size; h++) numbers[this.#keys[h]!] = this.#save(h);
    for (const [key, state] of this.#pending) numbers[key] = state;
    return { kind: 'memory', bucketMinutes: this.bucketMinutes, numbers };
  }

  restore(snapshot: StoreSnapshot, now: number): void {
    const snap = snapshot as MemoryStoreSnapshot;
    if (snap.kind !== 'memory' || typeof snap.numbers !== 'object' || snap.numbers === null) {
      throw new ArgumentError('MemoryStore.restore(snapshot)', 'a snapshot of kind "memory"', describeValue(snap.kind));
    }
    const scale = snap.bucketMinutes === this.bucketMinutes ? 1 : 0;
    for (const [key, state] of Object.entries(snap.numbers)) {
      const adjusted = scale ? state : this.#rebucket(state, snap.bucketMinutes);
      const h = this.#handles.get(key);
      if (h === undefined) this.#pending.set(key, adjusted);
      else this.#load(h, adjusted, now);
    }
  }

  /** Sum of the 24 h counter at `now`, dropping buckets that left the window. */
  #daySum(handle: number, now: number): number {
    const rec = this.#rec;
    const r = handle * STRIDE;
    const bucket = Math.floor(now / this.#bucketMs);
    const head = rec[r + D_HEAD]!;
    if (bucket <= head) return rec[r + D_SUM]!;
    const ring = this.#ring;
    const base = handle * ring;
    const buckets = this.#buckets;
    if (head < 0 || bucket - head >= ring) {
      buckets.fill(0, base, base + ring);
      rec[r + D_SUM] = 0;
    } else {
      let sum = rec[r + D_SUM]!;
      for (let k = head + 1; k <= bucket; k++) {
        const slot = base + (k % ring);
        sum -= buckets[slot]!;
        buckets[slot] = 0;
      }
      rec[r + D_SUM] = sum;
    }
    rec[r + D_HEAD] = bucket;
    return rec[r + D_SUM]!;
  }

  #dayAvailableAt(handle: number, count: number, now: number): number {
    const rec = this.#rec;
    const r = handle * STRIDE;
    const limit = rec[r + D_LIMIT]!;
    if (count > limit) return Infinity;
    let excess = this.#daySum(handle, now) + count - limit;
    if (excess <= 0) return now;
    const ring = this.#ring;
    const base = handle * ring;
    const head = rec[r + D_HEAD]!;
    // Bucket k stops counting when the newest bucket is k + ring; walk from the oldest.
    for (let k = head - ring + 1; k <= head; k++) {
      excess -= this.#buckets[base + (((k % ring) + ring) % ring)]!;
      if (excess <= 0) return (k + ring) * this.#bucketMs;
    }
    return (head + ring) * this.#bucketMs;
  }

  #save(h: number): MemoryStoreNumberState {
    const rec = this.#rec;
    const r = h * STRIDE;
    const day: [number, number][] = [];
    const head = rec[r + D_HEAD]!;
    if (head >= 0) {
      for (let k = head - this.#ring + 1; k <= head; k++) {
        if (k < 0) continue;
        const c = this.#buckets[h * this.#ring + (k % this.#ring)]!;
        if (c > 0) day.push([k, c]);
      }
    }
    return {
      hour: [rec[r + H_TAT]!, rec[r + H_REM]!, rec[r + H_CAP]!],
      second: rec[r + S_CAP]! > 0 ? [rec[r + S_TAT]!, rec[r + S_REM]!, rec[r + S_CAP]!] : null,
      day,
    };
  }

  #load(h: number, state: MemoryStoreNumberState, now: number): void {
    const rec = this.#rec;
    const r = h * STRIDE;
    const [tat, rem, cap] = state.hour;
    gcraRescale(tat, rem, cap, rec[r + H_CAP]!, now, this.#scratch, 0);
    rec[r + H_TAT] = this.#scratch[0]!;
    rec[r + H_REM] = this.#scratch[1]!;
    if (state.second && rec[r + S_CAP]! > 0) {
      const [st, sr, sc] = state.second;
      gcraRescale(st, sr, sc, rec[r + S_CAP]!, now, this.#scratch, 0);
      rec[r + S_TAT] = this.#scratch[0]!;
      rec[r + S_REM] = this.#scratch[1]!;
    }
    const base = h * this.#ring;
    this.#buckets.fill(0, base, base + this.#ring);
    let head = -1;
    let sum = 0;
    for (const [k] of state.day) if (k > head) head = k;
    for (const [k, c] of state.day) {
      if (k <= head - this.#ring) continue;
      this.#buckets[base + (k % this.#ring)]! += c;
      sum += c;
    }
    rec[r + D_HEAD] = head;
    rec[r + D_SUM] = sum;
  }

  /** Moves counts taken with another bucket width onto ours, rounding times up (conservative). */
  #rebucket(state: MemoryStoreNumberState, fromMinutes: number): MemoryStoreNumberState {
    const merged = new Map<number, number>();
    for (const [k, c] of state.day) {
      const end = (k + 1) * fromMinutes * 60_000 - 1;
      const nk = Math.floor(end / this.#bucketMs);
      merged.set(nk, (merged.get(nk) ?? 0) + c);
    }
    return { ...state, day: [...merged] };
  }

  #grow(): void {
    if (this.#size * STRIDE <= this.#rec.length) return;
    const rec = new Float64Array(this.#rec.length * 2);
    rec.set(this.#rec);
    this.#rec = rec;
    const buckets = new Uint32Array(this.#buckets.length * 2);
    buckets.set(this.#buckets);
    this.#buckets = buckets;
  }
}
