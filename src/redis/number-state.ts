/**
 * What `RedisStore` keeps for one number besides its tokens (number-ledger.ts): its limits, where
 * its next lease call stands, what Redis last said of it, and the demand a lease is sized from.
 *
 * Each fact that has states is one field with a union, so no combination that cannot happen can be
 * written: `call` (where the next lease call is), `need` (what the engine is owed), `check` (what
 * the next call may assume of the number's state in Redis) and `heard` (Redis' latest answer,
 * none before the first). The transitions of `need` are the functions below (number-state.test.ts
 * holds them to a model).
 */
import type { NumberLimits } from '../core/limits/store.js';
import { keySlot } from './key-slot.js';
import { NumberLedger } from './number-ledger.js';
import type { LeaseRefusal } from './scripts/lease.js';

/**
 * What the engine is owed for the number: nothing; tokens (it wanted more than the balance since
 * the last call); or tokens and a wake-up (it was told to wait: `onCapacity` names the number when
 * tokens arrive). A parked engine is always owed tokens too.
 */
export type Need = 'none' | 'short' | 'parked';

/**
 * What the next lease call may assume of the number's state in Redis:
 * - `expected`: Redis holds it (or no call found otherwise yet): the call sends `confirm` ''.
 * - `to-check`: the last answer wrote nothing, having found no state, one of another epoch, or one
 *   older than this instance saw: the epoch is checked (epoch-checks.ts) before the next call.
 * - `confirmed`: checked: the next call may create or adopt the state; `confirm` is the lease
 *   script's argument ('0', or the time before which usage is unknown).
 */
export type StateCheck = { readonly kind: 'expected' } | { readonly kind: 'to-check'; readonly found: LeaseRefusal } | { readonly kind: 'confirmed'; readonly confirm: string };

/** The check of every number whose state Redis holds (one object for all). */
export const EXPECTED: StateCheck = Object.freeze({ kind: 'expected' });

/** Redis' latest answer that found the number's state. */
export interface Heard {
  /** Clock time of the answer. */
  readonly at: number;
  /** Tokens Redis had left for everyone. */
  readonly left: number;
  /** Unspent tokens the other instances said they hold. */
  readonly others: number;
  /** What this instance told Redis it holds (its balance then, with the grant). */
  readonly told: number;
}

export interface NumberState {
  readonly phone: string;
  readonly stateKey: string;
  perHour: number;
  per24h: number;
  perSecond: number;
  /** The tokens this instance holds for the number. */
  readonly tokens: NumberLedger;
  /** Tokens the engine asked for since the last lease call. */
  asked: number;
  /** Redis Cluster slot of the number's keys. */
  readonly slot: number;
  /** The latest grantedAt Redis answered for the number (-1 before): a state older than it was rolled back. */
  seenT: number;
  check: StateCheck;
  /** Redis' latest answer that found the state; undefined until one did. */
  heard: Heard | undefined;
  /** Clock time of the latest register refresh for the number (epoch-checks.ts). */
  registeredAt: number;
  demand: number;
  lastCallAt: number;
  size: number;
  /** Where the number's next lease call is: none pending, queued for the next flush, or on its way. */
  call: 'idle' | 'queued' | 'in-flight';
  /** Lease id of a call that failed: reused so a call that did run is not charged twice. */
  retryId: string | undefined;
  /** Do not call for this number before this clock time (Redis said so, or Redis is down). */
  notBefore: number;
  need: Need;
  /** The balance sent with the call on its way (`heard.told` once answered, with the grant). */
  telling: number;
}

/** A number the store has just opened: nothing held, nothing asked, Redis not asked yet. */
export function numberState(phone: string, stateKey: string, limits: NumberLimits, now: number): NumberState {
  return {
    phone,
    stateKey,
    perHour: limits.perHour,
    per24h: limits.per24h,
    perSecond: limits.perSecond ?? 0,
    tokens: new NumberLedger(),
    asked: 0,
    demand: 0,
    lastCallAt: now,
    size: 0,
    call: 'idle',
    retryId: undefined,
    notBefore: 0,
    telling: 0,
    need: 'none',
    slot: keySlot(`{${phone}}`),
    seenT: -1,
    check: EXPECTED,
    heard: undefined,
    registeredAt: -Infinity,
  };
}

/** The lease script's `confirm` argument for the number's next call. */
export function confirmArgument(check: StateCheck): string {
  return check.kind === 'confirmed' ? check.confirm : '';
}

/** The engine got fewer tokens than it asked for: it is owed tokens (a parked engine already is). */
export function fellShort(st: NumberState): void {
  if (st.need === 'none') st.need = 'short';
}

/** The engine was told to wait for tokens: it is owed them, and a wake-up when they come. */
export function park(st: NumberState): void {
  st.need = 'parked';
}

/**
 * A lease call answered with `met` (everything wanted was granted) and the balance after it: a
 * parked engine holding tokens again is to be woken (answers true), and an engine given all it
 * wanted is owed nothing more, unless it still holds nothing and waits.
 */
export function afterAnswer(st: NumberState, met: boolean): boolean {
  const wake = st.need === 'parked' && st.tokens.balance > 0;
  if (wake) st.need = 'short';
  if (met && st.need === 'short') st.need = 'none';
  return wake;
}
