/**
 * Campaign statistics in Redis equal the single-process aggregator's for the same reports, spread
 * over several instances and delivered twice, settling included; the campaign model
 * (test/events/campaign-model.ts) runs on them too; one instance gets each batch.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CampaignStatistics, type Admission, type ContactStatusChange } from '../../src/events/index.js';
import { RedisCampaignStatistics } from '../../src/redis/index.js';
import { CAMPAIGN, WINDOW, campaignCommands, newModel, type StatsUnderTest } from '../events/campaign-model.js';
import { seededRandom } from '../events/helpers.js';
import { cleanup, connect, describeTargets, testPrefix, type TestClient } from './helpers.js';

type Report = { kind: 'admit'; contact: string; admission: Admission } | { kind: 'status'; change: ContactStatusChange };

const STATUSES = ['ENQUEUED', 'SENT', 'SERVER', 'DEVICE', 'READ', 'REPLIED', 'EXPIRED', 'FAILED'] as const;
const ADMS: Admission[] = ['accepted', 'invalid-phone', 'invalid-data', 'duplicated', 'blocked', 'already-sent', 'does-not-exist'];
const T = 1_735_732_800_000;

/** The Redis statistics of a fleet of instances behind the model's interface (restart: new instances). */
function onRedis(clients: readonly TestClient[], prefix: string): StatsUnderTest {
  const make = () => clients.map((client) => new RedisCampaignStatistics({ client, prefix, failureWindowMs: WINDOW, batchIntervalMs: 0 }));
  let stores = make();
  let n = 0;
  const any = () => stores[n++ % stores.length]!;
  const random = seededRandom(9);
  let registered = false;
  const register = async () => {
    if (!registered) await stores[0]!.registerCampaign({ campaignId: CAMPAIGN, name: 'model', createdAt: T });
    registered = true;
  };
  return {
    admit: async (id, admission) => {
      await register();
      await any().admit(CAMPAIGN, id, admission);
    },
    record: async (change) => {
      await register();
      await any().recordStatus(change);
    },
    countsAt: async (now) => {
      await register();
      await any().settle(now);
      return any().counts(CAMPAIGN);
    },
    batch: async (now) => {
      await register();
      await any().takeBatch(now, random);
    },
    restart: async () => {
      stores = make();
    },
  };
}

