/**
 * The pool of one (business, template type): the numbers that may carry its messages and the
 * templates they rotate through (DESIGN.md, "Semantics").
 *
 * Members are the business's numbers. A member is *eligible* while its number is active and it can
 * send at least one active template of the type. Eligible members sit either on the ring (believed
 * to have capacity; served round-robin from `head`) or on the waiting heap (keyed by when capacity
 * returns), never scanned while they wait.
 *
 * Removal is lazy: pausing a number only clears its `eligible` flag, O(1) per pool; its ring entry
 * is dropped when it reaches the head, its heap entry when it surfaces. Resuming re-uses an entry
 * still in place, so a quick pause/resume keeps the member's turn.
 *
 * Templates rotate per *account class*: numbers without an account (class 0) may send every active
 * template of the type; numbers of account A only templates without an account or of account A.
 * With no accounts there is one class, one cursor, and template counts differ by at most one.
 */
import { ArgumentError } from './errors.js';
import { TimedHeap } from './timed-heap.js';

/** What a pool needs to know of templates, owned by the engine's model. */
export interface TemplateView {
  isActive(template: number): boolean;
  account(template: number): string | undefined;
  id(template: number): number;
}

export class Pool {
  readonly businessId: number;
  readonly typeId: number;
  readonly typeName: string;
  /** Template indexes of the type, in the order the fleet lists them. */
  readonly templates: Int32Array;
  /** Number slots of the business; a member is an index into this array. */
  readonly members: Int32Array;
  /**
   * Slot of member 0. A business's numbers have consecutive slots (`members[m] === firstSlot + m`),
   * so the hot path computes a member's slot instead of loading it: one load fewer in the chain
   * ring -> member -> slot -> limit state that every assignment waits on.
   */
  readonly firstSlot: number;
  /**
   * Store handle of member 0 when the members' handles are consecutive too (the usual case: the
   * store opened this fleet's numbers in order), else -1. Set by the engine after opening them;
   * with it the hot path computes handles as well.
   */
  firstHandle = -1;
  /**
   * Whether some member shares a portfolio's limit: each hand-out is then charged to the portfolio
   * too (docs/engine.md, "Portfolios"). Set by the fleet's tables.
   */
  grouped = false;
  /** Account class of each member (0: no account). */
  readonly classOf: Int32Array;
  /** Account of each class (class 0: none). */
  readonly classAccounts: readonly (string | undefined)[];
  /** Ids of the active templates each class may send, in type order (ids, so the hot path reads one array). */
  readonly classTemplates: Float64Array[];
  /** Next position in `classTemplates[c]`. */
  readonly classCursor: Int32Array;

  readonly eligible: Uint8Array;
  readonly inRing: Uint8Array;
  readonly inHeap: Uint8Array;
  readonly gen: Uint32Array;
  readonly ring: Int32Array;
  head = 0;
  size = 0;
  /** Members waiting for capacity: (when it returns, member, generation); stale generations are dropped. */
  readonly waiting = new TimedHeap();

  /** Sum of `throughputPerHour` over eligible members. */
  throughput = 0;
  eligibleCount = 0;
  /** Templates of the type that are active now (for any class). */
  activeTemplates = 0;

  constructor(businessId: number, typeId: number, typeName: string, templates: Int32Array, members: Int32Array, classOf: Int32Array, classAccounts: readonly (string | undefined)[]) {
    this.businessId = businessId;
    this.typeId = typeId;
    this.typeName = typeName;
    this.templates = templates;
    this.members = members;
    this.firstSlot = members.length > 0 ? members[0]! : 0;
    for (let m = 0; m < members.length; m++) {
      if (members[m] !== this.firstSlot + m) throw new ArgumentError('Pool(members)', 'consecutive slots', `member ${m} at slot ${members[m]}`);
    }
    this.classOf = classOf;
    this.classAccounts = classAccounts;
    this.classTemplates = classAccounts.map(() => new Float64Array(0));
    this.classCursor = new Int32Array(classAccounts.length);
    const n = members.length;
    this.eligible = new Uint8Array(n);
    this.inRing = new Uint8Array(n);
    this.inHeap = new Uint8Array(n);
    this.gen = new Uint32Array(n);
    this.ring = new Int32Array(Math.max(1, n));
  }

  /** Recomputes which templates each class may send; answers whether any class gained or lost all. */
  refreshTemplates(view: TemplateView): boolean {
    let active = 0;
    for (let t = 0; t < this.templates.length; t++) if (view.isActive(this.templates[t]!)) active++;
    this.activeTemplates = active;
    let flipped = false;
    for (let c = 0; c < this.classAccounts.length; c++) {
      const account = this.classAccounts[c];
      const list: number[] = [];
      for (let t = 0; t < this.templates.length; t++) {
        const template = this.templates[t]!;
        if (!view.isActive(template)) continue;
        const ta = view.account(template);
        if (ta === undefined || c === 0 || ta === account) list.push(view.id(template));
      }
      const before = this.classTemplates[c]!.length;
      this.classTemplates[c] = Float64Array.from(list);
      if (list.length > 0) this.classCursor[c] = this.classCursor[c]! % list.length;
      else this.classCursor[c] = 0;
      if ((before === 0) !== (list.length === 0)) flipped = true;
    }
    return flipped;
  }

