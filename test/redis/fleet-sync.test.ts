/**
 * Status changes reach every instance (pub/sub, and reconciliation for what a subscriber missed),
 * and the receiving engine's pools are recomputed. How fast they arrive depends on the machine
 * (milliseconds on loopback; SENDPOOL_DEBUG prints it): the tests wait for each change with a bound
 * only a hang reaches, and make sure of what path it took rather than of how long it took.
 *
 * Also: a sync started while Redis is down waits and retries (state 'connecting', then 'ready'),
 * with no unhandled 'error' event on its connections; a Redis that lost the statuses is noticed.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { createEngine } from '../../src/engine.js';
import type { Engine } from '../../src/core/engine.js';
import { createCapacityWaker, FleetSync, RedisStore, type FleetSyncEvent, type RedisCapacityEvent } from '../../src/redis/index.js';
import { testFleet, NUMBERS, waitUntil } from './fleet-run.js';
import { cleanup, connect, describeTargets, TARGETS, testPrefix, type TestClient } from './helpers.js';
import { privateRedis } from './private-redis.js';

/** Bound of every wait here (real ms): only a hang reaches it. */
const WAIT_BOUND_MS = 60_000;

/** Waits until `check` holds; answers how long it took (for SENDPOOL_DEBUG). */
async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > WAIT_BOUND_MS) throw new Error(`timed out after ${WAIT_BOUND_MS} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return Date.now() - start;
}

describeTargets('FleetSync', (target) => {
  const prefix = testPrefix('sync');
  const connections: TestClient[] = [];
  const syncs: FleetSync[] = [];
  const conn = (): TestClient => {
    const c = connect(target);
    connections.push(c);
    return c;
  };
  async function instance(p: string, reconcileMs = 500, onEvent?: (e: FleetSyncEvent) => void): Promise<{ engine: Engine; sync: FleetSync }> {
    const engine = createEngine(testFleet(NUMBERS));
    const sync = new FleetSync({ client: conn(), subscriber: conn(), engine, prefix: p, reconcileMs, ...(onEvent ? { onEvent } : {}) });
    await sync.start();
    expect(sync.state).toBe('ready');
    syncs.push(sync);
    return { engine, sync };
  }
  const numberStatus = (e: Engine, phone: string): string => e.numbers().find((n) => n.phone === phone)!.status;
  afterAll(async () => {
    for (const s of syncs) await s.stop();
    await cleanup(connections[0]!, prefix);
    for (const c of connections) c.disconnect();
  });

  it('stop takes its listeners off the subscriber connection, which the host may reuse', async () => {
    const subscriber = conn();
    const before = { message: subscriber.listenerCount('message'), error: subscriber.listenerCount('error') };
    const sync = new FleetSync({ client: conn(), subscriber, engine: createEngine(testFleet(NUMBERS)), prefix: `${prefix}stop:`, reconcileMs: 500 });
    await sync.start();
    expect(subscriber.listenerCount('message')).toBe(before.message + 1);
    expect(subscriber.listenerCount('error')).toBe(before.error + 1);
    await sync.stop();
    expect(sync.state).toBe('stopped');
    expect(subscriber.listenerCount('message')).toBe(before.message);
    expect(subscriber.listenerCount('error')).toBe(before.error);
  });

  it('pause, disable and resume reach the other instances; pools are recomputed', async () => {
    const p = `${prefix}a:`;
    const a = await instance(p);
    const b = await instance(p);
    const c = await instance(p);
    const phone = NUMBERS[0]!.phone;
    a.engine.setNumberStatus(phone, 'paused');
    for (const x of [b, c]) {
      const ms = await eventually(() => numberStatus(x.engine, phone) === 'paused', 'the pause to reach another instance');
      if (process.env['SENDPOOL_DEBUG']) console.log(`pause reached another instance in ${ms} ms`);
    }
    expect(b.engine.throughput(1, 10)).toBe(a.engine.throughput(1, 10));
    b.engine.setTemplateStatus(100, 'disabled');
    await eventually(() => a.engine.templates().find((t) => t.id === 100)!.status === 'disabled', 'the disable to reach instance a');
    expect(a.engine.assign(1, 10, 1).reason).toBe('no-template');
    c.engine.setTemplateStatus(100, 'active');
    c.engine.setNumberStatus(phone, 'active');
    await eventually(() => numberStatus(a.engine, phone) === 'active' && numberStatus(b.engine, phone) === 'active', 'the resume to reach a and b');
    await eventually(() => b.engine.assign(1, 10, 1).assignments.length === 1, 'instance b to assign again');
    expect(a.sync.activeInstances()).toBeGreaterThanOrEqual(1);
  });

  it('a change reaches the others by pub/sub (on a cluster too: published from the script on one node)', async () => {
    // Reconciliation every 10 minutes, after the one at start: within the wait, only the message can bring it.
    const p = `${prefix}pubsub:`;
    const a = await instance(p, 600_000);
    const b = await instance(p, 600_000);
    a.engine.setNumberStatus(NUMBERS[3]!.phone, 'paused');
    await eventually(() => numberStatus(b.engine, NUMBERS[3]!.phone) === 'paused', 'the pause to arrive by pub/sub');
  });

  it('an instance that missed the message catches up by reconciliation; a timed pause keeps its end', async () => {
    const p = `${prefix}b:`;
    const a = await instance(p, 200);
    const until = Date.now() + 60_000;
    a.engine.setNumberStatus(NUMBERS[1]!.phone, 'paused', { until });
    // The change is published (in the status hash) before the late instance subscribes: it can
    // only learn it by reading the hash.
    const reader = conn();
    await eventually(async () => Object.values(await reader.hgetall(`${p}{status}`)).some((body) => body.includes(NUMBERS[1]!.phone)), 'the pause to be published');
    const late = await instance(p, 200);
    await eventually(() => numberStatus(late.engine, NUMBERS[1]!.phone) === 'paused', 'the late instance to apply the pause');
    expect(late.engine.numbers().find((n) => n.phone === NUMBERS[1]!.phone)!.pausedUntil).toBe(until);
    await eventually(() => a.sync.activeInstances() === 2, 'the heartbeats of both instances');
  });

  it('statuses lost by Redis are noticed: each instance publishes what it holds again', async () => {
    const p = `${prefix}lost:`;
    const events: FleetSyncEvent[] = [];
    const a = await instance(p, 100, (e) => events.push(e));
    const phone = NUMBERS[2]!.phone;
    a.engine.setNumberStatus(phone, 'paused');
    const reader = conn();
    await eventually(async () => Number(await reader.get(`${p}{status}:seq`)) >= 1, 'the pause to be published');
    await eventually(() => events.some((e) => e.type === 'sync-state' && e.state === 'ready'), 'a reconciliation after the publish');
    // Redis forgets the statuses (as a restart without persistence would).
    await reader.del(`${p}{status}`, `${p}{status}:seq`);
    await eventually(() => events.some((e) => e.type === 'redis-reset' && e.scope === 'status'), 'the loss to be noticed');
    await eventually(async () => Object.values(await reader.hgetall(`${p}{status}`)).some((body) => body.includes(phone)), 'the pause to be published again');
    const late = await instance(p, 100);
    await eventually(() => numberStatus(late.engine, phone) === 'paused', 'an instance started after the loss to learn the pause');
  });
});

/**
 * The wiring of docs/scaling.md, on a Redis of the test's own that is down when the process
 * starts: nothing throws or exits, the store fails closed, the sync says 'connecting' and then
 * 'ready' once Redis is there, and the engine sends. ioredis prints "[ioredis] Unhandled error
 * event" for each failed attempt of a connection without an 'error' listener: none may appear.
 */
describe.runIf(TARGETS.length > 0)('Redis down at start', () => {
  it('the sync waits and retries, the store fails closed, and sends start once Redis is up', async () => {
    const redis = await privateRedis('none');
    const consoleError = vi.spyOn(console, 'error');
    const storeEvents: RedisCapacityEvent[] = [];
    const syncEvents: FleetSyncEvent[] = [];
    const logged: string[] = [];
    // As documented: the host's client with an error listener; the sync makes its own subscriber.
    const client = new Redis(redis.url);
    client.on('error', (e: Error) => logged.push(e.message));
    const waker = createCapacityWaker();
    let sync: FleetSync | undefined;
    const store = new RedisStore({ client, onCapacity: waker.onCapacity, instances: () => sync?.activeInstances() ?? 1, onEvent: (e) => storeEvents.push(e) });
    const engine = createEngine(testFleet(NUMBERS), { store });
    waker.attach(engine);
    sync = new FleetSync({ client, engine, onEvent: (e) => syncEvents.push(e) });
    try {
      await sync.start();
      expect(sync.state).toBe('connecting');
      engine.submit({ businessId: 1, typeId: 10, contacts: [{ phone: '5521900000001', variables: ['x'] }] });
      // Both connections tried and failed, and the store asked Redis and found it away.
      await waitUntil(() => logged.length >= 2 && syncEvents.some((e) => e.type === 'subscriber-error'), 'both connections to fail at least once');
      await waitUntil(() => engine.poll({ limit: 10 }).length === 0 && storeEvents.some((e) => e.type === 'redis-down'), 'the store to report redis-down');
      expect(engine.poll({ limit: 10 })).toEqual([]);
      expect(sync.state).toBe('connecting');
      expect(store.state).toBe('connecting');
      await redis.start();
      await sync.whenReady();
      expect(sync.state).toBe('ready');
      let sent = 0;
      await waitUntil(() => (sent += engine.poll({ limit: 10 }).length) > 0, 'the engine to send once Redis is up');
      expect(sent).toBe(1);
      expect(store.state).toBe('ready');
      const states = syncEvents.filter((e) => e.type === 'sync-state').map((e) => (e as { state: string }).state);
      expect(states).toEqual(['connecting', 'ready']);
      expect(storeEvents.map((e) => e.type)).toContain('redis-up');
      expect(consoleError.mock.calls.filter((args) => String(args[0]).includes('Unhandled error event'))).toEqual([]);
    } finally {
      consoleError.mockRestore();
      await sync.stop();
      await store.close();
      client.disconnect();
      redis.shutdown('nosave');
    }
  });

  it('a sync that was ready reports lost while Redis is away, and ready again after', async () => {
    const redis = await privateRedis('none');
    await redis.start();
    const events: FleetSyncEvent[] = [];
    const client = new Redis(redis.url);
    client.on('error', () => {});
    const sync = new FleetSync({ client, engine: createEngine(testFleet(NUMBERS)), reconcileMs: 100, callTimeoutMs: 500, onEvent: (e) => events.push(e) });
    try {
      await sync.start();
      expect(sync.state).toBe('ready');
      redis.shutdown('nosave');
      await waitUntil(() => sync.state === 'lost', 'the sync to notice Redis is gone');
      await redis.start();
      await waitUntil(() => sync.state === 'ready', 'the sync to be ready again');
      const states = events.filter((e) => e.type === 'sync-state').map((e) => (e as { state: string }).state);
      expect(states).toEqual(['connecting', 'ready', 'lost', 'ready']);
    } finally {
      await sync.stop();
      client.disconnect();
      redis.shutdown('nosave');
    }
  });
});
