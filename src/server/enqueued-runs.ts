/**
 * The ENQUEUED notifications of accepted requests, one record per request (a run) until each is
 * built for delivery. At intake a request with an HSM webhook costs one record, whatever its
 * size; its notifications are built a few hundred at a time as the receiver takes them (`feed`),
 * and their ids derive from the run's, so a notification built again (after a restart) is the same
 * event. Built one by one at intake, each cost about 10 µs and an outbox entry, and a burst of
 * requests held hundreds of thousands of them in memory (docs/benchmarks.md, "The reference server
 * under load").
 *
 * Order: a contact's later notification (SENT, FAILED, ...) must not overtake its ENQUEUED. Before
 * one is queued, `release` builds the contact's ENQUEUED at once if its run still holds it; the
 * outbox's order chain (the contact's id) then keeps the two in order. A dead-lettered ENQUEUED is
 * never built again (`dead`, written with the run), so it cannot come back after the contact's
 * later notifications.
 */
import { originOf, type Outbox, type OutboxEvent } from '../events/outbox.js';
import { uuidV4At } from '../events/uuid.js';
import { storedRun, type EnqueuedRun, type RunContact } from './ports/persistence.js';

export { isReplay, isRun, storedRun, writtenId } from './ports/persistence.js';

/** The `index`-th notification's `event_id` of a run (never the run's own id, which keys its written record). */
export function runEventId(runId: string, index: number): string {
  return uuidV4At(runId, index + 1);
}

/** Key of a contact's order chain in the outbox (the notifier gives a contact's notifications this `order`). */
export function hsmOrder(contactId: number): string {
  return `${HSM_ORDER}${contactId}`;
}
const HSM_ORDER = 'hsm:';

interface Deps {
  readonly outbox: Outbox;
  /** The `index`-th notification of a run (its id: {@link runEventId}). */
  readonly build: (run: EnqueuedRun, index: number) => OutboxEvent;
  /** A run's every notification ended (delivered or dead-lettered): its written record may go. @default none */
  readonly onDone?: (runId: string) => void;
  /** A notification of the run was dead-lettered: its written record should say so (`dead`). @default none */
  readonly onDead?: (run: EnqueuedRun) => void;
  /** A notification could not be built (a record that does not make one): skipped as dead-lettered. @default none */
  readonly onBuildError?: (runId: string, index: number, error: unknown) => void;
  /**
   * Notifications of a receiver (URL origin) queued in the outbox at most before feeding stops
   * for it: enough to keep its connections busy between feeds. @default 512
   */
  readonly ahead?: number;
}

interface Run {
  run: EnqueuedRun;
  readonly origin: string;
  /** Contacts before it are built or dead (in order, by `feed`). */
  next: number;
  /** Contacts at or after `next` built early by `release`, or dead. */
  early: Set<number> | undefined;
  /** Built and not ended yet. */
  open: number;
  /** Dead-lettered places. */
  dead: number[];
}

export class EnqueuedRuns {
  readonly #deps: Deps;
  readonly #ahead: number;
  /** Runs with contacts not built, per receiver (URL origin), oldest first: URLs of one origin share its room in turn. */
  readonly #byOrigin = new Map<string, Run[]>();
  /** The same runs by their first contact id (for `release`). */
  readonly #byFirstId: Run[] = [];
  /** Runs not ended, by id. */
  readonly #live = new Map<string, Run>();
  /** Built notifications not ended: their run and place. */
  readonly #open = new Map<string, { readonly r: Run; readonly index: number }>();
  #unbuilt = 0;

  constructor(deps: Deps) {
    this.#deps = deps;
    this.#ahead = deps.ahead ?? 512;
  }

  /** Notifications not built yet. */
  get size(): number {
    return this.#unbuilt;
  }

