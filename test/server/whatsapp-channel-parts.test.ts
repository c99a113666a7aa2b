/**
 * The parts the WhatsApp channel is composed of (channel.ts wires them), each on its own: the
 * dedupe of webhook events (a model test: each event acted on once, again once forgotten), the
 * webhook receiver's answers to Meta, the records of sent messages and their recall from the fleet
 * before a notification is acted on, the sender over a fake Graph API (its answers, its
 * throttles, its per-number window), and steering (platform events as the sink's signals).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OutgoingMessage } from '../../src/core/dispatch/types.js';
import { validateFleet } from '../../src/core/fleet-validate.js';
import type { ChannelMemory, ChannelSink, InboundRequest } from '../../src/server/ports/channel.js';
import { ChannelMemoryStore } from '../../src/server/channels/memory.js';
import { WebhookDedupe } from '../../src/server/channels/whatsapp/dedupe.js';
import { FleetIds } from '../../src/server/channels/whatsapp/fleet-ids.js';
import type { GraphAnswer } from '../../src/server/channels/whatsapp/graph-client.js';
import { Sender } from '../../src/server/channels/whatsapp/sender.js';
import { encodeSent } from '../../src/server/channels/whatsapp/sent-record.js';
import { SentMemory } from '../../src/server/channels/whatsapp/sent-memory.js';
import { signatureOf } from '../../src/server/channels/whatsapp/signature.js';
import { steer, type SteeringEvent } from '../../src/server/channels/whatsapp/steering.js';
import { WebhookReceiver, type Delivery } from '../../src/server/channels/whatsapp/webhook-receiver.js';
import { readWebhook, type WebhookEvent } from '../../src/server/channels/whatsapp/webhook-events.js';
import { testFleet } from './helpers.js';
import { APP_SECRET, VERIFY_TOKEN, WABA_ID, accountNotification, messageNotification, qualityNotification, statusNotification, templateNotification, whatsappFleet } from './whatsapp-fake-graph.js';

const number = { phone: '5511990000001', phoneNumberId: '106540352242920' };
const user = '5511980000000';

describe('dedupe of webhook events', () => {
  it('acts on each key once, in order, a key repeated within one notification too', () => {
    const dedupe = new WebhookDedupe(100);
    const acted: string[] = [];
    expect(dedupe.actOnce([{ key: 'a' }, { key: 'b' }, { key: 'a' }], (e) => acted.push(e.key))).toEqual(['a', 'b']);
    expect(dedupe.actOnce([{ key: 'b' }, { key: 'c' }], (e) => acted.push(e.key))).toEqual(['c']);
    expect(acted).toEqual(['a', 'b', 'c']);
    expect(dedupe.duplicates).toBe(2);
  });

  it('forgets only the newest keys past its bound: an old event delivered again is acted on again', () => {
    const dedupe = new WebhookDedupe(4);
    for (const key of ['a', 'b', 'c', 'd', 'e']) dedupe.actOnce([{ key }], () => {});
    expect(dedupe.actOnce([{ key: 'e' }, { key: 'd' }, { key: 'a' }], () => {})).toEqual(['a']);
  });

  it('model: acted on once unless forgotten; an event whose act throws is not remembered, nor the rest of its notification', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'd', 'e');
    const step = fc.oneof(
      fc.record({ kind: fc.constant('act' as const), keys: fc.array(key, { maxLength: 6 }), throwAt: fc.option(fc.nat(5), { nil: undefined }) }),
      fc.record({ kind: fc.constant('forget' as const), keys: fc.array(key, { maxLength: 3 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const dedupe = new WebhookDedupe(1_000);
        const seen = new Set<string>();
        let duplicates = 0;
        for (const s of steps) {
          if (s.kind === 'forget') {
            dedupe.forget(s.keys);
            for (const k of s.keys) seen.delete(k);
            continue;
          }
          const expected: string[] = [];
          let throws = false;
          for (const [i, k] of s.keys.entries()) {
            if (seen.has(k)) duplicates++;
            else if (i === s.throwAt) {
              throws = true;
              break;
            } else {
              seen.add(k);
              expected.push(k);
            }
          }
          const calls: string[] = [];
          const run = () =>
            dedupe.actOnce(
              s.keys.map((k, i) => ({ key: k, i })),
              (e) => {
                if (e.i === s.throwAt) throw new Error('the sink failed');
                calls.push(e.key);
              },
            );
          if (throws) expect(run).toThrow('the sink failed');
          else expect(run()).toEqual(expected);
          expect(calls).toEqual(expected);
          expect(dedupe.duplicates).toBe(duplicates);
        }
      }),
    );
  });
});

describe('the webhook receiver', () => {
  const sink = { messageStatus() {}, attendanceClosed() {}, smsStatus() {}, smsReply() {} } satisfies ChannelSink;

  function receiver(over: { attached?: boolean; delivery?: Delivery } = {}) {
    const warnings: string[] = [];
    const delivered: (readonly WebhookEvent[])[] = [];
    const r = new WebhookReceiver({
      path: '/whatsapp/webhook',
      verifyToken: VERIFY_TOKEN,
      appSecret: APP_SECRET,
      onWarning: (message) => warnings.push(message),
      sink: () => (over.attached === false ? undefined : sink),
      deliver: async (events, to) => {
        expect(to).toBe(sink);
        delivered.push(events);
        return over.delivery ?? 'done';
      },
    });
    return { r, warnings, delivered };
  }
  /** A POST of `payload` (a string as it is), signed with the app secret unless told otherwise. */
  const post = (payload: unknown, signature?: string | null): InboundRequest => {
    const rawBody = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
    const header = signature === null ? undefined : (signature ?? signatureOf(rawBody, APP_SECRET));
    return { method: 'POST', query: {}, headers: header === undefined ? {} : { 'x-hub-signature-256': header }, rawBody };
  };
  const status = statusNotification(number, { wamid: 'wamid.A', status: 'delivered', recipient: user, opaque: 's1.0.0' });

  it('answers the subscription handshake only with the verify token', async () => {
    const { r, warnings } = receiver();
    const query = { 'hub.mode': 'subscribe', 'hub.challenge': '1158201444', 'hub.verify_token': VERIFY_TOKEN };
    expect(await r.handle({ method: 'GET', query, headers: {}, rawBody: Buffer.alloc(0) })).toEqual({ status: 200, body: '1158201444' });
    expect(await r.handle({ method: 'GET', query: { ...query, 'hub.verify_token': 'verify-token-999' }, headers: {}, rawBody: Buffer.alloc(0) })).toEqual({ status: 403, body: 'verification failed' });
    expect(warnings).toEqual(['webhook handshake refused']);
  });

  it('refuses a notification without the app secret’s signature, before anything else', async () => {
    const { r, delivered } = receiver({ attached: false });
    expect(await r.handle(post(status, null))).toEqual({ status: 401, body: 'invalid signature' });
    expect(await r.handle(post(status, signatureOf(JSON.stringify(status), 'another-app-secret-0123')))).toEqual({ status: 401, body: 'invalid signature' });
    expect([r.forged, r.webhooks, delivered.length]).toEqual([2, 0, 0]);
  });

  it('a signed notification: 503 until attached, 400 when not JSON, else its events delivered with the sink', async () => {
    expect(await receiver({ attached: false }).r.handle(post(status))).toEqual({ status: 503, body: 'not ready' });
    const { r, delivered } = receiver();
    expect(await r.handle(post('{"object":'))).toEqual({ status: 400, body: 'body is not JSON' });
    expect(await r.handle(post(status))).toEqual({ status: 200, body: 'EVENT_RECEIVED' });
    expect(delivered).toEqual([readWebhook(status).events]);
    expect([r.webhooks, r.forged]).toEqual([1, 0]);
  });

  it('tells Meta to deliver again what could not be acted on or written', async () => {
    expect(await receiver({ delivery: 'unavailable' }).r.handle(post(status))).toEqual({ status: 503, body: 'not available' });
    expect(await receiver({ delivery: 'not-written' }).r.handle(post(status))).toEqual({ status: 503, body: 'not written' });
  });

  it('warns of the parts it did not understand and delivers the rest', async () => {
    const { r, warnings, delivered } = receiver();
    const odd = { entry: [{ changes: [{ field: 'messages', value: { statuses: [{ status: 'sent' }] } }] }] };
    expect(await r.handle(post(odd))).toEqual({ status: 200, body: 'EVENT_RECEIVED' });
    expect(warnings).toEqual(['webhook parts not understood were skipped']);
    expect(delivered).toEqual([[]]);
  });
});

