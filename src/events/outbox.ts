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
 * Each event has its own schedule: its backoff grows with its own failed attempts, and nothing
 * another event does brings its retry forward or holds it back. The only waiting between events is
 * an order chain's (a contact's later notification waits for its earlier ones), and a receiver
 * that is down.
 *
 * Per target (a URL's origin), down only when nothing path-specific can explain the failures:
 *
 * - (a) a connection-level failure (`connect: true`: refused, name not resolved, host unreachable,
 *   TLS handshake, connect timeout) makes it down at once;
 * - (b) of its health window, the last `healthWindow` (20) distinct events whose latest attempt
 *   ended there, each counted once by that latest result, at least `healthMinEvents` (5) are known
 *   and more than `healthFailureShare` (half) failed (an HTTP error status, a reset, no answer in
 *   time). One broken path among working ones does not make it down.
 *
 * While it is down its due events wait for it (deferred) and one attempt at a time probes it, at
 * the latest every `probeIntervalMs` (sooner at first: the event backoff, ×factor per failed probe,
 * up to that ceiling). The probe is an event that has not failed yet when one waits, else the one
 * that waited longest, so a receiver whose one path is broken is not held down by that path's
 * events. The first success (of any attempt) brings it up with a fresh health window, and makes
 * due at once only the events deferred for it; events in their own backoff keep their time. So a
 * receiver back after an outage gets its backlog at the delivery worker's pace, not spread over
 * each event's backoff. A target's health (outbox-target.ts) is a union: up, or down with what only
 * a target that is down has (why, its failed probes, the probe in flight, the events deferred).
 *
 * Guarantees (checked by the model-based test): an enqueued event is never lost (it is held,
 * pending, in flight, or has its final outcome); its final outcome is produced exactly once,
 * whatever the order of failures, timeouts, late results and restarts; delivered only after a
 * success was reported; events with the same `order` to the same URL are attempted one at a time,
 * in enqueue order; an event is never attempted before its own due time, and is attempted once due
 * unless its receiver is down or its order chain holds it. Other events have no order between
 * them: receivers deduplicate and order by `event_id` and payload times.
 */
import { Heap } from 'mnemonist';
import { ArgumentError, SnapshotError } from '../core/errors.js';
import { type Backoff, backoffDelay } from './backoff.js';
import { requireInteger } from './ids.js';
import { snapshotProblems } from './outbox-snapshot.js';
import { type Down, type Entry, type Target, UP, goesDown, newTarget, originOf, recordResult, targetView, worthShowing } from './outbox-target.js';
import type { AttemptResult, DeliveryAttempt, DeliveryOutcome, EnqueueOutcome, EntryState, OutboxEvent, OutboxOptions, OutboxSnapshot, OutboxTargetView, SettleOutcome } from './outbox-types.js';

export type { AttemptResult, DeliveryAttempt, DeliveryOutcome, EnqueueOutcome, OutboxEvent, OutboxOptions, OutboxSnapshot, OutboxTargetView, SettleOutcome, WebhookFamily } from './outbox-types.js';
export { httpAttemptResult } from './outbox-types.js';
export { originOf } from './outbox-target.js';

/** A moment the outbox must look at an entry again (its due time, its attempt's deadline, its expiry) or at a target (its probe time). */
interface WakeUp {
  readonly at: number;
  readonly createdAt: number;
  readonly id: string;
  readonly version: number;
  /** A target's probe time (then `id` is empty). */
  readonly target?: Target;
}

/** The outbox state machine. */
export class Outbox {
  readonly #backoff: Backoff;
  readonly #maxAge: number;
  readonly #timeout: number;
  readonly #remember: number;
  readonly #probeInterval: number;
  readonly #window: number;
  readonly #minEvents: number;
  readonly #failureShare: number;
  readonly #entries = new Map<string, Entry>();
  /** Due times, deadlines, expiries and probe times, earliest first: `take` and `nextWakeAt` never scan the entries. */
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
    this.#window = options.healthWindow ?? 20;
    this.#minEvents = options.healthMinEvents ?? 5;
    this.#failureShare = options.healthFailureShare ?? 0.5;
    requireInteger('Outbox(options.probeIntervalMs)', this.#probeInterval, 0);
    requireInteger('Outbox(options.initialDelayMs)', initialMs, 0);
    requireInteger('Outbox(options.maxDelayMs)', maxMs, 0);
    requireInteger('Outbox(options.maxAgeMs)', this.#maxAge, 0);
    requireInteger('Outbox(options.attemptTimeoutMs)', this.#timeout, 1);
    requireInteger('Outbox(options.rememberFinishedMs)', this.#remember, 0);
    requireInteger('Outbox(options.healthWindow)', this.#window, 1);
    requireInteger('Outbox(options.healthMinEvents)', this.#minEvents, 1);
    if (!(factor >= 1) || !Number.isFinite(factor)) {
      throw new ArgumentError('Outbox(options.backoffFactor)', 'a finite number from 1 up', String(factor));
    }
    if (!(this.#failureShare >= 0 && this.#failureShare < 1)) {
      throw new ArgumentError('Outbox(options.healthFailureShare)', 'a number from 0 up to, not including, 1', String(this.#failureShare));
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
   * flight until its deadline. First times out attempts whose deadline has passed. Due events of a
   * target that is down are deferred: one of them at a time probes it.
   */
  take(now: number, limit = Number.POSITIVE_INFINITY): DeliveryAttempt[] {
    this.#forget(now);
    const out: DeliveryAttempt[] = [];
    const heap = this.#wakeUps;
    /** Targets down whose probe may be due: looked at once every deadline up to now has timed out. */
    const probing = new Set<Target>();
    for (let w = heap.peek(); w !== undefined && w.at <= now; w = heap.peek()) {
      if (w.target !== undefined) {
        heap.pop();
        const h = w.target.health;
        if (w.target.version === w.version && h.kind === 'down') {
          h.wakeAt = undefined;
          probing.add(w.target);
        }
        continue;
      }
      const e = this.#entries.get(w.id);
      if (!e || e.version !== w.version) {
        heap.pop();
        continue;
      }
      if (e.state.kind === 'in-flight') {
        // Its deadline passed without an answer: a failed attempt (time out first, whatever the limit).
        heap.pop();
        this.#fail(e, 'timeout', false, e.state.deadline);
        continue;
      }
      if (e.deferred) {
        // Its expiry, its target still down: it cannot go within its maximum age.
        heap.pop();
        this.#expire(e, now);
        continue;
      }
      const t = e.target;
      if (t.health.kind === 'down') {
        heap.pop();
        this.#defer(e, t.health, now);
        probing.add(t);
        continue;
      }
      if (out.length >= limit) break;
      heap.pop();
      out.push(this.#start(e, now));
    }
    for (const t of probing) {
      const probe = this.#probe(t, now, out.length < limit);
      if (probe !== undefined) out.push(probe);
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
      const t = e.target;
      this.#finish(e, { kind: 'delivered', event: e.event, attempts: e.attempts, at: now }, now);
      this.#targetUp(t);
      recordResult(t, eventId, false, this.#window);
      return { kind: 'delivered' };
    }
    if (e.state.kind !== 'in-flight' || attempt !== e.attempts) return { kind: 'ignored', reason: 'stale-attempt' };
    return this.#fail(e, result.error, result.connect === true, now);
  }

  /** The earliest time something is due (a pending event, an attempt deadline, a probe); null when idle. */
  nextWakeAt(): number | null {
    const heap = this.#wakeUps;
    for (let w = heap.peek(); w !== undefined; w = heap.peek()) {
      if (w.target !== undefined ? w.target.version === w.version : this.#entries.get(w.id)?.version === w.version) return w.at;
      heap.pop();
    }
    return null;
  }

  /**
   * Times out overdue attempts, dead-letters deferred events past their maximum age and forgets old
   * finished ids. {@link take} does this too; call it when waking at a deadline with nothing to send.
   */
  tick(now: number): void {
    this.#forget(now);
    const heap = this.#wakeUps;
    const due: WakeUp[] = [];
    for (let w = heap.peek(); w !== undefined && w.at <= now; w = heap.peek()) {
      heap.pop();
      if (w.target !== undefined) {
        if (w.target.version === w.version) due.push(w);
        continue;
      }
      const e = this.#entries.get(w.id);
      if (!e || e.version !== w.version) continue;
      if (e.state.kind === 'in-flight') this.#fail(e, 'timeout', false, e.state.deadline);
      else if (e.deferred) this.#expire(e, now);
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
   * The receivers that have unfinished events, are down or have failures in their health window,
   * for inspection (a dashboard), as of `now`: O(targets + unfinished events), so call it at a
   * human's pace, not per event.
   */
  targets(now: number): OutboxTargetView[] {
    const out: OutboxTargetView[] = [];
    for (const [origin, t] of this.#targets) if (worthShowing(t)) out.push(targetView(origin, t, now));
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
   * Targets start up (events deferred for one are due at once); events keep their order chains
   * (entries are in enqueue order) and their own due times.
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
    const entry: Entry = { event, createdAt, target, chain, attempts, state, lastError, deferred: false, version: 0 };
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
    if (t === undefined) {
      t = newTarget();
      this.#targets.set(key, t);
    }
    this.#lastUrl = url;
    this.#lastTarget = t;
    return t;
  }

  /** Marks a due event in flight. */
  #start(e: Entry, now: number): DeliveryAttempt {
    e.attempts += 1;
    const deadline = now + this.#timeout;
    e.state = { kind: 'in-flight', deadline };
    this.#schedule(e);
    return { event: e.event, attempt: e.attempts, deadline };
  }

  /** A due event of a target that is down: it waits for the target (its expiry still counts). */
  #defer(e: Entry, down: Down, now: number): void {
    const expiry = e.createdAt + this.#maxAge;
    if (expiry <= now) {
      this.#expire(e, now);
      return;
    }
    e.deferred = true;
    (e.lastError === undefined ? down.fresh : down.failed).add(e);
    e.version++;
    this.#wakeUps.push({ at: expiry, createdAt: e.createdAt, id: e.event.id, version: e.version });
    this.#armProbe(e.target);
  }

  /** A deferred event past its maximum age: dead-lettered with the last failure seen (its own, or its target's). */
  #expire(e: Entry, now: number): void {
    this.#finish(e, { kind: 'dead-lettered', event: e.event, attempts: e.attempts, at: now, lastError: e.lastError ?? e.target.lastError }, now);
  }

  /**
   * The probe of a target that is down, when its time has come and none is in flight: a deferred
   * event that has not failed yet, else the one deferred longest (so probes rotate over a broken
   * path's events rather than repeat one). Without `room` it is left for the next take.
   */
  #probe(t: Target, now: number, room: boolean): DeliveryAttempt | undefined {
    const down = t.health;
    if (down.kind !== 'down' || down.probe !== undefined) return undefined;
    if (now < down.probeAt) {
      this.#armProbe(t);
      return undefined;
    }
    const e = first(down.fresh) ?? first(down.failed);
    if (e === undefined) return undefined;
    if (!room) {
      this.#armProbe(t);
      return undefined;
    }
    this.#undefer(e);
    down.probe = e;
    return this.#start(e, now);
  }

  /** Makes sure a target that is down, with deferred events and no probe in flight, wakes at its probe time. */
  #armProbe(t: Target): void {
    const down = t.health;
    if (down.kind !== 'down' || down.probe !== undefined || down.wakeAt === down.probeAt) return;
    if (down.fresh.size === 0 && down.failed.size === 0) return;
    t.version++;
    down.wakeAt = down.probeAt;
    this.#wakeUps.push({ at: down.probeAt, createdAt: 0, id: '', version: t.version, target: t });
  }

  /** A deferred event leaves its target's waiting sets (its target is down: only a target down defers). */
  #undefer(e: Entry): void {
    e.deferred = false;
    const down = e.target.health;
    if (down.kind === 'down') {
      down.fresh.delete(e);
      down.failed.delete(e);
    }
  }

  /** A success: the target is up with a fresh health window, and what was deferred for it is due now (events in their own backoff keep it). */
  #targetUp(t: Target): void {
    const down = t.health;
    if (down.kind === 'up') return;
    t.health = UP;
    t.version++;
    t.recent.clear();
    t.recentFailed = 0;
    for (const set of [down.fresh, down.failed]) {
      for (const e of set) {
        e.deferred = false;
        this.#schedule(e); // pending at its own due time, passed
      }
      set.clear();
    }
  }

  #fail(e: Entry, error: string, connect: boolean, now: number): SettleOutcome {
    e.lastError = error;
    const t = e.target;
    t.lastError = error;
    recordResult(t, e.event.id, true, this.#window);
    this.#health(t, e, connect, now);
    const at = now + backoffDelay(this.#backoff, e.attempts);
    let outcome: SettleOutcome;
    if (at > e.createdAt + this.#maxAge) {
      this.#finish(e, { kind: 'dead-lettered', event: e.event, attempts: e.attempts, at: now, lastError: error }, now);
      outcome = { kind: 'dead-lettered' };
    } else {
      e.state = { kind: 'pending', dueAt: at };
      this.#schedule(e);
      outcome = { kind: 'retry', at };
    }
    this.#armProbe(t);
    return outcome;
  }

  /** The target's health after a failed attempt of `e`: down by rule (a) or (b), or, when down already, its next probe later. */
  #health(t: Target, e: Entry, connect: boolean, now: number): void {
    const h = t.health;
    if (h.kind === 'up') {
      if (!goesDown(t, connect, this.#minEvents, this.#failureShare)) return;
      // A receiver that answers may have only some paths broken: its first probe goes at once (an
      // event that has not failed yet tells in one round trip). One it cannot be connected to waits.
      const probeAt = connect ? now + this.#probeDelay(1) : now;
      t.health = { kind: 'down', reason: connect ? 'connect' : 'failing', failures: 1, probeAt, probe: undefined, fresh: new Set(), failed: new Set(), wakeAt: undefined };
      return;
    }
    if (connect) h.reason = 'connect';
    if (h.probe === e) {
      h.probe = undefined;
      h.failures += 1;
      h.probeAt = now + this.#probeDelay(h.failures);
    }
  }

  /** Wait before the next probe of a target down, after its `failures`-th failed probe: the event backoff up to the probe interval. */
  #probeDelay(failures: number): number {
    return Math.min(this.#probeInterval, backoffDelay(this.#backoff, failures));
  }

  /** Records when the entry's current state needs looking at again (a held entry needs nothing). */
  #schedule(e: Entry): void {
    e.version++;
    if (e.state.kind === 'held') return;
    const at = e.state.kind === 'pending' ? e.state.dueAt : e.state.deadline;
    this.#wakeUps.push({ at, createdAt: e.createdAt, id: e.event.id, version: e.version });
  }

  #finish(e: Entry, outcome: DeliveryOutcome, now: number): void {
    const t = e.target;
    this.#entries.delete(e.event.id);
    t.entries.delete(e);
    if (e.deferred) this.#undefer(e);
    e.version++;
    this.#finished.set(e.event.id, outcome.at);
    this.#outcomes.push(outcome);
    if (t.health.kind === 'down' && t.health.probe === e) {
      // A probe dead-lettered without an answer: the next one may go at the probe time.
      t.health.probe = undefined;
      this.#armProbe(t);
    }
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

function first<T>(set: Set<T>): T | undefined {
  for (const x of set) return x;
  return undefined;
}
