/**
 * The delivery worker's two ways out, held to the same behaviour: undici's pools (taken when the
 * optional package is installed) and Node's `http` (without it). Each delivers signed events with
 * the URL's user information as Basic auth, refuses a name that resolves to a non-public address
 * when private targets are not allowed (the connect-time check), and ends an attempt whose
 * receiver trickles its answer at the attempt's deadline instead of holding the slot. Both report
 * a failure the same way: `connect` when no connection could be opened, the start of a failing
 * answer in its error, and a 2xx answer's body drained.
 */
import { randomFillSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox, type AttemptResult, type DeliveryOutcome, type OutboxOptions } from '../../src/events/outbox.js';
import { verifyWebhook } from '../../src/events/signing.js';
import { systemClock } from '../../src/runtime/system-clock.js';
import { DeliveryWorker } from '../../src/server/webhooks/delivery-worker.js';
import { attemptFailure, isWebhookAttemptError, WebhookAttemptError } from '../../src/server/webhooks/answer.js';
import { loadUndici } from '../../src/server/webhooks/undici-transport.js';
import { waitFor } from './helpers.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const random = { randomBytes: (n: number) => randomFillSync(new Uint8Array(n)) };

interface Received {
  readonly req: IncomingMessage;
  readonly body: string;
}

async function receiver(handle?: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<{ server: Server; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ req, body });
      if (handle) handle(req, res);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, received };
}

function rig(transport: 'node' | 'undici', allowPrivateTargets: boolean, requestTimeoutMs = 5_000, outboxOptions: Partial<OutboxOptions> = {}) {
  const outbox = new Outbox({ random, initialDelayMs: 60_000, ...outboxOptions });
  const outcomes: DeliveryOutcome[] = [];
  const attempts: string[] = [];
  /** What the worker reported for each attempt, by event id. */
  const results = new Map<string, AttemptResult>();
  const settle = outbox.settle.bind(outbox);
  outbox.settle = (id, attempt, result, now) => {
    results.set(id, result);
    return settle(id, attempt, result, now);
  };
  const worker = new DeliveryWorker(
    {
      outbox,
      clock: systemClock,
      secretOf: () => SECRET,
      allowPrivateTargets,
      userAgent: 'sendpool-webhooks/test',
      onAttempt: (_family, result) => attempts.push(result),
      onOutcomes: (o) => outcomes.push(...o),
    },
    { transport, requestTimeoutMs },
  );
  const send = (id: string, url: string) => {
    outbox.enqueue({ id, family: 'hsm', url, companyId: 1, body: JSON.stringify({ event_id: id }) }, systemClock.now());
    worker.kick();
  };
  return { outbox, worker, outcomes, attempts, results, send };
}

const servers: Server[] = [];
const workers: DeliveryWorker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop(100);
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

await loadUndici();

