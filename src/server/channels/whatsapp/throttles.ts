/**
 * How long a throttled number rests, per number: the table's rest (1 s for 130429) the first
 * time, doubled on each consecutive throttle of the number (1 s, 2 s, 4 s … at most 60 s), back to
 * the start after a success. A throttling answer's `Retry-After` gives the rest instead (and still
 * counts as a throttle).
 *
 * Consecutive means after the previous rest: sends that were already on their way when the
 * number was throttled (up to its whole in-flight window) come back throttled too, and they are
 * the same throttle, not new ones: each gets what is left of the rest, with no escalation. Only a
 * send that started once the rest was over and is throttled again escalates; only a send that
 * started once the rest was over and is accepted resets. A number throttled again more than the
 * longest rest after its last rest ended starts over too.
 */

/** The longest rest an escalation reaches. */
export const MAX_THROTTLE_REST_MS = 60_000;

interface NumberThrottle {
  /** Consecutive throttles (escalation steps taken). */
  level: number;
  /** Clock time the current rest ends. */
  restUntil: number;
}

export class Throttles {
  readonly #numbers = new Map<string, NumberThrottle>();

  constructor(readonly maxRestMs: number = MAX_THROTTLE_REST_MS) {}

  /**
   * A send of `key` that started at `startedAt` was throttled, answered at `now`: the rest the
   * number takes from now. `baseMs` is the table's rest, `retryAfterMs` the answer's own word.
   */
  throttled(key: string, startedAt: number, now: number, baseMs: number, retryAfterMs?: number): number {
    let state = this.#numbers.get(key);
    if (state !== undefined && state.level > 0 && startedAt < state.restUntil) {
      // On its way before the rest began: the same throttle.
      const rest = retryAfterMs ?? Math.max(0, state.restUntil - now);
      state.restUntil = Math.max(state.restUntil, now + rest);
      return rest;
    }
    if (state === undefined) this.#numbers.set(key, (state = { level: 0, restUntil: now }));
    else if (now - state.restUntil > this.maxRestMs) state.level = 0;
    state.level++;
    const escalated = Math.min(Math.max(baseMs, this.maxRestMs), baseMs * 2 ** Math.min(state.level - 1, 30));
    const rest = retryAfterMs ?? escalated;
    state.restUntil = now + rest;
    return rest;
  }

  /** A send of `key` that started at `startedAt` was accepted: a send after the rest resets it. */
  succeeded(key: string, startedAt: number): void {
    const state = this.#numbers.get(key);
    if (state !== undefined && startedAt >= state.restUntil) this.#numbers.delete(key);
  }

  /** Consecutive throttles of `key` (0 when it has none now). */
  level(key: string): number {
    return this.#numbers.get(key)?.level ?? 0;
  }

  /** Numbers with a throttle remembered. */
  get size(): number {
    return this.#numbers.size;
  }
}
