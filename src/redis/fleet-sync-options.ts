/**
 * What {@link FleetSync} is given and what it tells: its options, the Redis connections it needs
 * (typed by the commands it uses, which ioredis' `Redis` and `Cluster` satisfy), its states and
 * its events. Apart from fleet-sync.ts so that the protocol there reads without the surface.
 */
import type { Clock } from '../core/clock.js';
import type { Engine } from '../core/engine.js';
import type { RedisCapacityEvent } from './health.js';
import type { RedisScriptClient } from './script-runner.js';

/** A connection in subscriber mode (an ioredis `Redis`, e.g. `client.duplicate()`). */
export interface FleetSyncSubscriber {
  subscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  /** The sync listens to errors (ioredis emits one per failed connection attempt). */
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** Takes the listeners off again at `stop` (ioredis has it); without it, a stopped sync ignores messages. */
  off?(event: 'message', listener: (channel: string, message: string) => void): unknown;
  off?(event: 'error', listener: (error: Error) => void): unknown;
  unsubscribe(channel: string): Promise<unknown>;
  /** ioredis' connection status: no command is sent while it is 'reconnecting', 'close' or 'end'. */
  readonly status?: string;
}

/** The commands FleetSync uses on its main connection (an ioredis `Redis` or `Cluster`). */
export interface FleetSyncClient extends RedisScriptClient {
  hgetall(key: string): Promise<Record<string, string>>;
  /** Reads the status counter: a counter below what was seen means Redis lost the statuses. */
  get?(key: string): Promise<string | null>;
  /** ioredis' connection status: no command is sent while it is 'reconnecting', 'close' or 'end'. */
  readonly status?: string;
  /** A second connection for the subscriber when none is given (ioredis has it). */
  duplicate?(): unknown;
}

/** Where a {@link FleetSync} stands. */
export type FleetSyncState =
  /** Constructed, not started. */
  | 'idle'
  /** Started, not yet subscribed and reconciled once: retrying with back-off. */
  | 'connecting'
  /** Subscribed, and the last reconciliation succeeded. */
  | 'ready'
  /** Was ready; the last reconciliation failed (Redis unreachable or not answering): retrying. */
  | 'lost'
  /** Stopped. */
  | 'stopped';

/** Events of a {@link FleetSync}, as data (the library never logs). */
export type FleetSyncEvent =
  /** A publish or a reconciliation failed (`numbers` is 0). */
  | Extract<RedisCapacityEvent, { type: 'lease-failed' }>
  /** A change from another instance was applied to this engine. */
  | { readonly type: 'status-applied'; readonly at: number; readonly key: string; readonly seq: number }
  /** The sync moved to `state` (from `previous`); `error` says why when it is 'connecting' or 'lost'. */
  | { readonly type: 'sync-state'; readonly at: number; readonly state: FleetSyncState; readonly previous: FleetSyncState; readonly error?: string }
  /**
   * Redis lost the fleet's statuses (the status counter went back): this instance forgot the
   * sequence numbers it had applied and published its own paused and disabled numbers and templates
   * again, so that instances starting now learn them.
   */
  | { readonly type: 'redis-reset'; readonly at: number; readonly scope: 'status'; readonly seq: number; readonly seenSeq: number }
  /** The subscriber connection reported an error (ioredis reconnects by itself). */
  | { readonly type: 'subscriber-error'; readonly at: number; readonly error: string };

/** Options of {@link FleetSync}. */
export interface FleetSyncOptions {
  /** Connection for scripts and reads. */
  readonly client: FleetSyncClient;
  /**
   * A second connection, used only to subscribe (Redis pub/sub takes a connection over). The sync
   * listens to its 'error' events (none goes unhandled) and takes its listeners off at `stop`.
   * @default `client.duplicate()`, owned by the sync: disconnected at `stop`
   */
  readonly subscriber?: FleetSyncSubscriber;
  /** The engine whose changes are shared and which applies the others'. */
  readonly engine: Engine;
  /** Key prefix; use the RedisStore's. @default 'sendpool:' */
  readonly prefix?: string;
  /** Period of the reconciliation read and of the heartbeat, in real ms. @default 500 */
  readonly reconcileMs?: number;
  /**
   * First wait (real ms) before trying again when Redis is unreachable; each failure doubles it up
   * to `retryMaxMs`, a success resets it.
   * @default 100
   */
  readonly retryMinMs?: number;
  /** Longest wait (real ms) between two tries while Redis is unreachable. @default 5_000 */
  readonly retryMaxMs?: number;
  /** A Redis call not answered within this many real ms counts as failed. @default 2_000 */
  readonly callTimeoutMs?: number;
  /** The engine's clock (to tell a timed pause that already ended). @default the system clock */
  readonly clock?: Clock;
  /** This instance's id. @default a random UUID */
  readonly instanceId?: string;
  /** Receives every event (data, never thrown). @default none */
  readonly onEvent?: (event: FleetSyncEvent) => void;
}
