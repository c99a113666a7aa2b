/**
 * The in-memory {@link Store}: every window of every number in flat typed arrays, so the engine's
 * per-call work is a few array reads and the memory per number stays in the low hundreds of bytes.
 *
 * Windows of a number:
 * - per hour: GCRA, capacity `perHour` over 3,600,000 ms;
 * - per second (optional): GCRA, capacity `perSecond` over 1,000 ms;
 * - rolling 24 h: sends counted in buckets of `bucketMinutes`. The count covers the current
 *   bucket and the 24 h of buckets before it, so a send weighs on the limit for between 24 h and
 *   24 h + one bucket: never less than the channel's window, hence never over it. The newest
 *   bucket's count sits in the number's record beside its hour window, so a reservation writes one
 *   record; older buckets sit on a ring and are written once per bucket, when the newest moves on.
 *
 * The snapshot's form is in memory-store-snapshot.ts. Why this file is still over 400 lines: the
 * typed arrays are private state that the inlined fast path of `reserve`, the roll of the 24 h
 * ring and the snapshot's save and load all index directly; splitting them would put that layout
 * behind calls on the hot path (test/bench/inlining.test.ts guards it).
 */
import { ArgumentError } from '../errors.js';
import { PhoneIndex } from '../phone-index.js';
import { describeValue } from '../problems.js';
import { gcraAvailable, gcraAvailableAt, gcraGiveBack, gcraRescale, gcraTake } from './gcra.js';
import { type MemoryStoreNumberState, type MemoryStoreSnapshot, rebucket } from './memory-store-snapshot.js';
import type { NumberLimits, NumberWindows, Store, StoreSnapshot } from './store.js';

export type { MemoryStoreNumberState, MemoryStoreSnapshot } from './memory-store-snapshot.js';

const DAY = 86_400_000;

/**
 * Periods of the rate windows, in ms. Like {@link Rec}, a const enum: uses compile to literals,
 * which keeps `reserve` small enough to be inlined (see there).
 */
const enum Period {
  HOUR = 3_600_000,
  SECOND = 1_000,
}

/** Layout of the per-number Float64 record (offsets compile to literals). */
const enum Rec {
  H_TAT = 0,
  H_REM = 1,
  H_CAP = 2,
  S_TAT = 3,
  S_REM = 4,
  /** 0: no per-second window. */
  S_CAP = 5,
  D_LIMIT = 6,
  /** Sends counted in the 24 h window: the ring's buckets plus D_CUR. */
  D_SUM = 7,
  /** Bucket index of the newest bucket counted (from the bucket of opening); -1: none. */
  D_HEAD = 8,
  /** Sends in bucket D_HEAD. */
  D_CUR = 9,
  STRIDE = 10,
}

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Width of the buckets of the rolling 24 h counter, in minutes; must divide 1,440. Smaller buckets
   * give back capacity sooner after a full day; each costs 4 bytes per number.
   * @default 60
   */
  readonly bucketMinutes?: number;
}

export class MemoryStore implements Store {
  readonly bucketMinutes: number;
  readonly #bucketMs: number;
  /** Buckets on the ring: the day of buckets before the newest (which sits in the record). */
  readonly #rows: number;
  #size = 0;
  /** Numbers the arrays have room for. */
  #cap = 16;
  #rec = new Float64Array(Rec.STRIDE * 16);
  /**
   * Bucket-major: the count of bucket k of number h, for k from D_HEAD - rows to D_HEAD - 1, is at
   * `(k mod rows) * cap + h`. Numbers moving on to a new bucket in the same hour write into the same
   * row, 4 bytes apart instead of a record apart.
   */
  #buckets: Uint32Array;
  #keys: string[] = [];
  readonly #handles = new PhoneIndex(this.#keys);
  /** Restored state of numbers not opened yet. */
  readonly #pending = new Map<string, MemoryStoreNumberState>();
  readonly #scratch = new Float64Array(2);
  // The bucket of the last time asked about: one division per clock reading, not per number.
  #bucketNow = NaN; // NaN: no reading yet (the fast path of reserve compares it with `now`)
  #bucketOfNow = 0;

