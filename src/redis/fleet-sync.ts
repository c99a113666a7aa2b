/**
 * `FleetSync`: status changes of numbers and templates (pause, disable, resume) reach every
 * instance, and each instance's engine recomputes its pools by applying them.
 *
 * Protocol: a local change (the engine's status listener, any source but this sync and timed
 * resumes, which every instance applies by its own clock) is written to one Redis hash under a
 * fleet-wide sequence number and published, in one script. Every instance applies a published
 * change at once, and every `reconcileMs` it reads the hash and applies any entry newer than what
 * it applied for that number or template, so a missed message (a reconnect, a late start) is made
 * good within one period. Changes made while Redis is unreachable are kept and published when it
 * returns. It also keeps a heartbeat per instance, which sizes leases (`activeInstances`).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { Engine, StatusChange } from '../core/engine.js';
import { systemClock } from '../runtime/system-clock.js';
import { errorText, type RedisCapacityEvent } from './health.js';
import { runScript, script, type RedisScriptClient } from './script-runner.js';
import { HEARTBEAT_SCRIPT, STATUS_SCRIPT } from './scripts/status.js';

const STATUS = script(STATUS_SCRIPT);
const HEARTBEAT = script(HEARTBEAT_SCRIPT);
const SOURCE = 'fleet';

/** The commands FleetSync uses on its main connection (an ioredis `Redis`). */
export interface FleetSyncClient extends RedisScriptClient {
  hgetall(key: string): Promise<Record<string, string>>;
}

/** A connection in subscriber mode (an ioredis `Redis`, e.g. `client.duplicate()`). */
export interface FleetSyncSubscriber {
  subscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  /** Takes the listener off again at `stop` (ioredis has it); without it, a stopped sync ignores messages. */
  off?(event: 'message', listener: (channel: string, message: string) => void): unknown;
  unsubscribe(channel: string): Promise<unknown>;
}

/** Options of {@link FleetSync}. */
export interface FleetSyncOptions {
  /** Connection for scripts and reads. */
  readonly client: FleetSyncClient;
  /** A second connection, used only to subscribe (Redis pub/sub takes a connection over). */
  readonly subscriber: FleetSyncSubscriber;
  /** The engine whose changes are shared and which applies the others'. */
  readonly engine: Engine;
  /** Key prefix; use the RedisStore's. @default 'sendpool:' */
  readonly prefix?: string;
  /** Period of the reconciliation read and of the heartbeat, in real ms. @default 500 */
  readonly reconcileMs?: number;
  /** The engine's clock (to tell a timed pause that already ended). @default the system clock */
  readonly clock?: Clock;
  /** This instance's id. @default a random UUID */
  readonly instanceId?: string;
  /** Receives `lease-failed`-style events for failed publishes and reads. @default none */
  readonly onEvent?: (event: RedisCapacityEvent | { readonly type: 'status-applied'; readonly at: number; readonly key: string; readonly seq: number }) => void;
}

interface WireChange {
  readonly seq: number;
  readonly kind: 'number' | 'template';
  readonly key: string;
  readonly status: string;
  readonly until?: number;
  readonly origin: string;
}

export class FleetSync {
  readonly instanceId: string;
  readonly #client: FleetSyncClient;
  readonly #subscriber: FleetSyncSubscriber;
  readonly #engine: Engine;
  readonly #prefix: string;
  readonly #reconcileMs: number;
  readonly #clock: Clock;
  readonly #onEvent: FleetSyncOptions['onEvent'];
  readonly #seen = new Map<string, number>();
  readonly #pending = new Map<string, StatusChange>();
  #instances = 1;
  #timer: ReturnType<typeof setInterval> | undefined;
  #unlisten: (() => void) | undefined;
  #stopped = false;

  constructor(options: FleetSyncOptions) {
    this.#client = options.client;
    this.#subscriber = options.subscriber;
    this.#engine = options.engine;
    this.#prefix = options.prefix ?? 'sendpool:';
    this.#reconcileMs = options.reconcileMs ?? 500;
    this.#clock = options.clock ?? systemClock;
    this.instanceId = options.instanceId ?? randomUUID();
    this.#onEvent = options.onEvent;
  }

