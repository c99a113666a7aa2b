/**
 * The shared contact queue on a real Redis: chunks written whole with their events, claimed one a
 * flow per round (a small campaign is not behind a huge one), progress recorded and read back by
 * the instance that takes a chunk over, renewals that do not take back what another instance took.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContactQueue, type ChunkBody } from '../../src/server/backends/redis/queue.js';
import { cleanup, connect, describeTargets, testPrefix, type TestClient } from '../redis/helpers.js';

function chunk(campaignId: number | undefined, first: number, n: number, requestId = 'r1'): ChunkBody {
  return {
    requestId,
    companyId: 7,
    businessId: 1,
    typeId: 1,
    ...(campaignId === undefined ? {} : { campaignId }),
    maxRetries: 2,
    retryInterval: 0,
    contacts: Array.from({ length: n }, (_, i) => ({ id: first + i, costCenterId: 0, phone: String(5511900000000 + first + i) })),
  };
}

describeTargets('shared contact queue (Redis)', (target) => {
  let client: TestClient;
  let base: string;
  const queue = (consumer: string, leaseMs = 30_000) => new ContactQueue({ client, consumer, prefix: `${base}{q}:`, leaseMs });

  beforeAll(() => {
    client = connect(target);
    base = testPrefix('queue');
  });
  afterAll(async () => {
    await cleanup(client, base);
    client.disconnect();
  });

  it('refuses a prefix without a hash tag', () => {
    expect(() => new ContactQueue({ client, consumer: 'a', prefix: 'sendpool:' })).toThrow(/hash tag/);
  });

  it('claims one chunk of each flow per round: a small campaign goes with the first chunk of a huge one', async () => {
    const a = new ContactQueue({ client, consumer: 'a', prefix: `${base}{fair}:` });
    const huge = Array.from({ length: 50 }, (_, k) => chunk(1, k * 100, 100));
    await a.enqueue(huge, ['{"e":1}']);
    await a.enqueue([chunk(2, 90_000, 3)]);
    const first = await a.claim();
    expect(first.map((c) => c.body.campaignId).sort()).toEqual([1, 2]);
    const events = (await client.xrange(a.outboxKey, '-', '+')) as [string, string[]][];
    expect(events.map(([, f]) => f[1])).toEqual(['{"e":1}']);
  });

  it('records hand-outs and finals; a chunk taken over comes with them, and its old holder learns it lost it', async () => {
    const a = queue('a');
    const [id] = await a.enqueue([chunk(3, 1, 4)]);
    // The fleet's backlog counts the chunk's contacts until it is done.
    expect(await a.backlog()).toBe(4);
    const [held] = await a.claim();
    expect(held?.entryId).toBe(id);
    await a.step({
      handouts: [
        { chunk: held!, index: 0, count: 1 },
        { chunk: held!, index: 1, count: 2 },
      ],
      finals: [{ chunk: held!, index: 0, state: 'sent' }],
      events: ['{"status":"SENT"}'],
    });
    // A renews within its lease: nobody may take it.
    expect(await a.renew([held!])).toEqual([]);
    expect(await queue('b').reclaim()).toEqual([]);
    // B, with a lease of 0 ms, finds it idle "for the whole lease" and takes it over.
    const [taken] = await queue('b', 0).reclaim();
    expect(taken?.entryId).toBe(id);
    expect([...taken!.handouts]).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect([...taken!.finals]).toEqual([[0, 'sent']]);
    expect(taken!.body.contacts.map((c) => c.id)).toEqual([1, 2, 3, 4]);
    // A's renewal does not take it back: A is told it lost it.
    expect((await a.renew([held!])).map((c) => c.entryId)).toEqual([id]);
    // B finishes it: the chunk, its progress and the emptied stream are gone.
    const b = queue('b');
    await b.step({ finals: [1, 2, 3].map((index) => ({ chunk: taken!, index, state: 'sent' })), done: [taken!] });
    expect(await client.exists(b.progressKey(taken!))).toBe(0);
    expect(await b.backlog()).toBe(0);
    expect(await client.exists(taken!.stream)).toBe(0);
    expect(await client.sismember(b.activeKey, taken!.stream)).toBe(0);
  });

  it('a request without a campaign is a flow of its own', async () => {
    const a = queue('a');
    expect(a.streamOf({ companyId: 7, requestId: 'abc' })).toBe(`${base}{q}:s:rabc`);
    expect(a.streamOf({ companyId: 7, campaignId: 9, requestId: 'abc' })).toBe(`${base}{q}:s:c7.9`);
  });
});
