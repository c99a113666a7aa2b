/**
 * The delivery worker's two ways out, held to the same behaviour: undici's pools (taken when the
 * optional package is installed) and Node's `http` (without it). Each delivers signed events with
 * the URL's user information as Basic auth, refuses a name that resolves to a non-public address
 * when private targets are not allowed (the connect-time check), and ends an attempt whose
 * receiver trickles its answer at the attempt's deadline instead of holding the slot.
 */
import { randomFillSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox, type DeliveryOutcome } from '../../src/events/outbox.js';
import { verifyWebhook } from '../../src/events/signing.js';
import { systemClock } from '../../src/runtime/system-clock.js';
import { DeliveryWorker } from '../../src/server/webhooks/delivery-worker.js';
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

function rig(transport: 'node' | 'undici', allowPrivateTargets: boolean, requestTimeoutMs = 5_000) {
  const outbox = new Outbox({ random, initialDelayMs: 60_000 });
  const outcomes: DeliveryOutcome[] = [];
  const attempts: string[] = [];
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
  return { outbox, worker, outcomes, attempts, send };
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
    expect(r.received).toHaveLength(0);
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
