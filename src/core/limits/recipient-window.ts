/**
 * A messaging limit that counts distinct recipients over a moving 24 hours, shared by every number
 * of a group (WhatsApp's business portfolio since October 2025: "unique customers in a moving
 * 24-hour period", shared by the portfolio's numbers).
 *
 * Exact: a send at time `s` counts at `t` while `t - window < s <= t`, and at any time the
 * recipients with a send in that span never exceed `limit`. A send to a recipient already in the
 * span costs nothing; one to a new recipient costs one, if there is room. Charged before the send
 * goes (`charge`), given back when the provider refused the attempt (`release`).
 *
 * Kept as a map recipient -> its last send, and a list of the recipients ordered by last send
 * (oldest first): a charge moves the recipient to the list's end, and recipients whose last send
 * left the span are dropped from its start. O(1) amortized per operation; memory bounded by the
 * number of recipients in the span, hence by the limit (a lowered limit by the one before it until
 * its recipients leave the span). Time never goes back here: an earlier `at` is read as the latest.
 */
import { ArgumentError } from '../errors.js';
import { describeValue } from '../problems.js';

const DAY = 86_400_000;

/** One recipient in the span. */
interface Entry {
  readonly key: string;
  /** Time of its last send. */
  at: number;
  /** Whether the charge at `at` made the recipient new (what `release` may undo). */
  madeNew: boolean;
  prev: Entry | undefined;
  next: Entry | undefined;
}

/** The plain-JSON state of a {@link RecipientWindow}. */
export interface RecipientWindowSnapshot {
  readonly limit: number;
  /** Recipients in the span as [recipient, last send, whether that send made it new], oldest first. */
  readonly recipients: readonly (readonly [string, number, boolean])[];
  /** Anonymous recipients counted so far (keys of `chargeAnonymous` are never reused). */
  readonly anonymous: number;
}

/** Recipients charged or released since the last {@link RecipientWindow.takeChanges}. */
export interface RecipientWindowChanges {
  /** Recipients in the span whose last send changed, as [recipient, last send, whether it made the recipient new]. */
  readonly recipients: readonly (readonly [string, number, boolean])[];
  /** Recipients that left the span by a release (those that left by time are not listed). */
  readonly removed: readonly string[];
}

/** Prefix of anonymous recipients' keys: phones are digits, so none can collide with one. */
const ANONYMOUS = '~';

export class RecipientWindow {
  #limit: number;
  readonly windowMs: number;
  readonly #entries = new Map<string, Entry>();
  #oldest: Entry | undefined;
  #newest: Entry | undefined;
  #lastAt = 0;
  #anonymous = 0;
  /** Recipients charged or released since the last `takeChanges`, when tracked. */
  #changed: Set<string> | undefined;

  /**
   * @param limit distinct recipients allowed in any span of `windowMs` (0 allows none)
   * @param windowMs the span. @default 86,400,000 (24 hours)
   */
  constructor(limit: number, windowMs = DAY) {
    checkLimit('RecipientWindow(limit)', limit);
    if (!Number.isSafeInteger(windowMs) || windowMs < 1) throw new ArgumentError('RecipientWindow(windowMs)', 'a whole number of milliseconds, 1 or more', describeValue(windowMs));
    this.#limit = limit;
    this.windowMs = windowMs;
  }

  get limit(): number {
    return this.#limit;
  }

  /** Anonymous recipients counted so far. */
  get anonymous(): number {
    return this.#anonymous;
  }

  /** Keeps a list of the recipients charged or released, for {@link takeChanges}. */
  track(): void {
    this.#changed ??= new Set();
  }

  /**
   * The recipients charged or released since the last call (with {@link track}): what a durable
   * host writes to keep the window as rows, one per recipient, dropped once their last send is
   * `windowMs` old. Empty lists when not tracked.
   */
  takeChanges(now: number): RecipientWindowChanges {
    this.#expire(this.#time(now));
    const recipients: [string, number, boolean][] = [];
    const removed: string[] = [];
    for (const key of this.#changed ?? []) {
      const e = this.#entries.get(key);
      if (e !== undefined) recipients.push([key, e.at, e.madeNew]);
      else removed.push(key);
    }
    this.#changed?.clear();
    return { recipients, removed };
  }

  /** Changes the limit (a tier change); recipients in the span keep counting against the new one. */
  setLimit(limit: number): void {
    checkLimit('RecipientWindow.setLimit(limit)', limit);
    this.#limit = limit;
  }

  /** Distinct recipients with a send in the span ending at `now`. */
  size(now: number): number {
    this.#expire(this.#time(now));
    return this.#entries.size;
  }

  /** New recipients that may still be charged at `now`. */
  room(now: number): number {
    const n = this.size(now);
    return n >= this.#limit ? 0 : this.#limit - n;
  }

  /** Whether `recipient` has a send in the span ending at `now` (a send to it costs nothing). */
  has(recipient: string, now: number): boolean {
    this.#expire(this.#time(now));
    return this.#entries.has(recipient);
  }

