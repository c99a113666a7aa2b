/**
 * The dashboard of an instance of the server on Redis: output as GET /messenger/businesses/
 * answers it on that instance, and campaigns said not to be listed (their statistics are shared in
 * Redis, not kept by the instance).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanup, connect, describeTargets, testPrefix, type TestClient } from '../redis/helpers.js';
import { api, contacts, fastChannel, startServer, waitFor, type Started } from '../server/helpers.js';

describeTargets('the dashboard of a server on Redis', (target) => {
  let client: TestClient;
  let base: string;
  let s: Started;

  beforeAll(async () => {
    client = connect(target);
    base = testPrefix('dashboard');
    s = await startServer({ redis: { client, prefix: base, consumer: 'a' }, channel: fastChannel({ seed: 1 }) });
  });
  afterAll(async () => {
    await s?.server.close();
    await cleanup(client, base);
    client.disconnect();
  });

  it('shows the instance’s output and says campaigns are not listed here', async () => {
    // Before any send the buckets are full: output holds still between the two reads.
    const businesses = (await api(s.url, '/messenger/businesses/')).json;
    const pools = (await api(s.url, '/dashboard/api/pools/')).json;
    expect(pools.pools.map((p: { output: number }) => p.output)).toEqual([businesses[0].template_types[0].output]);
    expect((await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 5, contacts: contacts(50) } })).status).toBe(202);
    await waitFor(() => s.server.sendpool.idle(), 'the contacts sent');
    const campaigns = (await api(s.url, '/dashboard/api/campaigns/')).json;
    expect(campaigns).toMatchObject({ kept: false, total: 0, campaigns: [] });
  });
});