describe('the records of sent messages', () => {
  const message = (messageId: string, phone = number.phone, to = user) => ({ messageId, phone, templateId: 100, contact: { phone: to } }) as unknown as OutgoingMessage;

  it('finds a message by its wamid and by its user (also under the platform’s wa_id), and what was reported of its replies', () => {
    const sent = new SentMemory(100);
    sent.remember(message('s1.0.0'), { wamid: 'wamid.A', waId: '551180000000' }, 1_000);
    expect(sent.byWamid('wamid.A')).toEqual({ messageId: 's1.0.0', from: number.phone, sentAt: 1_000 });
    expect(sent.lastTo(user)?.messageId).toBe('s1.0.0');
    expect(sent.lastTo('551180000000')?.messageId).toBe('s1.0.0');
    expect(sent.size).toBe(3);
    const [status] = readWebhook(statusNotification(number, { wamid: 'wamid.A', status: 'read', recipient: user })).events;
    expect(sent.messageIdOf(status as Extract<WebhookEvent, { kind: 'status' }>)).toBe('s1.0.0');

    expect(sent.replyReported('s1.0.0')).toBe('none');
    sent.markReplyReported('s1.0.0', 'replied');
    expect(sent.replyReported('s1.0.0')).toBe('replied');
    sent.markReplyReported('s1.0.0', 'opted-out');
    expect(sent.replyReported('s1.0.0')).toBe('opted-out');
  });

  it('recalls from the fleet what a notification names: records first, then their replies, then what the server tracks', async () => {
    // Another instance sent s2.0.0 (wamid.B) and s3.0.0 (the last to the user): only the fleet knows them.
    const fleet = new Map([
      ['wm:wamid.B', encodeSent(message('s2.0.0'), 5)],
      ['wp:' + user, encodeSent(message('s3.0.0'), 6)],
      ['wr:s3.0.0', 'r'],
    ]);
    const store = new ChannelMemoryStore(100);
    const asked: string[][] = [];
    const memory: ChannelMemory = {
      get: (k) => store.get(k),
      set: (k, v) => store.set(k, v),
      delete: (k) => store.delete(k),
      recall: async (keys) => {
        asked.push([...keys]);
        for (const k of keys) if (fleet.has(k)) store.set(k, fleet.get(k)!);
      },
    };
    const tracked: string[][] = [];
    const sink = { messageStatus() {}, attendanceClosed() {}, smsStatus() {}, smsReply() {}, recall: async (ids: { messageIds?: readonly string[] }) => void tracked.push([...ids.messageIds!]) };
    const sent = new SentMemory(100);
    sent.use(memory);
    const events = [
      ...readWebhook(statusNotification(number, { wamid: 'wamid.B', status: 'delivered', recipient: user })).events,
      ...readWebhook(statusNotification(number, { wamid: 'wamid.C', status: 'read', recipient: user, opaque: 's1.0.0' })).events,
      ...readWebhook(messageNotification(number, { from: user, text: 'Hi', contextId: 'wamid.Z' })).events,
    ];
    await sent.recall(events, sink);
    expect(asked).toEqual([
      ['wm:wamid.B', `wp:${user}`, 'wm:wamid.Z'],
      ['wr:s2.0.0', 'wr:s1.0.0', 'wr:s3.0.0'],
    ]);
    expect(tracked).toEqual([['s2.0.0', 's1.0.0', 's3.0.0']]);
    expect(sent.byWamid('wamid.B')?.messageId).toBe('s2.0.0');
    expect(sent.replyReported('s3.0.0')).toBe('replied');
  });

  it('asks nothing of a memory and sink that hold all they know, and fails when the fleet cannot be read', async () => {
    const events = readWebhook(statusNotification(number, { wamid: 'wamid.B', status: 'delivered', recipient: user })).events;
    const sink = { messageStatus() {}, attendanceClosed() {}, smsStatus() {}, smsReply() {} };
    await expect(new SentMemory(100).recall(events, sink)).resolves.toBeUndefined();
    const away = new SentMemory(100);
    away.use({ get: () => undefined, set() {}, delete() {}, recall: () => Promise.reject(new Error('Redis away')) });
    await expect(away.recall(events, sink)).rejects.toThrow('Redis away');
  });
});