describeTargets('RedisCampaignStatistics', (target) => {
  const prefix = testPrefix('campaign');
  const clients = [connect(target), connect(target), connect(target)];
  let run = 0;
  afterAll(async () => {
    await cleanup(clients[0]!, prefix);
    for (const c of clients) c.disconnect();
  });

  const report = fc.oneof(
    fc.record({ kind: fc.constant('admit' as const), contact: fc.constantFrom('a', 'b', 'c', 'd'), admission: fc.constantFrom(...ADMS) }),
    fc.record({
      kind: fc.constant('status' as const),
      change: fc.record({
        campaignId: fc.constant(7),
        contactId: fc.constantFrom('a', 'b', 'c', 'd'),
        retryIndex: fc.constantFrom(null, 0, 1),
        status: fc.constantFrom(...STATUSES),
        failureCode: fc.constantFrom(undefined, 131026, 131000),
        blocklistResponse: fc.boolean(),
        retrying: fc.boolean(),
        at: fc.constantFrom(T, T + 400, T + 1_000, T + 2_500),
      }),
    }),
  ) as fc.Arbitrary<Report>;

  it('property: the same reports, spread over instances and delivered twice, give the single-process counts, settling included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(report, { minLength: 1, maxLength: 25 }), fc.array(fc.nat(), { minLength: 1, maxLength: 60 }), async (reports, order) => {
        const p = `${prefix}${++run}:`;
        const local = new CampaignStatistics({ failureWindowMs: 1_000 });
        local.registerCampaign({ campaignId: 7, name: 'c', createdAt: 0 });
        const apply = (r: Report): void => (r.kind === 'admit' ? local.admit(7, r.contact, r.admission) : local.recordStatus(r.change));
        for (const r of reports) apply(r);
        // The fleet: the same reports in the same order, each by any instance, some delivered twice in a row.
        const stores = clients.map((client) => new RedisCampaignStatistics({ client, prefix: p, failureWindowMs: 1_000 }));
        await stores[0]!.registerCampaign({ campaignId: 7, name: 'c', createdAt: 0 });
        for (const [i, r] of reports.entries()) {
          const times = (order[i % order.length] ?? 0) % 3 === 0 ? 2 : 1;
          for (let t = 0; t < times; t++) {
            const s = stores[((order[(i + t) % order.length] ?? 0) + t) % stores.length]!;
            if (r.kind === 'admit') await s.admit(7, r.contact, r.admission);
            else await s.recordStatus(r.change);
          }
        }
        expect(await stores[1]!.counts(7)).toEqual(local.counts(7));
        // The windows' ends pass: the same contacts settle as sent.
        for (const now of [T + 1_000, T + 5_000]) {
          local.settle(now);
          await stores[2]!.settle(now);
          expect(await stores[0]!.counts(7)).toEqual(local.counts(7));
        }
      }),
      { numRuns: 40 },
    );
  });

  it('the campaign model: counts equal the reference after every step, on a fleet of instances (model-based)', async () => {
    await fc.assert(
      fc.asyncProperty(campaignCommands, async (commands) => {
        const p = `${prefix}${++run}:`;
        await fc.asyncModelRun(() => ({ model: newModel(T), real: { stats: onRedis(clients, p) } }), commands);
      }),
      { numRuns: 60 },
    );
  });

  it('a contact in its window is remaining until a batch claim settles it; its state and window survive in Redis', async () => {
    const p = `${prefix}window:`;
    const s = new RedisCampaignStatistics({ client: clients[0]!, prefix: p, failureWindowMs: 1_000, batchIntervalMs: 0 });
    await s.registerCampaign({ campaignId: 3, name: 'three', createdAt: T });
    await s.admit(3, 'x', 'accepted');
    await s.recordStatus({ campaignId: 3, contactId: 'x', retryIndex: null, status: 'SENT', at: T });
    expect(await s.counts(3)).toMatchObject({ total: 1, sent: 0, remaining: 1 });
    expect(await clients[0]!.zscore(`${p}{camp:3}:contacts:window`, 'x')).toBe(String(T + 1_000));
    const early = await s.takeBatch(T + 999, seededRandom(1));
    expect(early?.campaigns[0]).toMatchObject({ status: 'RUNNING', count_remaining: 1 });
    const batch = await s.takeBatch(T + 1_000, seededRandom(2));
    expect(batch?.campaigns[0]).toMatchObject({ status: 'FINISHED', count_sent: 1, count_remaining: 0, count_invalid_data: 0 });
    // A failure reported after the window changes no count.
    await s.recordStatus({ campaignId: 3, contactId: 'x', retryIndex: null, status: 'FAILED', failureCode: 131000, at: T + 1_500 });
    expect(await s.counts(3)).toMatchObject({ sent: 1, failed: 0, remaining: 0 });
  });

  it('reads a contact state of an older version (no stage) as the count it had', async () => {
    const p = `${prefix}legacy:`;
    const s = new RedisCampaignStatistics({ client: clients[0]!, prefix: p });
    await s.registerCampaign({ campaignId: 4, name: 'four', createdAt: T });
    await s.admit(4, 'x', 'accepted');
    await s.recordStatus({ campaignId: 4, contactId: 'x', retryIndex: null, status: 'DEVICE', at: T });
    // As an older version wrote it: sent (SENT and DEVICE bits), no stage.
    await clients[0]!.hset(`${p}{camp:4}:contacts`, 'x', '32,-1,10');
    await s.recordStatus({ campaignId: 4, contactId: 'x', retryIndex: null, status: 'READ', at: T + 1 });
    expect(await s.counts(4)).toMatchObject({ total: 1, sent: 1, delivered: 1, read: 1, remaining: 0 });
  });

  it('takeBatch: one instance gets the batch; the interval is fleet-wide', async () => {
    const p = `${prefix}batch:`;
    const [a, b] = clients.slice(0, 2).map((client) => new RedisCampaignStatistics({ client, prefix: p, batchIntervalMs: 60_000 }));
    const random = { randomBytes: (n: number) => new Uint8Array(n).fill(7) };
    await a!.registerCampaign({ campaignId: 9, name: 'nine', createdAt: 0 });
    await a!.admit(9, 'x', 'accepted');
    await b!.recordStatus({ campaignId: 9, contactId: 'x', retryIndex: null, status: 'DEVICE', at: 0 });
    const first = await b!.takeBatch(1_000, random);
    expect(first?.campaigns[0]).toMatchObject({ campaign_id: 9, count_total: 1, count_sent: 1, status: 'FINISHED' });
    expect(await a!.takeBatch(1_000, random)).toBeNull();
    await a!.recordStatus({ campaignId: 9, contactId: 'x', retryIndex: null, status: 'READ', at: 0 });
    expect(await a!.takeBatch(30_000, random)).toBeNull();
    expect((await a!.takeBatch(61_000, random))?.campaigns[0]).toMatchObject({ count_read: 1, count_delivered: 1 });
  });

  it('takeBatch: instances asking at once, one batch per interval; a claim that finds nothing is given back', async () => {
    const p = `${prefix}claim:`;
    const stores = clients.map((client) => new RedisCampaignStatistics({ client, prefix: p, batchIntervalMs: 60_000 }));
    const random = { randomBytes: (n: number) => new Uint8Array(n).fill(3) };
    // Nothing changed yet: nobody sends, and nobody keeps the interval for nothing.
    expect(await Promise.all(stores.map((s) => s.takeBatch(1_000, random)))).toEqual([null, null, null]);
    for (const id of [1, 2, 3]) {
      await stores[0]!.registerCampaign({ campaignId: id, name: `c${id}`, createdAt: 0 });
      await stores[id - 1]!.admit(id, 'x', 'accepted');
    }
    const batches = (await Promise.all(stores.map((s) => s.takeBatch(2_000, random)))).filter((b) => b !== null);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.campaigns.map((c) => c.campaign_id)).toEqual([1, 2, 3]);
  });

  it('a finished campaign keeps its contact states for retainContactsMs after its last change, then its counts are final', async () => {
    const p = `${prefix}settle:`;
    const client = clients[0]!;
    const s = new RedisCampaignStatistics({ client, prefix: p, retainContactsMs: 3_600_000 });
    const contacts = `${p}{camp:5}:contacts`;
    await s.registerCampaign({ campaignId: 5, name: 'five', createdAt: 0 });
    await s.admit(5, 'x', 'accepted');
    expect(await client.pttl(contacts)).toBe(-1); // something remains: kept
    await s.recordStatus({ campaignId: 5, contactId: 'x', retryIndex: null, status: 'DEVICE', at: 0 });
    const ttl = await client.pttl(contacts);
    expect(ttl).toBeGreaterThan(3_590_000); // nothing remains: expires an hour after the last change
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    await s.admit(5, 'y', 'accepted');
    expect(await client.pttl(contacts)).toBe(-1); // remaining again: kept again
    await s.recordStatus({ campaignId: 5, contactId: 'y', retryIndex: null, status: 'DEVICE', at: 0 });
    // Expiry reached (removed here rather than waited for): a late report changes nothing.
    const before = await s.counts(5);
    await client.del(contacts);
    await s.recordStatus({ campaignId: 5, contactId: 'x', retryIndex: null, status: 'READ', at: 0 });
    await s.admit(5, 'z', 'accepted');
    expect(await s.counts(5)).toEqual(before);
    expect(await client.hget(`${p}{camp:5}:counts`, 'lateIgnored')).toBe('2');
  });

  it('refuses a retention that is not a whole positive number of milliseconds', () => {
    expect(() => new RedisCampaignStatistics({ client: clients[0]!, retainContactsMs: 0 })).toThrow(/retainContactsMs/);
  });
});

