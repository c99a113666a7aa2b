/**
 * The hot path: hands out (number, template) pairs from a pool's ring, round-robin from its head,
 * the served member going to the tail, each pair charged to its number's limits in the store.
 * `assign`, `assignInto` and the dispatch loop's `poll` all come here (docs/engine.md, "The fill
 * loop"). The loops read the tables, the pool and the store in place and are shaped for the
 * compiler (docs/engine.md, "The hot loops": no call in the inner loops; the inlining test guards
 * the store's short path they call). One per fleet: its per-call scratch is sized by the fleet.
 */
import type { AssignReason, NumericArray } from './engine-types.js';
import type { FleetTables } from './fleet-tables.js';
import { shortfallOf } from './fleet-views.js';
import type { Store } from './limits/store.js';
import type { Pool } from './pool.js';

/**
 * Flags of a number within one call (a const enum: uses compile to literals, so the hot loop does
 * no module-scope lookup, which costs a check each when the module is not bundled).
 */
const enum Flag {
  /** The store granted less than asked this call, so the number is out, not merely under-estimated. */
  DRAINED = 1,
  /** The number is in `#touched` for the release pass of this call. */
  LISTED = 2,
}

export class PoolFill {
  readonly #store: Store;
  readonly #t: FleetTables;
  /** Number of the current dense fill call (see `#stamp`). */
  #call = 0;
  // Per-call scratch of the dense fill, by slot: what each touched number may send and has been
  // handed. Int32, not Uint32: V8 reads a Uint32 element as a double (it may exceed 2^31) and
  // converts it back to compare it. Both fit: stamps wrap at 2^30 - 1, and a reservation is at
  // most an hour's capacity (1e9 at most).
  /** Call number in which each number was last touched (wraps; cleared when it does). */
  readonly #stamp: Int32Array;
  /** Reserved for the number in this call and not handed out yet (at most one hour's capacity, < 2^31). */
  readonly #avail: Int32Array;
  /** {@link Flag}s per number in this call. */
  readonly #drained: Uint8Array;
  /** Numbers that may hold messages to release at the end of this call, and how many are listed. */
  readonly #touched: Int32Array;
  #touchedCount = 0;

  constructor(store: Store, t: FleetTables) {
    this.#store = store;
    this.#t = t;
    const n = t.numberCount;
    this.#stamp = new Int32Array(n);
    this.#avail = new Int32Array(n);
    this.#drained = new Uint8Array(n);
    this.#touched = new Int32Array(n);
  }

  /**
   * Hands out up to `count` pairs into `outNumbers` (slots) and `outTemplates` (ids) from position
   * 0; answers how many. Two loops, because the two shapes of call pay for different things and
   * each loop keeps its own few values in registers:
   * - sparse (`count` no more than the ring holds, as 10,000 of 100,000 numbers): a member gets one
   *   turn, more only if others leave the ring, and each turn reserves its one message;
   * - dense (as 10,000 of 100 numbers): at a number's first turn, the store reserves as many
   *   messages as the rotation will give it (`ceil(left / ring size)`), later turns count them down,
   *   and what is not handed out is released at the end. One store operation per number per call.
   * Reserving one message k times at one `now` is reserving k, so both give the same assignments.
   */
  fill(pool: Pool, count: number, now: number, outNumbers: NumericArray, outTemplates: NumericArray): number {
    // A pool with nobody eligible is left as it is, so the rotation resumes where it stopped.
    if (pool.eligibleCount === 0) return 0;
    pool.wake(now);
    return count <= pool.size ? this.#sparse(pool, count, now, outNumbers, outTemplates) : this.#dense(pool, count, now, outNumbers, outTemplates);
  }

