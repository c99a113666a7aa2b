/**
 * The delivery outbox: at-least-once delivery of every event to its configured URL, as a pure
 * state machine. The host (the server's delivery worker) does the HTTP: it asks {@link Outbox.take}
 * what to send now, signs and POSTs each attempt, reports the result with {@link Outbox.settle},
 * and sets one timer for {@link Outbox.nextWakeAt}. Time is a number passed in; jitter comes from
 * the injected {@link RandomSource}.
 *
 * Per event:
 *
 *   held --(the event before it with the same order key ends)--> pending
 *   pending(dueAt) --take--> in-flight(attempt, deadline) --settle ok--------------> delivered
 *        ^                        |  settle failure / deadline passed (timeout)
 *        |                        v
 *        +---- backoff ----- next try within maxAge? ---- no ----------------------> dead-lettered
 *
 * Per target (a URL's origin): a failure marks it down. While it is down one attempt at a time
 * probes it, no sooner than the retry of the event that failed last and no later than
 * `probeIntervalMs` after it, and its other due events wait for the probe instead of each failing
 * on its own schedule; the first success brings it up and makes everything it has
 * waiting due at once. So a receiver back after an outage gets its backlog at the delivery
 * worker's pace, not spread over each event's backoff.
 *
 * Guarantees (checked by the model-based test): an enqueued event is never lost (it is held,
 * pending, in flight, or has its final outcome); its final outcome is produced exactly once,
 * whatever the order of failures, timeouts, late results and restarts; delivered only after a
 * success was reported; events with the same `order` to the same URL are attempted one at a time,
 * in enqueue order. Other events have no order between them: receivers deduplicate and order by
 * `event_id` and payload times.
 */
import { Heap } from 'mnemonist';
import { ArgumentError, SnapshotError } from '../core/errors.js';
import { type Backoff, backoffDelay } from './backoff.js';
import { requireInteger } from './ids.js';
import { snapshotProblems } from './outbox-snapshot.js';
import type { AttemptResult, DeliveryAttempt, DeliveryOutcome, EnqueueOutcome, EntryState, OutboxEvent, OutboxOptions, OutboxSnapshot, OutboxTargetView, SettleOutcome } from './outbox-types.js';

export type { AttemptResult, DeliveryAttempt, DeliveryOutcome, EnqueueOutcome, OutboxEvent, OutboxOptions, OutboxSnapshot, OutboxTargetView, SettleOutcome, WebhookFamily } from './outbox-types.js';
export { httpAttemptResult } from './outbox-types.js';

interface Entry {
  readonly event: OutboxEvent;
  readonly createdAt: number;
  readonly target: Target;
  /** Key of its order chain (URL and order key), when the event has an order key. */
  readonly chain: string | undefined;
  /** Attempts started so far. */
  attempts: number;
  state: EntryState;
  lastError: string | undefined;
  /** Bumped at every state change; wake-ups of an older state are dropped when they surface. */
  version: number;
}

/** A receiver (URL origin) as the outbox sees it. */
interface Target {
  /** Its unfinished events, to make them due at once when it comes back. */
  readonly entries: Set<Entry>;
  /** Failures since its last success; > 0: down. */
  failures: number;
  /** While down: when the next probe may go. */
  probeAt: number;
  /** While down: the probe in flight, if any. */
  probe: Entry | undefined;
  lastError: string;
}

/** A moment the outbox must look at an entry again: its due time, or its attempt's deadline. */
interface WakeUp {
  readonly at: number;
  readonly createdAt: number;
  readonly id: string;
  readonly version: number;
}

/** The outbox state machine. */
export class Outbox {
  readonly #backoff: Backoff;
  readonly #maxAge: number;
  readonly #timeout: number;
  readonly #remember: number;
  readonly #probeInterval: number;
  readonly #entries = new Map<string, Entry>();
  /** Due times and deadlines, earliest first: `take` and `nextWakeAt` never scan the entries. */
  readonly #wakeUps = new Heap<WakeUp>((a, b) => a.at - b.at || a.createdAt - b.createdAt);
  /** Finished ids in the order they finished (time never goes back), so forgetting is from the front. */
  readonly #finished = new Map<string, number>();
  readonly #targets = new Map<string, Target>();
  #lastUrl: string | undefined;
  #lastTarget: Target | undefined;
  /** Unfinished events of each order chain, in enqueue order (the first is the one not held). */
  readonly #chains = new Map<string, Entry[]>();
  #outcomes: DeliveryOutcome[] = [];

