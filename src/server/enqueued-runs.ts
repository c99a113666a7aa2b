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
 * outbox's order chain (the contact's id) then keeps the two in order.
 */
import type { Outbox, OutboxEvent } from '../events/outbox.js';
import type { ServerContact } from './contacts.js';

/** What a run keeps of a contact: what its ENQUEUED says. */
export type RunContact = Pick<ServerContact, 'id' | 'phone' | 'data' | 'document' | 'contract'>;

/** A request's ENQUEUED notifications (JSON-safe as written: only the contacts' fields they need). */
export interface EnqueuedRun {
  /** A UUID v4 drawn for the run; its notifications' `event_id`s derive from it. */
  readonly id: string;
  readonly companyId: number;
  /** The company's HSM webhook when the request was accepted. */
  readonly url: string;
  readonly campaignId: number;
  readonly requestId: string;
  readonly costCenterId: number;
  /** Acceptance time: every notification's `datetime`. */
  readonly at: number;
  /** Accepted contacts, in increasing id. */
  readonly contacts: readonly RunContact[];
}

/** A run as written (durable server, Redis): the contacts' fields its notifications need, nothing else. */
export function storedRun(run: EnqueuedRun): EnqueuedRun {
  return {
    ...run,
    contacts: run.contacts.map((c) => ({
      id: c.id,
      phone: c.phone,
      ...(c.data === undefined ? {} : { data: c.data }),
      ...(c.document === undefined ? {} : { document: c.document }),
      ...(c.contract === undefined ? {} : { contract: c.contract }),
    })),
  };
}

/** What the durable server and Redis write of the webhooks: single events, and runs. */
export type WrittenEvent = OutboxEvent | { readonly run: EnqueuedRun };

/** Whether a written record is a run. */
export function isRun(record: WrittenEvent): record is { readonly run: EnqueuedRun } {
  return 'run' in record;
}

interface Deps {
  readonly outbox: Outbox;
  /** The `index`-th notification of a run. */
  readonly build: (run: EnqueuedRun, index: number) => OutboxEvent;
  /** A run's every notification ended (delivered or dead-lettered): its written record may go. */
  readonly onDone?: (runId: string) => void;
  /**
   * Notifications of a receiver queued in the outbox at most before feeding stops for it: enough
   * to keep its connections busy between feeds. @default 512
   */
  readonly ahead?: number;
}

interface Run {
  readonly run: EnqueuedRun;
  /** Contacts before it are built (in order, by `feed`). */
  next: number;
  /** Contacts at or after `next` built early by `release`. */
  early: Set<number> | undefined;
  /** Built and not ended yet. */
  open: number;
}

/** Key of a contact's order chain in the outbox (the notifier gives a contact's notifications this `order`). */
export function hsmOrder(contactId: number): string {
  return `${HSM_ORDER}${contactId}`;
}
const HSM_ORDER = 'hsm:';

