/**
 * The dashboard over HTTP, without a browser: its files and their headers, its data endpoints
 * (scope, paging, checked queries, what each figure is made of), operator keys, and the option.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createEngine, ManualClock } from '../../src/index.js';
import { buildServer, checkApiKeys, isApiKeysError, isServerOptionsError, loadApiKeys } from '../../src/server/index.js';
import { DASHBOARD_CSP } from '../../src/server/dashboard/assets.js';
import { api, contacts, fastChannel, KEY_1, KEY_2, quietProvider, startReceiver, startServer, testFleet, waitFor } from '../server/helpers.js';

const OPERATOR_KEY = 'test-operator-key-000000001';
const keys = [
  { key: KEY_1, companyId: 1, label: 'one' },
  { key: KEY_2, companyId: 2, label: 'two' },
  { key: OPERATOR_KEY, operator: true as const, label: 'operators' },
];

/** One business of `count` numbers (company 1), for the paging tests. */
function bigFleet(count: number) {
  return {
    businesses: [
      {
        id: 1,
        name: 'Big',
        companyId: 1,
        numbers: Array.from({ length: count }, (_, i) => ({ phone: `55119${String(i).padStart(8, '0')}`, throughputPerHour: 1000, messagingLimit24h: 10_000, status: 'active' })),
        templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
      },
    ],
    templates: [{ id: 100, name: 'billing_a', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
  };
}

describe('the dashboard’s files', () => {
  it('are served without a key, with a strict CSP, and hold no key or secret', async () => {
    const s = await startServer({ apiKeys: keys });
    try {
      const page = await api(s.url, '/dashboard/', { key: null });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
      expect(DASHBOARD_CSP).toBe("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      // No inline script or style: the page loads one module and one sheet.
      expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(page.text).not.toMatch(/<style|\sstyle=|\son[a-z]+=/);
      const js = await api(s.url, '/dashboard/dashboard.js', { key: null });
      expect(js.status).toBe(200);
      expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      const css = await api(s.url, '/dashboard/dashboard.css', { key: null });
      expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
      for (const text of [page.text, js.text, css.text]) {
        for (const secret of [KEY_1, KEY_2, OPERATOR_KEY, s.server.sendpool.webhookSecret(1), 'whsec_']) expect(text).not.toContain(secret);
        expect(text).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/); // nothing from another origin (the SVG namespace is a name, not a load)
      }
      // Without the slash the page's relative links would miss: a relative redirect (holds behind a path prefix).
      const bare = await fetch(`${s.url}/dashboard`, { redirect: 'manual' });
      expect(bare.status).toBe(308);
      expect(bare.headers.get('location')).toBe('dashboard/');
    } finally {
      await s.server.close();
    }
  });

  it('are not served with dashboard: false, and a bad option is refused before anything listens', async () => {
    const s = await startServer({ apiKeys: keys, dashboard: false });
    try {
      expect((await api(s.url, '/dashboard/', { key: null })).status).toBe(401);
      expect((await api(s.url, '/dashboard/')).status).toBe(404);
      expect((await api(s.url, '/dashboard/api/pools/')).status).toBe(404);
    } finally {
      await s.server.close();
    }
    let error: unknown;
    try {
      buildServer({ engine: createEngine(testFleet()), logger: false, dashboard: { sampleIntervalMs: 5, colour: 'blue' } as never });
    } catch (e) {
      error = e;
    }
    expect(isServerOptionsError(error)).toBe(true);
    expect((error as { problems: { path: string; message: string }[] }).problems.map((p) => p.message)).toEqual([
      'dashboard.colour: expected no such option (known: sampleIntervalMs), got "blue" (string)',
      'dashboard.sampleIntervalMs: expected an integer from 100 to 3600000 (ms), got 5 (number)',
    ]);
  });
});

describe('the dashboard’s data', () => {
  it('asks for the API’s key and checks its queries, naming each parameter', async () => {
    const s = await startServer({ apiKeys: keys });
    try {
      expect((await api(s.url, '/dashboard/api/numbers/', { key: null })).json.error.code).toBe('missing_api_key');
      const bad = await api(s.url, '/dashboard/api/numbers/?limit=201&status=sleeping&colour=blue&offset=-1');
      expect(bad.status).toBe(422);
      expect(bad.json.error.problems.map((p: { path: string }) => p.path).sort()).toEqual(['$.query.colour', '$.query.limit', '$.query.offset', '$.query.status']);
      expect(bad.json.error.problems.find((p: { path: string }) => p.path === '$.query.limit').message).toBe('$.query.limit: expected an integer from 1 to 200, got "201" (string)');
      const data = await api(s.url, '/dashboard/api/pools/');
      expect(data.headers.get('cache-control')).toBe('no-store');
      expect(data.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    } finally {
      await s.server.close();
    }
  });

  it('shows each pool’s output as GET /messenger/businesses/ does, its throughput, and output samples newer than `since`', async () => {
    const s = await startServer({ apiKeys: keys, dashboard: { sampleIntervalMs: 100 } });
    try {
      await api(s.url, '/operator/numbers/5511990000002/pause/', { method: 'POST' });
      const businesses = (await api(s.url, '/messenger/businesses/')).json;
      await waitFor(async () => (await api(s.url, '/dashboard/api/pools/')).json.history.t.length >= 3, 'three samples');
      const pools = (await api(s.url, '/dashboard/api/pools/')).json;
      expect(pools.scope).toEqual({ operator: false, company_id: 1 });
      expect(pools.pools.map((p: { output: number }) => p.output)).toEqual([businesses[0].template_types[0].output]);
      expect(pools.pools[0]).toMatchObject({ business_id: 1, template_type_id: 10, throughput_per_hour: 2_000_000, queued: 0, waiting_retry: 0, blocked: null });
      expect(pools.totals).toEqual({ output: pools.pools[0].output, throughput_per_hour: 2_000_000, queued: 0, waiting_retry: 0 });
      // One list of sample times; the pool's values (and the total, its only pool) follow it.
      const { t, output } = pools.history;
      expect(t).toEqual([...t].sort((a: number, b: number) => a - b));
      expect(pools.pools[0].history).toEqual(output);
      const newer = (await api(s.url, `/dashboard/api/pools/?since=${t.at(-1)}`)).json;
      expect(newer.history.t.every((x: number) => x > t.at(-1))).toBe(true);
      expect(newer.pools[0].history).toHaveLength(newer.history.t.length);
    } finally {
      await s.server.close();
    }
  });

  it('shows how full each window of a number is, from the engine’s own limits', async () => {
    const clock = new ManualClock(Date.UTC(2025, 0, 1, 12));
    const fleet = testFleet(50);
    for (const n of fleet.businesses[0]!.numbers) Object.assign(n, { throughputPerHour: 1000, messagingLimit24h: 5000 });
    const quiet = quietProvider();
    const s = await startServer({ apiKeys: keys, engine: createEngine(fleet, { clock }), clock, channel: quiet.channel() });
    try {
      expect((await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(30) } })).status).toBe(202);
      await waitFor(() => s.server.sendpool.engine.stats().sent === 30, 'thirty sends');
      const { numbers } = (await api(s.url, '/dashboard/api/numbers/?business_id=1')).json;
      expect(numbers.map((n: { windows: unknown }) => n.windows)).toEqual(
        Array.from({ length: 3 }, () => ({ second: { used: 10, limit: 50 }, hour: { used: 10, limit: 1000 }, day: { used: 10, limit: 5000 } })),
      );
      expect(numbers.map((n: { available: number }) => n.available)).toEqual([40, 40, 40]);
      // Time moves on: the second's window refills at once, the hour's by its rate, the day's not at all.
      clock.advance(36_000);
      const later = (await api(s.url, '/dashboard/api/numbers/?business_id=1&limit=1')).json.numbers[0].windows;
      expect(later).toEqual({ second: { used: 0, limit: 50 }, hour: { used: 0, limit: 1000 }, day: { used: 10, limit: 5000 } });
    } finally {
      await s.server.close();
    }
  });

  it('pages 10,000 numbers in small answers, with filters', async () => {
    const s = await startServer({ apiKeys: keys, engine: createEngine(bigFleet(10_000)) });
    try {
      const first = await api(s.url, '/dashboard/api/numbers/');
      expect(first.json.total).toBe(10_000);
      expect(first.json.numbers).toHaveLength(50);
      expect(first.text.length).toBeLessThan(30_000);
      const page = await api(s.url, '/dashboard/api/numbers/?offset=9990&limit=200');
      expect(page.json.numbers.map((n: { phone: string }) => n.phone)).toEqual(Array.from({ length: 10 }, (_, i) => `55119${String(9990 + i).padStart(8, '0')}`));
      expect((await api(s.url, '/dashboard/api/numbers/?q=0000123')).json.numbers.map((n: { phone: string }) => n.phone)).toEqual(
        [
          '5511900001230',
          '5511900001231',
          '5511900001232',
          '5511900001233',
          '5511900001234',
          '5511900001235',
          '5511900001236',
          '5511900001237',
          '5511900001238',
          '5511900001239',
          '5511900000123',
        ].sort(),
      );
      await api(s.url, '/operator/numbers/5511900000007/pause/', { method: 'POST' });
      const paused = (await api(s.url, '/dashboard/api/numbers/?status=paused')).json;
      expect(paused.counts).toEqual({ active: 9_999, paused: 1 });
      expect(paused.numbers.map((n: { phone: string; last_change: { source: string } }) => [n.phone, n.last_change.source])).toEqual([['5511900000007', 'api']]);
      const pools = await api(s.url, '/dashboard/api/pools/');
      expect(pools.text.length).toBeLessThan(10_000);
      expect(pools.json.totals.throughput_per_hour).toBe(9_999_000);
    } finally {
      await s.server.close();
    }
  });

  it('scopes every list to the key: a company’s own, an operator key every company’s', async () => {
    const s = await startServer({ apiKeys: keys });
    try {
      const phones = async (key: string) => (await api(s.url, '/dashboard/api/numbers/', { key })).json.numbers.map((n: { phone: string }) => n.phone);
      expect(await phones(KEY_2)).toEqual(['5521990000001']);
      expect(await phones(KEY_1)).toEqual(['5511990000001', '5511990000002', '5511990000003']);
      expect(await phones(OPERATOR_KEY)).toEqual(['5511990000001', '5511990000002', '5511990000003', '5521990000001']);
      const pools = async (key: string) => (await api(s.url, '/dashboard/api/pools/', { key })).json.pools.map((p: { business_id: number }) => p.business_id);
      expect(await pools(KEY_2)).toEqual([2]);
      expect(await pools(OPERATOR_KEY)).toEqual([1, 2]);
      const templates = async (key: string) => (await api(s.url, '/dashboard/api/templates/', { key })).json.templates.map((t: { id: number }) => t.id);
      expect(await templates(KEY_2)).toEqual([300]);
      expect(await templates(OPERATOR_KEY)).toEqual([100, 101, 102, 300]);
    } finally {
      await s.server.close();
    }
  });

  it('tells why a template or a number stands as it does: an operator, the provider and its words', async () => {
    const quiet = quietProvider();
    const s = await startServer({ apiKeys: keys, channel: quiet.channel() });
    try {
      const until = Date.now() + 3 * 3_600_000;
      quiet.sink().templateStatus!({ templateId: 101, status: 'paused', until, reason: 'quality RED' });
      quiet.sink().numberLimits!({ phone: '5511990000002', limits: { messagingLimit24h: 10_000 }, reason: 'UPGRADE TIER_10K' });
      await api(s.url, '/operator/templates/102/disable/', { method: 'POST' });
      const templates = (await api(s.url, '/dashboard/api/templates/')).json;
      expect(templates.counts).toEqual({ active: 1, paused: 1, disabled: 1 });
      const byId = Object.fromEntries(templates.templates.map((t: { id: number }) => [t.id, t]));
      expect(byId[101]).toMatchObject({ status: 'paused', paused_until: until, last_change: { source: 'channel', reason: 'quality RED' } });
      expect(byId[102]).toMatchObject({ status: 'disabled', paused_until: null, last_change: { source: 'api', reason: null } });
      expect(byId[100]).toMatchObject({ status: 'active', last_change: null, actionable: true });
      const numbers = (await api(s.url, '/dashboard/api/numbers/?q=5511990000002')).json.numbers;
      expect(numbers[0]).toMatchObject({ messaging_limit_24h: 10_000, provider: { reason: 'UPGRADE TIER_10K', messaging_limit_24h: 10_000 } });
    } finally {
      await s.server.close();
    }
  });

  it('shows a campaign’s counts, its queued contacts, its retries waiting and why it has no ETA', async () => {
    const s = await startServer({ apiKeys: keys, channel: fastChannel({ sendFailureProbability: 1, failureCodes: [{ code: 131000, weight: 1 }] }) });
    try {
      await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 5, max_retries: 2, retry_interval: 5, contacts: contacts(3) } });
      await waitFor(() => s.server.sendpool.engine.stats().waitingRetry === 3, 'three retries waiting');
      const [c] = (await api(s.url, '/dashboard/api/campaigns/')).json.campaigns;
      expect(c).toMatchObject({ company_id: 1, campaign_id: 5, queued: 0, waiting_retry: 3, pools: [{ business_id: 1, template_type_id: 10 }], eta: { at: null, basis: 'retries' } });
      expect(c.statistics).toMatchObject({ campaign_id: 5, count_total: 3, count_remaining: 3 });
      // Company 2 sees none of it.
      expect((await api(s.url, '/dashboard/api/campaigns/', { key: KEY_2 })).json.campaigns).toEqual([]);

      // Every number paused without an end: only a resume can make the pool send, so no time.
      for (const n of ['5511990000001', '5511990000002', '5511990000003']) await api(s.url, `/operator/numbers/${n}/pause/`, { method: 'POST' });
      await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 6, contacts: contacts(4, 100) } });
      const held = (await api(s.url, '/dashboard/api/campaigns/')).json.campaigns.find((x: { campaign_id: number }) => x.campaign_id === 6);
      expect(held).toMatchObject({ pools: [{ business_id: 1, template_type_id: 10 }], eta: { at: null, basis: 'held' } });
      // A timed pause ends by the clock: the ETA is after it.
      const until = Date.now() + 600_000;
      await api(s.url, '/operator/numbers/5511990000001/pause/', { body: { until } });
      const timed = (await api(s.url, '/dashboard/api/campaigns/')).json.campaigns.find((x: { campaign_id: number }) => x.campaign_id === 6);
      expect(timed.eta.basis).toBe('remaining');
      expect(timed.eta.at).toBeGreaterThanOrEqual(until);
    } finally {
      await s.server.close();
    }
  });

  it('shows each webhook receiver’s backlog, its last error while down, and deliveries per second once it is up', async () => {
    const probe = await startReceiver(() => 'whsec_unused');
    const port = probe.port;
    await probe.close(); // nothing listens on `port` now
    const s = await startServer({ apiKeys: keys, outbox: { initialDelayMs: 50, maxDelayMs: 400, probeIntervalMs: 100, attemptTimeoutMs: 5_000 } });
    const origin = `http://127.0.0.1:${port}`;
    const receiverRow = async (key = KEY_1) => (await api(s.url, '/dashboard/api/webhooks/', { key })).json.targets.find((t: { origin: string }) => t.origin === origin);
    try {
      await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${origin}/hsm`, url_campaign_webhook: `${origin}/campaigns` } });
      expect(await receiverRow()).toMatchObject({ families: ['campaign', 'hsm'], backlog: 0, down: false });
      await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 3, contacts: contacts(20) } });
      await waitFor(async () => (await receiverRow())?.down === true && (await receiverRow())?.backlog > 0, 'the receiver down with a backlog');
      const down = await receiverRow();
      expect(down.last_error).toBe('ECONNREFUSED');
      expect(down.failures).toBeGreaterThan(0);
      // Another company has no event there and configured nothing there.
      expect(await receiverRow(KEY_2)).toBeUndefined();

      const receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1), port);
      try {
        await waitFor(async () => {
          const row = await receiverRow();
          return row.down === false && row.deliveries_per_second > 0 && row.delivered > 0;
        }, 'deliveries once it is up');
        await waitFor(() => s.server.sendpool.idle(), 'the backlog delivered');
        await waitFor(async () => (await receiverRow()).backlog === 0, 'no backlog');
      } finally {
        await receiver.close();
      }
    } finally {
      await s.server.close();
    }
  });

  it('shows a receiver up while one of its paths fails: the other events go at once, the failing one on its own schedule', async () => {
    // The reported case: url_report_webhook always answers 500, url_hsm_callback on the same origin 200.
    const fails: number[] = [];
    let hsm = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/fail') {
          fails.push(Date.now());
          res.writeHead(500, { 'content-type': 'text/plain' }).end('route not found\n');
        } else {
          hsm++;
          res.writeHead(204).end();
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const s = await startServer({ apiKeys: keys, outbox: { initialDelayMs: 200, maxDelayMs: 400, probeIntervalMs: 100, attemptTimeoutMs: 5_000 } });
    const receiverRow = async () => (await api(s.url, '/dashboard/api/webhooks/')).json.targets.find((t: { origin: string }) => t.origin === origin);
    try {
      await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${origin}/hsm`, url_report_webhook: `${origin}/fail` } });
      expect((await api(s.url, '/reports/', { body: { report_type: 'numbers' } })).status).toBe(202);
      await waitFor(() => fails.length >= 1, 'the report event failing');
      await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 8, contacts: contacts(20) } });
      await waitFor(() => hsm >= 40 && s.server.sendpool.stats().webhooksDelivered >= 40, 'the HSM notifications delivered');
      await waitFor(() => fails.length >= 3, 'the report event retried');
      const row = await receiverRow();
      expect(row).toMatchObject({ down: false, failures: 1, last_error: 'HTTP 500: route not found' });
      expect(row.retrying + row.backlog).toBeGreaterThanOrEqual(1);
      // Its retries keep their own backoff (200 ms, ×2, up to 400 ms, equal jitter): never one after each success elsewhere.
      for (let i = 1; i < fails.length; i++) expect(fails[i]! - fails[i - 1]!).toBeGreaterThanOrEqual(90);
    } finally {
      await s.server.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('counts in a receiver’s backlog the ENQUEUED notifications not built yet', async () => {
    const probe = await startReceiver(() => 'whsec_unused');
    const port = probe.port;
    await probe.close(); // down: only the first few hundred are built into the outbox
    const s = await startServer({ apiKeys: keys });
    const origin = `http://127.0.0.1:${port}`;
    try {
      for (const phone of s.server.sendpool.engine.numbers().map((x) => x.phone)) s.server.sendpool.engine.setNumberStatus(phone, 'paused');
      await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${origin}/hsm` } });
      await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 3, contacts: contacts(2_000) } });
      expect(s.server.sendpool.stats().webhooksPending).toBe(2_000);
      const row = (await api(s.url, '/dashboard/api/webhooks/')).json.targets.find((t: { origin: string }) => t.origin === origin);
      expect(row.backlog).toBe(2_000);
    } finally {
      await s.server.close();
    }
  });
});

describe('operator keys', () => {
  it('steer every company’s numbers and templates, and open nothing else', async () => {
    const s = await startServer({ apiKeys: keys });
    try {
      const paused = await api(s.url, '/operator/numbers/5521990000001/pause/', { key: OPERATOR_KEY, body: { duration_seconds: 60 } });
      expect(paused.status).toBe(200);
      expect(paused.json).toMatchObject({ phone: '5521990000001', status: 'paused' });
      expect((await api(s.url, '/operator/templates/300/disable/', { key: OPERATOR_KEY, method: 'POST' })).json).toMatchObject({ id: 300, status: 'disabled' });
      expect((await api(s.url, '/operator/queues/', { key: OPERATOR_KEY })).json.queues.map((q: { business_id: number }) => q.business_id)).toEqual([1, 2]);
      for (const [method, path] of [
        ['GET', '/messenger/businesses/'],
        ['POST', '/messenger/messages/'],
        ['GET', '/messenger/config/'],
        ['GET', '/operator/blocklist/'],
        ['POST', '/reports/'],
      ] as const) {
        const res = await api(s.url, path, { key: OPERATOR_KEY, method, ...(method === 'POST' ? { body: {} } : {}) });
        expect(res.status, path).toBe(401);
        expect(res.json.error).toEqual({
          code: 'invalid_api_key',
          message: 'An operator key opens only /operator/numbers/, /operator/templates/, /operator/queues/ and /dashboard/api/: use a company key here.',
        });
      }
    } finally {
      await s.server.close();
    }
  });

  it('are listed with operator: true and no company, in a keys file or as operator:KEY in SENDPOOL_API_KEYS', () => {
    expect(loadApiKeys({ env: { SENDPOOL_API_KEYS: `1:${KEY_1},operator:${OPERATOR_KEY}` } })).toEqual([
      { key: KEY_1, companyId: 1, label: 'SENDPOOL_API_KEYS[0]' },
      { key: OPERATOR_KEY, operator: true, label: 'SENDPOOL_API_KEYS[1]' },
    ]);
    let error: unknown;
    try {
      checkApiKeys([
        { key: OPERATOR_KEY, operator: true, companyId: 1 },
        { key: KEY_1, operator: 'yes' },
      ]);
    } catch (e) {
      error = e;
    }
    expect(isApiKeysError(error)).toBe(true);
    expect((error as { problems: string[] }).problems).toEqual([
      'keys[0].companyId: an operator key acts for every company: leave companyId out, got 1',
      'keys[1].operator: expected true or false, got "yes"',
      'keys[1].companyId: expected a positive integer, got undefined',
    ]);
  });
});
