/** GET /metrics behind a key, on a listener of its own, or both; open on the API's port by default. */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { buildServer, isServerOptionsError } from '../../src/server/index.js';
import { api, KEY_1, startServer, testFleet } from './helpers.js';
import { connect, lastBody } from './sockets.js';

const METRICS_KEY = 'metrics-key-for-the-tests-0001';
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** A port nothing listens on now (taken from a listener that is then closed). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

describe('GET /metrics by default', () => {
  it('is open on the API port: no key of any kind', async () => {
    const s = await startServer();
    try {
      const res = await api(s.url, '/metrics', { key: null });
      expect(res.status).toBe(200);
      expect(res.text).toContain('sendpool_queue_depth{queue="queued"} 0');
      expect(s.server.sendpool.metricsAddress()).toBeNull();
    } finally {
      await s.server.close();
    }
  });

  it('metrics: false serves no /metrics', async () => {
    const s = await startServer({ metrics: false });
    try {
      const res = await api(s.url, '/metrics', { key: null });
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe('not_found');
    } finally {
      await s.server.close();
    }
  });
});

describe('GET /metrics with a key', () => {
  it('401 without the key or with another (an API key is not it), 200 with Authorization: Bearer <key>', async () => {
    const s = await startServer({ metrics: { key: METRICS_KEY } });
    try {
      const none = await api(s.url, '/metrics', { key: null });
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="sendpool-metrics"');
      expect(none.json.error).toEqual({ code: 'missing_api_key', message: 'GET /metrics needs the metrics key: send Authorization: Bearer <key>.' });
      expect(none.text).not.toContain('sendpool_');

      const apiKeyOnly = await api(s.url, '/metrics', { key: KEY_1 });
      expect(apiKeyOnly.status).toBe(401);
      expect(apiKeyOnly.json.error.code).toBe('missing_api_key');

      for (const authorization of [`Bearer ${METRICS_KEY}x`, `Basic ${METRICS_KEY}`, `Bearer ${KEY_1}`, 'Bearer']) {
        const wrong = await api(s.url, '/metrics', { key: null, headers: { authorization } });
        expect(wrong.status, authorization).toBe(401);
        expect(wrong.json.error.code, authorization).toBe('invalid_api_key');
        expect(wrong.text).not.toContain(METRICS_KEY);
      }

      const ok = await api(s.url, '/metrics', { key: null, headers: bearer(METRICS_KEY) });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(ok.text).toContain('sendpool_queue_depth{queue="queued"} 0');
      // The scheme is case-insensitive, as HTTP says.
      expect((await api(s.url, '/metrics', { key: null, headers: { authorization: `bearer ${METRICS_KEY}` } })).status).toBe(200);
      // The API itself still needs its own key.
      expect((await api(s.url, '/messenger/businesses/', { key: null, headers: bearer(METRICS_KEY) })).status).toBe(401);
    } finally {
      await s.server.close();
    }
  });
});

describe('GET /metrics on a listener of its own', () => {
  it('the API port answers 404 on /metrics; the metrics port answers it and only it', async () => {
    const s = await startServer({ metrics: { listen: { host: '127.0.0.1', port: 0 } } });
    const metricsUrl = s.server.sendpool.metricsAddress();
    try {
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(metricsUrl).not.toBe(s.url);
      for (const key of [null, KEY_1]) {
        const main = await api(s.url, '/metrics', { key });
        expect(main.status).toBe(404);
        expect(main.json.error.code).toBe('not_found');
      }
      const res = await api(metricsUrl!, '/metrics', { key: null });
      expect(res.status).toBe(200);
      expect(res.text).toContain('sendpool_queue_depth{queue="queued"} 0');
      expect((await api(metricsUrl!, '/metrics/?x=1', { key: null })).status).toBe(200);
      const head = await api(metricsUrl!, '/metrics', { key: null, method: 'HEAD' });
      expect([head.status, head.text]).toEqual([200, '']);
      // Requests to the API port are counted; the scrape itself is not an API request.
      expect(res.text).toContain('sendpool_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"} 2');

      const other = await api(metricsUrl!, '/messenger/businesses/', { key: KEY_1 });
      expect(other.status).toBe(404);
      expect(other.json.error.code).toBe('not_found');
      const post = await api(metricsUrl!, '/metrics', { key: null, method: 'POST', body: {} });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
    } finally {
      await s.server.close();
    }
    // Closed with the server.
    expect(s.server.sendpool.metricsAddress()).toBeNull();
    await expect(fetch(`${metricsUrl}/metrics`)).rejects.toThrow();
  });

  it('with a key too: 401 without it, 200 with it', async () => {
    const s = await startServer({ metrics: { key: METRICS_KEY, listen: { port: 0 } } });
    try {
      const metricsUrl = s.server.sendpool.metricsAddress()!;
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:/); // the default host
      const none = await api(metricsUrl, '/metrics', { key: null });
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="sendpool-metrics"');
      expect(none.json.error.code).toBe('missing_api_key');
      expect((await api(metricsUrl, '/metrics', { key: null, headers: bearer('another-key-of-enough-length') })).json.error.code).toBe('invalid_api_key');
      expect((await api(metricsUrl, '/metrics', { key: null, headers: bearer(METRICS_KEY) })).status).toBe(200);
    } finally {
      await s.server.close();
    }
  });

  it('has the connection limits of the API port: a half-sent request is answered 408 and closed', async () => {
    const s = await startServer({ metrics: { listen: { port: 0 } }, connections: { headersTimeoutMs: 150, requestTimeoutMs: 300, checkIntervalMs: 20 } });
    try {
      const c = await connect(s.server.sendpool.metricsAddress()!, 'GET /metrics HTTP/1.1\r\nHost: a\r\n');
      const closed = await c.closed();
      expect(closed.statuses).toEqual([408]);
      expect(lastBody(closed.text).error.code).toBe('request_timeout');
    } finally {
      await s.server.close();
    }
  });

  it('a metrics port in use makes listen fail', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const port = (holder.address() as net.AddressInfo).port;
    const server = buildServer({ engine: createEngine(testFleet()), logger: false, processMetrics: false, metrics: { listen: { port } } });
    try {
      await expect(server.listen({ port: await freePort(), host: '127.0.0.1' })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await server.close();
      await new Promise<void>((r) => holder.close(() => r()));
    }
  });

  it('bad metrics options are refused with every problem, the key never shown', () => {
    let thrown: unknown;
    try {
      buildServer({ engine: createEngine(testFleet()), logger: false, metrics: { key: 'short key', listen: { host: 'http://x', port: 70_000 } } });
    } catch (e) {
      thrown = e;
    }
    expect(isServerOptionsError(thrown)).toBe(true);
    expect((thrown as { problems: { message: string }[] }).problems.map((p) => p.message)).toEqual([
      'metrics.key: expected a string of 16 to 512 characters without whitespace, got a string with whitespace (9 characters)',
      'metrics.listen.port: expected an integer from 0 to 65535, got 70000 (number)',
      'metrics.listen.host: expected a host name or IP address, such as 127.0.0.1, 0.0.0.0 or ::1, got "http://x" (string)',
    ]);
    expect(String(thrown)).not.toContain('short key');
  });
});
