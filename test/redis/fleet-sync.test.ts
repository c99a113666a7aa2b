/**
 * Status changes reach every instance (pub/sub, and reconciliation for what a subscriber missed),
 * and the receiving engine's pools are recomputed. How fast they arrive depends on the machine
 * (milliseconds on loopback; SENDPOOL_DEBUG prints it): the tests wait for each change with a bound
 * only a hang reaches, and make sure of what path it took rather than of how long it took.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createEngine } from '../../src/engine.js';
import type { Engine } from '../../src/core/engine.js';
import { FleetSync } from '../../src/redis/index.js';
import { testFleet, NUMBERS } from './fleet-run.js';
import { cleanup, connect, REDIS_URL, SKIP_REASON, testPrefix } from './helpers.js';

const enabled = REDIS_URL !== undefined;
if (!enabled) describe('FleetSync', () => it.skipIf(true)(SKIP_REASON, () => {}));

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

describe.runIf(enabled)('FleetSync', () => {
  const prefix = testPrefix('sync');
  const connections: Redis[] = [];
  const syncs: FleetSync[] = [];
  const conn = (): Redis => {
    const c = connect();
    connections.push(c);
    return c;
  };
  async function instance(p: string, reconcileMs = 500): Promise<{ engine: Engine; sync: FleetSync }> {
    const engine = createEngine(testFleet(NUMBERS));
    const sync = new FleetSync({ client: conn(), subscriber: conn(), engine, prefix: p, reconcileMs });
    await sync.start();
    syncs.push(sync);
    return { engine, sync };
  }
  const numberStatus = (e: Engine, phone: string): string => e.numbers().find((n) => n.phone === phone)!.status;
  afterAll(async () => {
    for (const s of syncs) await s.stop();
    await cleanup(connections[0]!, prefix);
    for (const c of connections) c.disconnect();
  });

  it('stop takes its listener off the subscriber connection, which the host may reuse', async () => {
    const subscriber = conn();
    const before = subscriber.listenerCount('message');
    const sync = new FleetSync({ client: conn(), subscriber, engine: createEngine(testFleet(NUMBERS)), prefix: `${prefix}stop:`, reconcileMs: 500 });
    await sync.start();
    expect(subscriber.listenerCount('message')).toBe(before + 1);
    await sync.stop();
    expect(subscriber.listenerCount('message')).toBe(before);
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
});