describe('the sender over a fake Graph API', () => {
  const ids = fleetIds();
  const message = (messageId: string, templateId = 100) => ({ messageId, phone: number.phone, templateId, contact: { phone: user, variables: ['Ana'] } }) as unknown as OutgoingMessage;
  const answer = (statusCode: number, body: unknown, retryAfter?: string): GraphAnswer => ({ statusCode, retryAfter, text: () => JSON.stringify(body) });
  const accepted = (wamid: string) => answer(200, { messaging_product: 'whatsapp', contacts: [{ input: user, wa_id: user }], messages: [{ id: wamid }] });

  function sender(reply: (path: string, body: string) => Promise<GraphAnswer>, maxInFlightPerNumber = 64) {
    let now = 1_000_000;
    const remembered: { messageId: string; wamid: string | undefined }[] = [];
    const s = new Sender({ ids, pathPrefix: '/v23.0/', maxInFlightPerNumber, now: () => now }, { post: reply }, (m, a) => remembered.push({ messageId: m.messageId, wamid: a.wamid }));
    return { s, remembered, advance: (ms: number) => (now += ms) };
  }

  it('posts the template message to the number’s path and hands on what the platform accepted', async () => {
    const posts: { path: string; body: any }[] = [];
    const { s, remembered } = sender(async (path, body) => {
      posts.push({ path, body: JSON.parse(body) });
      return accepted('wamid.A');
    });
    expect(await s.send(message('s1.0.0'))).toEqual({ status: 'sent' });
    expect(posts).toMatchObject([{ path: `/v23.0/${number.phoneNumberId}/messages`, body: { to: user, type: 'template', biz_opaque_callback_data: 's1.0.0' } }]);
    expect(remembered).toEqual([{ messageId: 's1.0.0', wamid: 'wamid.A' }]);
    expect(s.stats()).toMatchObject({ inFlight: 0, sent: 1, failed: 0 });
  });

  it('a template without WhatsApp ids gives up without a request; a request that never left is refused', async () => {
    const { s } = sender(() => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })));
    expect(await s.send(message('s1.0.0', 999))).toMatchObject({ status: 'failed', action: { kind: 'give-up' } });
    expect(await s.send(message('s1.0.1'))).toMatchObject({ status: 'failed', refused: true });
    expect(s.stats()).toMatchObject({ sent: 0, failed: 1 });
  });

  it('a throttle rests the number for its Retry-After, escalates without one, and a send after the rest clears it', async () => {
    let next: GraphAnswer = answer(400, { error: { code: 130429, message: 'Rate limit hit' } }, '7');
    const { s, advance } = sender(async () => next);
    expect(await s.send(message('s1.0.0'))).toMatchObject({ status: 'failed', code: 130429, action: { kind: 'requeue', restMs: 7_000 } });
    advance(7_000);
    next = answer(400, { error: { code: 130429, message: 'Rate limit hit' } });
    expect(await s.send(message('s1.0.1'))).toMatchObject({ action: { kind: 'requeue', restMs: 2_000 } });
    expect(s.stats().throttledNumbers).toBe(1);
    advance(2_000);
    next = accepted('wamid.B');
    expect(await s.send(message('s1.0.2'))).toEqual({ status: 'sent' });
    expect(s.stats()).toMatchObject({ throttledNumbers: 0, sent: 1, failed: 2 });
  });

  it('holds a number’s sends to its window: the rest wait in order for a slot', async () => {
    const pending: ((a: GraphAnswer) => void)[] = [];
    const order: string[] = [];
    const { s } = sender((_path, body) => {
      order.push(JSON.parse(body).biz_opaque_callback_data);
      return new Promise((resolve) => pending.push(resolve));
    }, 4);
    const sends = Array.from({ length: 10 }, (_, i) => s.send(message(`s1.${i}.0`)));
    await flush();
    expect(s.stats()).toMatchObject({ inFlight: 4, waiting: 6, maxWindow: 4 });
    while (pending.length > 0) {
      pending.shift()!(accepted('wamid.X'));
      await flush();
    }
    expect(await Promise.all(sends)).toEqual(Array.from({ length: 10 }, () => ({ status: 'sent' })));
    expect(order).toEqual(Array.from({ length: 10 }, (_, i) => `s1.${i}.0`));
    expect(s.stats()).toMatchObject({ inFlight: 0, waiting: 0, sent: 10 });
  });
});

