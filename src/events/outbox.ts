/**
 * The delivery outbox: at-least-once delivery of every event to its configured URL, as a pure
 * state machine. The host (the server issue) does the HTTP: it asks {@link Outbox.take} what to
 * send now, signs and POSTs each attempt, reports the result with {@link Outbox.settle}, and sets
 * one timer for {@link Outbox.nextWakeAt}. Time is a number passed in; jitter comes from the
 * injected {@link RandomSource}.
 *
 * Per event:
 *
 *   pending(dueAt) --take--> in-flight(attempt, deadline) --settle ok--------------> delivered
 *        ^                        |  settle failure / deadline passed (timeout)
 *        |                        v
 *        +---- backoff ----- next try within maxAge? ---- no ----------------------> dead-lettered
 *
 * Guarantees (checked by the model-based test): an enqueued event is never lost (it is pending,
 * in flight, or has its final outcome); its final outcome is produced exactly once, whatever the
 * order of failures, timeouts, late results and restarts; delivered only after a success was
 * reported. Ordering between events, also to one target, is not promised: receivers deduplicate and
 * order by `event_id` and payload times.
 */
import { Heap } from 'mnemonist';
import { ArgumentError } from '../core/errors.js';
import { SnapshotError } from '../core/errors.js';
import { problem, type Problem } from '../core/problems.js';
import { requireInteger } from './ids.js';
import { randomUnit, type RandomSource } from './random.js';

/** The webhook family of an event, i.e. which configured URL (spec 2.5) it goes to. */
export type WebhookFamily = 'report' | 'attendance' | 'hsm' | 'campaign' | 'sms-dlr' | 'sms-mo';

/** One event to deliver. */
export interface OutboxEvent {
  /** The payload's `event_id`; also the `webhook-id` header and the outbox's dedupe key. */
  readonly id: string;
  readonly family: WebhookFamily;
  /** Target URL (from the company's configuration at enqueue time). */
  readonly url: string;
  /** The JSON body text, exactly as it will be signed and sent. */
  readonly body: string;
  /** Company whose secret signs the delivery. */
  readonly companyId: number;
}

/** Options of {@link Outbox}. */
export interface OutboxOptions {
  /** Jitter source. */
  readonly random: RandomSource;
  /**
   * Backoff before the 2nd attempt, in ms; then multiplied by `backoffFactor` per failure.
   * @default 5_000
   */
  readonly initialDelayMs?: number;
  /** Growth of the backoff per failed attempt. @default 2 */
  readonly backoffFactor?: number;
  /** Ceiling of one backoff, in ms. @default 3_600_000 (1 hour) */
  readonly maxDelayMs?: number;
  /**
   * Age (from enqueue) after which an event that still failed is dead-lettered instead of retried.
   * @default 86_400_000 (24 hours)
   */
  readonly maxAgeMs?: number;
  /**
   * How long an attempt may stay unanswered before it counts as failed (timeout) and is retried.
   * Also covers a host restart: attempts in flight at the crash time out and go again.
   * @default 30_000
   */
  readonly attemptTimeoutMs?: number;
  /**
   * How long the id of a finished event is remembered, so a re-enqueue of it is a duplicate.
   * @default the `maxAgeMs`
   */
  readonly rememberFinishedMs?: number;
}

/** One attempt the host should make now. */
export interface DeliveryAttempt {
  readonly event: OutboxEvent;
  /** 1 for the first attempt. Pass it back to {@link Outbox.settle}. */
  readonly attempt: number;
  /** When the attempt counts as timed out; the HTTP timeout should be shorter. */
  readonly deadline: number;
}

/** What the host reports for an attempt. */
export type AttemptResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** Short description for the dead-letter report: `HTTP 503`, `ECONNREFUSED`, `timeout`. */
      readonly error: string;
    };

/** The result of an HTTP response: any 2xx is a success, anything else a failure to retry. */
export function httpAttemptResult(status: number): AttemptResult {
  return status >= 200 && status <= 299 ? { ok: true } : { ok: false, error: `HTTP ${status}` };
}

/** A final outcome, produced once per event by {@link Outbox.takeOutcomes}. */
export type DeliveryOutcome =
  | { readonly kind: 'delivered'; readonly event: OutboxEvent; readonly attempts: number; readonly at: number }
  | {
      readonly kind: 'dead-lettered';
      readonly event: OutboxEvent;
      readonly attempts: number;
      readonly at: number;
      /** The last failure seen. */
      readonly lastError: string;
    };

/** Answer of {@link Outbox.enqueue}. */
export type EnqueueOutcome = { readonly kind: 'enqueued' } | { readonly kind: 'duplicate' };

