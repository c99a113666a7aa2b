/**
 * Connection limits over real sockets: half-sent requests are answered 408 and closed, idle
 * keep-alive and silent connections are closed. Each test waits for the server's close, never for a
 * time.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { buildServer, DEFAULT_CONNECTIONS, isServerOptionsError, type ConnectionOptions } from '../../src/server/index.js';
import { KEY_1, startServer, testFleet, waitFor, type Started } from './helpers.js';
import { connect, lastBody } from './sockets.js';

/** Limits of a fraction of a second; the idle timeout stays long so it never pre-empts the others. */
const FAST: ConnectionOptions = { headersTimeoutMs: 150, requestTimeoutMs: 300, keepAliveTimeoutMs: 150, idleTimeoutMs: 120_000, checkIntervalMs: 20 };

const GET_BUSINESSES = `GET /messenger/businesses/ HTTP/1.1\r\nHost: sendpool.test\r\nx-api-key-id: ${KEY_1}\r\n\r\n`;

describe('connection limits', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer({ connections: FAST });
  });
  afterAll(async () => {
    await s.server.close();
  });

  it('a request whose headers never end is answered 408 request_timeout and closed', async () => {
    const c = await connect(s.url, `GET /messenger/businesses/ HTTP/1.1\r\nHost: sendpool.test\r\nx-api-key-id: ${KEY_1}\r\n`);
    const closed = await c.closed();
    expect(closed.statuses).toEqual([408]);
    expect(closed.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(lastBody(closed.text)).toEqual({ error: { code: 'request_timeout', message: 'The request did not arrive in time.' } });
  });

  it('a request whose body never ends is answered 408 and closed; nothing of it is accepted', async () => {
    const body = JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: 1, contacts: [{ phone_number: '5511987654321', template_variables: ['Ana'] }] });
    const head = `POST /messenger/messages/ HTTP/1.1\r\nHost: sendpool.test\r\nx-api-key-id: ${KEY_1}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    const c = await connect(s.url, head + body.slice(0, 20));
    const closed = await c.closed();
    expect(closed.statuses).toEqual([408]);
    expect(lastBody(closed.text).error.code).toBe('request_timeout');
    expect(s.server.sendpool.engine.stats().queued + s.server.sendpool.engine.stats().sent).toBe(0);
  });

  it('a connection that sends nothing is closed', async () => {
    const c = await connect(s.url);
    const closed = await c.closed();
    expect(closed.statuses).toEqual([408]);
  });

  it('an idle keep-alive connection is closed after its answer', async () => {
    const c = await connect(s.url, GET_BUSINESSES);
    const closed = await c.closed();
    // One whole answer, kept alive by the server, then closed by it with nothing more asked.
    expect(closed.statuses).toEqual([200]);
    expect(closed.text).toMatch(/\r\nconnection: keep-alive\r\n/i);
    expect(lastBody(closed.text).map((b: { id: number }) => b.id)).toEqual([1]);
  });

  it('bytes that are not HTTP are answered 400 bad_request, oversized headers 431 headers_too_large, in the contract body', async () => {
    const garbage = await (await connect(s.url, 'HELLO THERE\r\n\r\n')).closed();
    expect(garbage.statuses).toEqual([400]);
    expect(lastBody(garbage.text)).toEqual({ error: { code: 'bad_request', message: 'The request is not valid HTTP/1.1.' } });
    const big = await (await connect(s.url, `GET /messenger/businesses/ HTTP/1.1\r\nHost: a\r\nx-filler: ${'x'.repeat(20_000)}\r\n\r\n`)).closed();
    expect(big.statuses).toEqual([431]);
    expect(lastBody(big.text).error.code).toBe('headers_too_large');
  });

  it('400 connections with half-sent requests are all answered 408 and closed', async () => {
    const halfHeaders = 'GET /messenger/businesses/ HTTP/1.1\r\nHost: a\r\n';
    const halfBody = `POST /messenger/messages/ HTTP/1.1\r\nHost: a\r\nx-api-key-id: ${KEY_1}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{`;
    const half = await Promise.all(Array.from({ length: 400 }, (_, i) => connect(s.url, i % 2 === 0 ? halfHeaders : halfBody)));
    const closed = await Promise.all(half.map((c) => c.closed()));
    expect(closed.filter((c) => c.statuses.length === 1 && c.statuses[0] === 408)).toHaveLength(400);
    // The server still answers.
    const after = await connect(s.url, GET_BUSINESSES);
    expect((await after.closed()).statuses).toEqual([200]);
  });
});

describe('idle and per-connection limits', () => {
  it('a connection on which nothing moves is closed after idleTimeoutMs (a request that waits on nothing)', async () => {
    const server = buildServer({
      engine: createEngine(testFleet()),
      apiKeys: [{ key: KEY_1, companyId: 1 }],
      logger: false,
      processMetrics: false,
      connections: { ...FAST, idleTimeoutMs: 150 },
    });
    let hung = 0;
    // A host route that never answers: only the idle limit can end the connection.
    server.get('/test/hang', () => {
      hung++;
      return new Promise(() => {});
    });
    await server.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
      const c = await connect(url, `GET /test/hang HTTP/1.1\r\nHost: a\r\nx-api-key-id: ${KEY_1}\r\n\r\n`);
      const closed = await c.closed();
      expect(hung).toBe(1);
      expect(closed.text).toBe('');
    } finally {
      await server.close();
    }
  });

  it('a keep-alive connection carries request after request', async () => {
    // A keep-alive limit far above the test's length: the connection must stay usable.
    const s = await startServer({ connections: { ...FAST, keepAliveTimeoutMs: 120_000 } });
    try {
      const c = await connect(s.url, GET_BUSINESSES);
      for (let n = 1; n <= 3; n++) {
        await waitFor(() => (c.text().match(/HTTP\/1\.1 200 /g) ?? []).length === n && c.text().endsWith(']'), `answer ${n}`);
        if (n < 3) c.socket.write(GET_BUSINESSES);
      }
      expect(c.socket.destroyed).toBe(false);
      c.socket.destroy();
    } finally {
      await s.server.close();
    }
  });

  it('without options the defaults apply', async () => {
    const server = buildServer({ engine: createEngine(testFleet()), logger: false, processMetrics: false });
    try {
      expect(DEFAULT_CONNECTIONS).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000, idleTimeoutMs: 60_000, checkIntervalMs: 1_000 });
      const http = server.server;
      const interval = (http as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval;
      expect([http.headersTimeout, http.requestTimeout, http.keepAliveTimeout, http.timeout, interval]).toEqual([10_000, 60_000, 5_000, 60_000, 1_000]);
    } finally {
      await server.close();
    }
  });

  it('bad limits are refused before anything starts, every problem named', () => {
    let thrown: unknown;
    try {
      buildServer({
        engine: createEngine(testFleet()),
        logger: false,
        connections: { headersTimeoutMs: -1, keepAliveTimeoutMs: '5s' as unknown as number, checkIntervalMs: 1.5, bogus: 1 } as ConnectionOptions,
      });
    } catch (e) {
      thrown = e;
    }
    expect(isServerOptionsError(thrown)).toBe(true);
    const messages = (thrown as { problems: { message: string }[] }).problems.map((p) => p.message);
    expect(messages).toEqual([
      'connections.headersTimeoutMs: expected an integer from 1 to 86400000 (milliseconds), got -1 (number)',
      'connections.keepAliveTimeoutMs: expected an integer from 1 to 86400000 (milliseconds), got "5s" (string)',
      'connections.checkIntervalMs: expected an integer from 1 to 86400000 (milliseconds), got 1.5 (number)',
      'connections.bogus: expected one of headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, idleTimeoutMs, checkIntervalMs, got an unknown option',
    ]);
  });

  it('a headers timeout above the request timeout is refused', () => {
    expect(() => buildServer({ engine: createEngine(testFleet()), logger: false, connections: { headersTimeoutMs: 5_000, requestTimeoutMs: 1_000 } })).toThrow(
      'connections.headersTimeoutMs: expected at most connections.requestTimeoutMs (1000), got 5000',
    );
  });
});
