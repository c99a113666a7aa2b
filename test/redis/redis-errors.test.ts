/**
 * What goes wrong between sendpool and Redis is a branded error a host can tell apart, without a
 * Redis server: a call not answered in its time (RedisTimeoutError), a fleet sync stopped while a
 * host waited for it (FleetSyncStoppedError).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { isFleetSyncStoppedError, isRedisTimeoutError, FleetSync, type FleetSyncClient, type FleetSyncSubscriber } from '../../src/redis/index.js';
import { withTimeout } from '../../src/redis/with-timeout.js';
import { NUMBERS, testFleet } from './fleet-run.js';

/** A subscriber connection that is never used: the sync under test is never started. */
const idleSubscriber: FleetSyncSubscriber = {
  subscribe: () => new Promise(() => {}),
  on: () => undefined,
  unsubscribe: () => Promise.resolve(),
};

describe('withTimeout', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('rejects a call not answered within its time with a RedisTimeoutError naming the call', async () => {
    vi.useFakeTimers();
    const answer = withTimeout(new Promise<never>(() => {}), 2_000, 'subscribe');
    const seen = answer.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(2_000);
    const e = await seen;
    expect(isRedisTimeoutError(e)).toBe(true);
    expect(e).toMatchObject({ name: 'RedisTimeoutError', message: 'subscribe: not answered within 2000 ms', call: 'subscribe', timeoutMs: 2_000 });
  });

  it("passes the call's own answer and its own error through", async () => {
    await expect(withTimeout(Promise.resolve(7), 2_000)).resolves.toBe(7);
    const own = new Error('NOSCRIPT');
    await expect(withTimeout(Promise.reject(own), 2_000)).rejects.toBe(own);
  });
});

describe('FleetSync.whenReady', () => {
  it('rejects with a FleetSyncStoppedError when the sync stops first, and after it stopped', async () => {
    const sync = new FleetSync({ client: {} as FleetSyncClient, subscriber: idleSubscriber, engine: createEngine(testFleet(NUMBERS)) });
    const waiting = sync.whenReady().catch((e: unknown) => e);
    await sync.stop();
    const e = await waiting;
    expect(isFleetSyncStoppedError(e)).toBe(true);
    expect(e).toMatchObject({ name: 'FleetSyncStoppedError', message: 'FleetSync stopped before it was ready' });
    await expect(sync.whenReady()).rejects.toSatisfy(isFleetSyncStoppedError);
  });
});
