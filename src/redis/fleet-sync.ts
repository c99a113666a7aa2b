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
 *
 * Redis need not be there at start: `start()` resolves after its first attempt either way and the
 * sync keeps trying with a bounded back-off; `state` and the `sync-state` events say where it stands
 * (docs/scaling.md, "Redis down at start").
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { Engine, StatusChange } from '../core/engine.js';
import { ArgumentError } from '../core/errors.js';
import { describeValue } from '../core/problems.js';
import { systemClock } from '../runtime/system-clock.js';
import type { FleetSyncClient, FleetSyncEvent, FleetSyncOptions, FleetSyncState, FleetSyncSubscriber } from './fleet-sync-options.js';
import { FleetSyncStoppedError, RedisUnavailableError } from './errors.js';
import { errorText } from './health.js';
import { runScript, script } from './script-runner.js';
import { HEARTBEAT_SCRIPT, STATUS_SCRIPT } from './scripts/status.js';
import { withTimeout } from './with-timeout.js';

const STATUS = script(STATUS_SCRIPT);
const HEARTBEAT = script(HEARTBEAT_SCRIPT);
const SOURCE = 'fleet';

interface WireChange {
  readonly seq: number;
  readonly kind: 'number' | 'template';
  readonly key: string;
  readonly status: string;
  readonly until?: number;
  readonly origin: string;
}

/** A subscriber as ioredis has it: listeners for errors, and a way to close one the sync owns. */
interface OwnedSubscriber extends FleetSyncSubscriber {
  on(event: 'message' | 'error', listener: (...args: never[]) => void): unknown;
  off?(event: 'message' | 'error', listener: (...args: never[]) => void): unknown;
  disconnect?(): unknown;
}

function whole(api: string, value: number): number {
  if (!(Number.isInteger(value) && value > 0)) throw new ArgumentError(api, 'a whole number of milliseconds from 1 up', describeValue(value));
  return value;
}

/**
 * Worth a command: ioredis sends it when connected, or once the connection being made is up. Not
 * while it waits to reconnect (Redis is known to be away): commands would pile up in its queue.
 */
function usable(status: string | undefined): boolean {
  return status !== 'reconnecting' && status !== 'close' && status !== 'end';
}

export class FleetSync {
  readonly instanceId: string;
  readonly #client: FleetSyncClient;
  readonly #subscriber: OwnedSubscriber;
  readonly #ownsSubscriber: boolean;
  readonly #engine: Engine;
  readonly #prefix: string;
  readonly #reconcileMs: number;
  readonly #retryMin: number;
  readonly #retryMax: number;
  readonly #callTimeout: number;
  readonly #clock: Clock;
  readonly #onEvent: FleetSyncOptions['onEvent'];
  readonly #seen = new Map<string, number>();
  readonly #pending = new Map<string, StatusChange>();
  /** The highest sequence number seen: the counter in Redis never goes below it unless Redis lost it. */
  #maxSeq = 0;
  #instances = 1;
  #state: FleetSyncState = 'idle';
  #subscribed = false;
  #backoff = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #unlisten: (() => void) | undefined;
  #readyWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];

  constructor(options: FleetSyncOptions) {
    if (options === null || typeof options !== 'object' || options.client === undefined) {
      throw new ArgumentError('new FleetSync(options.client)', 'an ioredis client', describeValue(options?.client));
    }
    this.#client = options.client;
    if (options.subscriber !== undefined) {
      this.#subscriber = options.subscriber as OwnedSubscriber;
      this.#ownsSubscriber = false;
    } else if (typeof options.client.duplicate === 'function') {
      this.#subscriber = options.client.duplicate() as OwnedSubscriber;
      this.#ownsSubscriber = true;
    } else {
      throw new ArgumentError('new FleetSync(options.subscriber)', 'a subscriber connection (or a client with duplicate())', describeValue(options.subscriber));
    }
    this.#engine = options.engine;
    this.#prefix = options.prefix ?? 'sendpool:';
    this.#reconcileMs = whole('new FleetSync(options.reconcileMs)', options.reconcileMs ?? 500);
    this.#retryMin = whole('new FleetSync(options.retryMinMs)', options.retryMinMs ?? 100);
    this.#retryMax = Math.max(this.#retryMin, whole('new FleetSync(options.retryMaxMs)', options.retryMaxMs ?? 5_000));
    this.#callTimeout = whole('new FleetSync(options.callTimeoutMs)', options.callTimeoutMs ?? 2_000);
    this.#clock = options.clock ?? systemClock;
    this.instanceId = options.instanceId ?? randomUUID();
    this.#onEvent = options.onEvent;
    // At once: the connection is already trying to connect, and an 'error' without a listener is
    // printed by ioredis for every failed attempt.
    this.#subscriber.on('error', this.#onSubscriberError);
  }

