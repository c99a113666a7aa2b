/** Shared pieces of the server tests: a fleet, servers on port 0, a webhook receiver, polling. */
import { expect } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEngine } from '../../src/engine.js';
import { verifyWebhook } from '../../src/events/index.js';
import {
  buildServer,
  createSimulatedChannel,
  type BuildServerOptions,
  type Channel,
  type ChannelSink,
  type SendpoolServer,
  type SimulatedChannel,
  type SimulatedChannelOptions,
} from '../../src/server/index.js';

export const KEY_1 = 'test-key-company-one-0001';
export const KEY_2 = 'test-key-company-two-0002';

/** Company 1 owns business 1 (three numbers, type 10 with three templates); company 2 owns business 2. */
export function testFleet(perSecond?: number) {
  const rate = perSecond === undefined ? {} : { messagesPerSecond: perSecond };
  return {
    businesses: [
      {
        id: 1,
        name: 'Acme',
        companyId: 1,
        numbers: [
          { phone: '5511990000001', throughputPerHour: 1_000_000, messagingLimit24h: 10_000_000, status: 'active', ...rate },
          { phone: '5511990000002', throughputPerHour: 1_000_000, messagingLimit24h: 10_000_000, status: 'active', ...rate },
          { phone: '5511990000003', throughputPerHour: 1_000_000, messagingLimit24h: 10_000_000, status: 'active', ...rate },
        ],
        templateTypes: [{ id: 10, name: 'billing', templateIds: [100, 101, 102] }],
      },
      {
        id: 2,
        name: 'Globex',
        companyId: 2,
        numbers: [{ phone: '5521990000001', throughputPerHour: 2000, messagingLimit24h: 2000, status: 'active' }],
        templateTypes: [{ id: 10, name: 'alerts', templateIds: [300] }],
      },
    ],
    templates: [
      { id: 100, name: 'billing_a', text: 'A: Hi {{1}}, your bill is due.', businessIds: [1], status: 'active' },
      { id: 101, name: 'billing_b', text: 'B: {{1}}, your bill is due.', businessIds: [1], status: 'active' },
      { id: 102, name: 'billing_c', text: 'C: Dear {{1}}, a bill is due.', businessIds: [1], status: 'active' },
      { id: 300, name: 'alert', text: 'Alert: {{1}}', businessIds: [2], status: 'active' },
    ],
  };
}

/** Fast simulated channel: tiny delays, no random failures and no opt-outs unless asked. */
export function fastChannel(options: SimulatedChannelOptions = {}): SimulatedChannel {
  return createSimulatedChannel({
    record: true,
    sendDelayMs: { min: 0, max: 1 },
    statusDelayMs: { min: 1, max: 5 },
    attendanceDurationMs: { min: 1, max: 5 },
    sendFailureProbability: 0,
    // No opt-outs unless a test asks: an opt-out blocklists the phone, and tests send phones again.
    blocklistProbability: 0,
    ...options,
  });
}

export interface Started {
  readonly server: SendpoolServer;
  readonly url: string;
  readonly channel: SimulatedChannel;
}

export async function startServer(options: Partial<BuildServerOptions> & { perSecond?: number; fleet?: unknown } = {}): Promise<Started> {
  const { perSecond, fleet, ...rest } = options;
  const channel = (rest.channel as SimulatedChannel | undefined) ?? fastChannel();
  const server = buildServer({
    engine: rest.engine ?? createEngine(fleet ?? testFleet(perSecond)),
    apiKeys: [
      { key: KEY_1, companyId: 1, label: 'one' },
      { key: KEY_2, companyId: 2, label: 'two' },
    ],
    logger: false,
    processMetrics: false,
    allowPrivateWebhookTargets: true,
    campaignBatchIntervalMs: 50,
    outbox: { initialDelayMs: 20, maxDelayMs: 200, attemptTimeoutMs: 5_000 },
    delivery: { requestTimeoutMs: 2_000 },
    ...rest,
    channel,
  });
  await server.listen({ port: 0, host: '127.0.0.1' });
  const port = (server.server.address() as AddressInfo).port;
  return { server, url: `http://127.0.0.1:${port}`, channel };
}

export function contacts(n: number, offset = 0) {
  return Array.from({ length: n }, (_, i) => ({
    phone_number: `55119${String(80_000_000 + offset + i).padStart(8, '0')}`,
    template_variables: [`Client ${offset + i}`],
    data: { row: String(offset + i) },
  }));
}