export class EnqueuedRuns {
  readonly #deps: Deps;
  readonly #ahead: number;
  /** Runs with contacts not built, per URL, oldest first. */
  readonly #byUrl = new Map<string, Run[]>();
  /** The same runs by their first contact id (for `release`). */
  readonly #byFirstId: Run[] = [];
  /** Built notifications not ended, by event id. */
  readonly #open = new Map<string, Run>();
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
   * Runs not ended, as written (for a snapshot): restored, a run builds again what it had built,
   * and the outbox drops those it knows.
   */
  runs(): EnqueuedRun[] {
    const live = new Set<Run>(this.#byFirstId);
    for (const r of this.#open.values()) live.add(r);
    return [...live].map((r) => storedRun(r.run));
  }

  /** Notifications not built yet, per URL and company, for inspection (a dashboard): O(runs). */
  unbuiltByUrl(): { readonly url: string; readonly companyId: number; readonly count: number }[] {
    const out: { url: string; companyId: number; count: number }[] = [];
    for (const [url, queue] of this.#byUrl) {
      for (const r of queue) out.push({ url, companyId: r.run.companyId, count: r.run.contacts.length - r.next - (r.early?.size ?? 0) });
    }
    return out;
  }

  /** Takes a run; its notifications are built by later `feed`s and `release`s. */
  add(run: EnqueuedRun): void {
    if (run.contacts.length === 0) return;
    const r: Run = { run, next: 0, early: undefined, open: 0 };
    let queue = this.#byUrl.get(run.url);
    if (queue === undefined) this.#byUrl.set(run.url, (queue = []));
    queue.push(r);
    // Contact ids grow with acceptance: almost always the end; a run read back out of order goes in place.
    const first = run.contacts[0]!.id;
    let at = this.#byFirstId.length;
    while (at > 0 && this.#byFirstId[at - 1]!.run.contacts[0]!.id > first) at--;
    this.#byFirstId.splice(at, 0, r);
    this.#unbuilt += run.contacts.length;
  }

  /**
   * Builds into the outbox, per receiver, what keeps it `ahead` notifications deep; the outbox
   * counts what it already holds for the receiver (later statuses, retries), so a receiver that is
   * down gets nothing more built.
   */
  feed(now: number): boolean {
    let built = false;
    for (const [url, queue] of this.#byUrl) {
      let room = this.#ahead - this.#deps.outbox.unfinishedAt(url);
      while (room > 0 && queue.length > 0) {
        const r = queue[0]!;
        const n = r.run.contacts.length;
        for (; r.next < n && room > 0; r.next++) {
          if (r.early?.delete(r.next) === true) continue;
          this.#build(r, r.next, now);
          room--;
          built = true;
        }
        // Skip what `release` built past the cursor.
        while (r.next < n && r.early?.has(r.next) === true) r.early.delete(r.next++);
        if (r.next === n) this.#built(r, queue);
      }
      if (queue.length === 0) this.#byUrl.delete(url);
    }
    return built;
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
      if (runs[mid]!.run.contacts[0]!.id <= contactId) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return;
    const r = runs[found]!;
    const index = indexOfContact(r.run.contacts, contactId);
    if (index < r.next || r.early?.has(index) === true) return;
    if (index < 0) return;
    (r.early ??= new Set()).add(index);
    this.#build(r, index, now);
  }

  /** {@link release} for an event's `order`, when it is a contact's (an event written before, queued now). */
  releaseOrder(order: string | undefined, now: number): void {
    if (order?.startsWith(HSM_ORDER) === true) this.release(Number(order.slice(HSM_ORDER.length)), now);
  }

  /** An outcome of the outbox: true when it was a run's notification (its run may have ended). */
  ended(eventId: string): boolean {
    const r = this.#open.get(eventId);
    if (r === undefined) return false;
    this.#open.delete(eventId);
    r.open--;
    this.#maybeDone(r);
    return true;
  }

  #build(r: Run, index: number, now: number): void {
    const event = this.#deps.build(r.run, index);
    this.#unbuilt--;
    const { outbox } = this.#deps;
    // A run restored builds again what it had built: the outbox knows those already (unfinished,
    // or finished and remembered), and only an unfinished one is waited for.
    if (outbox.enqueue(event, now).kind === 'enqueued' || outbox.stateOf(event.id) !== 'finished') {
      this.#open.set(event.id, r);
      r.open++;
    }
  }

  /** Every contact of the run is built: it leaves the queues, and ends when its notifications do. */
  #built(r: Run, queue: Run[]): void {
    queue.shift();
    const at = this.#byFirstId.indexOf(r);
    if (at >= 0) this.#byFirstId.splice(at, 1);
    r.early = undefined;
    this.#maybeDone(r);
  }

  #maybeDone(r: Run): void {
    if (r.open > 0 || r.next < r.run.contacts.length) return;
    this.#deps.onDone?.(r.run.id);
  }
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
