/**
 * The WhatsApp channel's sends against a local fake of the Graph API: the request as the Cloud
 * API documents it, field by field; every error code of the table and every transport failure
 * turned into the engine's outcome; at most `maxInFlightPerNumber` sends of a number at once; and
 * options checked whole.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CHANNEL_ERRORS, TRANSPORT_FAILURES, actionForCode } from '../../src/core/channel-errors.js';
import type { OutgoingMessage, SendOutcome } from '../../src/core/dispatch/types.js';
import { createWhatsAppChannel, isWhatsAppChannelError, type WhatsAppChannel, type WhatsAppChannelOptions } from '../../src/server/channels/whatsapp/index.js';
import { testFleet, waitFor } from './helpers.js';
import { ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN, graphAccount, startFakeGraph, whatsappFleet, type FakeGraph, type GraphAnswer } from './whatsapp-fake-graph.js';

const fleet = whatsappFleet(testFleet());

function message(over: Partial<OutgoingMessage> = {}, index = 0): OutgoingMessage {
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
    contact: { phone: `55119800000${String(index).padStart(2, '0')}`, variables: [`Ana "Maria" ${index}`] },
    phone: '5511990000001',
    templateId: 100,
    text: `A: Hi Ana ${index}, your bill is due.`,
    handedOutAt: 0,
    isRetry: false,
    retryIndex: null,
    maxRetries: 0,
    retryInterval: 0,
    ...over,
  };
}

describe('WhatsApp channel: sends', () => {
  let graph: FakeGraph;
  let channel: WhatsAppChannel;
  const channels: WhatsAppChannel[] = [];
  const open = (over: Partial<WhatsAppChannelOptions> = {}) => {
    const c = createWhatsAppChannel({ fleet, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url, attendanceIdleMs: false, ...over });
    channels.push(c);
    return c;
  };

  beforeAll(async () => {
    graph = await startFakeGraph(graphAccount(fleet));
    channel = open();
  });
  afterEach(() => {
    graph.respond = () => ({ kind: 'accept' });
  });
  afterAll(async () => {
    for (const c of channels) await c.close?.();
    await graph.close();
  });

  it('sends a template message as the Cloud API documents it, field by field', async () => {
    const before = graph.requests.length;
    const outcome = await channel.send(message({ phone: '5511990000002', templateId: 101 }));
    expect(outcome).toEqual({ status: 'sent' });
    const [request] = graph.requests.slice(before);
    expect(request!.problems).toEqual([]);
    expect(request!.phoneNumberId).toBe('106540352242921');
    expect(request!.headers.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers.connection ?? 'keep-alive').toBe('keep-alive');
    expect(request!.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '5511980000000',
      type: 'template',
      biz_opaque_callback_data: 's1.0.0',
      template: {
        name: 'billing_b',
        language: { policy: 'deterministic', code: 'pt_BR' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ana "Maria" 0' }] }],
      },
    });
  });

  it('sends a template without placeholders without components', async () => {
    const noValues = whatsappFleet(testFleet());
    noValues.templates[0].text = 'Your bill is due.';
    noValues.templates[1].text = 'Bill due.';
    noValues.templates[2].text = 'A bill is due.';
    const fakeAccount = graphAccount(noValues);
    const other = await startFakeGraph(fakeAccount);
    const c = createWhatsAppChannel({ fleet: noValues, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: other.url, attendanceIdleMs: false });
    try {
      expect(await c.send(message({ contact: { phone: '5511980000001' } }))).toEqual({ status: 'sent' });
      expect(other.requests[0]!.problems).toEqual([]);
      expect(other.requests[0]!.body.template).toEqual({ name: 'billing_a', language: { policy: 'deterministic', code: 'pt_BR' } });
    } finally {
      await c.close?.();
      await other.close();
    }
  });

  it.each(CHANNEL_ERRORS.map((e) => [e.code, e.action.kind] as const))('answers Graph error %i with a failure under that code (the table: %s)', async (code, kind) => {
    graph.respond = () => ({ kind: 'error', code, status: code === 190 || code === 0 ? 401 : 400, details: `details of ${code}` });
    // A throttle rests the number (and escalates): each on a channel of its own.
    const outcome = await (code === 130429 ? open() : channel).send(message());
    // 130429 carries the number's rest (the first throttle: the table's 1 s; whatsapp-pacing.test.ts).
    const rest = code === 130429 ? { action: { kind: 'requeue', restMs: 1_000 } } : {};
    expect(outcome).toEqual({ status: 'failed', code, refused: true, reason: `details of ${code}`, ...rest });
    // The engine looks the code up in the one table.
    expect(actionForCode(code).kind).toBe(kind);
  });

  it('answers a code the table does not know with that code (the engine retries it)', async () => {
    graph.respond = () => ({ kind: 'error', code: 135000, details: 'Generic user error' });
    expect(await channel.send(message())).toEqual({ status: 'failed', code: 135000, refused: true, reason: 'Generic user error' });
    expect(actionForCode(135000)).toEqual({ kind: 'retry', notBeforeMs: 0 });
  });

  const transport: [string, GraphAnswer, SendOutcome['status'], keyof typeof TRANSPORT_FAILURES | null][] = [
    ['a 5xx page without an error code', { kind: 'raw', status: 502, body: '<html>Bad gateway</html>' }, 'failed', 'unknown-outcome'],
    ['a 429 without an error code', { kind: 'raw', status: 429, body: '' }, 'failed', 'throttled'],
    ['a connection reset after the request left', { kind: 'reset' }, 'failed', 'unknown-outcome'],
    ['a 200 without the message id', { kind: 'raw', status: 200, body: '{"messaging_product":"whatsapp"}' }, 'sent', null],
  ];
  it.each(transport)('answers %s', async (_name, answer, status, kind) => {
    graph.respond = () => answer;
    const outcome = await open().send(message());
    expect(outcome.status).toBe(status);
    if (kind !== null && outcome.status === 'failed') {
      expect(outcome.action).toEqual(TRANSPORT_FAILURES[kind].action);
      expect(outcome.reason).toContain(TRANSPORT_FAILURES[kind].description);
      expect(outcome.code).toBeUndefined();
    }
  });

  it('treats an answer that never comes as an unknown outcome: a transport failure that uses no contact retry and keeps its charge', async () => {
    const impatient = open({ requestTimeoutMs: 300 });
    graph.respond = () => ({ kind: 'hang' });
    const outcome = await impatient.send(message());
    expect(outcome).toMatchObject({ status: 'failed', action: { kind: 'transport', backoffMs: 1_000 } });
    expect((outcome as { refused?: boolean }).refused).toBeUndefined();
    expect((outcome as { reason: string }).reason).toContain('unknown outcome');
  });

  it('tries a send that could not connect again as a transport failure: nothing left, no retry used, its charge given back', async () => {
    const closed = await startFakeGraph(graphAccount(fleet));
    const url = closed.url;
    await closed.close();
    const unreachable = open({ graphUrl: url });
    const outcome = await unreachable.send(message());
    expect(outcome).toMatchObject({ status: 'failed', action: { kind: 'transport', backoffMs: 1_000, restMs: 5_000 }, refused: true });
    expect((outcome as { reason: string }).reason).toContain('ECONNREFUSED');
  });

  it('has at most maxInFlightPerNumber sends of a number at the platform, and queues the rest', async () => {
    const bounded = open({ maxInFlightPerNumber: 3 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    graph.respond = async (r) => {
      if (r.phoneNumberId === '106540352242920') await held;
      return { kind: 'accept' };
    };
    graph.maxInFlight.clear();
    const first = Array.from({ length: 10 }, (_, i) => bounded.send(message({}, i)));
    // Another number is not held up by the first one's queue.
    expect(await bounded.send(message({ phone: '5511990000003' }, 50))).toEqual({ status: 'sent' });
    await waitFor(() => graph.inFlight.get('106540352242920') === 3 && bounded.stats().waiting === 7, 'three sends held at the platform, seven waiting');
    release();
    const outcomes = await Promise.all(first);
    expect(outcomes.every((o) => o.status === 'sent')).toBe(true);
    expect(graph.maxInFlight.get('106540352242920')).toBe(3);
    expect(bounded.stats()).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it('refuses options that cannot work, every problem at once, secrets never shown', () => {
    const bare = testFleet();
    let error: unknown;
    try {
      createWhatsAppChannel({ fleet: bare, accessToken: 'short', appSecret: 'with a space inside!', verifyToken: VERIFY_TOKEN, graphUrl: 'ftp://x', requestTimeoutMs: 0 });
    } catch (e) {
      error = e;
    }
    expect(isWhatsAppChannelError(error)).toBe(true);
    const problems = (error as { problems: { path: string; message: string }[] }).problems;
    const paths = problems.map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['accessToken', 'appSecret', 'graphUrl', 'requestTimeoutMs', 'fleet.$.businesses[0].numbers[0].whatsapp', 'fleet.$.templates[3].whatsapp']));
    const text = (error as Error).message;
    expect(text).not.toContain('short');
    expect(text).not.toContain('with a space');
    expect(problems.find((p) => p.path === 'fleet.$.businesses[0].numbers[0].whatsapp')!.message).toContain('phoneNumberId');
  });
});
