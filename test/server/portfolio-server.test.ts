/**
 * Portfolio limits through the reference server: the businesses answer's `output` counts the
 * portfolio's room once messages went out, and a server on Redis refuses a fleet with portfolios
 * (their limit is not shared between instances yet).
 */
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { buildServer } from '../../src/server/index.js';
import { KEY_1, api, contacts, startServer, testFleet, waitFor } from './helpers.js';

/** testFleet with business 1's three numbers in a portfolio of 5 recipients a day. */
function portfolioFleet() {
  const fleet = testFleet();
  return { ...fleet, portfolios: [{ id: '1029384756', messagingLimit24h: 5 }], businesses: fleet.businesses.map((b) => (b.id === 1 ? { ...b, portfolioId: '1029384756' } : b)) };
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

  it('a server on Redis refuses a fleet with portfolios', () => {
    expect(() =>
      buildServer({ engine: createEngine(portfolioFleet()), apiKeys: [{ key: KEY_1, companyId: 1, label: 'one' }], logger: false, processMetrics: false, redis: { client: {} as never } }),
    ).toThrow(/the fleet has portfolios, whose limit is not shared between instances on Redis yet/);
  });
});