  get #channel(): string {
    return `${this.#prefix}status`;
  }

  /** The status hash; its counter shares the hash tag, so Redis Cluster keeps both in one slot. */
  get #statusKey(): string {
    return `${this.#prefix}{status}`;
  }

  /** Live instances at the last heartbeat (1 before the first): pass as `RedisStoreOptions.instances`. */
  readonly activeInstances = (): number => this.#instances;

  /** The subscriber's message listener, kept so `stop` can take it off a connection the host may reuse. */
  readonly #onMessage = (channel: string, message: string): void => {
    if (!this.#stopped && channel === this.#channel) this.#receive(message);
  };

  /** Subscribes, reads the fleet's statuses once, and starts the periodic reconciliation. */
  async start(): Promise<void> {
    this.#subscriber.on('message', this.#onMessage);
    await this.#subscriber.subscribe(this.#channel);
    this.#unlisten = this.#engine.onStatusChange((change) => {
      if (change.source === SOURCE || change.source === 'timer') return;
      const key = change.kind === 'number' ? `n:${change.phone}` : `t:${change.templateId}`;
      this.#pending.set(key, change);
      void this.#flush();
    });
    await this.reconcile();
    this.#timer = setInterval(() => void this.reconcile(), this.#reconcileMs);
    this.#timer.unref?.();
  }

  #reconciling = false;

  /** Stops listening; does not quit the connections. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#unlisten?.();
    this.#subscriber.off?.('message', this.#onMessage);
    await this.#subscriber.unsubscribe(this.#channel).catch(() => undefined);
  }

  /** Publishes pending local changes, applies entries newer than what was applied, beats the heart. */
  async reconcile(): Promise<void> {
    // One at a time: with Redis slow or down, timer ticks must not pile calls up behind each other.
    if (this.#stopped || this.#reconciling) return;
    this.#reconciling = true;
    try {
      await this.#reconcileOnce();
    } finally {
      this.#reconciling = false;
    }
  }

  async #reconcileOnce(): Promise<void> {
    await this.#flush();
    try {
      const all = await this.#client.hgetall(this.#statusKey);
      for (const body of Object.values(all)) this.#receive(body);
      const live = Number(await runScript(this.#client, HEARTBEAT, [`${this.#prefix}instances`], [this.instanceId, Math.max(3 * this.#reconcileMs, 2_000)]));
      if (live > 0) this.#instances = live;
    } catch (error) {
      this.#onEvent?.({ type: 'lease-failed', at: this.#clock.now(), numbers: 0, error: `status reconciliation: ${errorText(error)}` });
    }
  }

  async #flush(): Promise<void> {
    for (const [key, change] of [...this.#pending]) {
      const body = JSON.stringify({
        kind: change.kind,
        key: change.kind === 'number' ? change.phone : String(change.templateId),
        status: change.status,
        ...(change.until !== undefined ? { until: change.until } : {}),
        origin: this.instanceId,
      });
      try {
        const seq = Number(await runScript(this.#client, STATUS, [this.#statusKey, `${this.#statusKey}:seq`], [key, body, this.#channel]));
        if (this.#pending.get(key) === change) this.#pending.delete(key);
        if (seq > (this.#seen.get(key) ?? 0)) this.#seen.set(key, seq);
      } catch (error) {
        this.#onEvent?.({ type: 'lease-failed', at: this.#clock.now(), numbers: 0, error: `status publish: ${errorText(error)}` });
        return;
      }
    }
  }

  #receive(body: string): void {
    let change: WireChange;
    try {
      change = JSON.parse(body) as WireChange;
    } catch {
      return;
    }
    const key = change.kind === 'number' ? `n:${change.key}` : `t:${change.key}`;
    if (change.seq <= (this.#seen.get(key) ?? 0)) return;
    this.#seen.set(key, change.seq);
    // A local change not yet published is newer than anything read: it wins when published.
    if (this.#pending.has(key)) return;
    const now = this.#clock.now();
    const ended = change.until !== undefined && change.until <= now;
    const status = ended ? 'active' : change.status;
    const options = { source: SOURCE, ...(change.until !== undefined && !ended ? { until: change.until } : {}) };
    try {
      if (change.kind === 'number') this.#engine.setNumberStatus(change.key, status as 'active' | 'paused', options);
      else this.#engine.setTemplateStatus(Number(change.key), status as 'active' | 'paused' | 'disabled', options);
      this.#onEvent?.({ type: 'status-applied', at: now, key, seq: change.seq });
    } catch {
      // A number or template this instance's fleet does not have (yet): nothing to apply.
    }
  }
}
