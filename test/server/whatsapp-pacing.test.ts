/**
 * Pacing of the WhatsApp channel's sends: a throttling answer's `Retry-After` (seconds or an HTTP
 * date) becomes the number's rest; 130429 without one escalates per number (1 s, 2 s, 4 s … 60 s)
 * and resets after a success; a number's in-flight window follows its rate times the platform's
 * answer time; the platform's default 80 messages a second reaches the engine's numbers the fleet
 * gives no rate, through the server. The clock is a manual one wherever time decides.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../src/server/channels/whatsapp/answer.js';
import { Gate, InFlightWindow } from '../../src/server/channels/whatsapp/gate.js';
import { createWhatsAppChannel, isWhatsAppChannelError, type WhatsAppChannel, type WhatsAppChannelOptions } from '../../src/server/channels/whatsapp/index.js';
import { Throttles } from '../../src/server/channels/whatsapp/throttles.js';
import type { OutgoingMessage, SendOutcome } from '../../src/core/dispatch/types.js';
import type { SimulatedChannel } from '../../src/server/index.js';
import { startServer, testFleet, waitFor } from './helpers.js';
import { ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN, graphAccount, startFakeGraph, whatsappFleet, type FakeGraph } from './whatsapp-fake-graph.js';

const fleet = whatsappFleet(testFleet());
const NUMBER_ID = '106540352242920';

function message(index = 0, phone = '5511990000001'): OutgoingMessage {
  return {
    messageId: `s1.${index}.0`,
    contactId: `s1.${index}`,
    submissionId: 's1',
    index,
    businessId: 1,
    typeId: 10,
    campaignId: 42,
    queueId: undefined,
    botId: undefined,
    contact: { phone: `55119${String(80_000_000 + index)}`, variables: [`Ana ${index}`] },
    phone,
    templateId: 100,
    text: `A: Hi Ana ${index}, your bill is due.`,
    handedOutAt: 0,
    isRetry: false,
    retryIndex: null,
    maxRetries: 0,
    retryInterval: 0,
  };
}

const restOf = (o: SendOutcome) => (o.status === 'failed' && o.action?.kind === 'requeue' ? o.action.restMs : undefined);

describe('Retry-After', () => {
  it('reads delay-seconds and HTTP dates, bounded, and nothing else', () => {
    const now = Date.UTC(2026, 9, 21, 7, 28, 0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:45 GMT', now)).toBe(45_000);
    // A date past asks for no wait; a wait past an hour is an hour.
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:27:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('86400', now)).toBe(MAX_RETRY_AFTER_MS);
    for (const bad of [undefined, '', '-1', '1.5', 'soon', '2026-10-21T07:28:45Z', 'Wed, 99 Foo 2026 07:28:45 GMT']) expect(parseRetryAfter(bad, now), String(bad)).toBeUndefined();
  });
});

describe('the escalation of a number’s rests', () => {
  it('doubles on consecutive throttles up to 60 s, and starts over after a success', () => {
    const t = new Throttles();
    let now = 0;
    const rests: number[] = [];
    for (let i = 0; i < 9; i++) {
      // Each send starts once the last rest is over.
      const rest = t.throttled('n1', now, now + 200, 1_000);
      rests.push(rest);
      now += 200 + rest;
    }
    expect(rests).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    t.succeeded('n1', now);
    expect(t.level('n1')).toBe(0);
    expect(t.throttled('n1', now, now + 100, 1_000)).toBe(1_000);
  });

  it('counts the sends already on their way as the same throttle: what is left of the rest, no escalation', () => {
    const t = new Throttles();
    expect(t.throttled('n1', 0, 100, 1_000)).toBe(1_000); // rests until 1,100
    // 63 more sends started before it, answered over the next 300 ms.
    for (let i = 0; i < 63; i++) expect(t.throttled('n1', 50, 100 + i * 5, 1_000)).toBe(1_000 - i * 5);
    expect(t.level('n1')).toBe(1);
    // A success of a send from before the rest says nothing; one after it resets.
    t.succeeded('n1', 90);
    expect(t.level('n1')).toBe(1);
    expect(t.throttled('n1', 1_100, 1_300, 1_000)).toBe(2_000);
    t.succeeded('n1', 3_300);
    expect(t.level('n1')).toBe(0);
  });

  it('takes Retry-After instead of the escalation, still counting the throttle', () => {
    const t = new Throttles();
    expect(t.throttled('n1', 0, 100, 1_000, 7_000)).toBe(7_000);
    expect(t.throttled('n1', 7_100, 7_200, 1_000)).toBe(2_000);
    // Another number has its own.
    expect(t.throttled('n2', 7_100, 7_200, 1_000)).toBe(1_000);
  });

  it('starts over when the last rest ended longer ago than the longest rest', () => {
    const t = new Throttles();
    t.throttled('n1', 0, 0, 1_000);
    t.throttled('n1', 1_000, 1_000, 1_000); // rests until 3,000
    expect(t.throttled('n1', 70_000, 70_000, 1_000)).toBe(1_000);
  });
});

describe('the in-flight window', () => {
  it('grows above 64 when rate × latency needs it, and shrinks when the rate falls', () => {
    const w = new InFlightWindow({ min: 4, max: 2_000, initial: 64 });
    let now = 0;
    // 1,000 sends a second, each answered after 200 ms.
    for (let i = 0; i < 3_000; i++) {
      now++;
      w.arrived(now);
      if (i >= 200) w.answered(200, now);
    }
    expect(w.latencyMs).toBe(200);
    expect(w.rate).toBe(1_000);
    expect(w.size).toBe(300); // ceil(1,000 × 0.2 × 1.5)
    // 80 a second at 200 ms: 24, reached by an eighth a period at most.
    const before = w.size;
    w.arrived((now += 12.5));
    w.answered(200, (now += 250));
    expect(w.size).toBeLessThan(before);
    // By an eighth a period at most (two periods closed here), not to 24 at once.
    expect(w.size).toBeGreaterThanOrEqual(Math.floor((Math.floor((before * 7) / 8) * 7) / 8));
    for (let i = 0; i < 1_000; i++) {
      now += 12.5;
      w.arrived(now);
      w.answered(200, now);
    }
    expect(w.size).toBe(24);
  });

  it('stays within [min, max], and keeps its size across an idle spell', () => {
    const w = new InFlightWindow({ min: 4, max: 100, initial: 64 });
    let now = 0;
    for (let i = 0; i < 2_000; i++) {
      now++;
      w.arrived(now);
      w.answered(1_000, now);
    }
    expect(w.size).toBe(100);
    // Ten minutes without a send: the spell measures nothing, and a burst finds the window it left.
    now += 600_000;
    expect(w.arrived(now)).toBe(100);
    for (let i = 0; i < 400; i++) w.arrived(now + i);
    expect(w.size).toBe(100);
    const slow = new InFlightWindow({ min: 4, max: 100, initial: 64 });
    for (let i = 0; i < 100; i++) {
      now += 100;
      slow.arrived(now);
      slow.answered(5, now);
    }
    expect(slow.size).toBe(4);
  });

  it('a gate whose limit rises lets waiting sends through at once; one that falls lets none cut short', async () => {
    const gate = new Gate(2);
    expect(gate.tryAcquire() && gate.tryAcquire()).toBe(true);
    const order: number[] = [];
    const waits = [1, 2, 3, 4].map((n) => gate.wait().then(() => order.push(n)));
    gate.setLimit(4);
    await Promise.resolve();
    expect(order).toEqual([1, 2]);
    expect(gate.active).toBe(4);
    gate.setLimit(1);
    gate.release();
    gate.release();
    gate.release();
    expect(gate.active).toBe(1);
    gate.release(); // the last one hands its slot on
    await Promise.resolve();
    expect(order).toEqual([1, 2, 3]);
    gate.setLimit(10);
    await Promise.all(waits);
    expect(order).toEqual([1, 2, 3, 4]);
  });
});

describe('WhatsApp channel: pacing against the fake Graph API', () => {
  let graph: FakeGraph;
  const channels: WhatsAppChannel[] = [];
  let clock = 1_000_000;
  const open = (over: Partial<WhatsAppChannelOptions> = {}) => {
    const c = createWhatsAppChannel({ fleet, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url, attendanceIdleMs: false, now: () => clock, ...over });
    channels.push(c);
    return c;
  };

  beforeAll(async () => {
    graph = await startFakeGraph(graphAccount(fleet));
  });
  afterEach(() => {
    graph.respond = () => ({ kind: 'accept' });
  });
  afterAll(async () => {
    for (const c of channels) await c.close?.();
    await graph.close();
  });

  it('rests the number as Retry-After says, in seconds or as an HTTP date', async () => {
    const channel = open();
    graph.respond = () => ({ kind: 'error', code: 130429, status: 429, details: 'Rate limit hit', headers: { 'Retry-After': '7' } });
    expect(restOf(await channel.send(message(1)))).toBe(7_000);
    clock += 60_000;
    graph.respond = () => ({ kind: 'error', code: 130429, status: 429, details: 'Rate limit hit', headers: { 'retry-after': new Date(clock + 30_000).toUTCString() } });
    expect(restOf(await channel.send(message(2)))).toBe(30_000);
    // A bare 429 and the account's throttle (80007) take it too.
    clock += 60_000;
    graph.respond = () => ({ kind: 'raw', status: 429, body: '', headers: { 'Retry-After': '3' } });
    const bare = await open().send(message(3));
    expect(bare).toMatchObject({ status: 'failed', action: { kind: 'requeue', restMs: 3_000 } });
    graph.respond = () => ({ kind: 'error', code: 80007, status: 400, details: 'Rate limit issues', headers: { 'Retry-After': '15' } });
    expect(await channel.send(message(4))).toEqual({ status: 'failed', code: 80007, refused: true, reason: 'Rate limit issues', action: { kind: 'requeue', restMs: 15_000 } });
    // Without a Retry-After the account's throttle keeps the table's rest (no action of its own).
    graph.respond = () => ({ kind: 'error', code: 80007, status: 400, details: 'Rate limit issues' });
    expect(await channel.send(message(5))).toEqual({ status: 'failed', code: 80007, refused: true, reason: 'Rate limit issues' });
    // A Retry-After on an answer that is no throttle is not read.
    graph.respond = () => ({ kind: 'error', code: 131026, status: 400, details: 'Message undeliverable', headers: { 'Retry-After': '9' } });
    expect(await channel.send(message(6))).toEqual({ status: 'failed', code: 131026, refused: true, reason: 'Message undeliverable' });
  });

  it('escalates 130429 per number on consecutive throttles, and starts over after a success', async () => {
    const channel = open();
    graph.respond = () => ({ kind: 'error', code: 130429, status: 400, details: 'Rate limit hit' });
    const rests: (number | undefined)[] = [];
    for (let i = 0; i < 4; i++) {
      const rest = restOf(await channel.send(message(i)));
      rests.push(rest);
      clock += rest ?? 0; // the engine rests the number, then sends again
    }
    expect(rests).toEqual([1_000, 2_000, 4_000, 8_000]);
    // Another number is not escalated by this one's throttles.
    expect(restOf(await channel.send(message(9, '5511990000002')))).toBe(1_000);
    expect(channel.stats().throttledNumbers).toBe(2);
    graph.respond = () => ({ kind: 'accept' });
    expect(await channel.send(message(10))).toEqual({ status: 'sent' });
    graph.respond = () => ({ kind: 'error', code: 130429, status: 400, details: 'Rate limit hit' });
    expect(restOf(await channel.send(message(11)))).toBe(1_000);
  });

  it('grows a number’s window above 64 when its rate times the answer time needs it', async () => {
    const channel = open();
    // The platform answers each send when the test says, 200 ms of the channel's clock after it came.
    const held: (() => void)[] = [];
    graph.respond = (r) => (r.phoneNumberId === NUMBER_ID ? new Promise((resolve) => held.push(() => resolve({ kind: 'accept' }))) : { kind: 'accept' });
    graph.maxInFlight.clear();
    const sends: Promise<SendOutcome>[] = [];
    // 1,000 sends a second for a second and a half: 64 reach the platform, the rest wait.
    for (let i = 0; i < 1_500; i++) {
      clock += 1;
      sends.push(channel.send(message(100 + i)));
    }
    await waitFor(() => held.length === 64, 'the first window at the platform');
    expect(channel.stats().maxWindow).toBe(64);
    // Answer in rounds, 200 ms apart: the window learns the latency and the rate.
    while (sends.length > 0 && (graph.maxInFlight.get(NUMBER_ID) ?? 0) <= 64) {
      clock += 200;
      const round = held.splice(0);
      for (const answer of round) answer();
      await waitFor(() => held.length > 0 || channel.stats().inFlight === 0, 'the next sends at the platform');
      if (channel.stats().inFlight === 0) break;
    }
    expect(graph.maxInFlight.get(NUMBER_ID)).toBeGreaterThan(64);
    expect(channel.stats().maxWindow).toBeGreaterThan(64);
    while (held.length > 0 || channel.stats().inFlight > 0) {
      for (const answer of held.splice(0)) answer();
      await new Promise((r) => setImmediate(r));
    }
    expect((await Promise.all(sends)).every((o) => o.status === 'sent')).toBe(true);
  });

  it('tells the server the platform’s default rate, and refuses one it cannot be', () => {
    expect(open().numberDefaults).toEqual({ messagesPerSecond: 80 });
    expect(open({ defaultMessagesPerSecond: 250 }).numberDefaults).toEqual({ messagesPerSecond: 250 });
    let error: unknown;
    try {
      open({ defaultMessagesPerSecond: 0, maxInFlightPerNumber: 1.5 });
    } catch (e) {
      error = e;
    }
    expect(isWhatsAppChannelError(error)).toBe(true);
    expect((error as Error).message).toContain('defaultMessagesPerSecond: expected an integer from 1 to 1000 (messages a second), got 0');
    expect((error as Error).message).toContain('maxInFlightPerNumber: expected an integer from 1 to 100000, got 1.5');
  });
});

describe('the default rate in the server', () => {
  it('paces the numbers the fleet gives no rate at 80/s, keeps a fleet’s own rate, and an upgrade raises 80 to 1,000', async () => {
    const withRate = structuredClone(fleet);
    withRate.businesses[0].numbers[2].messagesPerSecond = 20;
    const graph = await startFakeGraph(graphAccount(withRate));
    const channel = createWhatsAppChannel({ fleet: withRate, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url, attendanceIdleMs: false });
    const engine = createEngine(withRate);
    const s = await startServer({ engine, channel: channel as unknown as SimulatedChannel });
    try {
      expect(engine.numbers().map((n) => [n.phone, n.messagesPerSecond])).toEqual([
        ['5511990000001', 80],
        ['5511990000002', 80],
        ['5511990000003', 20],
        ['5521990000001', 80],
      ]);
      // What the platform's THROUGHPUT_UPGRADE does to the engine (whatsapp-steering.test.ts sends it).
      engine.setNumberLimits('5511990000001', { messagesPerSecond: 1_000 });
      await waitFor(() => engine.numbers()[0]!.messagesPerSecond === 1_000, 'the upgrade');
    } finally {
      await s.server.close();
      await graph.close();
    }
  });
});