describe.each(['undici', 'node'] as const)('delivery over %s', (transport) => {
  it('delivers signed events, with the URL user information as Basic auth', async () => {
    const r = await receiver();
    servers.push(r.server);
    const w = rig(transport, true);
    workers.push(w.worker);
    for (let i = 0; i < 20; i++) w.send(`e${i}`, `http://user:p%40ss@127.0.0.1:${r.port}/hsm?x=1`);
    await waitFor(() => w.outcomes.length === 20, '20 outcomes');
    expect(w.outcomes.every((o) => o.kind === 'delivered')).toBe(true);
    expect(r.received).toHaveLength(20);
    for (const { req, body } of r.received) {
      expect(req.url).toBe('/hsm?x=1');
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['user-agent']).toBe('sendpool-webhooks/test');
      expect(req.headers['authorization']).toBe(`Basic ${Buffer.from('user:p@ss').toString('base64')}`);
      expect(verifyWebhook({ headers: req.headers, body, secret: SECRET, now: Date.now() }).ok).toBe(true);
    }
  });

  it('refuses a name that resolves to a non-public address unless private targets are allowed', async () => {
    const r = await receiver();
    servers.push(r.server);
    const w = rig(transport, false);
    workers.push(w.worker);
    w.send('e1', `http://localhost:${r.port}/hsm`);
    await waitFor(() => w.attempts.length === 1, 'the attempt');
    expect(w.attempts).toEqual(['failure']);
    // No connection was opened: the receiver is down (rule (a)), whatever the path.
    expect(w.results.get('e1')).toEqual({ ok: false, error: 'EADDRNOTPUBLIC', connect: true });
    expect(r.received).toHaveLength(0);
  });

  it('reports a refused connection as connection-level', async () => {
    const r = await receiver();
    const port = r.port;
    await new Promise((done) => r.server.close(done)); // nothing listens on `port` now
    const w = rig(transport, true);
    workers.push(w.worker);
    w.send('e1', `http://127.0.0.1:${port}/hsm`);
    await waitFor(() => w.attempts.length === 1, 'the attempt');
    expect(w.results.get('e1')).toEqual({ ok: false, error: 'ECONNREFUSED', connect: true });
    expect(w.outbox.targets(Date.now())[0]).toMatchObject({ down: true, downReason: 'connect' });
  });

  it('keeps the start of a failing answer for the dead letter, control characters replaced', async () => {
    const answer = `{"error":"too large"}\r\n\u0007${'x'.repeat(1_000)}`;
    const r = await receiver((_req, res) => res.writeHead(413, { 'content-type': 'application/json' }).end(answer));
    servers.push(r.server);
    // A maximum age of 0: the first failure is the dead letter.
    const w = rig(transport, true, 5_000, { maxAgeMs: 0 });
    workers.push(w.worker);
    w.send('e1', `http://127.0.0.1:${r.port}/report`);
    await waitFor(() => w.outcomes.length === 1, 'the dead letter');
    const expected = `HTTP 413: {"error":"too large"} ${'x'.repeat(256 - 24)}`;
    expect(w.results.get('e1')).toEqual({ ok: false, error: expected });
    expect(w.outcomes[0]).toMatchObject({ kind: 'dead-lettered', lastError: expected });
  });

  it('drains a large 2xx answer without keeping it, and reuses the connection', async () => {
    const big = 'y'.repeat(1 << 20);
    const sockets = new Set<unknown>();
    const r = await receiver((req, res) => {
      sockets.add(req.socket);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(big);
    });
    servers.push(r.server);
    const w = rig(transport, true);
    workers.push(w.worker);
    w.send('e1', `http://127.0.0.1:${r.port}/hsm`);
    await waitFor(() => w.outcomes.length === 1, 'the first delivery');
    w.send('e2', `http://127.0.0.1:${r.port}/hsm`);
    await waitFor(() => w.outcomes.length === 2, 'the second delivery');
    expect(w.outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered']);
    expect(w.results.get('e1')).toEqual({ ok: true });
    expect(sockets.size).toBe(1);
  });

  it('reports a reset on one path as the event’s failure: the receiver stays up and its other events go', async () => {
    const r = await receiver((req, res) => {
      if (req.url === '/broken') req.socket.destroy();
      else res.writeHead(204).end();
    });
    servers.push(r.server);
    const w = rig(transport, true);
    workers.push(w.worker);
    w.send('b1', `http://127.0.0.1:${r.port}/broken`);
    await waitFor(() => w.results.has('b1'), 'the broken attempt');
    const failed = w.results.get('b1');
    expect(failed).toMatchObject({ ok: false, connect: false });
    for (let i = 0; i < 5; i++) w.send(`h${i}`, `http://127.0.0.1:${r.port}/hsm`);
    await waitFor(() => w.outcomes.length === 5, 'the other events delivered');
    expect(w.outcomes.every((o) => o.kind === 'delivered')).toBe(true);
    expect(w.outbox.targets(Date.now())[0]).toMatchObject({ down: false, failures: 1, retrying: 1 });
  });

  it('ends an attempt whose receiver trickles its answer at the deadline', async () => {
    const timers: NodeJS.Timeout[] = [];
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // A byte every 50 ms, never the end: only the attempt's deadline stops it.
      timers.push(setInterval(() => res.write('.'), 50));
    });
    servers.push(r.server);
    const w = rig(transport, true, 300);
    workers.push(w.worker);
    w.send('e1', `http://127.0.0.1:${r.port}/hsm`);
    try {
      await waitFor(() => w.attempts.length === 1, 'the attempt to end');
      // The status came, the answer did not end by the deadline: a failed attempt, tried again later.
      expect(w.attempts).toEqual(['failure']);
      expect(w.worker.inFlight).toBe(0);
    } finally {
      for (const t of timers) clearInterval(t);
    }
  });
});

