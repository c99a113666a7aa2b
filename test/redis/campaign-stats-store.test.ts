/**
 * Campaign statistics in Redis equal the single-process aggregator's for any order and duplication
 * of the same reports, spread over several instances; one instance gets each batch.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CampaignStatistics, type Admission, type ContactStatusChange } from '../../src/events/index.js';
import { RedisCampaignStatistics } from '../../src/redis/index.js';
import { cleanup, connect, describeTargets, testPrefix } from './helpers.js';

type Report = { kind: 'admit'; contact: string; admission: Admission } | { kind: 'status'; change: ContactStatusChange };

const STATUSES = ['ENQUEUED', 'SENT', 'SERVER', 'DEVICE', 'READ', 'REPLIED', 'EXPIRED', 'FAILED'] as const;
const ADMS: Admission[] = ['accepted', 'invalid-phone', 'duplicated', 'blocked', 'already-sent', 'does-not-exist'];

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
      }),
    }),
  ) as fc.Arbitrary<Report>;

  it('property: any order and duplication across instances gives the single-process counts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(report, { minLength: 1, maxLength: 25 }), fc.array(fc.nat(), { minLength: 1, maxLength: 60 }), async (reports, order) => {
        const p = `${prefix}${++run}:`;
        const local = new CampaignStatistics();
        local.registerCampaign({ campaignId: 7, name: 'c', createdAt: 0 });
        const apply = (r: Report): void => (r.kind === 'admit' ? local.admit(7, r.contact, r.admission) : local.recordStatus(r.change));
        for (const r of reports) apply(r);
        // The fleet: the same reports, each delivered once or more, in a shuffled order, by any instance.
        const stores = clients.map((client) => new RedisCampaignStatistics({ client, prefix: p }));
        await stores[0]!.registerCampaign({ campaignId: 7, name: 'c', createdAt: 0 });
        const deliveries = [...reports.map((_, i) => i), ...order.map((k) => k % reports.length)];
        const shuffled = deliveries.map((d, i) => [order[i % order.length]! * 31 + i * 17, d] as const).sort((x, y) => x[0] - y[0]);
        for (const [, d] of shuffled) {
          const r = reports[d]!;
          const s = stores[d % stores.length]!;
          if (r.kind === 'admit') await s.admit(7, r.contact, r.admission);
          else await s.recordStatus(r.change);
        }
        expect(await stores[1]!.counts(7)).toEqual(local.counts(7));
      }),
      { numRuns: 40 },
    );
  });

  it('takeBatch: one instance gets the batch; the interval is fleet-wide', async () => {
    const p = `${prefix}batch:`;
    const [a, b] = clients.slice(0, 2).map((client) => new RedisCampaignStatistics({ client, prefix: p, batchIntervalMs: 60_000 }));
    const random = { randomBytes: (n: number) => new Uint8Array(n).fill(7) };
    await a!.registerCampaign({ campaignId: 9, name: 'nine', createdAt: 0 });
    await a!.admit(9, 'x', 'accepted');
    await b!.recordStatus({ campaignId: 9, contactId: 'x', retryIndex: null, status: 'SENT' });
    const first = await b!.takeBatch(1_000, random);
    expect(first?.campaigns[0]).toMatchObject({ campaign_id: 9, count_total: 1, count_sent: 1, status: 'FINISHED' });
    expect(await a!.takeBatch(1_000, random)).toBeNull();
    await a!.recordStatus({ campaignId: 9, contactId: 'x', retryIndex: null, status: 'READ' });
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
    await s.recordStatus({ campaignId: 5, contactId: 'x', retryIndex: null, status: 'SENT' });
    const ttl = await client.pttl(contacts);
    expect(ttl).toBeGreaterThan(3_590_000); // nothing remains: expires an hour after the last change
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    await s.admit(5, 'y', 'accepted');
    expect(await client.pttl(contacts)).toBe(-1); // remaining again: kept again
    await s.recordStatus({ campaignId: 5, contactId: 'y', retryIndex: null, status: 'SENT' });
    // Expiry reached (removed here rather than waited for): a late report changes nothing.
    const before = await s.counts(5);
    await client.del(contacts);
    await s.recordStatus({ campaignId: 5, contactId: 'x', retryIndex: null, status: 'READ' });
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
    ['recordStatus(status)', () => stats.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: null, status: 'DELIVERED' as never })],
    ['recordStatus(retryIndex)', () => stats.recordStatus({ campaignId: 1, contactId: 'a', retryIndex: 0.5, status: 'SENT' })],
    ['takeBatch(now)', () => stats.takeBatch(Number.POSITIVE_INFINITY, { randomBytes: (n) => new Uint8Array(n) })],
  ] as const)('%s', async (argument, call) => {
    await expect(call()).rejects.toMatchObject({ name: 'ArgumentError', argument });
  });
});