describe('RedisCampaignStatistics refuses bad values before touching Redis', () => {
  // Every command fails the test: the checks must come before any call.
  const untouchable = new Proxy({}, { get: (_t, name) => () => Promise.reject(new Error(`Redis called: ${String(name)}`)) });
  const stats = new RedisCampaignStatistics({ client: untouchable as never, prefix: 'never:' });

  it.each([
    ['registerCampaign(campaignId)', () => stats.registerCampaign({ campaignId: 1.5, name: 'c', createdAt: 0 })],
    ['registerCampaign(name)', () => stats.registerCampaign({ campaignId: 1, name: 7 as never, createdAt: 0 })],
    ['registerCampaign(createdAt)', () => stats.registerCampaign({ campaignId: 1, name: 'c', createdAt: Number.NaN })],
    ['recordStatus(status)', () => stats.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'DELIVERED' as never, at: 0 })],
    ['recordStatus(retryIndex)', () => stats.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: 0.5, status: 'SENT', at: 0 })],
    ['takeBatch(now)', () => stats.takeBatch(Number.POSITIVE_INFINITY, { randomBytes: (n) => new Uint8Array(n) })],
  ] as const)('%s', async (argument, call) => {
    await expect(call()).rejects.toMatchObject({ name: 'ArgumentError', argument });
  });
});