  constructor(options: MemoryStoreOptions = {}) {
    const minutes = options.bucketMinutes ?? 60;
    if (!Number.isInteger(minutes) || minutes < 1 || 1440 % minutes !== 0) {
      throw new ArgumentError('MemoryStore({ bucketMinutes })', 'a whole number of minutes dividing 1440 (1, 5, 15, 30, 60, …)', describeValue(minutes));
    }
    this.bucketMinutes = minutes;
    this.#bucketMs = minutes * 60_000;
    this.#rows = DAY / this.#bucketMs;
    this.#buckets = new Uint32Array(this.#rows * this.#cap);
  }

  open(key: string, limits: NumberLimits, now: number): number {
    let h = this.#handles.get(key);
    if (h === undefined) {
      h = this.#size++;
      this.#grow();
      this.#keys[h] = key;
      this.#handles.add(h);
      const r = h * Rec.STRIDE;
      this.#rec[r + Rec.H_CAP] = limits.perHour;
      this.#rec[r + Rec.S_CAP] = limits.perSecond ?? 0;
      this.#rec[r + Rec.D_LIMIT] = limits.per24h;
      // Counting starts at the bucket of `now` (the ring's rows of a new handle are all zero), so
      // the number's first reservation takes the short path of reserve too.
      this.#rec[r + Rec.D_HEAD] = this.#currentBucket(now);
      const pending = this.#pending.get(key);
      if (pending) {
        this.#pending.delete(key);
        this.#load(h, pending, now);
      }
      return h;
    }
    const r = h * Rec.STRIDE;
    const rec = this.#rec;
    if (rec[r + Rec.H_CAP] !== limits.perHour) {
      gcraRescale(rec[r + Rec.H_TAT]!, rec[r + Rec.H_REM]!, rec[r + Rec.H_CAP]!, limits.perHour, now, this.#scratch, 0);
      rec[r + Rec.H_TAT] = this.#scratch[0]!;
      rec[r + Rec.H_REM] = this.#scratch[1]!;
      rec[r + Rec.H_CAP] = limits.perHour;
    }
    const perSecond = limits.perSecond ?? 0;
    if (rec[r + Rec.S_CAP] !== perSecond) {
      if (rec[r + Rec.S_CAP]! > 0 && perSecond > 0) {
        gcraRescale(rec[r + Rec.S_TAT]!, rec[r + Rec.S_REM]!, rec[r + Rec.S_CAP]!, perSecond, now, this.#scratch, 0);
        rec[r + Rec.S_TAT] = this.#scratch[0]!;
        rec[r + Rec.S_REM] = this.#scratch[1]!;
      } else {
        rec[r + Rec.S_TAT] = 0;
        rec[r + Rec.S_REM] = 0;
      }
      rec[r + Rec.S_CAP] = perSecond;
    }
    rec[r + Rec.D_LIMIT] = limits.per24h;
    return h;
  }

  sizeFor(numbers: number): void {
    this.#handles.sizeFor(numbers);
    if (numbers > this.#cap) this.#resize(numbers);
  }

  available(handle: number, now: number): number {
    const rec = this.#rec;
    const r = handle * Rec.STRIDE;
    let a = gcraAvailable(rec[r + Rec.H_TAT]!, rec[r + Rec.H_REM]!, rec[r + Rec.H_CAP]!, Period.HOUR, now);
    const sCap = rec[r + Rec.S_CAP]!;
    if (sCap > 0) {
      const s = gcraAvailable(rec[r + Rec.S_TAT]!, rec[r + Rec.S_REM]!, sCap, Period.SECOND, now);
      if (s < a) a = s;
    }
    const d = rec[r + Rec.D_LIMIT]! - this.#daySum(handle, now);
    return d < a ? (d > 0 ? d : 0) : a;
  }

  windows(handle: number, now: number): NumberWindows {
    const rec = this.#rec;
    const r = handle * Rec.STRIDE;
    const hCap = rec[r + Rec.H_CAP]!;
    const hour = { used: hCap - gcraAvailable(rec[r + Rec.H_TAT]!, rec[r + Rec.H_REM]!, hCap, Period.HOUR, now), limit: hCap };
    const day = { used: this.#daySum(handle, now), limit: rec[r + Rec.D_LIMIT]! };
    const sCap = rec[r + Rec.S_CAP]!;
    if (sCap === 0) return { hour, day };
    return { second: { used: sCap - gcraAvailable(rec[r + Rec.S_TAT]!, rec[r + Rec.S_REM]!, sCap, Period.SECOND, now), limit: sCap }, hour, day };
  }

  reserve(handle: number, want: number, now: number): number {
    const granted = this.#quick(handle, want, now);
    return granted >= 0 ? granted : this.#reserveAny(handle, want, now);
  }

  /**
   * One message, from the short path only: 1 if it was charged, 0 if none may go, -1 when the short
   * path cannot tell (then `reserve` can). Calls nothing, so the engine's loop over a sparse call
   * stays free of calls and the compiler checks its arrays once for the loop, not once per turn.
   */
  reserveOne(handle: number, now: number): number {
    return this.#quick(handle, 1, now);
  }

  /**
   * The hot path of every assignment, kept small enough for the engine's compiler to inline it
   * into its loop (V8 inlines functions of up to 460 bytes of bytecode, and not one whose own
   * compiled code already inlines much). It covers the usual case: no per-second window, and the
   * number's 24 h counter on the bucket of `now`, with `now` the time of the last clock reading
   * (the first reservation at a new time goes the long way, which notes it). Anything else answers
   * -1 and goes to #reserveAny, about once per number per bucket.
   */
  #quick(handle: number, want: number, now: number): number {
    const rec = this.#rec;
    const r = handle * Rec.STRIDE;
    if (now !== this.#bucketNow || rec[r + Rec.D_HEAD] !== this.#bucketOfNow || rec[r + Rec.S_CAP] !== 0) return -1;
    let tat = rec[r + Rec.H_TAT]!;
    let rem = rec[r + Rec.H_REM]!;
    const hCap = rec[r + Rec.H_CAP]!;
    let granted: number;
    if (tat < now || (tat === now && rem === 0)) {
      granted = hCap;
      tat = now;
      rem = 0;
    } else {
      granted = hCap - Math.ceil(((tat - now) * hCap + rem) / Period.HOUR);
    }
    const d = rec[r + Rec.D_LIMIT]! - rec[r + Rec.D_SUM]!;
    if (d < granted) granted = d;
    if (want < granted) granted = want;
    if (granted <= 0) return 0;
    // TAT + granted * HOUR / hCap, exactly: one division at most, none while the remainder fits.
    const numer = rem + granted * Period.HOUR;
    const whole = numer < hCap ? 0 : Math.floor(numer / hCap);
    rec[r + Rec.H_TAT] = tat + whole;
    rec[r + Rec.H_REM] = numer - whole * hCap;
    rec[r + Rec.D_CUR]! += granted;
    rec[r + Rec.D_SUM]! += granted;
    return granted;
  }

  /** {@link reserve} in every case: any windows, any bucket. Windows are as in gcra.ts. */
  #reserveAny(handle: number, want: number, now: number): number {
    const rec = this.#rec;
    const r = handle * Rec.STRIDE;
    let granted = gcraAvailable(rec[r + Rec.H_TAT]!, rec[r + Rec.H_REM]!, rec[r + Rec.H_CAP]!, Period.HOUR, now);
    const sCap = rec[r + Rec.S_CAP]!;
    if (sCap > 0) {
      const s = gcraAvailable(rec[r + Rec.S_TAT]!, rec[r + Rec.S_REM]!, sCap, Period.SECOND, now);
      if (s < granted) granted = s;
    }
    // Brings the counter to the bucket of `now` (and the bucket cache to `now`).
    const d = rec[r + Rec.D_LIMIT]! - this.#daySum(handle, now);
    if (d < granted) granted = d;
    if (want < granted) granted = want;
    if (granted <= 0) return 0;
    gcraTake(rec[r + Rec.H_TAT]!, rec[r + Rec.H_REM]!, rec[r + Rec.H_CAP]!, Period.HOUR, now, granted, rec, r + Rec.H_TAT);
    if (sCap > 0) gcraTake(rec[r + Rec.S_TAT]!, rec[r + Rec.S_REM]!, sCap, Period.SECOND, now, granted, rec, r + Rec.S_TAT);
    // Counted in the newest bucket: the current one, or a later one if the clock went back.
    rec[r + Rec.D_CUR]! += granted;
    rec[r + Rec.D_SUM]! += granted;
    return granted;
  }

  /** Bucket index of `now`; one division per clock reading, not per number. */
  #currentBucket(now: number): number {
    if (now !== this.#bucketNow) {
      this.#bucketNow = now;
      this.#bucketOfNow = Math.floor(now / this.#bucketMs);
    }
    return this.#bucketOfNow;
  }

  /** Offset of bucket `k`'s row on the ring. */
  #rowOf(k: number): number {
    const rows = this.#rows;
    return (((k % rows) + rows) % rows) * this.#cap;
  }

  release(handle: number, count: number, now: number): void {
    if (count <= 0) return;
    const rec = this.#rec;
    const r = handle * Rec.STRIDE;
    gcraGiveBack(rec[r + Rec.H_TAT]!, rec[r + Rec.H_REM]!, rec[r + Rec.H_CAP]!, Period.HOUR, count, rec, r + Rec.H_TAT);
    const sCap = rec[r + Rec.S_CAP]!;
    if (sCap > 0) gcraGiveBack(rec[r + Rec.S_TAT]!, rec[r + Rec.S_REM]!, sCap, Period.SECOND, count, rec, r + Rec.S_TAT);
    this.#daySum(handle, now);
    const back = Math.min(count, rec[r + Rec.D_CUR]!);
    rec[r + Rec.D_CUR]! -= back;
    rec[r + Rec.D_SUM]! -= back;
  }

  refund(handle: number, count: number, chargedAt: number, now: number): void {
    if (count <= 0) return;
    const rec = this.#rec;
    const r = handle * Rec.STRIDE;
    // The rate windows: the debt the messages still weigh with, never below an empty debt (a full bucket).
    this.#giveBack(r + Rec.H_TAT, rec[r + Rec.H_CAP]!, Period.HOUR, count, chargedAt, now);
    const sCap = rec[r + Rec.S_CAP]!;
    if (sCap > 0) this.#giveBack(r + Rec.S_TAT, sCap, Period.SECOND, count, chargedAt, now);
    // The 24 h window: the bucket the charge was counted in, if it is still in the window.
    this.#daySum(handle, now);
    const head = rec[r + Rec.D_HEAD]!;
    const charged = Math.floor(Math.min(chargedAt, now) / this.#bucketMs);
    let back = 0;
    if (charged === head) {
      back = Math.min(count, rec[r + Rec.D_CUR]!);
      rec[r + Rec.D_CUR]! -= back;
    } else if (charged < head && charged >= head - this.#rows) {
      const slot = this.#rowOf(charged) + handle;
      back = Math.min(count, this.#buckets[slot]!);
      this.#buckets[slot]! -= back;
    }
    rec[r + Rec.D_SUM]! -= back;
  }

  /**
   * One rate window gives back `count` messages charged at `chargedAt`, as what they still weigh
   * at `now`: each weighs `period` (in 1/capacity ms) from when it was charged, less what has
   * drained since (`now - chargedAt`); a message whose weight drained already gives nothing back,
   * so the bucket never holds more than if it had not been charged. Never past a full bucket.
   */
  #giveBack(at: number, capacity: number, period: number, count: number, chargedAt: number, now: number): void {
    const rec = this.#rec;
    // In 1/capacity ms: all of the messages' weight, less what drained since the charge (a lower
    // bound of what is left of it: a message queued behind others drains later, never earlier).
    const units = count * period - (now - chargedAt) * capacity;
    if (units <= 0) return;
    let numer = rec[at + 1]! - units;
    const whole = Math.floor(numer / capacity);
    numer -= whole * capacity;
    rec[at] = rec[at]! + whole;
    rec[at + 1] = numer;
    if (rec[at] < now) {
      rec[at] = now;
      rec[at + 1] = 0;
    }
  }

  availableAt(handle: number, count: number, now: number): number {
    const rec = this.#rec;
    const r = handle * Rec.STRIDE;
    let t = gcraAvailableAt(rec[r + Rec.H_TAT]!, rec[r + Rec.H_REM]!, rec[r + Rec.H_CAP]!, Period.HOUR, now, count);
    const sCap = rec[r + Rec.S_CAP]!;
    if (sCap > 0) t = Math.max(t, gcraAvailableAt(rec[r + Rec.S_TAT]!, rec[r + Rec.S_REM]!, sCap, Period.SECOND, now, count));
    return Math.max(t, this.#dayAvailableAt(handle, count, now));
  }

  snapshot(): MemoryStoreSnapshot {
    const numbers: Record<string, MemoryStoreNumberState> = {};
    for (let h = 0; h < this.#size; h++) numbers[this.#keys[h]!] = this.#save(h);
    for (const [key, state] of this.#pending) numbers[key] = state;
    return { kind: 'memory', bucketMinutes: this.bucketMinutes, numbers };
  }

  snapshotNumbers(handles: readonly number[]): MemoryStoreSnapshot {
    const numbers: Record<string, MemoryStoreNumberState> = {};
    for (const h of handles) if (h >= 0 && h < this.#size) numbers[this.#keys[h]!] = this.#save(h);
    return { kind: 'memory', bucketMinutes: this.bucketMinutes, numbers };
  }

  restore(snapshot: StoreSnapshot, now: number): void {
    const snap = snapshot as MemoryStoreSnapshot;
    if (snap.kind !== 'memory' || typeof snap.numbers !== 'object' || snap.numbers === null) {
      throw new ArgumentError('MemoryStore.restore(snapshot)', 'a snapshot of kind "memory"', describeValue(snap.kind));
    }
    const scale = snap.bucketMinutes === this.bucketMinutes ? 1 : 0;
    for (const [key, state] of Object.entries(snap.numbers)) {
      const adjusted = scale ? state : rebucket(state, snap.bucketMinutes, this.#bucketMs);
      const h = this.#handles.get(key);
      if (h === undefined) this.#pending.set(key, adjusted);
      else this.#load(h, adjusted, now);
    }
  }

  /** Sum of the 24 h counter at `now`: moves the newest bucket on to `now`'s, dropping buckets that left the window. */
  #daySum(handle: number, now: number): number {
    const rec = this.#rec;
    const r = handle * Rec.STRIDE;
    const bucket = this.#currentBucket(now);
    const head = rec[r + Rec.D_HEAD]!;
    if (bucket <= head) return rec[r + Rec.D_SUM]!;
    const rows = this.#rows;
    const cap = this.#cap;
    const buckets = this.#buckets;
    if (head < 0 || bucket - head > rows) {
      // Nothing counted yet, or everything counted has left the window.
      for (let k = 0; k < rows; k++) buckets[k * cap + handle] = 0;
      rec[r + Rec.D_SUM] = 0;
    } else {
      // With `bucket` the newest, buckets before bucket - rows leave the window: head - rows up to
      // bucket - rows - 1, at least one. Their rows are those of head .. bucket - 1, so emptying them
      // makes room for the old head's count and leaves the buckets in between at zero.
      let sum = rec[r + Rec.D_SUM]!;
      for (let k = head - rows; k < bucket - rows; k++) {
        const slot = this.#rowOf(k) + handle;
        sum -= buckets[slot]!;
        buckets[slot] = 0;
      }
      buckets[this.#rowOf(head) + handle] = rec[r + Rec.D_CUR]!;
      rec[r + Rec.D_SUM] = sum;
    }
    rec[r + Rec.D_CUR] = 0;
    rec[r + Rec.D_HEAD] = bucket;
    return rec[r + Rec.D_SUM]!;
  }

  #dayAvailableAt(handle: number, count: number, now: number): number {
    const rec = this.#rec;
    const r = handle * Rec.STRIDE;
    const limit = rec[r + Rec.D_LIMIT]!;
    if (count > limit) return Infinity;
    let excess = this.#daySum(handle, now) + count - limit;
    if (excess <= 0) return now;
    const rows = this.#rows;
    const head = rec[r + Rec.D_HEAD]!;
    // Bucket k stops counting when the newest bucket is k + rows + 1; walk from the oldest.
    for (let k = head - rows; k < head; k++) {
      excess -= this.#buckets[this.#rowOf(k) + handle]!;
      if (excess <= 0) return (k + rows + 1) * this.#bucketMs;
    }
    return (head + rows + 1) * this.#bucketMs;
  }

  #save(h: number): MemoryStoreNumberState {
    const rec = this.#rec;
    const r = h * Rec.STRIDE;
    const day: [number, number][] = [];
    const head = rec[r + Rec.D_HEAD]!;
    if (head >= 0) {
      for (let k = Math.max(0, head - this.#rows); k < head; k++) {
        const c = this.#buckets[this.#rowOf(k) + h]!;
        if (c > 0) day.push([k, c]);
      }
      if (rec[r + Rec.D_CUR]! > 0) day.push([head, rec[r + Rec.D_CUR]!]);
    }
    return {
      hour: [rec[r + Rec.H_TAT]!, rec[r + Rec.H_REM]!, rec[r + Rec.H_CAP]!],
      second: rec[r + Rec.S_CAP]! > 0 ? [rec[r + Rec.S_TAT]!, rec[r + Rec.S_REM]!, rec[r + Rec.S_CAP]!] : null,
      day,
    };
  }

  #load(h: number, state: MemoryStoreNumberState, now: number): void {
    const rec = this.#rec;
    const r = h * Rec.STRIDE;
    const [tat, rem, cap] = state.hour;
    gcraRescale(tat, rem, cap, rec[r + Rec.H_CAP]!, now, this.#scratch, 0);
    rec[r + Rec.H_TAT] = this.#scratch[0]!;
    rec[r + Rec.H_REM] = this.#scratch[1]!;
    if (state.second && rec[r + Rec.S_CAP]! > 0) {
      const [st, sr, sc] = state.second;
      gcraRescale(st, sr, sc, rec[r + Rec.S_CAP]!, now, this.#scratch, 0);
      rec[r + Rec.S_TAT] = this.#scratch[0]!;
      rec[r + Rec.S_REM] = this.#scratch[1]!;
    }
    for (let k = 0; k < this.#rows; k++) this.#buckets[k * this.#cap + h] = 0;
    let head = -1;
    let sum = 0;
    let current = 0;
    for (const [k] of state.day) if (k > head) head = k;
    for (const [k, c] of state.day) {
      if (k < head - this.#rows) continue;
      if (k === head) current += c;
      else this.#buckets[this.#rowOf(k) + h]! += c;
      sum += c;
    }
    rec[r + Rec.D_HEAD] = head;
    rec[r + Rec.D_SUM] = sum;
    rec[r + Rec.D_CUR] = current;
  }

  #grow(): void {
    if (this.#size > this.#cap) this.#resize(this.#cap * 2);
  }

  #resize(cap: number): void {
    const rec = new Float64Array(cap * Rec.STRIDE);
    rec.set(this.#rec.subarray(0, Math.min(this.#rec.length, cap * Rec.STRIDE)));
    this.#rec = rec;
    const buckets = new Uint32Array(this.#rows * cap);
    for (let k = 0; k < this.#rows; k++) buckets.set(this.#buckets.subarray(k * this.#cap, k * this.#cap + Math.min(this.#cap, cap)), k * cap);
    this.#buckets = buckets;
    this.#cap = cap;
    this.#bucketNow = NaN;
  }
}
