/**
 * The epoch checks a lease call may need first (epoch.ts has the marker and its script): the
 * fleet's marker read again when due, and for numbers whose state the last answer found missing,
 * of another epoch, or older than this instance saw, the decision whether the next call may create
 * or adopt it. The calls of one flush (one per slot on a cluster) share one check.
 */
import type { EpochGuard } from './epoch.js';
import type { RedisCapacityEvent } from './health.js';
import type { NumberState } from './number-state.js';
import type { StoreSettings } from './redis-store-options.js';
import { withTimeout } from './with-timeout.js';

interface Deps {
  readonly guard: EpochGuard;
  readonly settings: StoreSettings;
  /** Every number the store opened: those seen alive go into the register with a check. */
  readonly states: readonly NumberState[];
  /** A round trip to Redis was made (the store's metrics). */
  readonly onRoundTrip: () => void;
  /** Numbers found lost or rolled back. */
  readonly onReset: (event: RedisCapacityEvent) => void;
}

export class EpochChecks {
  readonly #d: Deps;

  constructor(deps: Deps) {
    this.#d = deps;
  }

  /**
   * Reads the epoch marker; for numbers whose state the last answer found missing, of another epoch,
   * or older than this instance saw, decides how the next call may create or adopt it.
   */
  async before(numbers: NumberState[]): Promise<void> {
    const ask = numbers.filter((st) => st.check.kind === 'to-check' && st.check.found === 'no-state');
    const r = await withTimeout(this.#for(ask), this.#d.settings.callTimeout);
    const at = this.#d.settings.clock.now();
    const missing: string[] = [];
    const rolledBack: string[] = [];
    const since = this.#d.guard.epoch?.since ?? Infinity;
    for (const st of numbers) {
      if (st.check.kind !== 'to-check') continue;
      if (st.check.found === 'no-state') {
        // Lost when seen alive in this epoch within a state's lifetime: by any instance (the
        // register), or by this one (a state written after Redis' last snapshot is in no register).
        const lost = r.lost.get(st.phone) === true || (st.seenT >= 0 && st.seenT >= since && r.now - st.seenT < this.#d.guard.life);
        if (lost) missing.push(st.phone);
        st.check = { kind: 'confirmed', confirm: lost ? String(r.now) : '0' };
      } else if (st.check.found === 'other-epoch') {
        st.check = { kind: 'confirmed', confirm: '0' };
      } else {
        rolledBack.push(st.phone);
        st.check = { kind: 'confirmed', confirm: String(r.now) };
      }
    }
    if (missing.length > 0) this.#d.onReset({ type: 'redis-reset', at, scope: 'numbers', phones: missing, reason: 'missing', lostAt: r.now });
    if (rolledBack.length > 0) this.#d.onReset({ type: 'redis-reset', at, scope: 'numbers', phones: rolledBack, reason: 'rolled-back', lostAt: r.now });
  }

  /** The check being gathered: the calls of one flush (one per slot on a cluster) share one. */
  #batch: { readonly ask: Set<NumberState>; done: Promise<{ now: number; lost: Map<string, boolean> }> } | undefined;
  #running: Promise<unknown> = Promise.resolve();

  /** One epoch check for `ask` and the calls that join it before it is sent (after the check on its way, if any). */
  #for(ask: readonly NumberState[]): Promise<{ now: number; lost: Map<string, boolean> }> {
    let batch = this.#batch;
    if (batch === undefined) {
      const created = { ask: new Set<NumberState>(), done: undefined as unknown as Promise<{ now: number; lost: Map<string, boolean> }> };
      created.done = this.#running.then(() => {
        if (this.#batch === created) this.#batch = undefined;
        return this.#run([...created.ask]);
      });
      // Only the chain of checks: the failure itself reaches every caller of this batch (`done`).
      this.#running = created.done.catch(() => undefined);
      this.#batch = batch = created;
    }
    for (const st of ask) batch.ask.add(st);
    return batch.done;
  }

  async #run(ask: readonly NumberState[]): Promise<{ now: number; lost: Map<string, boolean> }> {
    const at = this.#d.settings.clock.now();
    // The register learns which numbers' states exist, at most twice a bucket for each.
    const alive: NumberState[] = [];
    for (const st of this.#d.states) {
      if (st.heard !== undefined && st.heard.at > st.registeredAt + this.#d.settings.bucketMs / 2) alive.push(st);
      if (alive.length === 1000) break;
    }
    this.#d.onRoundTrip();
    const r = await this.#d.guard.check(
      this.#d.settings.clockTime ? at : '',
      at,
      ask.map((st) => st.phone),
      alive.map((st) => [st.phone, st.seenT] as const),
    );
    for (const st of alive) st.registeredAt = st.heard?.at ?? st.registeredAt;
    return { now: r.now, lost: new Map(ask.map((st, k) => [st.phone, r.lost[k] === true])) };
  }
}