  /** Whether member `m` can send some active template of the type. */
  hasTemplateFor(m: number): boolean {
    return this.classTemplates[this.classOf[m]!]!.length > 0;
  }

  /** Sets member `m`'s eligibility; joining members go to the ring's tail unless still queued. */
  setEligible(m: number, eligible: boolean, perHour: number): void {
    const now = this.eligible[m] === 1;
    if (now === eligible) return;
    if (eligible) {
      this.eligible[m] = 1;
      this.throughput += perHour;
      this.eligibleCount++;
      if (this.inRing[m] === 0 && this.inHeap[m] === 0) this.pushRing(m);
    } else {
      this.eligible[m] = 0;
      this.throughput -= perHour;
      this.eligibleCount--;
    }
  }

  /** Changes an eligible member's hourly rate in the throughput sum. */
  rateChanged(m: number, oldPerHour: number, newPerHour: number): void {
    if (this.eligible[m] === 1) this.throughput += newPerHour - oldPerHour;
  }

  /** Forgets when member `m` was due back (its limits changed): it is tried again at once. */
  requeue(m: number): void {
    this.gen[m]!++;
    if (this.inHeap[m] === 1) {
      this.inHeap[m] = 0;
      if (this.eligible[m] === 1 && this.inRing[m] === 0) this.pushRing(m);
    }
  }

  pushRing(m: number): void {
    const cap = this.ring.length;
    let tail = this.head + this.size;
    if (tail >= cap) tail -= cap;
    this.ring[tail] = m;
    this.size++;
    this.inRing[m] = 1;
  }

  /** Puts member `m` (just taken off the ring) to wait until `at`. */
  park(m: number, at: number): void {
    this.inHeap[m] = 1;
    this.waiting.push(at, m, this.gen[m]!);
  }

  /** Brings members whose capacity is due by `now` back to the ring. */
  wake(now: number): void {
    const heap = this.waiting;
    while (heap.size > 0 && heap.topAt() <= now) {
      const m = heap.topId();
      const gen = heap.topGen();
      heap.pop();
      if (gen === this.gen[m]) {
        this.inHeap[m] = 0;
        if (this.eligible[m] === 1 && this.inRing[m] === 0) this.pushRing(m);
      }
    }
  }

  /** When the earliest waiting eligible member is due back; undefined when none waits. */
  nextReadyAt(): number | undefined {
    const heap = this.waiting;
    // Entries of members that left or were re-queued are dropped here, so the answer is exact.
    while (heap.size > 0) {
      const m = heap.topId();
      const current = heap.topGen() === this.gen[m];
      if (current && this.eligible[m] === 1) return heap.topAt();
      heap.pop();
      if (current) this.inHeap[m] = 0;
    }
    return undefined;
  }

  /**
   * The rotation as it stands: ring entries from the head and waiting entries with their times,
   * including those of members that left lazily (they keep their turn if they come back).
   */
  exportRotation(): { ring: number[]; waiting: [number, number][] } {
    const ring: number[] = [];
    for (let i = 0; i < this.size; i++) ring.push(this.ring[(this.head + i) % this.ring.length]!);
    const waiting: [number, number][] = [];
    for (const [at, m, gen] of this.waiting.entries()) if (gen === this.gen[m]) waiting.push([m, at]);
    waiting.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
    return { ring, waiting };
  }

  /**
   * Sets the rotation from a snapshot. Eligible members the snapshot does not place (numbers added
   * to the fleet since, say) join the ring's tail in member order.
   */
  importRotation(ring: readonly number[], waiting: readonly (readonly [number, number])[]): void {
    const n = this.members.length;
    this.inRing.fill(0);
    this.inHeap.fill(0);
    for (let m = 0; m < n; m++) this.gen[m]!++;
    this.waiting.clear();
    this.head = 0;
    this.size = 0;
    for (const m of ring) if (m >= 0 && m < n && this.inRing[m] === 0) this.pushRing(m);
    for (const [m, at] of waiting) if (m >= 0 && m < n && this.inRing[m] === 0 && this.inHeap[m] === 0) this.park(m, at);
    for (let m = 0; m < n; m++) if (this.eligible[m] === 1 && this.inRing[m] === 0 && this.inHeap[m] === 0) this.pushRing(m);
  }
}