export async function api(url: string, path: string, init: { method?: string; key?: string | null; body?: unknown; raw?: string | Uint8Array; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== null) headers['x-api-key-id'] = init.key ?? KEY_1;
  let body: string | Uint8Array | undefined;
  if (init.raw !== undefined) body = init.raw;
  else if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url + path, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A webhook receiver on 127.0.0.1: verifies Standard Webhooks signatures, deduplicates by webhook-id. */
export interface Receiver {
  readonly url: string;
  readonly port: number;
  /** Unique events by path, in arrival order. */
  readonly events: Map<string, any[]>;
  readonly ids: Set<string>;
  duplicates: number;
  badSignatures: number;
  all(path: string): any[];
  close(): Promise<void>;
}

/** `now`: the clock signatures are checked against (a server on a manual clock signs with its time). */
export async function startReceiver(secret: () => string, port = 0, now: () => number = Date.now): Promise<Receiver> {
  const events = new Map<string, any[]>();
  const ids = new Set<string>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    events,
    ids,
    duplicates: 0,
    badSignatures: 0,
    all: (path) => events.get(path) ?? [],
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const verdict = verifyWebhook({ headers: req.headers, body, secret: secret(), now: now() });
      if (!verdict.ok) {
        receiver.badSignatures++;
        res.writeHead(401).end();
        return;
      }
      if (ids.has(verdict.id)) receiver.duplicates++;
      else {
        ids.add(verdict.id);
        const payload = JSON.parse(body);
        const path = req.url ?? '/';
        const list = events.get(path) ?? [];
        list.push(payload);
        events.set(path, list);
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const actual = (server.address() as AddressInfo).port;
  Object.assign(receiver, { url: `http://127.0.0.1:${actual}`, port: actual });
  // Close idle keep-alive sockets at once when closing.
  const close = receiver.close;
  receiver.close = async () => {
    const done = close();
    server.closeAllConnections();
    await done;
  };
  return receiver;
}

/**
 * Upper bound of every wait in the server tests: far above what any machine needs (the conditions
 * come within seconds, a minute for the heaviest, even on a loaded CI machine), so only a real hang
 * reaches it.
 */
export const WAIT_BOUND_MS = Number(process.env.SENDPOOL_WAIT_BOUND_MS ?? 300_000);

/** Polls until `condition` holds; fails only after {@link WAIT_BOUND_MS}. */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > WAIT_BOUND_MS) throw new Error(`timed out after ${WAIT_BOUND_MS} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A provider that accepts every message and reports later events only when the test says: the
 * message ids it was handed, in order, and the sink the server attached (a new channel per server,
 * the same records across restarts).
 */
export function quietProvider() {
  const sent: string[] = [];
  const contactIds: number[] = [];
  let sink: ChannelSink | undefined;
  return {
    sent,
    /** The message id handed out for a contact (the HSM `id`). */
    messageOf: (contactId: number) => sent[contactIds.lastIndexOf(contactId)],
    sink: (): ChannelSink => {
      if (!sink) throw new Error('no server attached to the channel yet');
      return sink;
    },
    channel: (): Channel => ({
      async send(m) {
        sent.push(m.messageId);
        contactIds.push((m.contact as unknown as { id: number }).id);
        return { status: 'sent' };
      },
      async sendSms() {
        return { status: 'sent' };
      },
      attach(events) {
        sink = events;
      },
    }),
  };
}

/**
 * The HSM notifications a receiver took, per contact: `contacts` contacts, each with its ENQUEUED
 * first and once, and a SENT.
 */
export function expectEnqueuedFirst(receiver: Receiver, contacts: number): void {
  const byContact = new Map<number, string[]>();
  for (const e of receiver.all('/hsm') as { id: number; status: string }[]) byContact.set(e.id, [...(byContact.get(e.id) ?? []), e.status]);
  expect(byContact.size).toBe(contacts);
  for (const [id, statuses] of byContact) {
    expect(statuses[0], `contact ${id}: ${statuses.join(' ')}`).toBe('ENQUEUED');
    expect(
      statuses.filter((x) => x === 'ENQUEUED'),
      `contact ${id}`,
    ).toHaveLength(1);
    expect(statuses, `contact ${id}`).toContain('SENT');
  }
}
