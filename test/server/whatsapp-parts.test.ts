/**
 * The WhatsApp channel's pure parts: reading Meta's notifications (and skipping what they hold
 * that is not understood), the platform's template and number events as engine changes, the
 * signature, the bounded memory and per-number gate, the record kept of a sent message, and the
 * server's channel memory (its rows replayed after a restart give the memory it had).
 */
import { describe, expect, it } from 'vitest';
import { MAX_MESSAGING_LIMIT_24H } from '../../src/core/fleet.js';
import type { OutgoingMessage } from '../../src/core/dispatch/types.js';
import { BoundedMap } from '../../src/server/lib/bounded-map.js';
import { ChannelMemoryStore, type ChannelMemoryChunk } from '../../src/server/channels/memory.js';
import { classifyAnswer } from '../../src/server/channels/whatsapp/answer.js';
import { decodeSent, encodeSent } from '../../src/server/channels/whatsapp/sent-record.js';
import { Gate } from '../../src/server/channels/whatsapp/gate.js';
import { limitsChange, templateChange } from '../../src/server/channels/whatsapp/platform-changes.js';
import { signatureOf, verifySignature } from '../../src/server/channels/whatsapp/signature.js';
import { readWebhook, type WebhookEvent } from '../../src/server/channels/whatsapp/webhook-events.js';
import { messageNotification, qualityNotification, statusNotification, templateNotification } from './whatsapp-fake-graph.js';

const number = { phone: '5511990000001', phoneNumberId: '106540352242920' };
type Template = Extract<WebhookEvent, { kind: 'template' }>;
type Quality = Extract<WebhookEvent, { kind: 'quality' }>;

describe('reading notifications', () => {
  it('reads a status with its message id, error code, BSUID and username', () => {
    const { events, skipped } = readWebhook(
      statusNotification(number, { wamid: 'wamid.A', status: 'failed', recipient: '5511980000000', opaque: 's1.0.0', errorCode: 131049, timestamp: 1750857384, userId: 'BR.1' }),
    );
    expect(skipped).toBe(0);
    expect(events).toEqual([
      { kind: 'status', key: 's:wamid.A:failed', wamid: 'wamid.A', status: 'failed', opaque: 's1.0.0', at: 1_750_857_384_000, bsuid: 'BR.1', username: 'testuser', errorCode: 131049 },
    ]);
  });

  it('reads a reply with its context, and a quick-reply button with its payload', () => {
    const [text] = readWebhook(messageNotification(number, { from: '5511980000000', text: 'Hi', contextId: 'wamid.A' })).events;
    expect(text).toMatchObject({ kind: 'message', phoneNumberId: number.phoneNumberId, from: '5511980000000', contextId: 'wamid.A', type: 'text', text: 'Hi' });
    const [button] = readWebhook(messageNotification(number, { from: '5511980000000', text: 'Stop promotions', button: { payload: 'STOP' } })).events;
    expect(button).toMatchObject({ kind: 'message', type: 'text', text: 'Stop promotions', buttonPayload: 'STOP' });
  });

  it('reads template and number events with their account and time', () => {
    const [t] = readWebhook(templateNotification({ name: 'billing_a', language: 'pt_BR', event: 'PAUSED', title: 'SECOND_PAUSE', id: '77', time: 1000 })).events;
    expect(t).toMatchObject({ kind: 'template', wabaId: '102290129340398', event: 'PAUSED', templateId: '77', name: 'billing_a', language: 'pt_BR', title: 'SECOND_PAUSE', at: 1_000_000 });
    const [q] = readWebhook(qualityNotification({ display: '5511990000001', event: 'DOWNGRADE', currentLimit: 'TIER_250', time: 1000 })).events;
    expect(q).toMatchObject({ kind: 'quality', event: 'DOWNGRADE', displayPhoneNumber: '5511990000001', tier: 'TIER_250', at: 1_000_000 });
  });

  it('skips what it does not understand and never throws', () => {
    expect(readWebhook(null)).toEqual({ events: [], skipped: 0 });
    expect(readWebhook({ entry: 'x' })).toEqual({ events: [], skipped: 0 });
    const odd = {
      entry: [7, { id: '1', changes: [{ field: 'messages', value: { statuses: [{ status: 'sent' }, { id: 'w', status: 'deleted' }], messages: [{}] } }, { field: 'account_update', value: {} }, 'x'] }],
    };
    // An account_update without its event is a part not understood, like a status without its id.
    expect(readWebhook(odd)).toEqual({ events: [], skipped: 5 });
  });
});

