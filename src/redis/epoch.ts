/**
 * What a {@link RedisStore} knows of the fleet's epoch (scripts/epoch.ts): the marker's id, when it
 * was created, and the loss time it records when Redis came back without its state. The store checks
 * it at its first lease call, every `epochCheckMs`, and whenever a lease call finds a number's
 * state missing, of another epoch or older than it saw; a change is reported as `redis-reset`.
 */
import { randomUUID } from 'node:crypto';
import type { RedisCapacityEvent } from './health.js';
import { runScript, script, type RedisScriptClient } from './script-runner.js';
import { EPOCH_SCRIPT } from './scripts/epoch.js';

const EPOCH = script(EPOCH_SCRIPT);

/** The fleet's epoch as a store last read it. */
export interface RedisEpoch {
  /** Random id of the marker: a new id means Redis lost its state (or was new). */
  readonly id: string;
  /** When the marker was created (Redis time, ms). */
  readonly since: number;
  /**
   * Usage before this time (Redis time, ms) is unknown: Redis came back without it, and the lease
   * script takes every window of every number as fully used then. Undefined when nothing was lost.
   */
  readonly lostAt: number | undefined;
}

/** What one check answered. */
export interface EpochCheck {
  /** Redis time of the check (or the clock's, with `timeSource: 'clock'`). */
  readonly now: number;
  /** Per phone asked about: true when its state existed and is gone (lost), false when new. */
  readonly lost: readonly boolean[];
}

export class EpochGuard {
  readonly #client: RedisScriptClient;
  readonly #keys: readonly [string, string];
  readonly #life: number;
  readonly #emit: (e: RedisCapacityEvent) => void;
  #known: string;
  #epoch: RedisEpoch | undefined;
  #checkedAt = -Infinity;

  /**
   * @param known the id the host last saw (`knownEpoch`), '' for none
   * @param life a number's state lifetime in ms (a state seen alive within it cannot have expired)
   */
  constructor(client: RedisScriptClient, prefix: string, known: string, life: number, emit: (e: RedisCapacityEvent) => void) {
    this.#client = client;
    this.#keys = [`${prefix}{epoch}`, `${prefix}{epoch}:numbers`];
    this.#known = known;
    this.#life = life;
    this.#emit = emit;
  }

  get epoch(): RedisEpoch | undefined {
    return this.#epoch;
  }

  /** A number's state lifetime in ms: a state seen alive within it cannot have expired since. */
  get life(): number {
    return this.#life;
  }

  /** The id to stamp on states ('' before the first check). */
  get id(): string {
    return this.#epoch?.id ?? '';
  }

  /** The loss time to apply to every number, 0 for none. */
  get lostAt(): number {
    return this.#epoch?.lostAt ?? 0;
  }

  /** True when the epoch is unknown or was last checked `periodMs` or more before `now` (clock ms). */
  due(now: number, periodMs: number): boolean {
    return this.#epoch === undefined || now - this.#checkedAt >= periodMs;
  }

  /**
   * Reads (or creates) the marker, asks whether the states of `ask` were lost, and refreshes the
   * register with `alive` (phone and the Redis time its state was seen). `time` is the override for
   * the script ('' for Redis `TIME`); `at` is the store's clock, for events and for `due`.
   */
  async check(time: number | '', at: number, ask: readonly string[], alive: readonly (readonly [string, number])[]): Promise<EpochCheck> {
    const reply = (await runScript(this.#client, EPOCH, this.#keys, [time, this.#known, randomUUID(), this.#life, ask.length, ...ask, ...alive.flat()])) as unknown[];
    const now = Number(reply[0]);
    const id = String(reply[1]);
    const since = Number(reply[2]);
    const lost = Number(reply[3]);
    const previous = this.#epoch;
    const epoch: RedisEpoch = { id, since, lostAt: lost >= 0 ? lost : undefined };
    this.#epoch = epoch;
    this.#checkedAt = at;
    if (previous?.id !== id || previous.lostAt !== epoch.lostAt) {
      this.#emit({ type: 'epoch', at, epoch: id, since, lostAt: epoch.lostAt });
    }
    if (this.#known !== '' && this.#known !== id) {
      this.#emit({ type: 'redis-reset', at, scope: 'fleet', epoch: id, previousEpoch: this.#known, lostAt: epoch.lostAt ?? since });
    }
    this.#known = id;
    return { now, lost: ask.map((_, k) => Number(reply[4 + k]) === 1) };
  }
}
