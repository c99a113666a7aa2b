/**
 * The server's features are Fastify plugins that load when the instance becomes ready; what a
 * host does with the instance `buildServer` answers still works as it did: `server.sendpool` at
 * once, its own routes (added before the plugins load) behind the API key and with the contract's
 * error answers, and the shutdown's drain before the features let go (the metrics listener).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { buildServer, type Channel, type SendpoolServer } from '../../src/server/index.js';
import { KEY_1, fastChannel, startServer, testFleet, waitFor } from './helpers.js';

describe('a host embedding buildServer', () => {
  let server: SendpoolServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('has server.sendpool at once, and the features once ready', async () => {
    server = buildServer({ engine: createEngine(testFleet()), apiKeys: [{ key: KEY_1, companyId: 1 }], logger: false, processMetrics: false });
    expect(server.sendpool.stats().dispatch.submitted).toBe(0);
    expect(server.sendpool.idle()).toBe(true);
    await server.ready();
    // Paths as the router keeps them (`ignoreTrailingSlash`: without the slash).
    for (const [method, url] of [
      ['POST', '/messenger/messages'],
      ['GET', '/messenger/businesses'],
      ['POST', '/sms/messages'],
      ['GET', '/messenger/config'],
      ['POST', '/reports'],
      ['GET', '/operator/queues'],
      ['GET', '/operator/blocklist'],
      ['GET', '/messenger/webhooks/dead-letters'],
      ['GET', '/dashboard/api/pools'],
      ['GET', '/metrics'],
    ] as const) {
      expect(server.hasRoute({ method, url }), `${method} ${url}`).toBe(true);
    }
    expect(server.printRoutes()).toContain('messages (POST)');
  });

  it("answers a host's own routes, added right after buildServer, through the API key check and the contract's errors", async () => {
    server = buildServer({ engine: createEngine(testFleet()), apiKeys: [{ key: KEY_1, companyId: 1 }], logger: false, processMetrics: false });
    server.get('/health/', async (request) => ({ ok: true, company: request.companyId }));
    server.post('/boom/', async () => {
      throw new Error('a bug of the host');
    });
    server.post('/echo/', async (request) => request.body);
    const key = { 'x-api-key-id': KEY_1 };

    const missing = await server.inject({ method: 'GET', url: '/health/' });
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error.code).toBe('missing_api_key');
    const health = await server.inject({ method: 'GET', url: '/health/', headers: key });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ ok: true, company: 1 });
    expect(health.headers['x-request-id']).toEqual(expect.any(String));

    const wrongMethod = await server.inject({ method: 'DELETE', url: '/health/', headers: key });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.json().error.code).toBe('method_not_allowed');
    expect(wrongMethod.headers.allow).toBe('GET');

    const boom = await server.inject({ method: 'POST', url: '/boom/', headers: key });
    expect(boom.statusCode).toBe(500);
    expect(boom.json().error.code).toBe('internal_error');

    const badJson = await server.inject({ method: 'POST', url: '/echo/', headers: { ...key, 'content-type': 'application/json' }, payload: '{"a":' });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json().error.code).toBe('invalid_json');
    const echo = await server.inject({ method: 'POST', url: '/echo/', headers: key, payload: { a: 1 } });
    expect(echo.json()).toEqual({ a: 1 });
  });

  it('keeps the metrics listener up while the server drains, and closes it after', async () => {
    let closeCalled = false;
    let finishClose: () => void = () => {};
    const closed = new Promise<void>((resolve) => (finishClose = resolve));
    const inner = fastChannel();
    // The channel takes its time to close: the shutdown waits for it, in the middle of the drain.
    const channel: Channel = {
      send: (m) => inner.send(m),
      sendSms: (s) => inner.sendSms(s),
      attach: (sink, memory) => inner.attach(sink, memory),
      close: async () => {
        closeCalled = true;
        await closed;
      },
    };
    const s = await startServer({ channel, metrics: { listen: { port: 0 } } });
    const address = s.server.sendpool.metricsAddress();
    expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const closing = s.server.close();
    await waitFor(() => closeCalled, 'the shutdown to close the channel');
    expect((await fetch(`${address}/metrics`)).status).toBe(200);
    finishClose();
    await closing;
    await expect(fetch(`${address}/metrics`)).rejects.toThrow();
  });
});
