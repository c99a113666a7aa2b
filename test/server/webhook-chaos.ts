/**
 * A chaos receiver and the campaign run against it (test/server/webhook-chaos.test.ts and
 * bench/webhook-chaos.bench.ts): one origin, four paths.
 *
 * - `/hsm` is healthy: it verifies the signature, records the event once (with the time it came),
 *   and answers 204.
 * - `/fail` always answers 500 with a body (a receiver whose report handler is broken).
 * - `/timeout` reads the request and never answers.
 * - `/reset` destroys the connection as soon as the request arrives.
 *
 * The receiver's record is independent of the server: what came to `/hsm`, and how many times each
 * failing path was tried. When the events were made is taken at the outbox (every event enters one
 * by `Outbox#enqueue`, with the time the server gives it): {@link watchOutbox}.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { Outbox } from '../../src/events/outbox.js';
import { verifyWebhook } from '../../src/events/signing.js';
import { api, waitFor } from './helpers.js';

export interface ChaosReceiver {
  readonly url: string;
  /** Events taken on `/hsm`, by event id: the payload and when it came (ms, `Date.now`). */
  readonly healthy: Map<string, { readonly payload: any; readonly at: number }>;
  /** Contacts whose ENQUEUED and SENT both came to `/hsm` (kept as events come, so a wait reads it at no cost). */
  complete: number;
  /** Events `/hsm` took again (at-least-once allows them only after a lost answer). */
  duplicates: number;
  badSignatures: number;
  /** Requests each failing path got. */
  readonly hits: { fail: number; timeout: number; reset: number };
  close(): Promise<void>;
}

/** A record of the healthy path: `take` files one event as it came (a contact is complete with its ENQUEUED and SENT). */
function healthyRecord(receiver: ChaosReceiver): (id: string, payload: any, at: number) => void {
  // Per contact: bit 1 ENQUEUED came, bit 2 SENT came.
  const seen = new Map<number, number>();
  return (id, payload, at) => {
    if (receiver.healthy.has(id)) {
      receiver.duplicates++;
      return;
    }
    receiver.healthy.set(id, { payload, at });
    const bit = payload.status === 'ENQUEUED' ? 1 : payload.status === 'SENT' ? 2 : 0;
    const before = seen.get(payload.id) ?? 0;
    if ((before | bit) === 3 && before !== 3) receiver.complete++;
    seen.set(payload.id, before | bit);
  };
}

/** A receiver that took nothing yet, closed by `close`. */
function emptyReceiver(close: () => Promise<void>): ChaosReceiver {
  return { url: '', healthy: new Map(), complete: 0, duplicates: 0, badSignatures: 0, hits: { fail: 0, timeout: 0, reset: 0 }, close };
}

