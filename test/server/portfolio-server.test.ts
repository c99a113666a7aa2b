/**
 * Portfolio limits through the reference server: the businesses answer's `output` counts the
 * portfolio's room once messages went out; on Redis two instances share the portfolio's limit
 * (RedisPortfolios), and a server on Redis refuses an engine that keeps portfolios alone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { RedisPortfolios } from '../../src/redis/index.js';
import { buildServer } from '../../src/server/index.js';
import { cleanup, connect, describeTargets, testPrefix } from '../redis/helpers.js';
import { KEY_1, api, contacts, startServer, testFleet, waitFor, type Started } from './helpers.js';

/** testFleet with business 1's three numbers in a portfolio of `limit` recipients a day. */
function portfolioFleet(limit = 5) {
  const fleet = testFleet();
  return { ...fleet, portfolios: [{ id: '1029384756', messagingLimit24h: limit }], businesses: fleet.businesses.map((b) => (b.id === 1 ? { ...b, portfolioId: '1029384756' } : b)) };
}

describe('portfolio limits on the server', () => {
  it("GET /messenger/businesses/ answers output within the portfolio's room, and only that many recipients are sent to", async () => {
    const s = await startServer({ fleet: portfolioFleet() });
    try {
      const before = await api(s.url, '/messenger/businesses/', { key: KEY_1 });
      expect((before.json as { template_types: { output: number }[] }[])[0]!.template_types[0]!.output).toBe(5);
      const sent = await api(s.url, '/messenger/messages/', { method: 'POST', key: KEY_1, body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(8) } });
      expect(sent.status).toBe(202);
      await waitFor(() => s.channel.sends.length === 5, 'five messages sent');
      const after = await api(s.url, '/messenger/businesses/', { key: KEY_1 });
      expect((after.json as { template_types: { output: number }[] }[])[0]!.template_types[0]!.output).toBe(0);
      expect(new Set(s.channel.sends.map((m) => m.to)).size).toBe(5);
    } finally {
      await s.server.close();
    }
  });

  it("a server on Redis refuses an engine that keeps a fleet's portfolios alone", () => {
    expect(() =>
      buildServer({ engine: createEngine(portfolioFleet()), apiKeys: [{ key: KEY_1, companyId: 1, label: 'one' }], logger: false, processMetrics: false, redis: { client: {} as never } }),
    ).toThrow(/the fleet has portfolios, and the engine keeps their limits alone/);
  });
});

describeTargets('portfolio limits on the server on Redis', (target) => {
  const client = connect(target);
  const base = testPrefix('pfserver');
  afterAll(async () => {
    await cleanup(client, base);
    client.disconnect();
  });

  it('two instances sharing a portfolio of 7 send to exactly 7 distinct recipients together', async () => {
    const started: Started[] = [];
    const sources: RedisPortfolios[] = [];
    const engines: ReturnType<typeof createEngine>[] = [];
    try {
      for (const consumer of ['a', 'b']) {
        let engine: ReturnType<typeof createEngine> | undefined;
        const source = new RedisPortfolios({
          client,
          prefix: base,
          instanceId: consumer,
          slotsPerLease: 2,
          retryMs: 50,
          onCapacity: (ids) => ids.forEach((id) => engine?.portfolioCapacityChanged(id)),
        });
        engine = createEngine(portfolioFleet(7), { portfolioSource: source });
        sources.push(source);
        engines.push(engine);
        started.push(await startServer({ engine, redis: { client, prefix: base, consumer } }));
      }
      const [a, b] = started as [Started, Started];
      const posts = await Promise.all([
        api(a.url, '/messenger/messages/', { method: 'POST', key: KEY_1, body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(10) } }),
        api(b.url, '/messenger/messages/', { method: 'POST', key: KEY_1, body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(10, 10) } }),
      ]);
      expect(posts.map((p) => p.status)).toEqual([202, 202]);
      const sends = () => [...a.channel.sends, ...b.channel.sends];
      await waitFor(() => sends().length >= 7, 'seven messages sent');
      // Full in Redis for both, and neither holds a slot: no further new recipient can go.
      await waitFor(() => engines.every((e) => e.portfolios()[0]?.available === 0), 'the portfolio full for both instances');
      expect(sends().length).toBe(7);
      expect(new Set(sends().map((m) => m.to)).size).toBe(7);
    } finally {
      for (const s of started) await s.server.close();
      for (const s of sources) await s.close();
    }
  });
});