  /**
   * Whether a fill at `now` would hand out at least one message (undefined), else what holds the
   * pool. Members at the ring's head that cannot send leave it exactly as a fill would take them off
   * (parked until their capacity returns, or dropped when no longer eligible), so asking changes no
   * assignment that follows.
   */
  probe(pool: Pool, now: number): { reason: AssignReason; retryAt?: number } | undefined {
    if (pool.activeTemplates > 0 && pool.eligibleCount > 0) {
      pool.wake(now);
      while (pool.size > 0) {
        const m = pool.ring[pool.head]!;
        const slot = pool.firstSlot + m;
        if (pool.eligible[m] === 1 && this.#store.available(this.#t.handle[slot]!, now) >= 1) return undefined;
        this.#leaveRing(pool, m, slot, now);
        pool.head = pool.head + 1 === pool.ring.length ? 0 : pool.head + 1;
        pool.size--;
      }
    }
    return shortfallOf(this.#t, pool);
  }

  #sparse(pool: Pool, count: number, now: number, outNumbers: NumericArray, outTemplates: NumericArray): number {
    const store = this.#store;
    const handle = this.#t.handle;
    const ring = pool.ring;
    const cap = ring.length;
    const firstSlot = pool.firstSlot;
    const firstHandle = pool.firstHandle;
    const eligible = pool.eligible;
    // One account class (no accounts in the fleet) is the common case: its template rotation is a
    // local cursor over one array, written back once.
    const oneClass = pool.classTemplates.length === 1;
    const ids = pool.classTemplates[0]!;
    const idCount = ids.length;
    let cursor = pool.classCursor[0]!;
    let head = pool.head;
    let size = pool.size;
    // Turns the store's short path answers run in the inner loop, which calls nothing; the rest
    // (an ineligible member, one out of capacity, an answer the short path cannot give) go below,
    // and the member at the head is served by the same steps once `reserve` granted its message.
    // Measured 5 to 10 % faster at 100,000 numbers than one loop falling back to `reserve` in place
    // (docs/engine.md, "The hot loops").
    const quick = typeof store.reserveOne === 'function';
    /** The member at the head holds the message `reserve` granted it below. */
    let granted = false;
    let i = 0;
    for (;;) {
      while (i < count && size > 0) {
        const m = ring[head]!;
        if (!granted && (eligible[m] === 0 || !quick || store.reserveOne!(firstHandle >= 0 ? firstHandle + m : handle[firstSlot + m]!, now) !== 1)) break;
        granted = false;
        outNumbers[i] = firstSlot + m;
        if (oneClass) {
          outTemplates[i] = ids[cursor]!;
          cursor = cursor + 1 === idCount ? 0 : cursor + 1;
        } else {
          outTemplates[i] = nextTemplate(pool, m);
        }
        i++;
        // Rotate: the served member goes to the tail (with a full ring, tail and head coincide).
        let tail = head + size;
        if (tail >= cap) tail -= cap;
        ring[tail] = m;
        head = head + 1 === cap ? 0 : head + 1;
      }
      if (i === count || size === 0) break;
      // The member at the head: ineligible (it leaves), or the store's full answer for its message.
      // The handle is loaded: this path's cost is the store's call.
      const m = ring[head]!;
      const slot = firstSlot + m;
      if (eligible[m] === 1 && store.reserve(handle[slot]!, 1, now) === 1) {
        granted = true;
      } else {
        this.#leaveRing(pool, m, slot, now);
        head = head + 1 === cap ? 0 : head + 1;
        size--;
      }
    }
    if (oneClass) pool.classCursor[0] = cursor;
    pool.head = head;
    pool.size = size;
    return i;
  }

  #dense(pool: Pool, count: number, now: number, outNumbers: NumericArray, outTemplates: NumericArray): number {
    const call = this.#nextCall();
    // The pool's fields are read into locals here as in #sparse, on purpose: each hot loop keeps
    // them in registers; a shared helper returning them would allocate on every call.
    const stamp = this.#stamp;
    const avail = this.#avail;
    const handle = this.#t.handle;
    const ring = pool.ring;
    const cap = ring.length;
    const firstSlot = pool.firstSlot;
    const firstHandle = pool.firstHandle;
    const eligible = pool.eligible;
    const oneClass = pool.classTemplates.length === 1;
    const ids = pool.classTemplates[0]!;
    const idCount = ids.length;
    let cursor = pool.classCursor[0]!;
    let head = pool.head;
    let size = pool.size;
    let i = 0;
    while (i < count && size > 0) {
      // Turns that count down what the number already holds: no call in this loop, so the
      // compiler checks the arrays once for the loop rather than once per turn.
      while (i < count) {
        const m = ring[head]!;
        const slot = firstSlot + m;
        const a = avail[slot]!;
        if (stamp[slot] !== call || a === 0) break;
        avail[slot] = a - 1;
        outNumbers[i] = slot;
        if (oneClass) {
          outTemplates[i] = ids[cursor]!;
          cursor = cursor + 1 === idCount ? 0 : cursor + 1;
        } else {
          outTemplates[i] = nextTemplate(pool, m);
        }
        i++;
        // Rotate: the served member goes to the tail (with a full ring, tail and head coincide).
        let tail = head + size;
        if (tail >= cap) tail -= cap;
        ring[tail] = m;
        head = head + 1 === cap ? 0 : head + 1;
      }
      if (i === count) break;
      // The number at the head has its first turn in this call, or its estimate ran out before
      // the rotation did (others left the ring). Eligibility is checked here only: it cannot change
      // during a call, and a member found ineligible leaves the ring.
      const m = ring[head]!;
      const slot = firstSlot + m;
      const a = eligible[m] === 1 ? this.#reserveTurn(slot, firstHandle >= 0 ? firstHandle + m : handle[slot]!, call, count - i, size, now) : 0;
      if (a === 0) {
        // Nothing of this call's is left to release for it (drained, or never reserved if ineligible).
        avail[slot] = 0;
        this.#leaveRing(pool, m, slot, now);
        head = head + 1 === cap ? 0 : head + 1;
        size--;
      } else {
        // Held now: the next inner turn serves it.
        avail[slot] = a;
      }
    }
    if (oneClass) pool.classCursor[0] = cursor;
    pool.head = head;
    pool.size = size;
    this.#releaseUnused(now);
    return i;
  }

