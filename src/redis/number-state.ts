/**
 * What `RedisStore` keeps for one number besides its tokens (number-ledger.ts): its limits, where
 * its next lease call stands, what Redis last said of it, and the demand a lease is sized from.
 */
import type { NumberLimits } from '../core/limits/store.js';
import { keySlot } from './key-slot.js';
import { NumberLedger } from './number-ledger.js';

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
  /** What the last answer said about the state (lease script code): 0 fine, else check the epoch first. */
  check: number;
  /** The lease script's `confirm` argument: '' until an epoch check allowed creating or adopting the state. */
  confirm: string;
  /** Clock time of the latest answer that found the state, and of the latest register refresh for it. */
  aliveAt: number;
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
  /** Redis' answer "tokens left" at the last call. */
  left: number;
  /** Unspent tokens the other instances said they hold, at the last call. */
  others: number;
  /** What this instance told Redis it holds at its last call (its balance then, with the grant). */
  told: number;
  answered: boolean;
  /** The engine was told to wait: tell `onCapacity` when tokens arrive. */
  parked: boolean;
  /** The engine wanted more than the balance since the last call. */
  short: boolean;
  /** The balance sent with the call on its way (`told` once answered, with the grant). */
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
    left: 0,
    others: 0,
    told: 0,
    telling: 0,
    answered: false,
    parked: false,
    short: false,
    slot: keySlot(`{${phone}}`),
    seenT: -1,
    check: 0,
    confirm: '',
    aliveAt: -Infinity,
    registeredAt: -Infinity,
  };
}