describe('platform events as engine changes', () => {
  const template = (over: Partial<Template>): Template => ({
    kind: 'template',
    key: 'k',
    wabaId: '1',
    event: 'PAUSED',
    templateId: undefined,
    name: 'a',
    language: 'pt_BR',
    reason: undefined,
    title: undefined,
    description: undefined,
    at: 1_000_000,
    ...over,
  });
  const quality = (over: Partial<Quality>): Quality => ({
    kind: 'quality',
    key: 'k',
    wabaId: '1',
    event: 'DOWNGRADE',
    displayPhoneNumber: '1',
    tier: undefined,
    businessTier: undefined,
    rating: undefined,
    at: 0,
    ...over,
  });

  it.each([
    [{ title: 'FIRST_PAUSE' }, { status: 'paused', until: 1_000_000 + 3 * 3_600_000 }],
    [{ title: 'SECOND_PAUSE' }, { status: 'paused', until: 1_000_000 + 6 * 3_600_000 }],
    [
      { title: 'RATE_LIMITING_PAUSE', description: 'Your template has been paused for 2 hours.' },
      { status: 'paused', until: 1_000_000 + 2 * 3_600_000 },
    ],
    [{ title: 'RATE_LIMITING_PAUSE' }, { status: 'paused' }],
    [{ event: 'DISABLED' }, { status: 'disabled' }],
    [{ event: 'APPROVED' }, { status: 'active' }],
    [{ event: 'REINSTATED' }, { status: 'active' }],
    [{ event: 'PENDING', title: 'UNPAUSE' }, { status: 'active' }],
    [{ event: 'FLAGGED' }, undefined],
  ] as [Partial<Template>, unknown][])('template event %j', (over, change) => {
    expect(templateChange(template(over), 5)).toEqual(change);
  });

  it('a pause without a time of its own ends counted from now', () => {
    expect(templateChange(template({ title: 'FIRST_PAUSE', at: undefined }), 5)).toEqual({ status: 'paused', until: 5 + 3 * 3_600_000 });
  });

  it.each([
    ['TIER_50', 50],
    ['TIER_250', 250],
    ['TIER_1K', 1_000],
    ['TIER_2K', 2_000],
    ['TIER_10K', 10_000],
    ['TIER_100K', 100_000],
    ['TIER_UNLIMITED', MAX_MESSAGING_LIMIT_24H],
  ])('tier %s is a 24 h limit of %i', (tier, limit) => {
    expect(limitsChange(quality({ tier }), undefined)).toEqual({ messagingLimit24h: limit });
  });

  it('a tier not set, or none, changes nothing; a throughput upgrade raises the fleet’s rate, or the default 80, to 1,000', () => {
    expect(limitsChange(quality({ tier: 'TIER_NOT_SET' }), undefined)).toBeUndefined();
    expect(limitsChange(quality({ event: 'FLAGGED' }), undefined)).toBeUndefined();
    expect(limitsChange(quality({ event: 'THROUGHPUT_UPGRADE', tier: 'TIER_UNLIMITED' }), 80)).toEqual({ messagesPerSecond: 1_000 });
    // Without a rate in the fleet the number runs at the platform's default, 80: raised too.
    expect(limitsChange(quality({ event: 'THROUGHPUT_UPGRADE', tier: 'TIER_UNLIMITED' }), undefined)).toEqual({ messagesPerSecond: 1_000 });
    expect(limitsChange(quality({ event: 'THROUGHPUT_UPGRADE' }), 1_000)).toBeUndefined();
    expect(limitsChange(quality({ event: 'THROUGHPUT_UPGRADE' }), 2_000)).toBeUndefined();
  });
});