  /**
   * Runs not ended with their progress (for a snapshot, taken with the outbox's): restored, a run
   * builds only what it had not, and waits for those the outbox still holds.
   */
  runs(): EnqueuedRun[] {
    return [...this.#live.values()].map((r) => ({
      ...storedRun(r.run),
      ...(r.dead.length > 0 ? { dead: [...r.dead] } : {}),
      built: r.next,
      ...(r.early !== undefined && r.early.size > 0 ? { early: [...r.early] } : {}),
    }));
  }

  /** Notifications not built yet, per URL and company, for inspection (a dashboard): O(runs). */
  unbuiltByUrl(): { readonly url: string; readonly companyId: number; readonly count: number }[] {
    const out: { url: string; companyId: number; count: number }[] = [];
    for (const queue of this.#byOrigin.values()) {
      for (const r of queue) out.push({ url: r.run.url, companyId: r.run.companyId, count: unbuiltOf(r) });
    }
    return out;
  }

  /** Takes a run (once: a run already here is ignored); its notifications are built by later `feed`s and `release`s. */
  add(run: EnqueuedRun): void {
    if (run.contacts.length === 0 || this.#live.has(run.id)) return;
    const n = run.contacts.length;
    const r: Run = { run, origin: originOf(run.url), next: Math.min(run.built ?? 0, n), early: undefined, open: 0, dead: [...(run.dead ?? [])] };
    this.#live.set(run.id, r);
    // Restored progress: what was built and the outbox still holds is waited for, the rest ended.
    const { outbox } = this.#deps;
    const wait = (index: number): void => {
      const id = runEventId(run.id, index);
      const state = outbox.stateOf(id);
      if (state === undefined || state === 'finished') return;
      this.#open.set(id, { r, index });
      r.open++;
    };
    for (let i = 0; i < r.next; i++) wait(i);
    for (const i of run.early ?? []) {
      if (i < r.next || i >= n) continue;
      (r.early ??= new Set()).add(i);
      wait(i);
    }
    // Dead-lettered ones count as built: never again.
    for (const i of r.dead) if (i >= r.next && i < n) (r.early ??= new Set()).add(i);
    this.#unbuilt += unbuiltOf(r);
    this.#skipBuilt(r);
    if (r.next === n) {
      this.#maybeDone(r);
      return;
    }
    let queue = this.#byOrigin.get(r.origin);
    if (queue === undefined) this.#byOrigin.set(r.origin, (queue = []));
    queue.push(r);
    // Contact ids grow with acceptance: almost always the end; a run read back out of order goes in place.
    const first = run.contacts[0]!.id;
    let at = this.#byFirstId.length;
    while (at > 0 && firstId(this.#byFirstId[at - 1]!) > first) at--;
    this.#byFirstId.splice(at, 0, r);
  }

  /**
   * Builds into the outbox, per receiver, what keeps it `ahead` notifications deep; the outbox
   * counts what it already holds for the receiver (later statuses, retries), so a receiver that is
   * down gets nothing more built.
   */
  feed(now: number): void {
    for (const [origin, queue] of this.#byOrigin) {
      let room = this.#ahead - this.#deps.outbox.unfinishedAt(queue[0]!.run.url);
      while (queue.length > 0) {
        const r = queue[0]!;
        this.#skipBuilt(r);
        if (r.next === r.run.contacts.length) {
          this.#built(r);
          continue;
        }
        if (room <= 0) break;
        this.#build(r, r.next++, now);
        room--;
      }
      if (queue.length === 0) this.#byOrigin.delete(origin);
    }
  }

  /**
   * A later notification of this contact is about to be queued: its ENQUEUED is built now if a run
   * still holds it, so the outbox's order chain sees it first.
   */
  release(contactId: number, now: number): void {
    const runs = this.#byFirstId;
    // The last run whose first contact is at or before the id.
    let lo = 0;
    let hi = runs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (firstId(runs[mid]!) <= contactId) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return;
    const r = runs[found]!;
    const index = indexOfContact(r.run.contacts, contactId);
    if (index < r.next || r.early?.has(index) === true) return;
    (r.early ??= new Set()).add(index);
    this.#build(r, index, now);
    this.#skipBuilt(r);
    if (r.next === r.run.contacts.length) this.#built(r);
  }

  /** {@link release} for an event's `order`, when it is a contact's (an event written before, queued now). */
  releaseOrder(order: string | undefined, now: number): void {
    if (order?.startsWith(HSM_ORDER) === true) this.release(Number(order.slice(HSM_ORDER.length)), now);
  }

  /** An outcome of the outbox: true when it was a run's notification (its run may have ended). */
  ended(eventId: string, deadLettered: boolean): boolean {
    const o = this.#open.get(eventId);
    if (o === undefined) return false;
    this.#open.delete(eventId);
    const { r } = o;
    r.open--;
    if (deadLettered) this.#dead(r, o.index);
    this.#maybeDone(r);
    return true;
  }

  #build(r: Run, index: number, now: number): void {
    this.#unbuilt--;
    let event: OutboxEvent;
    try {
      event = this.#deps.build(r.run, index);
    } catch (e) {
      // A written record that does not make a notification: it cannot go, and must not hold the others.
      this.#deps.onBuildError?.(r.run.id, index, e);
      this.#dead(r, index);
      return;
    }
    const { outbox } = this.#deps;
    // Its 24 h of delivery count from the acceptance, however late it is built. A run restored
    // builds again what it had built when nothing says so (the durable server's rows): the outbox
    // knows those still unfinished, and only those are waited for.
    if (outbox.enqueue(event, Math.min(r.run.at, now)).kind === 'enqueued' || outbox.stateOf(event.id) !== 'finished') {
      this.#open.set(event.id, { r, index });
      r.open++;
    }
  }

  #dead(r: Run, index: number): void {
    r.dead.push(index);
    r.run = { ...r.run, dead: r.dead.slice() };
    this.#deps.onDead?.(r.run);
  }

  /** Moves the cursor past what `release` built. */
  #skipBuilt(r: Run): void {
    const early = r.early;
    if (early === undefined) return;
    const n = r.run.contacts.length;
    while (r.next < n && early.delete(r.next)) r.next++;
    if (early.size === 0) r.early = undefined;
  }

  /** Every contact of the run is built: it leaves the queues, and ends when its notifications do. */
  #built(r: Run): void {
    const queue = this.#byOrigin.get(r.origin);
    if (queue !== undefined) {
      const at = queue[0] === r ? 0 : queue.indexOf(r);
      if (at >= 0) queue.splice(at, 1);
      if (queue.length === 0) this.#byOrigin.delete(r.origin);
    }
    const at = this.#placeOf(r);
    if (at >= 0) this.#byFirstId.splice(at, 1);
    this.#maybeDone(r);
  }

  /** Where a run is in `#byFirstId` (sorted by first contact id, each distinct), or -1. */
  #placeOf(r: Run): number {
    const runs = this.#byFirstId;
    const first = firstId(r);
    let lo = 0;
    let hi = runs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const x = firstId(runs[mid]!);
      if (x === first) return runs[mid] === r ? mid : runs.indexOf(r);
      if (x < first) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  #maybeDone(r: Run): void {
    if (r.open > 0 || r.next < r.run.contacts.length || this.#live.get(r.run.id) !== r) return;
    this.#live.delete(r.run.id);
    this.#deps.onDone?.(r.run.id);
  }
}

function firstId(r: Run): number {
  return r.run.contacts[0]!.id;
}

/** Contacts of a run not built yet. */
function unbuiltOf(r: Run): number {
  return r.run.contacts.length - r.next - (r.early?.size ?? 0);
}

/** Index of a contact id in contacts sorted by id, or -1. */
function indexOfContact(contacts: readonly RunContact[], id: number): number {
  let lo = 0;
  let hi = contacts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const x = contacts[mid]!.id;
    if (x === id) return mid;
    if (x < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
