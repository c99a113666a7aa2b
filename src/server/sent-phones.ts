/**
 * The phones each business recently took for each template type, so a contact whose phone the
 * business already has (accepted in any campaign within `alreadySentWindowMs`) is refused as
 * `already_sent` (spec 6.4, `count_already_sent`, "messages sent previously").
 *
 * A phone is recorded when its contact is accepted (the 202), so two requests taken at once cannot
 * both send it. It is kept in a time bucket per (business, template type): one compact phone set
 * (phone-hash-set.ts, 16 to 32 bytes a phone) per 1/24 of the window (an hour for the default 24 h);
 * a bucket goes once none of its phones can be within the window. A phone is so refused for the
 * window and at most one bucket more. A contact that ends FAILED or EXPIRED without reaching the
 * recipient gives its phone back ({@link SentPhones.release}): it was not sent, and a corrected
 * campaign may reach it (docs/decisions.md, "Already sent").
 */
import type { PhoneSet } from '../contract/rejection.js';
import { sentBucketMs } from './lib/sent-buckets.js';
import { PhoneHashSet, phoneKey } from './phone-hash-set.js';

export { liveSentBuckets, sentBucketMs } from './lib/sent-buckets.js';

/** Phones a request took (or, `released`, gave back) in one bucket of a (business, type): a durable row. */
export interface SentPhonesRow {
  readonly businessId: number;
  readonly typeId: number;
  /** The bucket's start (epoch ms). */
  readonly bucket: number;
  /** Phones as integers (normalised digits). */
  readonly phones: readonly number[];
  /** The phones were given back (their contacts ended without reaching the recipient). @default false */
  readonly released?: boolean;
}

/** What changed since the last {@link SentPhones.takeChanges}: rows in order, and buckets older than `before` to drop. */
export interface SentPhonesChanges {
  readonly rows: readonly SentPhonesRow[];
  /** Rows of buckets starting before this are dropped (applied after `rows`). */
  readonly before?: number;
}

export interface SentPhonesOptions {
  /** How long a phone taken stays refused; 0 turns the check off (nothing is kept). */
  readonly windowMs: number;
  /** Remember changes for {@link SentPhones.takeChanges} (a durable server). @default false */
  readonly trackChanges?: boolean;
}

interface Bucket {
  readonly start: number;
  readonly set: PhoneHashSet;
}

const NONE: PhoneSet = { has: () => false };

export class SentPhones {
  readonly #windowMs: number;
  readonly #width: number;
  readonly #track: boolean;
  /** Buckets by `business:type`, oldest first. */
  readonly #buckets = new Map<string, Bucket[]>();
  #ops: { businessId: number; typeId: number; bucket: number; phones: number[]; released?: boolean }[] = [];
  #nextPrune = -Infinity;
  #pruned: number | undefined;
  /** Bumped by every change of a bucket's phones and every pruning. */
  #changes = 0;

  constructor(options: SentPhonesOptions) {
    this.#windowMs = options.windowMs;
    this.#width = sentBucketMs(options.windowMs);
    this.#track = options.trackChanges === true;
  }

  /** The check is on (a window above 0). */
  get enabled(): boolean {
    return this.#windowMs > 0;
  }

  get windowMs(): number {
    return this.#windowMs;
  }

  /**
   * Changes with every phone remembered or given back and every bucket dropped, and when `now`
   * leaves the buckets of an earlier `now` behind: a screening whose views were read at one version
   * holds while it is unchanged (intake-parse.ts).
   */
  version(now: number): string {
    // A bucket is live while start > now - window - width: which are depends on this quotient only.
    return `${this.#changes}:${Math.floor((now - this.#windowMs) / this.#width)}`;
  }