  constructor(options: OutboxOptions) {
    const initialMs = options.initialDelayMs ?? 5_000;
    const factor = options.backoffFactor ?? 2;
    const maxMs = options.maxDelayMs ?? 3_600_000;
    this.#backoff = { initialMs, factor, maxMs, random: options.random };
    this.#maxAge = options.maxAgeMs ?? 86_400_000;
    this.#timeout = options.attemptTimeoutMs ?? 30_000;
    this.#remember = options.rememberFinishedMs ?? this.#maxAge;
    this.#probeInterval = options.probeIntervalMs ?? 30_000;
    requireInteger('Outbox(options.probeIntervalMs)', this.#probeInterval, 0);
    requireInteger('Outbox(options.initialDelayMs)', initialMs, 0);
    requireInteger('Outbox(options.maxDelayMs)', maxMs, 0);
    requireInteger('Outbox(options.maxAgeMs)', this.#maxAge, 0);
    requireInteger('Outbox(options.attemptTimeoutMs)', this.#timeout, 1);
    requireInteger('Outbox(options.rememberFinishedMs)', this.#remember, 0);
    if (!(factor >= 1) || !Number.isFinite(factor)) {
      throw new ArgumentError('Outbox(options.backoffFactor)', 'a finite number from 1 up', String(factor));
    }
  }

  /**
   * Adds an event, due at once (or held behind an earlier event with its order key). Idempotent by
   * event id (held, pending, in flight, or recently finished).
   */
  enqueue(event: OutboxEvent, now: number): EnqueueOutcome {
    if (this.#entries.has(event.id) || this.#finished.has(event.id)) return { kind: 'duplicate' };
    this.#add(event, now, 0, { kind: 'pending', dueAt: now }, undefined);
    return { kind: 'enqueued' };
  }

  /**
   * An operator's replay of a finished event (a dead letter): it is enqueued again as a new event
   * with the same id (receivers deduplicate by `event_id`), due at once, whatever the memory of
   * finished ids says. An event still unfinished is left as it is (`duplicate`).
   */
  replay(event: OutboxEvent, now: number): EnqueueOutcome {
    if (this.#entries.has(event.id)) return { kind: 'duplicate' };
    this.#finished.delete(event.id);
    this.#add(event, now, 0, { kind: 'pending', dueAt: now }, undefined);
    return { kind: 'enqueued' };
  }

  /**
   * The attempts to make now (due pending events, earliest first, at most `limit`), each marked in
   * flight until its deadline. First times out attempts whose deadline has passed. Events of a
   * target that is down wait for its probe.
   */
  take(now: number, limit = Number.POSITIVE_INFINITY): DeliveryAttempt[] {
    this.#forget(now);
    const out: DeliveryAttempt[] = [];
    const heap = this.#wakeUps;
    for (let w = heap.peek(); w !== undefined && w.at <= now; w = heap.peek()) {
      const e = this.#entries.get(w.id);
      if (!e || e.version !== w.version) {
        heap.pop();
        continue;
      }
      if (e.state.kind === 'in-flight') {
        // Its deadline passed without an answer: a failed attempt (time out first, whatever the limit).
        heap.pop();
        this.#fail(e, 'timeout', e.state.deadline);
        continue;
      }
      if (out.length >= limit) break;
      heap.pop();
      const t = e.target;
      // A probe whose deadline passed is a failure first (its own wake-up may not have surfaced yet).
      const probe = t.probe;
      if (probe !== undefined && probe.state.kind === 'in-flight' && probe.state.deadline <= now) this.#fail(probe, 'timeout', probe.state.deadline);
      if (t.failures > 0 && (t.probe !== undefined || now < t.probeAt)) {
        this.#waitForTarget(e, now);
        continue;
      }
      e.attempts += 1;
      const deadline = now + this.#timeout;
      e.state = { kind: 'in-flight', deadline };
      this.#schedule(e);
      if (t.failures > 0) t.probe = e;
      out.push({ event: e.event, attempt: e.attempts, deadline });
    }
    return out;
  }

  /**
   * Reports the result of an attempt. A success of any attempt of an unfinished event delivers it
   * (a late answer to a timed-out attempt still proves delivery) and brings its target up; a
   * failure counts only for the attempt in flight.
   */
  settle(eventId: string, attempt: number, result: AttemptResult, now: number): SettleOutcome {
    const e = this.#entries.get(eventId);
    if (!e) return { kind: 'ignored', reason: this.#finished.has(eventId) ? 'already-final' : 'unknown-event' };
    if (attempt < 1 || attempt > e.attempts) return { kind: 'ignored', reason: 'stale-attempt' };
    if (result.ok) {
      this.#finish(e, { kind: 'delivered', event: e.event, attempts: e.attempts, at: now }, now);
      this.#targetUp(e.target, now);
      return { kind: 'delivered' };
    }
    if (e.state.kind !== 'in-flight' || attempt !== e.attempts) return { kind: 'ignored', reason: 'stale-attempt' };
    return this.#fail(e, result.error, now);
  }

  /** The earliest time something is due (a pending event or an attempt deadline); null when idle. */
  nextWakeAt(): number | null {
    const heap = this.#wakeUps;
    for (let w = heap.peek(); w !== undefined; w = heap.peek()) {
      const e = this.#entries.get(w.id);
      if (e && e.version === w.version) return w.at;
      heap.pop();
    }
    return null;
  }

  /**
   * Times out overdue attempts and forgets old finished ids. {@link take} does this too; call it
   * when waking at a deadline with nothing to send.
   */
  tick(now: number): void {
    this.#forget(now);
    const heap = this.#wakeUps;
    const due: WakeUp[] = [];
    for (let w = heap.peek(); w !== undefined && w.at <= now; w = heap.peek()) {
      heap.pop();
      const e = this.#entries.get(w.id);
      if (!e || e.version !== w.version) continue;
      if (e.state.kind === 'in-flight') this.#fail(e, 'timeout', e.state.deadline);
      else due.push(w); // due to send: stays for the next take
    }
    for (const w of due) heap.push(w);
  }

  /** Drains the final outcomes produced since the last call (each event's exactly once). */
  takeOutcomes(): DeliveryOutcome[] {
    const out = this.#outcomes;
    this.#outcomes = [];
    return out;
  }

  /** Events not finished yet (held, pending or in flight). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Unfinished events of the receiver a URL goes to (its origin): what a host that feeds the
   * outbox in steps reads to keep each receiver busy without queueing its whole backlog here.
   */
  unfinishedAt(url: string): number {
    return this.#target(url).entries.size;
  }

  /** The state of an event, for inspection. */
  stateOf(eventId: string): 'held' | 'pending' | 'in-flight' | 'finished' | undefined {
    const e = this.#entries.get(eventId);
    if (e) return e.state.kind;
    return this.#finished.has(eventId) ? 'finished' : undefined;
  }

  /**
   * The receivers that have unfinished events or are down, for inspection (a dashboard): O(targets
   * + unfinished events), so call it at a human's pace, not per event.
   */
  targets(): OutboxTargetView[] {
    const out: OutboxTargetView[] = [];
    for (const [origin, t] of this.#targets) {
      if (t.entries.size === 0 && t.failures === 0) continue;
      const pendingByCompany = new Map<number, number>();
      for (const e of t.entries) pendingByCompany.set(e.event.companyId, (pendingByCompany.get(e.event.companyId) ?? 0) + 1);
      const down = t.failures > 0;
      out.push({ origin, pending: t.entries.size, pendingByCompany, failures: t.failures, lastError: down ? t.lastError : null, probeAt: down ? t.probeAt : null });
    }
    return out;
  }

  /** Serialisable state: unfinished events in enqueue order, finished ids, and untaken outcomes. */
  snapshot(): OutboxSnapshot {
    return structuredClone({
      version: 1 as const,
      entries: [...this.#entries.values()].map((e) => ({
        event: e.event,
        createdAt: e.createdAt,
        attempts: e.attempts,
        state: e.state,
        lastError: e.lastError ?? null,
      })),
      finished: [...this.#finished],
      outcomes: this.#outcomes,
    });
  }

  /**
   * An outbox from {@link snapshot}. Attempts that were in flight stay so until their deadline,
   * then go again: after a crash their answer never comes, and at-least-once means resending.
   * Targets start up; events keep their order chains (entries are in enqueue order).
   */
  static restore(snapshot: OutboxSnapshot, options: OutboxOptions): Outbox {
    const problems = snapshotProblems(snapshot);
    if (problems.length > 0) throw new SnapshotError('Cannot restore the outbox snapshot', problems);
    const o = new Outbox(options);
    for (const e of snapshot.entries) {
      // Held or not is decided again by the chain: a held event whose predecessors are gone is due now.
      const state: EntryState = e.state.kind === 'held' ? { kind: 'pending', dueAt: e.createdAt } : e.state;
      o.#add(e.event, e.createdAt, e.attempts, state, e.lastError ?? undefined);
    }
    for (const [id, at] of [...snapshot.finished].sort((a, b) => a[1] - b[1])) o.#finished.set(id, at);
    o.#outcomes = [...snapshot.outcomes];
    return o;
  }

  #add(event: OutboxEvent, createdAt: number, attempts: number, state: EntryState, lastError: string | undefined): void {
    const chain = event.order === undefined ? undefined : `${event.url}\n${event.order}`;
    const target = this.#target(event.url);
    const entry: Entry = { event, createdAt, target, chain, attempts, state, lastError, version: 0 };
    this.#entries.set(event.id, entry);
    target.entries.add(entry);
    if (chain !== undefined) {
      const queue = this.#chains.get(chain);
      if (queue === undefined) this.#chains.set(chain, [entry]);
      else {
        queue.push(entry);
        entry.state = { kind: 'held' };
        return;
      }
    }
    this.#schedule(entry);
  }

  #target(url: string): Target {
    // Events come in runs to one URL (a request's notifications): its target is remembered rather
    // than parsed again (a URL parse per event was a tenth of queueing one). Targets are never
    // dropped, so the one remembered stays the URL's.
    if (url === this.#lastUrl && this.#lastTarget !== undefined) return this.#lastTarget;
    const key = originOf(url);
    let t = this.#targets.get(key);
    if (t === undefined) this.#targets.set(key, (t = { entries: new Set(), failures: 0, probeAt: 0, probe: undefined, lastError: '' }));
    this.#lastUrl = url;
    this.#lastTarget = t;
    return t;
  }

  /** A due event of a target that is down: it waits for the target's next probe, or dead-letters when that is too late. */
  #waitForTarget(e: Entry, now: number): void {
    const t = e.target;
    // Both are later than now: a probe in flight is within its deadline (take times it out otherwise).
    const at = t.probe !== undefined && t.probe.state.kind === 'in-flight' ? t.probe.state.deadline : t.probeAt;
    if (at > e.createdAt + this.#maxAge) {
      this.#finish(e, { kind: 'dead-lettered', event: e.event, attempts: e.attempts, at: now, lastError: e.lastError ?? t.lastError }, now);
      return;
    }
    e.state = { kind: 'pending', dueAt: at };
    this.#schedule(e);
  }

  /** A success: the target is up, and whatever of it waits (for a probe or its own backoff) is due now. */
  #targetUp(t: Target, now: number): void {
    if (t.failures === 0) return;
    t.failures = 0;
    t.probe = undefined;
    for (const e of t.entries) {
      if (e.state.kind === 'pending' && e.state.dueAt > now) {
        e.state = { kind: 'pending', dueAt: now };
        this.#schedule(e);
      }
    }
  }

  #fail(e: Entry, error: string, now: number): SettleOutcome {
    e.lastError = error;
    const t = e.target;
    if (t.probe === e) t.probe = undefined;
    const at = now + backoffDelay(this.#backoff, e.attempts);
    // The target waits as long as the event that failed, up to the probe interval: then one of its
    // events (the oldest due) probes it.
    t.failures += 1;
    t.lastError = error;
    t.probeAt = Math.max(t.probeAt, Math.min(at, now + this.#probeInterval));
    if (at > e.createdAt + this.#maxAge) {
      this.#finish(e, { kind: 'dead-lettered', event: e.event, attempts: e.attempts, at: now, lastError: error }, now);
      return { kind: 'dead-lettered' };
    }
    e.state = { kind: 'pending', dueAt: at };
    this.#schedule(e);
    return { kind: 'retry', at };
  }

  /** Records when the entry's current state needs looking at again (a held entry needs nothing). */
  #schedule(e: Entry): void {
    e.version++;
    if (e.state.kind === 'held') return;
    const at = e.state.kind === 'pending' ? e.state.dueAt : e.state.deadline;
    this.#wakeUps.push({ at, createdAt: e.createdAt, id: e.event.id, version: e.version });
  }

  #finish(e: Entry, outcome: DeliveryOutcome, now: number): void {
    this.#entries.delete(e.event.id);
    e.target.entries.delete(e);
    if (e.target.probe === e) e.target.probe = undefined;
    this.#finished.set(e.event.id, outcome.at);
    this.#outcomes.push(outcome);
    if (e.chain !== undefined) this.#advanceChain(e, now);
  }

  /** The next event of a finished one's order chain is due now. */
  #advanceChain(e: Entry, now: number): void {
    const queue = this.#chains.get(e.chain!)!;
    const at = queue.indexOf(e);
    if (at >= 0) queue.splice(at, 1);
    const next = queue[0];
    if (next === undefined) this.#chains.delete(e.chain!);
    else if (next.state.kind === 'held') {
      next.state = { kind: 'pending', dueAt: now };
      this.#schedule(next);
    }
  }

  /** Forgets finished ids older than `rememberFinishedMs`, oldest first. */
  #forget(now: number): void {
    for (const [id, at] of this.#finished) {
      if (at + this.#remember >= now) break;
      this.#finished.delete(id);
    }
  }
}

/** The receiver a URL goes to: its origin (scheme, host, port); the URL itself when it does not parse. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