describe('attemptFailure: which errors mean no connection could be opened', () => {
  const err = (fields: Record<string, unknown>) => Object.assign(new Error(typeof fields['message'] === 'string' ? fields['message'] : 'x'), fields);
  it.each([
    [{ code: 'ECONNREFUSED', syscall: 'connect' }, 'ECONNREFUSED'],
    [{ code: 'ENOTFOUND', syscall: 'getaddrinfo' }, 'ENOTFOUND'],
    [{ code: 'EAI_AGAIN', syscall: 'getaddrinfo' }, 'EAI_AGAIN'],
    [{ code: 'EHOSTUNREACH', syscall: 'connect' }, 'EHOSTUNREACH'],
    [{ code: 'ENETUNREACH' }, 'ENETUNREACH'],
    [{ code: 'UND_ERR_CONNECT_TIMEOUT' }, 'connect timeout'],
    [{ code: 'ETIMEDOUT', syscall: 'connect' }, 'connect timeout'],
    [{ code: 'ERR_TLS_CERT_ALTNAME_INVALID' }, 'ERR_TLS_CERT_ALTNAME_INVALID'],
    [{ code: 'CERT_HAS_EXPIRED' }, 'CERT_HAS_EXPIRED'],
    [{ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }, 'DEPTH_ZERO_SELF_SIGNED_CERT'],
    [{ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
    [{ code: 'EADDRNOTPUBLIC' }, 'EADDRNOTPUBLIC'],
  ])('%o is connection-level', (fields, error) => {
    expect(attemptFailure(err(fields))).toEqual({ ok: false, error, connect: true });
  });
  it.each([
    [{ code: 'ECONNRESET', syscall: 'read' }, 'ECONNRESET'],
    [{ code: 'EPIPE', syscall: 'write' }, 'EPIPE'],
    [{ code: 'UND_ERR_SOCKET' }, 'UND_ERR_SOCKET'],
    [{ code: 'UND_ERR_HEADERS_TIMEOUT' }, 'UND_ERR_HEADERS_TIMEOUT'],
    [{ code: 'ETIMEDOUT' }, 'ETIMEDOUT'],
    [{ message: 'timeout' }, 'timeout'],
  ])('%o is the event’s failure', (fields, error) => {
    expect(attemptFailure(err(fields))).toEqual({ ok: false, error, connect: false });
  });
  it('reads the attempts sendpool ends itself (WebhookAttemptError) as the Node errors they stand for', () => {
    const timeout = new WebhookAttemptError('timeout');
    expect('code' in timeout).toBe(false);
    expect(attemptFailure(timeout)).toEqual({ ok: false, error: 'timeout', connect: false });
    expect(attemptFailure(new WebhookAttemptError('timeout', 'ETIMEDOUT'))).toEqual({ ok: false, error: 'ETIMEDOUT', connect: false });
    expect(attemptFailure(new WebhookAttemptError('connect timeout', 'ETIMEDOUT', 'connect'))).toEqual({ ok: false, error: 'connect timeout', connect: true });
    const refused = new WebhookAttemptError('refused to connect to non-public address 10.0.0.1', 'EADDRNOTPUBLIC');
    expect(attemptFailure(refused)).toEqual({ ok: false, error: 'EADDRNOTPUBLIC', connect: true });
    expect(refused.name).toBe('WebhookAttemptError');
    expect(isWebhookAttemptError(refused)).toBe(true);
    expect(isWebhookAttemptError(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }))).toBe(false);
  });
  it('reads several addresses’ failures (happy eyeballs) by the first', () => {
    const e = new AggregateError([err({ code: 'ECONNREFUSED', syscall: 'connect' })], 'all failed');
    expect(attemptFailure(e)).toEqual({ ok: false, error: 'ECONNREFUSED', connect: true });
  });
});