  /** The number of a new dense call, with nothing listed to release yet. */
  #nextCall(): number {
    this.#touchedCount = 0;
    if (this.#call === 0x3fffffff) {
      // The call counter wraps: forget old stamps so none can match a new call by chance. It stays
      // below 2^30, in V8's small-integer range, so the loop compares stamps as integers.
      this.#stamp.fill(0);
      this.#call = 0;
    }
    return ++this.#call;
  }

  /**
   * A dense call's turn for the eligible number at `slot` (store handle `h`) that holds nothing:
   * at its first turn in the call, it reserves its share of the `left` messages over the `size`
   * members of the ring; later (others left the ring), its share again, unless the store already
   * granted it less than asked. Answers what it holds now (0: it is out).
   */
  #reserveTurn(slot: number, h: number, call: number, left: number, size: number, now: number): number {
    const drained = this.#drained;
    const first = this.#stamp[slot] !== call;
    if (!first && (drained[slot]! & Flag.DRAINED) !== 0) return 0;
    const listed = first ? 0 : drained[slot]! & Flag.LISTED;
    this.#stamp[slot] = call;
    const want = left <= size ? 1 : Math.ceil(left / size);
    // `| 0`: a grant is a whole number under 2^31 (an hour's capacity at most).
    const a = this.#store.reserve(h, want, now) | 0;
    const out = a < want ? Flag.DRAINED : 0;
    if (want > 1 && listed === 0) {
      // Only reservations of more than one may leave some to release: listed once per call.
      this.#touched[this.#touchedCount++] = slot;
      drained[slot] = out | Flag.LISTED;
    } else {
      drained[slot] = out | listed;
    }
    return a;
  }

  /** The end of a dense call: what each listed number reserved and was not handed goes back to the store. */
  #releaseUnused(now: number): void {
    const avail = this.#avail;
    const handle = this.#t.handle;
    for (let k = 0; k < this.#touchedCount; k++) {
      const slot = this.#touched[k]!;
      const unused = avail[slot]!;
      if (unused > 0) {
        this.#store.release(handle[slot]!, unused, now);
        avail[slot] = 0;
      }
    }
  }

  /**
   * Member `m` at the head leaves the ring: dropped if it is no longer eligible (lazy removal),
   * else parked until its number has capacity again.
   */
  #leaveRing(pool: Pool, m: number, slot: number, now: number): void {
    pool.inRing[m] = 0;
    if (pool.eligible[m] === 1) pool.park(m, this.#store.availableAt(this.#t.handle[slot]!, 1, now));
  }
}

/** Next template of member `m`'s account class (pools with accounts). */
function nextTemplate(pool: Pool, m: number): number {
  const c = pool.classOf[m]!;
  const list = pool.classTemplates[c]!;
  const k = pool.classCursor[c]!;
  pool.classCursor[c] = k + 1 === list.length ? 0 : k + 1;
  return list[k]!;
}