  /** Whether a bucket may still hold a phone taken within the window. */
  #live(start: number, now: number): boolean {
    return start + this.#width > now - this.#windowMs;
  }

  /** Drops the buckets past the window, every bucket width at most. */
  #prune(now: number): void {
    if (now < this.#nextPrune) return;
    this.#nextPrune = now + this.#width;
    this.#changes++;
    for (const [key, list] of this.#buckets) {
      let dead = 0;
      while (dead < list.length && !this.#live(list[dead]!.start, now)) dead++;
      if (dead === list.length) this.#buckets.delete(key);
      else if (dead > 0) list.splice(0, dead);
    }
    // Rows of buckets that can hold nothing live go too.
    if (this.#track) this.#pruned = now - this.#windowMs - this.#width + 1;
  }

  /** The phones a business took for a type within the window before `now`, as the screening reads them. */
  view(businessId: number, typeId: number, now: number): PhoneSet {
    if (!this.enabled) return NONE;
    this.#prune(now);
    const list = this.#buckets.get(`${businessId}:${typeId}`);
    if (list === undefined) return NONE;
    const live = list.filter((b) => this.#live(b.start, now));
    return {
      has: (phone) => {
        const k = phoneKey(phone);
        for (let i = live.length - 1; i >= 0; i--) if (live[i]!.set.has(k)) return true;
        return false;
      },
    };
  }

  /** Records the phones of a request's accepted contacts (normalised digits), taken at `now`. */
  remember(businessId: number, typeId: number, phones: readonly string[], now: number): void {
    if (!this.enabled || phones.length === 0) return;
    this.#prune(now);
    this.#changes++;
    const key = `${businessId}:${typeId}`;
    let list = this.#buckets.get(key);
    if (list === undefined) this.#buckets.set(key, (list = []));
    const start = Math.floor(now / this.#width) * this.#width;
    let bucket = list.at(-1);
    // A clock that went back writes to the newest bucket (kept longer, never shorter).
    if (bucket === undefined || bucket.start < start) list.push((bucket = { start, set: new PhoneHashSet(phones.length) }));
    const added: number[] = [];
    for (const p of phones) {
      const k = phoneKey(p);
      if (bucket.set.add(k) && this.#track) added.push(k);
    }
    if (added.length > 0) this.#op(businessId, typeId, bucket.start, added, false);
  }

  /**
   * Gives a phone back (its contact ended FAILED or EXPIRED without reaching the recipient): a later
   * contact of the business and type may take it. True when it was held.
   */
  release(businessId: number, typeId: number, phone: string, now: number): boolean {
    if (!this.enabled) return false;
    const list = this.#buckets.get(`${businessId}:${typeId}`);
    if (list === undefined) return false;
    const k = phoneKey(phone);
    let held = false;
    for (const b of list) {
      if (!this.#live(b.start, now) || !b.set.delete(k)) continue;
      held = true;
      this.#changes++;
      if (this.#track) this.#op(businessId, typeId, b.start, [k], true);
    }
    return held;
  }

  /** Appends a change, joined with the last when it is of the same bucket and kind (rows replay in order). */
  #op(businessId: number, typeId: number, bucket: number, phones: number[], released: boolean): void {
    const last = this.#ops.at(-1);
    if (last !== undefined && last.businessId === businessId && last.typeId === typeId && last.bucket === bucket && (last.released === true) === released) {
      for (const k of phones) last.phones.push(k);
    } else this.#ops.push({ businessId, typeId, bucket, phones, ...(released ? { released: true } : {}) });
  }

  /** Phones held, over every business and type (buckets past the window included until pruned). */
  get size(): number {
    let n = 0;
    for (const list of this.#buckets.values()) for (const b of list) n += b.set.size;
    return n;
  }

  /** Bytes of the phone tables. */
  get bytes(): number {
    let n = 0;
    for (const list of this.#buckets.values()) for (const b of list) n += b.set.bytes;
    return n;
  }

  /** Every bucket's phones (the snapshot file's form). */
  rows(): SentPhonesRow[] {
    const rows: SentPhonesRow[] = [];
    for (const [key, list] of this.#buckets) {
      const [businessId, typeId] = key.split(':').map(Number) as [number, number];
      for (const b of list) if (b.set.size > 0) rows.push({ businessId, typeId, bucket: b.start, phones: [...b.set.values()] });
    }
    return rows;
  }

  /** What changed since the last call (every bucket's phones with `full`). */
  takeChanges(full = false): SentPhonesChanges {
    const rows = full ? this.rows() : this.#ops;
    const before = this.#pruned;
    this.#ops = [];
    this.#pruned = undefined;
    return before === undefined ? { rows } : { rows, before };
  }

  /** Loads the rows kept (a durable server's, in the order written, or a snapshot's), then drops what is past the window at `now`. */
  load(rows: Iterable<SentPhonesRow>, now: number): void {
    if (!this.enabled) return;
    this.#changes++;
    for (const r of rows) {
      const key = `${r.businessId}:${r.typeId}`;
      let list = this.#buckets.get(key);
      if (list === undefined) this.#buckets.set(key, (list = []));
      let bucket = list.find((b) => b.start === r.bucket);
      if (r.released === true) {
        if (bucket !== undefined) for (const k of r.phones) bucket.set.delete(k);
        continue;
      }
      if (bucket === undefined) {
        bucket = { start: r.bucket, set: new PhoneHashSet(r.phones.length) };
        list.push(bucket);
        list.sort((a, b) => a.start - b.start);
      }
      for (const k of r.phones) bucket.set.add(k);
    }
    this.#nextPrune = -Infinity;
    this.#prune(now);
  }
}
