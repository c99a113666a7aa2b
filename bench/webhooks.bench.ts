/**
 * Webhook delivery: events per second from the outbox through the delivery worker to a local
 * receiver (a child process answering 204 on loopback, so it does not share the worker's core),
 * and the drain of a backlog after an outage: the receiver is down while events are made and
 * attempted, then comes up; the figure is the time from its first successful answer to the last
 * event delivered (and, beside it, how long the first probe took to come).
 *
 *   npx tsx bench/webhooks.bench.ts            # 20,000 events, then a backlog of 5,000
 *   BENCH_EVENTS=50000 BENCH_BACKLOG=10000 npx tsx bench/webhooks.bench.ts
 *   BENCH_PER_TARGET=16 …                      # the worker's concurrencyPerTarget (default 8)
 *   BENCH_NO_ORDER=1 …                         # events without order keys
 *   BENCH_TRANSPORT=node …                     # Node's http instead of undici (the default when installed)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import http from 'node:http';
import { createServer } from 'node:net';
import { Outbox, type OutboxEvent } from '../src/events/outbox.js';
import { DeliveryWorker } from '../src/server/webhooks/delivery-worker.js';
import { systemClock } from '../src/runtime/system-clock.js';
import { cpuLoad } from './load.js';

const random = { randomBytes: (n: number) => randomFillSync(new Uint8Array(n)) };

const RECEIVER = `
const http = require('node:http');
let n = 0;
const server = http.createServer((req, res) => { req.resume(); req.on('end', () => { n++; res.writeHead(204); res.end(); }); });
server.keepAliveTimeout = 60000;
server.listen(Number(process.argv[1]), '127.0.0.1', () => process.send('up'));
process.on('message', (m) => { if (m === 'count') process.send({ count: n }); });
`;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function startReceiver(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', RECEIVER, String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`receiver exited (${code})`)));
  });
}

function stopReceiver(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill();
  });
}

function events(count: number, port: number, from: number): OutboxEvent[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    const id = `evt-${i}`;
    // A contact's notifications share an order key: a few events per contact, in order.
    return {
      id,
      family: 'hsm',
      url: `http://127.0.0.1:${port}/hsm`,
      companyId: 1,
      ...(process.env['BENCH_NO_ORDER'] ? {} : { order: `c${Math.floor(i / 4)}` }),
      body: JSON.stringify({ event_id: id, id: i, status: 'SENT', to: '5511999990000' }),
    };
  });
}

interface Rig {
  readonly outbox: Outbox;
  readonly worker: DeliveryWorker;
  delivered: number;
  /** Clock time of the first and the last delivery seen. */
  first: number;
  last: number;
}

function rig(perTarget: number | undefined): Rig {
  const outbox = new Outbox({ random });
  const r: Rig = { outbox, worker: undefined as never, delivered: 0, first: 0, last: 0 };
  (r as { worker: DeliveryWorker }).worker = new DeliveryWorker(
    {
      outbox,
      clock: systemClock,
      secretOf: () => 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      allowPrivateTargets: true,
      userAgent: 'sendpool-bench',
      onOutcomes: (outcomes) => {
        for (const o of outcomes) {
          if (o.kind !== 'delivered') continue;
          r.delivered++;
          const now = performance.now();
          if (r.first === 0) r.first = now;
          r.last = now;
        }
      },
    },
    { ...(perTarget === undefined ? {} : { concurrencyPerTarget: perTarget }), ...(process.env['BENCH_TRANSPORT'] ? { transport: process.env['BENCH_TRANSPORT'] as 'node' | 'undici' } : {}) },
  );
  return r;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * The same POSTs with nothing else: a keep-alive agent with the worker's concurrency, no outbox,
 * no signing. What loopback HTTP to this receiver allows on this machine now, the ceiling beside
 * the worker's figure.
 */
async function rawPosts(port: number, count: number, concurrency: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({ event_id: 'evt-raw', id: 1, status: 'SENT', to: '5511999990000' });
  let next = 0;
  const started = performance.now();
  const lane = async (): Promise<void> => {
    while (next < count) {
      next++;
      await new Promise<void>((resolve, reject) => {
        const req = http.request(
          { hostname: '127.0.0.1', port, path: '/hsm', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve());
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  agent.destroy();
  return count / ((performance.now() - started) / 1000);
}

export interface WebhookFigures {
  readonly eventsPerSecond: number;
  /** Plain keep-alive POSTs to the same receiver, same concurrency, measured just before. */
  readonly rawPostsPerSecond: number;
  readonly backlog: number;
  readonly drainSeconds: number;
  readonly drainPerSecond: number;
  readonly firstProbeSeconds: number;
  readonly load: readonly [number | undefined, number | undefined];
}

export async function webhookBenchmarks(count: number, backlog: number, perTarget?: number): Promise<WebhookFigures> {
  const loadBefore = cpuLoad();
  const port = await freePort();
  let receiver = await startReceiver(port);
  const rawPostsPerSecond = await rawPosts(port, count, perTarget ?? 8);
  // Steady: everything enqueued at once, delivered as fast as the worker goes.
  const a = rig(perTarget);
  const started = performance.now();
  for (const e of events(count, port, 0)) a.outbox.enqueue(e, systemClock.now());
  a.worker.kick();
  await until(() => a.delivered === count, 120_000);
  const eventsPerSecond = count / ((a.last - started) / 1000);
  await a.worker.stop(1000);
  // Outage: the receiver is down while the events are made and attempted.
  await stopReceiver(receiver);
  const b = rig(perTarget);
  for (const e of events(backlog, port, count)) b.outbox.enqueue(e, systemClock.now());
  b.worker.kick();
  await until(() => b.worker.inFlight === 0 && b.outbox.nextWakeAt() !== null && b.outbox.nextWakeAt()! > systemClock.now(), 30_000);
  await new Promise((resolve) => setTimeout(resolve, 500));
  receiver = await startReceiver(port);
  const up = performance.now();
  await until(() => b.delivered === backlog, 120_000);
  const drainSeconds = (b.last - b.first) / 1000;
  await b.worker.stop(1000);
  await stopReceiver(receiver);
  return { eventsPerSecond, rawPostsPerSecond, backlog, drainSeconds, drainPerSecond: backlog / Math.max(drainSeconds, 1e-3), firstProbeSeconds: (b.first - up) / 1000, load: [loadBefore, cpuLoad()] };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const count = Number(process.env['BENCH_EVENTS'] ?? 20_000);
  const backlog = Number(process.env['BENCH_BACKLOG'] ?? 5_000);
  const perTarget = process.env['BENCH_PER_TARGET'] === undefined ? undefined : Number(process.env['BENCH_PER_TARGET']);
  const f = await webhookBenchmarks(count, backlog, perTarget);
  console.log(
    `webhooks: ${Math.round(f.eventsPerSecond)} events/s (${count} events; plain POSTs to the same receiver: ${Math.round(f.rawPostsPerSecond)}/s); backlog of ${f.backlog} after an outage drained in ${f.drainSeconds.toFixed(2)} s ` +
      `(${Math.round(f.drainPerSecond)}/s) from the first answer, which came ${f.firstProbeSeconds.toFixed(2)} s after the receiver was up; load ${f.load[0]} -> ${f.load[1]}`,
  );
}