  get #channel(): string {
    return `${this.#prefix}status`;
  }

  /** The status hash; its counter shares the hash tag, so Redis Cluster keeps both in one slot. */
  get #statusKey(): string {
    return `${this.#prefix}{status}`;
  }

  /** Where the sync stands: for the host's health check and metrics. */
  get state(): FleetSyncState {
    return this.#state;
  }

  /** Live instances at the last heartbeat (1 before the first): pass as `RedisStoreOptions.instances`. */
  readonly activeInstances = (): number => this.#instances;

  /** The subscriber's message listener, kept so `stop` can take it off a connection the host may reuse. */
  readonly #onMessage = (channel: string, message: string): void => {
    if (this.#state !== 'stopped' && channel === this.#channel) this.#receive(message);
  };

  /** The subscriber's error listener: an error is an event, never an unhandled 'error'. */
  readonly #onSubscriberError = (error: unknown): void => {
    this.#emit({ type: 'subscriber-error', at: this.#clock.now(), error: errorText(error) });
  };

  #emit(e: FleetSyncEvent): void {
    try {
      this.#onEvent?.(e);
    } catch {
      // A host listener's bug must not stop the sync.
    }
  }

  #setState(state: FleetSyncState, error?: string): void {
    const previous = this.#state;
    if (previous === state) return;
    this.#state = state;
    this.#emit({ type: 'sync-state', at: this.#clock.now(), state, previous, ...(error !== undefined ? { error } : {}) });
    if (state === 'ready' || state === 'stopped') {
      const waiters = this.#readyWaiters;
      this.#readyWaiters = [];
      for (const w of waiters) {
        if (state === 'ready') w.resolve();
        else w.reject(new FleetSyncStoppedError());
      }
    }
  }

  /**
   * Starts listening, then tries once to subscribe and read the fleet's statuses. Resolves after
   * that first try whether or not Redis answered (it never rejects for Redis): the sync goes on
   * trying with a bounded back-off. `state` is 'ready' once it succeeded; `whenReady()` waits for it.
   */
  async start(): Promise<void> {
    if (this.#state !== 'idle') return;
    this.#setState('connecting');
    this.#subscriber.on('message', this.#onMessage);
    this.#unlisten = this.#engine.onStatusChange((change) => {
      if (change.source === SOURCE || change.source === 'timer') return;
      this.#pending.set(this.#keyOf(change), change);
      // A failed publish is emitted as `lease-failed` by #flush and stays pending: the next change
      // or reconciliation publishes it again.
      if (this.#state === 'ready') void this.#flush().catch(() => undefined);
    });
    await this.#tick();
  }

  /** Resolves when the sync is (or becomes) 'ready'; rejects with {@link FleetSyncStoppedError} if it is stopped first. */
  whenReady(): Promise<void> {
    if (this.#state === 'ready') return Promise.resolve();
    if (this.#state === 'stopped') return Promise.reject(new FleetSyncStoppedError());
    return new Promise<void>((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
  }

  /** Stops listening; does not quit a connection the host gave (a subscriber it made itself is disconnected). */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    const wasSubscribed = this.#subscribed;
    this.#setState('stopped');
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#unlisten?.();
    this.#subscriber.off?.('message', this.#onMessage);
    if (this.#ownsSubscriber) {
      // Its error listener stays: a connection being closed may still report one.
      this.#subscriber.disconnect?.();
      return;
    }
    // The host's subscriber: an unsubscribe that fails or times out leaves the channel's messages
    // arriving with no listener of ours (removed above), so they are ignored.
    if (wasSubscribed && usable(this.#subscriber.status)) await withTimeout(this.#subscriber.unsubscribe(this.#channel), this.#callTimeout, 'unsubscribe').catch(() => undefined);
    this.#subscriber.off?.('error', this.#onSubscriberError);
  }

  #reconciling = false;

  /** Publishes pending local changes, applies entries newer than what was applied, beats the heart. */
  async reconcile(): Promise<void> {
    // One at a time: with Redis slow or down, calls must not pile up behind each other.
    if (this.#state === 'stopped' || this.#state === 'idle' || this.#reconciling) return;
    this.#reconciling = true;
    try {
      await this.#reconcileOnce();
    } finally {
      this.#reconciling = false;
    }
  }

  /** One round of the driver: subscribe if not yet, reconcile, then schedule the next round. */
  async #tick(): Promise<void> {
    this.#timer = undefined;
    if (this.#state === 'stopped') return;
    let ok = false;
    let error: string;
    try {
      await this.#subscribeOnce();
      await this.reconcile();
      ok = this.#lastError === undefined;
      error = this.#lastError ?? '';
    } catch (e) {
      error = errorText(e);
    }
    // stop() may have run while this round awaited Redis.
    if (this.state === 'stopped') return;
    if (ok) {
      this.#backoff = 0;
      this.#setState('ready');
    } else {
      this.#backoff = this.#backoff === 0 ? this.#retryMin : Math.min(this.#retryMax, this.#backoff * 2);
      this.#setState(this.#state === 'ready' || this.#state === 'lost' ? 'lost' : 'connecting', error);
    }
    this.#timer = setTimeout(() => void this.#tick(), ok ? this.#reconcileMs : this.#backoff);
    this.#timer.unref?.();
  }

  /** The subscribe call on its way: a try that timed out waits for it rather than sending another. */
  #subscribing: Promise<void> | undefined;

  async #subscribeOnce(): Promise<void> {
    if (this.#subscribed) return;
    const status = this.#subscriber.status;
    if (this.#subscribing === undefined) {
      if (!usable(status)) throw new RedisUnavailableError('subscriber', status);
      this.#subscribing = this.#subscriber
        .subscribe(this.#channel)
        // ioredis subscribes again by itself after a reconnect; reconciliation covers the gap.
        .then(() => void (this.#subscribed = true))
        .finally(() => (this.#subscribing = undefined));
    }
    await withTimeout(this.#subscribing, this.#callTimeout, 'subscribe');
  }

  /** Why the last reconciliation failed; undefined when it succeeded. */
  #lastError: string | undefined;

  async #call<T>(what: string, run: () => Promise<T>): Promise<T> {
    const status = this.#client.status;
    if (!usable(status)) throw new RedisUnavailableError('client', status);
    return withTimeout(run(), this.#callTimeout, what);
  }

  async #reconcileOnce(): Promise<void> {
    try {
      await this.#checkReset();
      await this.#flush();
      const all = await this.#call('status read', () => this.#client.hgetall(this.#statusKey));
      for (const body of Object.values(all)) this.#receive(body);
      const live = Number(await this.#call('heartbeat', () => runScript(this.#client, HEARTBEAT, [`${this.#prefix}instances`], [this.instanceId, Math.max(3 * this.#reconcileMs, 2_000)])));
      if (live > 0) this.#instances = live;
      this.#lastError = undefined;
    } catch (error) {
      this.#lastError = errorText(error);
      this.#emit({ type: 'lease-failed', at: this.#clock.now(), numbers: 0, error: `status reconciliation: ${this.#lastError}` });
    }
  }

  /** Redis lost the statuses when its counter is below the highest sequence number seen. */
  async #checkReset(): Promise<void> {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the client as `this` below
    const get = this.#client.get;
    if (get === undefined || this.#maxSeq === 0) return;
    const seq = Number((await this.#call('status counter read', () => get.call(this.#client, `${this.#statusKey}:seq`))) ?? 0);
    if (seq >= this.#maxSeq) return;
    const seenSeq = this.#maxSeq;
    this.#seen.clear();
    this.#maxSeq = seq;
    // What this engine holds is all that is left of the fleet's statuses: publish it again.
    const at = this.#clock.now();
    for (const n of this.#engine.numbers()) {
      if (n.status !== 'active') this.#requeue({ kind: 'number', phone: n.phone, status: n.status, ...(n.pausedUntil !== undefined ? { until: n.pausedUntil } : {}), at, source: SOURCE });
    }
    for (const t of this.#engine.templates()) {
      if (t.status !== 'active') this.#requeue({ kind: 'template', templateId: t.id, status: t.status, ...(t.pausedUntil !== undefined ? { until: t.pausedUntil } : {}), at, source: SOURCE });
    }
    this.#emit({ type: 'redis-reset', at, scope: 'status', seq, seenSeq });
  }

  #requeue(change: StatusChange): void {
    const key = this.#keyOf(change);
    if (!this.#pending.has(key)) this.#pending.set(key, change);
  }

  #keyOf(change: StatusChange): string {
    return change.kind === 'number' ? `n:${change.phone}` : `t:${change.templateId}`;
  }

  /** Publishes pending changes in order; stops at the first failure (kept for the next round), rethrowing it. */
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
        const seq = Number(await this.#call('status publish', () => runScript(this.#client, STATUS, [this.#statusKey, `${this.#statusKey}:seq`], [key, body, this.#channel])));
        if (this.#pending.get(key) === change) this.#pending.delete(key);
        if (seq > (this.#seen.get(key) ?? 0)) this.#seen.set(key, seq);
        if (seq > this.#maxSeq) this.#maxSeq = seq;
      } catch (error) {
        this.#emit({ type: 'lease-failed', at: this.#clock.now(), numbers: 0, error: `status publish: ${errorText(error)}` });
        throw error;
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
    if (change.seq > this.#maxSeq) this.#maxSeq = change.seq;
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
      this.#emit({ type: 'status-applied', at: now, key, seq: change.seq });
    } catch {
      // A number or template this instance's fleet does not have (yet): nothing to apply.
    }
  }
}