/** `onTaken` hears each healthy event as it is filed (the thread's report). */
export async function startChaosReceiver(secret: () => string, onTaken?: (id: string, payload: unknown, at: number) => void): Promise<ChaosReceiver> {
  const sockets = new Set<Socket>();
  const receiver = emptyReceiver(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const take = healthyRecord(receiver);
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/reset') {
      receiver.hits.reset++;
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (path === '/timeout') {
        receiver.hits.timeout++;
        return; // never answered: the sender's timeout ends it
      }
      if (path === '/fail') {
        receiver.hits.fail++;
        res.writeHead(500, { 'content-type': 'text/plain' }).end('report handler failed: TypeError: cannot read properties of undefined');
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const verdict = verifyWebhook({ headers: req.headers, body, secret: secret(), now: Date.now() });
      if (!verdict.ok) {
        receiver.badSignatures++;
        res.writeHead(401).end();
        return;
      }
      if (receiver.healthy.has(verdict.id)) receiver.duplicates++;
      else {
        const payload: unknown = JSON.parse(body);
        const at = Date.now();
        take(verdict.id, payload, at);
        onTaken?.(verdict.id, payload, at);
      }
      res.writeHead(204).end();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  Object.assign(receiver, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  return receiver;
}

/**
 * The same receiver in a worker thread (its own event loop, its own core): a bench measures the
 * server's delivery, not the receiver's share of one thread. The thread sends what it took every
 * 20 ms; `healthy` and the counts here follow it (arrival times are the thread's `Date.now`).
 */
export async function startChaosReceiverThread(secret: string): Promise<ChaosReceiver> {
  // The thread loads its TypeScript through tsx's loader, registered in the thread (a worker
  // inherits neither the main thread's hooks nor, on Node 20, an `--import` given to it).
  const entry = JSON.stringify(new URL('./chaos-receiver-thread.ts', import.meta.url).href);
  const worker = new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${entry}); });`, { eval: true, workerData: { secret } });
  const receiver = emptyReceiver(async () => {
    worker.postMessage('close');
    await new Promise<void>((r) => worker.once('exit', () => r()));
  });
  const take = healthyRecord(receiver);
  const url = await new Promise<string>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (m: ThreadReport | { readonly url: string }) => {
      if ('url' in m) return resolve(m.url);
      for (const [id, payload, at] of m.events) take(id, payload, at);
      receiver.duplicates += m.duplicates;
      Object.assign(receiver, { badSignatures: m.badSignatures, hits: m.hits });
    });
  });
  Object.assign(receiver, { url });
  return receiver;
}

/** What the receiver's thread sends: the healthy events taken since its last report, and its counts. */
export interface ThreadReport {
  readonly events: readonly (readonly [string, unknown, number])[];
  /** Duplicates since the last report. */
  readonly duplicates: number;
  readonly badSignatures: number;
  readonly hits: ChaosReceiver['hits'];
}

/**
 * When each event entered an outbox (the first time, by event id): `Outbox#enqueue`'s `now`, the
 * time the server gives the event (for a request's ENQUEUED notifications, the time it was
 * accepted). On the server on Redis an event enters the outbox of the instance that claims it.
 * Call the answer to stop watching.
 */
export function watchOutbox(): { readonly created: Map<string, { readonly at: number; readonly url: string }>; stop(): void } {
  const created = new Map<string, { at: number; url: string }>();
  const original = Outbox.prototype.enqueue;
  Outbox.prototype.enqueue = function (this: Outbox, event, now) {
    if (!created.has(event.id)) created.set(event.id, { at: now, url: event.url });
    return original.call(this, event, now);
  };
  return { created, stop: () => void (Outbox.prototype.enqueue = original) };
}

/** What one chaos run gave: healthy-path delays and the independent checks' figures. */
export interface ChaosOutcome {
  readonly accepted: number;
  readonly healthyEvents: number;
  /** Delay from the event's creation to its arrival on `/hsm`, ms, sorted. */
  readonly delays: readonly number[];
  /** The same without the ENQUEUED notifications (made together at intake, a request's at once). */
  readonly statusDelays: readonly number[];
  readonly duplicates: number;
  readonly hits: ChaosReceiver['hits'];
}

/** True when none of the servers has a contact queued, waiting for a retry or in flight. */
export function dispatchSettled(...servers: readonly { stats(): { readonly dispatch: { readonly queued: number; readonly waitingRetry: number; readonly inFlight: number } } }[]): () => boolean {
  return () =>
    servers.every((s) => {
      const d = s.stats().dispatch;
      return d.queued + d.waitingRetry + d.inFlight === 0;
    });
}

export interface ChaosServer {
  readonly url: string;
  /** True when the server has nothing to do but retry the failing paths. */
  readonly settled: () => boolean;
}

/**
 * Configures the four webhooks on one origin (HSM healthy, reports 500, campaign statistics time
 * out, attendances reset), asks for reports, posts `contacts` contacts in requests of 1,000 and a
 * few SMS whose callbacks reset, and waits until every accepted contact's ENQUEUED and SENT came to
 * `/hsm` and the server has settled. `send` posts contacts (the caller's request body helper).
 */
export async function runChaos(
  server: ChaosServer,
  receiver: ChaosReceiver,
  created: Map<string, { readonly at: number; readonly url: string }>,
  options: {
    readonly contacts: number;
    readonly body: (from: number, n: number) => unknown;
    readonly key?: string;
    /** Only the healthy path configured, and the SMS callbacks to it too: the ceiling of the same run. */
    readonly healthyOnly?: boolean;
  },
): Promise<ChaosOutcome> {
  const key = options.key;
  const failing = (path: string) => `${receiver.url}${options.healthyOnly ? '/unused' : path}`;
  const config = {
    url_hsm_callback: `${receiver.url}/hsm`,
    ...(options.healthyOnly
      ? {}
      : {
          url_report_webhook: failing('/fail'),
          url_campaign_webhook: failing('/timeout'),
          url_attendance_callback: failing('/reset'),
        }),
  };
  const configured = await api(server.url, '/messenger/config/', { body: config, ...(key ? { key } : {}) });
  if (configured.status !== 200) throw new Error(`config: ${configured.status} ${configured.text}`);
  for (const report_type of ['official-messages', 'numbers', 'templates']) {
    const r = await api(server.url, '/reports/', { body: { report_type }, ...(key ? { key } : {}) });
    if (r.status !== 202) throw new Error(`report: ${r.status} ${r.text}`);
  }
  const sms = await api(server.url, '/sms/messages/', {
    body: Array.from({ length: 20 }, (_, i) => ({
      message: `chaos ${i}`,
      phone: `5511977${String(i).padStart(6, '0')}`,
      ...(options.healthyOnly ? {} : { url_callback_dlr: failing('/reset') }),
      reference: `r${i}`,
    })),
    ...(key ? { key } : {}),
  });
  if (sms.status !== 202) throw new Error(`sms: ${sms.status} ${sms.text}`);
  let accepted = 0;
  for (let from = 0; from < options.contacts; from += 1_000) {
    const n = Math.min(1_000, options.contacts - from);
    const res = await api(server.url, '/messenger/messages/', { body: options.body(from, n), ...(key ? { key } : {}) });
    if (res.status !== 202) throw new Error(`send: ${res.status} ${res.text}`);
    accepted += res.json.accepted ?? n;
  }
  // The wait polls every 10 ms beside the server it measures: the cheap checks first, the walk over
  // every event only once they hold (a walk per poll took a third of the process's CPU).
  await waitFor(() => {
    if (receiver.complete !== accepted || !server.settled()) return false;
    // Every event made for the healthy path came (the later statuses are made after SENT).
    for (const [id, { url }] of created) if (url.endsWith('/hsm') && !receiver.healthy.has(id)) return false;
    return true;
  }, `ENQUEUED and SENT of ${accepted} contacts on the healthy path`);
  const delays: number[] = [];
  const statusDelays: number[] = [];
  for (const [id, { at, payload }] of receiver.healthy) {
    const made = created.get(id);
    if (made) delays.push(at - made.at);
    if (made && payload.status !== 'ENQUEUED') statusDelays.push(at - made.at);
  }
  delays.sort((a, b) => a - b);
  statusDelays.sort((a, b) => a - b);
  return { accepted, healthyEvents: receiver.healthy.size, delays, statusDelays, duplicates: receiver.duplicates, hits: { ...receiver.hits } };
}

/** The q-quantile (0..1) of sorted values. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