/** Answer of {@link Outbox.settle}. */
export type SettleOutcome =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'retry'; readonly at: number }
  | { readonly kind: 'dead-lettered' }
  /** Nothing changed: the event is unknown or finished, or the failure is of an attempt already timed out. */
  | { readonly kind: 'ignored'; readonly reason: 'unknown-event' | 'already-final' | 'stale-attempt' };

type EntryState =
  | { readonly kind: 'pending'; readonly dueAt: number }
  | { readonly kind: 'in-flight'; readonly deadline: number };

interface Entry {
  readonly event: OutboxEvent;
  readonly createdAt: number;
  /** Attempts started so far. */
  attempts: number;
  state: EntryState;
  lastError: string | undefined;
  /** Bumped at every state change; wake-ups of an older state are dropped when they surface. */
  version: number;
}

/** A moment the outbox must look at an entry again: its due time, or its attempt's deadline. */
interface WakeUp {
  readonly at: number;
  readonly createdAt: number;
  readonly id: string;
  readonly version: number;
}

/** Serialisable outbox state (JSON-safe). */
export interface OutboxSnapshot {
  readonly version: 1;
  readonly entries: readonly {
    readonly event: OutboxEvent;
    readonly createdAt: number;
    readonly attempts: number;
    readonly state: EntryState;
    readonly lastError: string | null;
  }[];
  /** Ids of finished events and when they finished. */
  readonly finished: readonly (readonly [string, number])[];
  /** Outcomes produced but not yet taken by the host. */
  readonly outcomes: readonly DeliveryOutcome[];
}

/** The outbox state machine. */
export class Outbox {
  readonly #random: RandomSource;
  readonly #initial: number;
  readonly #factor: number;
  readonly #maxDelay: number;
  readonly #maxAge: number;
  readonly #timeout: number;
  readonly #remember: number;
  readonly #entries = new Map<string, Entry>();
  /** Due times and deadlines, earliest first: `take` and `nextWakeAt` never scan the entries. */
  readonly #wakeUps = new Heap<WakeUp>((a, b) => a.at - b.at || a.createdAt - b.createdAt);
  /** Finished ids in the order they finished (time never goes back), so forgetting is from the front. */
  readonly #finished = new Map<string, number>();
  #outcomes: DeliveryOutcome[] = [];

