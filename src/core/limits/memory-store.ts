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
import { PhoneIndex } from '../phone-index.js';
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
  /** Numbers the arrays have room for. */
  #cap = 16;
  #rec = new Float64Array(STRIDE * 16);
  /**
   * Bucket-major: the count of bucket k of number h is at `(k mod ring) * cap + h`. At a given hour
   * every number writes into the same row, so a call touching thousands of numbers writes 4 bytes
   * apart instead of a cache line apart.
   */
  #buckets: Uint32Array;
  #keys: string[] = [];
  readonly #handles = new PhoneIndex(this.#keys);
  /** Restored state of numbers not opened yet. */
  readonly #pending = new Map<string, MemoryStoreNumberState>();
  readonly #scratch = new Float64Array(2);
  // The bucket of the last time asked about: one division per clock reading, not per number.
  #bucketNow = -1;
  #bucketOfNow = 0;
  #rowOfNow = 0;

  constructor(options: MemoryStoreOptions = {}) {
    const minutes = options.bucketMinutes ?? 60;
    if (!Number.isInteger(minutes) || minutes < 1 || 1440 % minutes !== 0) {
      throw new ArgumentError('MemoryStore({ bucketMinutes })', 'a whole number of minutes dividing 1440 (1, 5, 15, 30, 60, …)', describeValue(minutes));
    }
    this.bucketMinutes = minutes;
    this.#bucketMs = minutes * 60_000;
    this.#ring = DAY / this.#bucketMs + 1;
    this.#buckets = new Uint32Array(this.#ring * this.#cap);
  }

  open(key: string, limits: NumberLimits, now: number): number {
    let h = this.#handles.get(key);
    if (h === undefined) {
      h = this.#size++;
      this.#grow();
      this.#keys[h] = key;
      this.#handles.add(h);
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

  sizeFor(numbers: number): void {
    this.#handles.sizeFor(numbers);
    if (numbers > this.#cap) this.#resize(numbers);
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
    // The hot path of every assignment: written out (no helper calls), one division at most on the
    // usual path. Windows are as in gcra.ts; see there for the arithmetic.
    const rec = this.#rec;
    const r = handle * STRIDE;
    let tat = rec[r + H_TAT]!;
    let rem = rec[r + H_REM]!;
    const hCap = rec[r + H_CAP]!;
    let granted: number;
    if (tat < now || (tat === now && rem === 0)) {
      granted = hCap;
      tat = now;
      rem = 0;
    } else {
      granted = hCap - Math.ceil(((tat - now) * hCap + rem) / HOUR);
    }
    const sCap = rec[r + S_CAP]!;
    if (sCap > 0) {
      const s = gcraAvailable(rec[r + S_TAT]!, rec[r + S_REM]!, sCap, SECOND, now);
      if (s < granted) granted = s;
    }
    if (rec[r + D_HEAD] !== this.#currentBucket(now)) this.#daySum(handle, now);
    const d = rec[r + D_LIMIT]! - rec[r + D_SUM]!;
    if (d < granted) granted = d;
    if (want < granted) granted = want;
    if (granted <= 0) return 0;
    const numer = rem + granted * HOUR;
    if (numer < hCap) {
      rec[r + H_TAT] = tat;
      rec[r + H_REM] = numer;
    } else {
      const whole = Math.floor(numer / hCap);
      rec[r + H_TAT] = tat + whole;
      rec[r + H_REM] = numer - whole * hCap;
    }
    if (sCap > 0) gcraTake(rec[r + S_TAT]!, rec[r + S_REM]!, sCap, SECOND, now, granted, rec, r + S_TAT);
    // The head is the current bucket now, whose row was worked out with it.
    this.#buckets[this.#rowOf(rec[r + D_HEAD]!) + handle]! += granted;
    rec[r + D_SUM]! += granted;
    return granted;
  }

  /** Bucket index of `now`; one division per clock reading, not per number. */
  #currentBucket(now: number): number {
    if (now !== this.#bucketNow) {
      this.#bucketNow = now;
      this.#bucketOfNow = Math.floor(now / this.#bucketMs);
      this.#rowOfNow = (this.#bucketOfNow % this.#ring) * this.#cap;
    }
    return this.#bucketOfNow;
  }

  /** Offset of bucket `k`'s row in the bucket-major array. */
  #rowOf(k: number): number {
    return k === this.#bucketOfNow ? this.#rowOfNow : (k % this.#ring) * this.#cap;
  }

  release(handle: number, count: number, now: number): void {
    if (count <= 0) return;
    const rec = this.#rec;
    const r = handle * STRIDE;
    gcraGiveBack(rec[r + H_TAT]!, rec[r + H_REM]!, rec[r + H_CAP]!, HOUR, count, rec, r + H_TAT);
    const sCap = rec[r + S_CAP]!;
    if (sCap > 0) gcraGiveBack(rec[r + S_TAT]!, rec[r + S_REM]!, sCap, SECOND, count, rec, r + S_TAT);
    this.#daySum(handle, now);
    const slot = this.#rowOf(rec[r + D_HEAD]!) + handle;
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
    const bucket = this.#currentBucket(now);
    const head = rec[r + D_HEAD]!;
    if (bucket <= head) return rec[r + D_SUM]!;
    const ring = this.#ring;
    const cap = this.#cap;
    const buckets = this.#buckets;
    if (head < 0 || bucket - head >= ring) {
      for (let k = 0; k < ring; k++) buckets[k * cap + handle] = 0;
      rec[r + D_SUM] = 0;
    } else {
      let sum = rec[r + D_SUM]!;
      for (let k = head + 1; k <= bucket; k++) {
        const slot = (k % ring) * cap + handle;
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
    const head = rec[r + D_HEAD]!;
    // Bucket k stops counting when the newest bucket is k + ring; walk from the oldest.
    for (let k = head - ring + 1; k <= head; k++) {
      excess -= this.#buckets[(((k % ring) + ring) % ring) * this.#cap + handle]!;
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
        const c = this.#buckets[(k % this.#ring) * this.#cap + h]!;
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
    for (let k = 0; k < this.#ring; k++) this.#buckets[k * this.#cap + h] = 0;
    let head = -1;
    let sum = 0;
    for (const [k] of state.day) if (k > head) head = k;
    for (const [k, c] of state.day) {
      if (k <= head - this.#ring) continue;
      this.#buckets[(k % this.#ring) * this.#cap + h]! += c;
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
    if (this.#size > this.#cap) this.#resize(this.#cap * 2);
  }

  #resize(cap: number): void {
    const rec = new Float64Array(cap * STRIDE);
    rec.set(this.#rec.subarray(0, Math.min(this.#rec.length, cap * STRIDE)));
    this.#rec = rec;
    const buckets = new Uint32Array(this.#ring * cap);
    for (let k = 0; k < this.#ring; k++) buckets.set(this.#buckets.subarray(k * this.#cap, k * this.#cap + Math.min(this.#cap, cap)), k * cap);
    this.#buckets = buckets;
    this.#cap = cap;
    this.#bucketNow = -1;
  }
}
