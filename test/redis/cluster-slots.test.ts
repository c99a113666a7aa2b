/**
 * Every Lua script sendpool sends touches keys of one hash slot, as Redis Cluster requires (a script
 * whose keys span slots is refused with CROSSSLOT). The calls are recorded while the store, the
 * fleet sync and the campaign statistics do their work, and each call's keys are mapped to their
 * slot (and, on the cluster, the cluster's own CLUSTER KEYSLOT is asked too). On the cluster a call
 * with keys of two slots is refused: the check is real.
 */
import { afterAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createEngine } from '../../src/engine.js';
import { keySlot } from '../../src/redis/key-slot.js';
import { FleetSync, RedisCampaignStatistics, RedisStore, runScript, script, LEASE_SCRIPT, GIVE_BACK_SCRIPT } from '../../src/redis/index.js';
import { BATCH_CLAIM_SCRIPT, BATCH_RELEASE_SCRIPT, CAMPAIGN_SCRIPT, SETTLE_SCRIPT } from '../../src/redis/scripts/campaign.js';
import { EPOCH_SCRIPT } from '../../src/redis/scripts/epoch.js';
import { HEARTBEAT_SCRIPT, STATUS_SCRIPT } from '../../src/redis/scripts/status.js';
import { NUMBERS, testFleet, waitUntil } from './fleet-run.js';
import { cleanup, connect, describeTargets, testPrefix } from './helpers.js';

const SCRIPTS = { LEASE_SCRIPT, GIVE_BACK_SCRIPT, EPOCH_SCRIPT, STATUS_SCRIPT, HEARTBEAT_SCRIPT, CAMPAIGN_SCRIPT, SETTLE_SCRIPT, BATCH_CLAIM_SCRIPT, BATCH_RELEASE_SCRIPT };
const NAMES = new Map(Object.entries(SCRIPTS).map(([name, source]) => [script(source).sha, name]));

describeTargets('one slot per script call', (target) => {
  const prefix = testPrefix('slots');
  const client = connect(target);
  afterAll(async () => {
    await cleanup(client, prefix);
    client.disconnect();
  });

  it('the store, the fleet sync and the campaign statistics send every script with its keys in one slot', async () => {
    const calls: { name: string; keys: string[] }[] = [];
    // The client as each component sees it, recording every script call on its way to Redis.
    const recording = new Proxy(client, {
      get(t, name, receiver) {
        const value = Reflect.get(t, name, receiver) as unknown;
        if (name === 'evalsha' || name === 'eval') {
          return (first: string, numKeys: number, ...rest: (string | number)[]) => {
            calls.push({ name: name === 'evalsha' ? (NAMES.get(first) ?? first) : (NAMES.get(script(first).sha) ?? 'unknown'), keys: rest.slice(0, numKeys).map(String) });
            return (value as (...a: unknown[]) => Promise<unknown>).call(t, first, numKeys, ...rest);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
      },
    });
    // Capacity: many numbers at once. On a cluster (found by the client's isCluster, forced here
    // on the single server too) a call carries only numbers of one slot.
    const clock = new ManualClock(0);
    const store = new RedisStore({ client: recording, prefix, clock, timeSource: 'clock', cluster: true });
    const handles = NUMBERS.map((n) => store.open(n.phone, n, 0));
    for (const h of handles) store.reserve(h, 5, 0);
    await store.settle();
    for (const h of handles) store.reserve(h, 5, 0);
    expect(await store.close()).toBeGreaterThan(0);
    expect(store.metrics().failures).toBe(0);
    // Status sync: a publish and a heartbeat.
    const engine = createEngine(testFleet(NUMBERS));
    const sync = new FleetSync({ client: recording, subscriber: connect(target), engine, prefix, reconcileMs: 100 });
    await sync.start();
    engine.setNumberStatus(NUMBERS[0]!.phone, 'paused');
    await waitUntil(() => calls.some((c) => c.name === 'STATUS_SCRIPT'), 'the pause to be published');
    await sync.stop();
    // Campaign statistics: a report, and a batch claimed and given back.
    const stats = new RedisCampaignStatistics({ client: recording, prefix });
    const random = { randomBytes: (n: number) => new Uint8Array(n) };
    expect(await stats.takeBatch(1_000, random)).toBeNull();
    await stats.registerCampaign({ campaignId: 3, name: 'three', createdAt: 0 });
    await stats.admit(3, 'a', 'accepted');
    // Contacts whose failure window ended settle (a script per campaign).
    await stats.settle(2_000);

    expect(new Set(calls.map((c) => c.name))).toEqual(new Set(Object.keys(SCRIPTS)));
    for (const call of calls) {
      const slots = new Set(call.keys.map(keySlot));
      expect(slots.size, `${call.name} ${call.keys.join(' ')}`).toBe(1);
    }
    if (target.name === 'cluster') {
      // The cluster computes the same slots (one key per script is enough: the rest share its slot).
      for (const call of calls.filter((c, i) => calls.findIndex((d) => d.name === c.name) === i)) {
        expect(await client.call('CLUSTER', 'KEYSLOT', call.keys[0]!)).toBe(keySlot(call.keys[0]!));
      }
    }
  });

  it.runIf(target.name === 'single')('on a single server a call carries many numbers (one round trip for many)', async () => {
    let keys = 0;
    let calls = 0;
    const counting = new Proxy(client, {
      get(t, name, receiver) {
        const value = Reflect.get(t, name, receiver) as unknown;
        if (name === 'evalsha') {
          return (sha: string, numKeys: number, ...rest: (string | number)[]) => {
            if (NAMES.get(sha) === 'LEASE_SCRIPT') [calls, keys] = [calls + 1, keys + numKeys];
            return (value as (...a: unknown[]) => Promise<unknown>).call(t, sha, numKeys, ...rest);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
      },
    });
    const store = new RedisStore({ client: counting, prefix: `${prefix}many:`, clock: new ManualClock(0), timeSource: 'clock' });
    const handles = NUMBERS.map((n) => store.open(n.phone, n, 0));
    for (const h of handles) store.reserve(h, 5, 0);
    await store.settle();
    await store.close();
    // Ten numbers asked for at once: one call for all of them (two keys each).
    expect(keys / calls).toBeGreaterThan(2 * 4);
  });

  it.runIf(target.name === 'cluster')('the cluster refuses a script whose keys span two slots (CROSSSLOT)', async () => {
    const [a, b] = [NUMBERS[0]!.phone, NUMBERS[1]!.phone];
    expect(keySlot(`{${a}}`)).not.toBe(keySlot(`{${b}}`));
    const lease = script(LEASE_SCRIPT);
    const args = [0, '', 3_600_000, 60_000, 0, '', 1000, 250, 1, ''];
    const one = [1, 100, 0, 1000, 'x', 1000, 0, '0', 0, 0];
    await expect(runScript(client, lease, [`${prefix}{${a}}:s`, `${prefix}{${a}}:l:x`, `${prefix}{${b}}:s`, `${prefix}{${b}}:l:x`], [...args, ...one, ...one])).rejects.toThrow(/CROSSSLOT/);
  });
});