  constructor(options: OutboxOptions) {
    this.#random = options.random;
    this.#initial = options.initialDelayMs ?? 5_000;
    this.#factor = options.backoffFactor ?? 2;
    this.#maxDelay = options.maxDelayMs ?? 3_600_000;
    this.#maxAge = options.maxAgeMs ?? 86_400_000;
    this.#timeout = options.attemptTimeoutMs ?? 30_000;
    this.#remember = options.rememberFinishedMs ?? this.#maxAge;
    requireInteger('Outbox(options.initialDelayMs)', this.#initial, 0);
    requireInteger('Outbox(options.maxDelayMs)', this.#maxDelay, 0);
    requireInteger('Outbox(options.maxAgeMs)', this.#maxAge, 0);
    requireInteger('Outbox(options.attemptTimeoutMs)', this.#timeout, 1);
    requireInteger('Outbox(options.rememberFinishedMs)', this.#remember, 0);
    if (!(this.#factor >= 1) || !Number.isFinite(this.#factor)) {
      throw new ArgumentError('Outbox(options.backoffFactor)', 'a finite number from 1 up', String(this.#factor));
    }
  }

  /** Adds an event, due at once. Idempotent by event id (pending, in flight, or recently finished). */
  enqueue(event: OutboxEvent, now: number): EnqueueOutcome {
    if (this.#entries.has(event.id) || this.#finished.has(event.id)) return { kind: 'duplicate' };
    const entry: Entry = { event, createdAt: now, attempts: 0, state: { kind: 'pending', dueAt: now }, lastError: undefined, version: 0 };
    this.#entries.set(event.id, entry);
    this.#schedule(entry);
    return { kind: 'enqueued' };
  }

  /**
   * The attempts to make now (due pending events, earliest first, at most `limit`), each marked in
   * flight until its deadline. First times out attempts whose deadline has passed.
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
      e.attempts += 1;
      const deadline = now + this.#timeout;
      e.state = { kind: 'in-flight', deadline };
      this.#schedule(e);
      out.push({ event: e.event, attempt: e.attempts, deadline });
    }
    return out;
  }

  /**
   * Reports the result of an attempt. A success of any attempt of an unfinished event delivers it
   * (a late answer to a timed-out attempt still proves delivery); a failure counts only for the
   * attempt in flight.
   */
  settle(eventId: string, attempt: number, result: AttemptResult, now: number): SettleOutcome {
    const e = this.#entries.get(eventId);
    if (!e) return { kind: 'ignored', reason: this.#finished.has(eventId) ? 'already-final' : 'unknown-event' };
    if (attempt < 1 || attempt > e.attempts) return { kind: 'ignored', reason: 'stale-attempt' };
    if (result.ok) {
      this.#finish(e, { kind: 'delivered', event: e.event, attempts: e.attempts, at: now });
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

  /** Events not finished yet (pending or in flight). */
  get size(): number {
    return this.#entries.size;
  }

  /** The state of an event, for inspection. */
  stateOf(eventId: string): 'pending' | 'in-flight' | 'finished' | undefined {
    const e = this.#entries.get(eventId);
    if (e) return e.state.kind;
    return this.#finished.has(eventId) ? 'finished' : undefined;
  }

  /** Serialisable state: pending and in-flight events, finished ids, and untaken outcomes. */
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
   */
  static restore(snapshot: OutboxSnapshot, options: OutboxOptions): Outbox {
    const problems = snapshotProblems(snapshot);
    if (problems.length > 0) throw new SnapshotError('Cannot restore the outbox snapshot', problems);
    const o = new Outbox(options);
    for (const e of snapshot.entries) {
      const entry: Entry = { event: e.event, createdAt: e.createdAt, attempts: e.attempts, state: e.state, lastError: e.lastError ?? undefined, version: 0 };
      o.#entries.set(e.event.id, entry);
      o.#schedule(entry);
    }
    for (const [id, at] of [...snapshot.finished].sort((a, b) => a[1] - b[1])) o.#finished.set(id, at);
    o.#outcomes = [...snapshot.outcomes];
    return o;
  }

  /** Backoff before attempt `attempts + 1`: exponential, capped, with "equal jitter" (half fixed, half random). */
  #delay(attempts: number): number {
    const raw = this.#initial * this.#factor ** Math.max(0, attempts - 1);
    // After ~1,000 attempts factor ** n overflows; 0 x Infinity would be NaN: cap first.
    const base = Number.isFinite(raw) ? Math.min(this.#maxDelay, raw) : this.#maxDelay;
    return Math.round(base / 2 + (randomUnit(this.#random) * base) / 2);
  }

  #fail(e: Entry, error: string, now: number): SettleOutcome {
    e.lastError = error;
    const at = now + this.#delay(e.attempts);
    if (at > e.createdAt + this.#maxAge) {
      this.#finish(e, { kind: 'dead-lettered', event: e.event, attempts: e.attempts, at: now, lastError: error });
      return { kind: 'dead-lettered' };
    }
    e.state = { kind: 'pending', dueAt: at };
    this.#schedule(e);
    return { kind: 'retry', at };
  }

  /** Records when the entry's current state needs looking at again. */
  #schedule(e: Entry): void {
    e.version++;
    const at = e.state.kind === 'pending' ? e.state.dueAt : e.state.deadline;
    this.#wakeUps.push({ at, createdAt: e.createdAt, id: e.event.id, version: e.version });
  }

  #finish(e: Entry, outcome: DeliveryOutcome): void {
    this.#entries.delete(e.event.id);
    this.#finished.set(e.event.id, outcome.at);
    this.#outcomes.push(outcome);
  }

  /** Forgets finished ids older than `rememberFinishedMs`, oldest first. */
  #forget(now: number): void {
    for (const [id, at] of this.#finished) {
      if (at + this.#remember >= now) break;
      this.#finished.delete(id);
    }
  }

}

function snapshotProblems(s: OutboxSnapshot): Problem[] {
  const out: Problem[] = [];
  if (typeof s !== 'object' || s === null) return [problem('$', 'an outbox snapshot object', s)];
  if (s.version !== 1) out.push(problem('$.version', '1', s.version));
  if (!Array.isArray(s.entries)) out.push(problem('$.entries', 'an array', s.entries));
  if (!Array.isArray(s.finished)) out.push(problem('$.finished', 'an array', s.finished));
  if (!Array.isArray(s.outcomes)) out.push(problem('$.outcomes', 'an array', s.outcomes));
  if (out.length > 0) return out;
  s.entries.forEach((e, i) => {
    if (typeof e?.event?.id !== 'string') out.push(problem(`$.entries[${i}].event.id`, 'a string', e?.event?.id));
    if (!Number.isSafeInteger(e?.attempts) || e.attempts < 0) out.push(problem(`$.entries[${i}].attempts`, 'a non-negative integer', e?.attempts));
    const k = e?.state?.kind;
    if (k !== 'pending' && k !== 'in-flight') out.push(problem(`$.entries[${i}].state.kind`, '"pending" or "in-flight"', k));
  });
  return out;
}