describe('signatures', () => {
  it('accepts the app secret’s HMAC of the exact body, and nothing else', () => {
    const body = Buffer.from('{"object":"whatsapp_business_account"}');
    const header = signatureOf(body, 'secret-of-the-app');
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifySignature(body, header, 'secret-of-the-app')).toBe(true);
    expect(verifySignature(body, header.toUpperCase().replace('SHA256=', 'sha256='), 'secret-of-the-app')).toBe(true);
    expect(verifySignature(Buffer.from(`${body.toString()} `), header, 'secret-of-the-app')).toBe(false);
    expect(verifySignature(body, header, 'another-secret')).toBe(false);
    expect(verifySignature(body, undefined, 'secret-of-the-app')).toBe(false);
    expect(verifySignature(body, [header], 'secret-of-the-app')).toBe(false);
    expect(verifySignature(body, header.slice(0, -2), 'secret-of-the-app')).toBe(false);
    expect(verifySignature(body, `sha1=${header.slice(7)}`, 'secret-of-the-app')).toBe(false);
  });
});

describe('bounded memory and the per-number gate', () => {
  it('remembers at least the last max/2 keys and holds at most max entries', () => {
    const map = new BoundedMap<number, number>(10);
    for (let i = 0; i < 1000; i++) {
      map.set(i, i);
      expect(map.size).toBeLessThanOrEqual(10);
      for (let k = Math.max(0, i - 4); k <= i; k++) expect(map.get(k)).toBe(k);
    }
    expect(map.get(0)).toBeUndefined();
    map.set(999, 1);
    expect(map.get(999)).toBe(1);
    map.delete(999);
    expect(map.has(999)).toBe(false);
  });

  it('lists its entries oldest generation first and tells each generation it drops', () => {
    const dropped: number[][] = [];
    const map = new BoundedMap<number, string>(6, (d) => dropped.push([...d.keys()]));
    for (let i = 0; i < 7; i++) map.set(i, `v${i}`);
    map.set(5, 'again');
    expect(dropped).toEqual([[0, 1, 2]]);
    expect([...map.entries()]).toEqual([
      [3, 'v3'],
      [4, 'v4'],
      [6, 'v6'],
      [5, 'again'],
    ]);
  });

  it('lets `limit` through at once and hands each released slot to the next in line', async () => {
    const gate = new Gate(2);
    expect(gate.tryAcquire()).toBe(true);
    expect(gate.tryAcquire()).toBe(true);
    expect(gate.tryAcquire()).toBe(false);
    const order: number[] = [];
    const waits = [1, 2, 3].map((n) => gate.wait().then(() => order.push(n)));
    expect(gate.waiting).toBe(3);
    gate.release();
    gate.release();
    await Promise.resolve();
    expect(gate.active).toBe(2);
    gate.release();
    gate.release();
    gate.release();
    await Promise.all(waits);
    expect(order).toEqual([1, 2, 3]);
    expect(gate.active).toBe(0);
    expect(gate.waiting).toBe(0);
  });
});