describe('steering', () => {
  const ids = fleetIds();
  const NOW = 1_750_000_000_000;
  function steered(notification: unknown) {
    const calls: [string, unknown][] = [];
    const warnings: string[] = [];
    const record = (name: string) => (update: unknown) => void calls.push([name, update]);
    const sink = {
      ...{ messageStatus() {}, attendanceClosed() {}, smsStatus() {}, smsReply() {} },
      templateStatus: record('templateStatus'),
      numberLimits: record('numberLimits'),
      numberStatus: record('numberStatus'),
      numberQuality: record('numberQuality'),
      accountNotice: record('accountNotice'),
      businessLimit: record('businessLimit'),
    };
    for (const e of readWebhook(notification).events) steer(e as SteeringEvent, { ids, now: () => NOW, onWarning: (m) => warnings.push(m) }, sink);
    return { calls, warnings };
  }

  it('a template paused takes the fleet’s template out until the pause ends; one the fleet lacks is a warning', () => {
    const paused = steered(templateNotification({ name: 'billing_a', language: 'pt_BR', event: 'PAUSED', title: 'FIRST_PAUSE', time: NOW / 1000 }));
    expect(paused.calls).toEqual([['templateStatus', { templateId: 100, status: 'paused', until: NOW + 3 * 3_600_000, reason: 'PAUSED FIRST_PAUSE NONE' }]]);
    const unknown = steered(templateNotification({ name: 'not_ours', language: 'pt_BR', event: 'PAUSED' }));
    expect(unknown).toEqual({ calls: [], warnings: ['template event for a template the fleet does not have'] });
  });

  it('an account restricted pauses each of its numbers in the fleet, lifted resumes them; a violation is a notice', () => {
    const phones = ['5511990000001', '5511990000002', '5511990000003'];
    const restricted = steered(accountNotification({ event: 'ACCOUNT_RESTRICTION', restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING' }] }));
    expect(restricted.calls).toEqual(phones.map((phone) => ['numberStatus', { phone, status: 'paused', reason: 'ACCOUNT_RESTRICTION RESTRICTED_BIZ_INITIATED_MESSAGING' }]));
    const lifted = steered(accountNotification({ event: 'ACCOUNT_RESTRICTION', restrictions: [] }));
    expect(lifted.calls).toEqual(phones.map((phone) => ['numberStatus', { phone, status: 'active', reason: 'ACCOUNT_RESTRICTION lifted' }]));
    const violation = steered(accountNotification({ event: 'ACCOUNT_VIOLATION', violation: 'SCAM' }));
    expect(violation.calls).toEqual([['accountNotice', { accountId: WABA_ID, phones, reason: 'ACCOUNT_VIOLATION SCAM' }]]);
  });

  it('a number’s tier lowers its limits; a number the fleet lacks is a warning', () => {
    const lowered = steered(qualityNotification({ display: '5511990000002', event: 'DOWNGRADE', currentLimit: 'TIER_250' }));
    expect(lowered.calls).toEqual([['numberLimits', { phone: '5511990000002', limits: { messagingLimit24h: 250 }, reason: 'DOWNGRADE TIER_250' }]]);
    expect(steered(qualityNotification({ display: '5599990000009', event: 'DOWNGRADE', currentLimit: 'TIER_250' })).warnings).toEqual(['number event for a number the fleet does not have']);
  });
});

/** The WhatsApp ids of the server tests' fleet. */
function fleetIds(): FleetIds {
  const validation = validateFleet(whatsappFleet(testFleet()));
  if (!validation.ok) throw new Error('the test fleet is not valid');
  const indexed = FleetIds.from(validation.fleet);
  if (!indexed.ok) throw new Error('the test fleet has no WhatsApp ids');
  return indexed.ids;
}

/** Lets every promise settled so far run its callbacks (no time passes). */
function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