  /**
   * Charges a send to `recipient` at `at`: true when it may go (the recipient was in the span, or
   * there was room for a new one), with the send recorded; false, with nothing recorded, when a new
   * recipient finds no room.
   */
  charge(recipient: string, at: number): boolean {
    const now = this.#time(at);
    this.#expire(now);
    const entry = this.#entries.get(recipient);
    if (entry !== undefined) {
      entry.at = now;
      entry.madeNew = false;
      this.#toNewest(entry);
      this.#changed?.add(recipient);
      return true;
    }
    if (this.#entries.size >= this.#limit) return false;
    const added: Entry = { key: recipient, at: now, madeNew: true, prev: undefined, next: undefined };
    this.#entries.set(recipient, added);
    this.#append(added);
    this.#changed?.add(recipient);
    return true;
  }

  /**
   * Charges a send whose recipient is not known (a hand-out without a contact): always a new
   * recipient, under a key never used before. True when there was room.
   */
  chargeAnonymous(at: number): boolean {
    this.#expire(this.#time(at));
    if (this.#entries.size >= this.#limit) return false;
    return this.charge(`${ANONYMOUS}${this.#anonymous++}`, at);
  }

  /**
   * Undoes the charge of a send to `recipient` at `at` that the provider refused: when that charge
   * made the recipient new and is still its last send, the recipient leaves the span (room comes
   * back). A charge that found the recipient in the span is kept: the recipient counted already.
   */
  release(recipient: string, at: number): void {
    this.#expire(this.#time(at));
    const entry = this.#entries.get(recipient);
    if (entry === undefined || !entry.madeNew || entry.at !== at) return;
    this.#unlink(entry);
    this.#entries.delete(recipient);
    this.#changed?.add(recipient);
  }

  /** Earliest time >= `now` at which a new recipient fits; Infinity with a limit of 0. */
  nextRoomAt(now: number): number {
    const t = this.#time(now);
    this.#expire(t);
    if (this.#limit === 0) return Infinity;
    let excess = this.#entries.size - this.#limit;
    if (excess < 0) return t;
    // The (excess + 1)-th oldest must leave: it stops counting once `window` has passed since its send.
    let e = this.#oldest;
    while (excess > 0 && e !== undefined) {
      e = e.next;
      excess--;
    }
    return e === undefined ? t : e.at + this.windowMs;
  }

  snapshot(): RecipientWindowSnapshot {
    const recipients: [string, number, boolean][] = [];
    for (let e = this.#oldest; e !== undefined; e = e.next) recipients.push([e.key, e.at, e.madeNew]);
    return { limit: this.#limit, recipients, anonymous: this.#anonymous };
  }

  /**
   * Loads a snapshot's recipients (those still in the span at `now`) in place of this window's;
   * the limit stays this window's (the fleet's, or the last `setLimit`).
   */
  restore(snapshot: RecipientWindowSnapshot, now: number): void {
    this.#entries.clear();
    this.#oldest = undefined;
    this.#newest = undefined;
    const sorted = [...snapshot.recipients].sort((a, b) => a[1] - b[1]);
    for (const [key, at, madeNew] of sorted) {
      const old = this.#entries.get(key);
      if (old !== undefined) {
        this.#unlink(old);
        this.#entries.delete(key);
      }
      const e: Entry = { key, at, madeNew, prev: undefined, next: undefined };
      this.#entries.set(key, e);
      this.#append(e);
    }
    this.#anonymous = Math.max(this.#anonymous, snapshot.anonymous);
    const last = sorted[sorted.length - 1];
    this.#lastAt = Math.max(this.#lastAt, last === undefined ? 0 : last[1]);
    this.#expire(this.#time(now));
  }

  /** Clock time as this window reads it: never before the latest seen. */
  #time(at: number): number {
    if (at > this.#lastAt) this.#lastAt = at;
    return this.#lastAt;
  }

  /** Drops recipients whose last send left the span ending at `now`. */
  #expire(now: number): void {
    const edge = now - this.windowMs;
    let e = this.#oldest;
    while (e !== undefined && e.at <= edge) {
      const next = e.next;
      this.#entries.delete(e.key);
      e.next = undefined;
      e = next;
    }
    this.#oldest = e;
    if (e === undefined) this.#newest = undefined;
    else e.prev = undefined;
  }

  #append(e: Entry): void {
    e.prev = this.#newest;
    e.next = undefined;
    if (this.#newest === undefined) this.#oldest = e;
    else this.#newest.next = e;
    this.#newest = e;
  }

  #unlink(e: Entry): void {
    if (e.prev === undefined) this.#oldest = e.next;
    else e.prev.next = e.next;
    if (e.next === undefined) this.#newest = e.prev;
    else e.next.prev = e.prev;
    e.prev = undefined;
    e.next = undefined;
  }

  #toNewest(e: Entry): void {
    if (this.#newest === e) return;
    this.#unlink(e);
    this.#append(e);
  }
}

function checkLimit(where: string, limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new ArgumentError(where, 'a whole number of recipients, 0 or more', describeValue(limit));
}