describe('what the channels keep of the provider ids', () => {
  it('a sent message as one short record, the message id last', () => {
    const m = { messageId: 's12.3.0', templateId: 101, phone: '5511990000002' } as OutgoingMessage;
    const text = encodeSent(m, 1_790_000_000_123);
    expect(text.length).toBeLessThan(40);
    expect(decodeSent(text)).toEqual({ messageId: 's12.3.0', from: '5511990000002', sentAt: 1_790_000_000_123 });
    expect(decodeSent(encodeSent({ ...m, messageId: 'an id with spaces' }, 5))?.messageId).toBe('an id with spaces');
    expect(decodeSent('not a record')).toBeUndefined();
  });

  it('the server memory: bounded like the map; its chunks, replayed after any step, give the memory back', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const max = 40;
    const memory = new ChannelMemoryStore(max, { trackChanges: true });
    const keys = Array.from({ length: 90 }, (_, i) => `k:${i}`);
    /**
     * The database: a chunk a step, forgotten as the steps say. Chunks straddle generations, so a
     * restart often finds the oldest one kept half forgotten.
     */
    const table = new Map<number, ChannelMemoryChunk>();
    const step = () => {
      const c = memory.takeChanges();
      if (!c) return;
      if (c.keys.length > 0) table.set(c.firstSeq, { firstSeq: c.firstSeq, keys: [...c.keys], values: [...c.values] });
      if (c.before !== undefined) for (const seq of table.keys()) if (seq < c.before) table.delete(seq);
    };
    let restarts = 0;
    for (let op = 0; op < 5_000; op++) {
      const key = keys[Math.floor(random() * keys.length)]!;
      if (random() < 0.15) memory.delete(key);
      else memory.set(key, `v${op}`);
      expect(memory.size).toBeLessThanOrEqual(max);
      if (random() < 0.2) step();
      if (random() < 0.01) {
        step();
        const again = new ChannelMemoryStore(max, { trackChanges: true });
        again.load([...table.values()].sort((a, b) => a.firstSeq - b.firstSeq));
        for (const k of keys) expect(again.get(k), `${k} after op ${op}`).toBe(memory.get(k));
        expect(again.size).toBe(memory.size);
        restarts++;
      }
    }
    expect(restarts).toBeGreaterThan(20);
    // The table holds the chunks of the two generations held, and one more at most.
    step();
    const entries = [...table.values()].reduce((n, c) => n + c.keys.length, 0);
    expect(entries).toBeLessThan(3 * max);
    expect(() => memory.set('', 'x')).toThrow(/non-empty key/);
  });
});

describe('reading the answer to a send', () => {
  it('reads the acceptance as the platform writes it without parsing, and any other shape by parsing, to the same ids', () => {
    const bodies = [
      '{"messaging_product":"whatsapp","contacts":[{"input":"+55 11 98765-4321","wa_id":"5511987654321"}],"messages":[{"id":"wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjA="}]}',
      '{"messaging_product":"whatsapp","contacts":[{"input":"5511987654321","wa_id":"551187654321"}],"messages":[{"id":"wamid.A1","message_status":"accepted"}]}',
      '{"messaging_product":"whatsapp","messages":[{"id":"wamid.B2"}]}',
      '{ "messaging_product": "whatsapp", "contacts": [{ "input": "1", "wa_id": "1" }], "messages": [{ "id": "wamid.C3" }] }',
      '{"messaging_product":"whatsapp","contacts":[{"input":"1","wa_id":"1"}],"messages":[{"id":"wamid.\\u0041\\/x"}]}',
      '{"messaging_product":"whatsapp","contacts":[{"input":"1","wa_id":"1"}],"messages":[]}',
    ];
    const parsed = (text: string) => {
      const body = JSON.parse(text) as { messages?: { id?: string }[]; contacts?: { wa_id?: string }[] };
      const wamid = body.messages?.[0]?.id;
      const waId = body.contacts?.[0]?.wa_id;
      return { outcome: { status: 'sent' }, ...(wamid ? { wamid } : {}), ...(waId ? { waId } : {}) };
    };
    for (const text of bodies) expect(classifyAnswer(200, text), text).toEqual(parsed(text));
    expect(classifyAnswer(200, bodies[4]!).wamid).toBe('wamid.A/x');
    // A refusal is never read as an acceptance.
    expect(classifyAnswer(400, '{"error":{"code":131026,"message":"Message undeliverable"}}').outcome).toMatchObject({ status: 'failed', code: 131026 });
  });
});
