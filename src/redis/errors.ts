/**
 * What goes wrong between sendpool and Redis, as classes a host can tell apart (each with a guard
 * that also recognises the error of another copy of sendpool in the same process). Callers inside
 * sendpool catch them: a lease call that fails either way counts as failed (`lease-failed`).
 */

const UNAVAILABLE = Symbol.for('sendpool.RedisUnavailableError');
const STATE = Symbol.for('sendpool.RedisStateError');
const TIMEOUT = Symbol.for('sendpool.RedisTimeoutError');
const SYNC_STOPPED = Symbol.for('sendpool.FleetSyncStoppedError');

/** A call was not sent: its Redis connection is not usable now (reconnecting, closed, ended). */
export class RedisUnavailableError extends Error {
  readonly [UNAVAILABLE] = true;
  /** Which connection: the client, or the subscriber of the fleet sync. */
  readonly connection: 'client' | 'subscriber';
  /** The connection's status as ioredis says it (`reconnecting`, `close`, `end`…), `unknown` when it says none. */
  readonly status: string;

  constructor(connection: 'client' | 'subscriber', status: string | undefined) {
    const shown = status ?? 'unknown';
    super(`Redis ${connection === 'subscriber' ? 'subscriber connection' : 'connection'} is ${shown}`);
    this.name = 'RedisUnavailableError';
    this.connection = connection;
    this.status = shown;
  }
}

/** True when `e` is a {@link RedisUnavailableError}, from this copy of sendpool or another. */
export function isRedisUnavailableError(e: unknown): e is RedisUnavailableError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[UNAVAILABLE] === true;
}

/**
 * Redis answered something this version of sendpool cannot read: a script's reply of another
 * shape (another version's script under the same name, a proxy between them). Nothing of the
 * answer was applied.
 */
export class RedisStateError extends Error {
  readonly [STATE] = true;
  /** What answered, e.g. `lease script` or `portfolio record script`. */
  readonly source: string;
  readonly expected: string;
  /** The answer, as JSON. */
  readonly actual: string;

  constructor(source: string, expected: string, actual: unknown) {
    const shown = JSON.stringify(actual) ?? String(actual);
    super(`${source}: expected ${expected}, got ${shown}`);
    this.name = 'RedisStateError';
    this.source = source;
    this.expected = expected;
    this.actual = shown;
  }
}

/** True when `e` is a {@link RedisStateError}, from this copy of sendpool or another. */
export function isRedisStateError(e: unknown): e is RedisStateError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[STATE] === true;
}

/**
 * A call was sent and Redis did not answer within its time (`callTimeoutMs`): treated as Redis
 * down. Whether the call took effect is not known (a lease's id is not used again).
 */
export class RedisTimeoutError extends Error {
  readonly [TIMEOUT] = true;
  /** What was not answered, e.g. `Redis call`, `subscribe`. */
  readonly call: string;
  /** The time it had, in ms. */
  readonly timeoutMs: number;

  constructor(call: string, timeoutMs: number) {
    super(`${call}: not answered within ${timeoutMs} ms`);
    this.name = 'RedisTimeoutError';
    this.call = call;
    this.timeoutMs = timeoutMs;
  }
}

/** True when `e` is a {@link RedisTimeoutError}, from this copy of sendpool or another. */
export function isRedisTimeoutError(e: unknown): e is RedisTimeoutError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[TIMEOUT] === true;
}

/** `FleetSync.whenReady()` waited, and the sync was stopped before it was ready. */
export class FleetSyncStoppedError extends Error {
  readonly [SYNC_STOPPED] = true;

  constructor() {
    super('FleetSync stopped before it was ready');
    this.name = 'FleetSyncStoppedError';
  }
}

/** True when `e` is a {@link FleetSyncStoppedError}, from this copy of sendpool or another. */
export function isFleetSyncStoppedError(e: unknown): e is FleetSyncStoppedError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[SYNC_STOPPED] === true;
}
