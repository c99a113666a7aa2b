/**
 * A receiver (a URL's origin) as the outbox (outbox.ts) sees it: its unfinished events, its health
 * window (the latest result of its last distinct events, which rule (b) reads), and its health: up,
 * or down with what only a receiver that is down has (why, its probe, the events waiting for it).
 */
import type { EntryState, OutboxEvent, OutboxTargetView } from './outbox-types.js';

/** An event the outbox holds until its final outcome. */
export interface Entry {
  readonly event: OutboxEvent;
  readonly createdAt: number;
  readonly target: Target;
  /** Key of its order chain (URL and order key), when the event has an order key. */
  readonly chain: string | undefined;
  /** Attempts started so far. */
  attempts: number;
  /** Pending with `dueAt` its own due time (passed, while deferred). */
  state: EntryState;
  lastError: string | undefined;
  /**
   * Due, but deferred because its target is down: in the down target's waiting sets, its only
   * wake-up its expiry (created + maxAge).
   */
  deferred: boolean;
  /** Bumped at every state change; wake-ups of an older state are dropped when they surface. */
  version: number;
}

/** A receiver that is down (rule (a) or (b)): what it has only while down. */
export interface Down {
  readonly kind: 'down';
  /** Why: no connection could be opened, or most of its recent events failed. */
  reason: 'connect' | 'failing';
  /** Failed probes, the failure that made it down included (grows the probe interval). */
  failures: number;
  /** When the next probe may go. */
  probeAt: number;
  /** The probe in flight, if any. */
  probe: Entry | undefined;
  /** Deferred events that have not failed yet / that failed before, each in the order they were deferred. */
  readonly fresh: Set<Entry>;
  readonly failed: Set<Entry>;
  /** The probe wake-up armed (its time), if any. */
  wakeAt: number | undefined;
}

/** Up, or down with its probe and the events deferred for it. */
export type Health = { readonly kind: 'up' } | Down;

export const UP: Health = Object.freeze({ kind: 'up' });

export interface Target {
  /** Its unfinished events. */
  readonly entries: Set<Entry>;
  health: Health;
  /** Health window: the latest result (failed?) of the last distinct events attempted there, oldest first. */
  readonly recent: Map<string, boolean>;
  /** Those of `recent` that failed. */
  recentFailed: number;
  lastError: string;
  /** Bumped when it comes up or arms a probe wake-up: wake-ups of an older version are dropped. */
  version: number;
}

export function newTarget(): Target {
  return { entries: new Set(), health: UP, recent: new Map(), recentFailed: 0, lastError: '', version: 0 };
}

/** Down after a failure: `connect` (rule (a)), or more than `share` of at least `minEvents` in the health window failed (rule (b)). */
export function goesDown(t: Target, connect: boolean, minEvents: number, share: number): boolean {
  return connect || (t.recent.size >= minEvents && t.recentFailed > share * t.recent.size);
}

/** Records an event's latest result in its target's health window of `window` events. */
export function recordResult(t: Target, id: string, failed: boolean, window: number): void {
  const before = t.recent.get(id);
  if (before !== undefined) {
    t.recent.delete(id);
    if (before) t.recentFailed--;
  }
  t.recent.set(id, failed);
  if (failed) t.recentFailed++;
  if (t.recent.size > window) {
    const [oldest, oldestFailed] = t.recent.entries().next().value as [string, boolean];
    t.recent.delete(oldest);
    if (oldestFailed) t.recentFailed--;
  }
}

/** Whether a dashboard shows the target: it has unfinished events, is down, or has failures in its health window. */
export function worthShowing(t: Target): boolean {
  return t.entries.size > 0 || t.health.kind === 'down' || t.recentFailed > 0;
}

/** The target as {@link Outbox.targets} shows it at `now`: O(its unfinished events). */
export function targetView(origin: string, t: Target, now: number): OutboxTargetView {
  const pendingByCompany = new Map<number, number>();
  const counts = { due: 0, retrying: 0, inFlight: 0, held: 0 };
  for (const e of t.entries) {
    pendingByCompany.set(e.event.companyId, (pendingByCompany.get(e.event.companyId) ?? 0) + 1);
    counts[stage(e, now)]++;
  }
  const h = t.health;
  const down = h.kind === 'down';
  return {
    origin,
    pending: t.entries.size,
    pendingByCompany,
    down,
    downReason: down ? h.reason : null,
    failures: t.recentFailed,
    lastError: t.recentFailed > 0 || down ? t.lastError : null,
    probeAt: down ? h.probeAt : null,
    ...counts,
  };
}

/** Where an event stands for the view's counts. */
function stage(e: Entry, now: number): 'due' | 'retrying' | 'inFlight' | 'held' {
  const s = e.state;
  if (s.kind === 'held') return 'held';
  if (s.kind === 'in-flight') return 'inFlight';
  if (e.deferred || s.dueAt <= now) return 'due';
  // Enqueued with a due time to come (a chain's next, restored) counts as due.
  return e.attempts > 0 ? 'retrying' : 'due';
}

/** The receiver a URL goes to: its origin (scheme, host, port); the URL itself when it does not parse. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
