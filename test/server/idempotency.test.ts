/**
 * Idempotency-Key of POST /messenger/messages/ on each backend: a retry of a request answered 202
 * with the same key (same company) gets the first answer again, with `Idempotent-Replayed: true`,
 * and nothing is queued again; another body with the key is refused (422); a request without a
 * 202 leaves the key free; a malformed key is refused (400). On memory, on the durable server
 * (replayed after a restart on the same directory) and on Redis (replayed by another instance,
 * and by a new instance after the first ones stopped). The book itself: a key held by a request
 * in progress answers 409's case, its 202 shown only once written, the 24 h and the bound.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_TTL_MS, IdempotencyBook, idempotencyKeyOf } from '../../src/server/idempotency.js';
import { runServer } from '../../src/server/index.js';
import { cleanup, connect, describeTargets, testPrefix } from '../redis/helpers.js';
import { KEY_1, KEY_2, api, contacts, fastChannel, startServer, testFleet, waitFor } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'sendpool-idempotency-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const body = (campaign: number, n = 3, offset = 0) => ({ business_id: 1, template_type_id: 10, campaign_id: campaign, contacts: contacts(n, offset) });
const post = (url: string, b: unknown, key?: string, apiKey = KEY_1) =>
  api(url, '/messenger/messages/', { body: b, key: apiKey, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }) });
const smsBody = (n: number, offset = 0) => Array.from({ length: n }, (_, i) => ({ message: `Code ${offset + i}`, phone: `55119${String(80_000_000 + offset + i)}` }));
const postSms = (url: string, b: unknown, key?: string) => api(url, '/sms/messages/', { body: b, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }) });

describe('Idempotency-Key on a server in memory', () => {
  it('replays the first 202, refuses another body, frees the key without a 202, refuses a malformed key', async () => {
    const s = await startServer();
    try {
      const first = await post(s.url, body(1), 'order-1');
      expect(first.status).toBe(202);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await post(s.url, body(1), 'order-1');
      expect(again.status).toBe(202);
      expect(again.json).toEqual(first.json);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      // Without the key the same body is refused as duplicated: the phones went with the first.
      const plain = await post(s.url, body(1));
      expect(plain.json).toMatchObject({ accepted: 0, rejected: 3 });
      await waitFor(() => s.channel.sends.length === 3, 'three sends');
      expect(s.channel.sends).toHaveLength(3);

      const other = await post(s.url, body(1, 4), 'order-1');
      expect(other.status).toBe(422);
      expect(other.json.error.code).toBe('idempotency_key_reused');
      // Another company's key of the same text is its own (company 2 has no business 1: refused as such).
      const theirs = await post(s.url, body(1), 'order-1', KEY_2);
      expect(theirs.json.error.code).toBe('invalid_body');

      // No 202 (a body refused): the key stays free for the request sent right.
      const bad = await post(s.url, { ...body(2), business_id: 'x' }, 'order-2');
      expect(bad.status).toBe(422);
      expect((await post(s.url, body(2, 3, 10), 'order-2')).status).toBe(202);

      for (const key of ['has space', 'x'.repeat(256), 'ünïcode']) {
        const res = await post(s.url, body(3), key);
        expect(res.status, key).toBe(400);
        expect(res.json.error).toMatchObject({ code: 'invalid_idempotency_key', problems: [{ path: 'headers.idempotency-key', expected: expect.stringContaining('1 to 255 visible ASCII') }] });
      }
    } finally {
      await s.server.close();
    }
  });
});

describe('Idempotency-Key of POST /sms/messages/ on a server in memory', () => {
  it("replays the first 202 without sending again; another body is refused; the key is apart from a send request's", async () => {
    const s = await startServer();
    try {
      const first = await postSms(s.url, smsBody(3), 'sms-1');
      expect(first.status).toBe(202);
      const again = await postSms(s.url, smsBody(3), 'sms-1');
      expect(again.status).toBe(202);
      expect(again.json).toEqual(first.json);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      await waitFor(() => s.channel.counts.sms === 3, 'three SMS');
      expect((await postSms(s.url, smsBody(4), 'sms-1')).json.error.code).toBe('idempotency_key_reused');
      // The same key on POST /messenger/messages/ names another request.
      expect((await post(s.url, body(1), 'sms-1')).status).toBe(202);
      // Without the key the same body is a new request: SMS have no duplicate check of their own.
      expect((await postSms(s.url, smsBody(3))).status).toBe(202);
      await waitFor(() => s.channel.counts.sms === 6, 'six SMS');
      expect((await postSms(s.url, smsBody(1), 'has space')).json.error.code).toBe('invalid_idempotency_key');
    } finally {
      await s.server.close();
    }
  });
});

describe('Idempotency-Key on the durable server', () => {
  it('replays the first 202 after a restart on the same directory', async () => {
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(testFleet()));
    const options = (): Parameters<typeof runServer>[0] => ({
      fleetFile,
      port: 0,
      dataDir: join(dir, 'data'),
      apiKeys: [{ key: KEY_1, companyId: 1 }],
      channel: fastChannel(),
      logger: false,
      handleSignals: false,
      metrics: false,
    });
    const first = await runServer(options());
    let answered: unknown;
    let answeredSms: unknown;
    try {
      const res = await post(first.address, body(1, 5), 'durable-1');
      expect(res.status).toBe(202);
      answered = res.json;
      const sms = await postSms(first.address, smsBody(2), 'durable-sms-1');
      expect(sms.status).toBe(202);
      answeredSms = sms.json;
    } finally {
      await first.close();
    }
    const second = await runServer(options());
    try {
      const res = await post(second.address, body(1, 5), 'durable-1');
      expect(res.status).toBe(202);
      expect(res.json).toEqual(answered);
      expect(res.headers.get('idempotent-replayed')).toBe('true');
      expect((await post(second.address, body(1, 6), 'durable-1')).json.error.code).toBe('idempotency_key_reused');
      const sms = await postSms(second.address, smsBody(2), 'durable-sms-1');
      expect(sms.json).toEqual(answeredSms);
      expect(sms.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      await second.close();
    }
  });
});

describeTargets('Idempotency-Key on Redis', (target) => {
  it('a retry on another instance, and on a new one after a restart, gets the first 202', { timeout: 60_000 }, async () => {
    const client = connect(target);
    const prefix = testPrefix('idempotency');
    const redis = { client, prefix, prefetchContacts: 150 };
    const a = await startServer({ redis: { ...redis, consumer: 'a' } });
    const b = await startServer({ redis: { ...redis, consumer: 'b' } });
    let c: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const first = await post(a.url, body(7, 20), 'redis-1');
      expect(first.status).toBe(202);
      expect(first.json.accepted).toBe(20);
      const sms = await postSms(a.url, smsBody(4), 'redis-sms-1');
      expect(sms.status).toBe(202);
      const smsAgain = await postSms(b.url, smsBody(4), 'redis-sms-1');
      expect(smsAgain.json).toEqual(sms.json);
      expect(smsAgain.headers.get('idempotent-replayed')).toBe('true');
      await waitFor(() => a.channel.counts.sms + b.channel.counts.sms === 4, 'four SMS');
      const again = await post(b.url, body(7, 20), 'redis-1');
      expect(again.status).toBe(202);
      expect(again.json).toEqual(first.json);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect((await post(b.url, body(7, 21), 'redis-1')).json.error.code).toBe('idempotency_key_reused');
      await waitFor(() => a.channel.sends.length + b.channel.sends.length === 20, 'twenty sends');
      await a.server.close();
      await b.server.close();
      c = await startServer({ redis: { ...redis, consumer: 'c' } });
      const late = await post(c.url, body(7, 20), 'redis-1');
      expect(late.json).toEqual(first.json);
      expect(late.headers.get('idempotent-replayed')).toBe('true');
      // No 202 (refused): the key is free for the next request with it.
      expect((await post(c.url, { ...body(8), business_id: 'x' }, 'redis-2')).status).toBe(422);
      expect((await post(c.url, body(8, 2, 50), 'redis-2')).status).toBe(202);
      expect(a.channel.sends.length + b.channel.sends.length + c.channel.sends.length).toBeLessThanOrEqual(22);
    } finally {
      await a.server.close();
      await b.server.close();
      await c?.server.close();
      await cleanup(client, prefix);
      client.disconnect();
    }
  });
});

describe('the idempotency book (memory and durable servers)', () => {
  const answer = { status: 202, body: { request_id: 'r1', accepted: 1, rejected: 0 } };

  it('a key held by a request in progress; its 202 shown once written; freed without one', () => {
    const book = new IdempotencyBook(true);
    expect(book.begin(1, 'k', 'fp', 'r1', 0)).toEqual({ kind: 'new' });
    expect(book.begin(1, 'k', 'fp', 'r2', 1)).toEqual({ kind: 'in-progress' });
    expect(book.begin(1, 'k', 'other', 'r2', 1)).toEqual({ kind: 'mismatch' });
    expect(book.begin(2, 'k', 'other', 'r3', 1)).toEqual({ kind: 'new' });
    book.keep(1, 'k', 'r1', answer, 2);
    // Staged for the write, not shown before it.
    expect(book.begin(1, 'k', 'fp', 'r2', 3)).toEqual({ kind: 'in-progress' });
    expect(book.takeChanges(3).put).toEqual([{ companyId: 1, key: 'k', fingerprint: 'fp', at: 2, answer: JSON.stringify(answer) }]);
    book.settle(1, 'k', 'r1');
    expect(book.begin(1, 'k', 'fp', 'r2', 4)).toEqual({ kind: 'replay', answer });
    // Company 2's request ends without a 202: its key is free.
    book.end(2, 'k', 'r3');
    expect(book.begin(2, 'k', 'fp', 'r4', 5)).toEqual({ kind: 'new' });
  });

  it('forgets a key after 24 h, keeps at most its bound, and loads what a durable server kept', () => {
    const book = new IdempotencyBook(false, 2);
    for (const k of ['a', 'b', 'c']) {
      book.begin(1, k, 'fp', `r-${k}`, 0);
      book.keep(1, k, `r-${k}`, answer, 0);
    }
    expect(book.size).toBe(2);
    expect(book.begin(1, 'a', 'other', 'r-a2', 1)).toEqual({ kind: 'new' });
    expect(book.begin(1, 'c', 'fp', 'r-c2', IDEMPOTENCY_TTL_MS - 1)).toEqual({ kind: 'replay', answer });
    expect(book.begin(1, 'c', 'other', 'r-c3', IDEMPOTENCY_TTL_MS + 1)).toEqual({ kind: 'new' });

    const loaded = new IdempotencyBook(true);
    loaded.load(
      [
        { companyId: 1, key: 'old', fingerprint: 'fp', at: 0, answer: JSON.stringify(answer) },
        { companyId: 1, key: 'new', fingerprint: 'fp', at: IDEMPOTENCY_TTL_MS, answer: JSON.stringify(answer) },
      ],
      IDEMPOTENCY_TTL_MS + 10,
    );
    expect(loaded.begin(1, 'new', 'fp', 'r', IDEMPOTENCY_TTL_MS + 10)).toEqual({ kind: 'replay', answer });
    expect(loaded.begin(1, 'old', 'other', 'r', IDEMPOTENCY_TTL_MS + 10)).toEqual({ kind: 'new' });
  });

  it('reads the header: absent, a key, or a problem', () => {
    expect(idempotencyKeyOf(undefined)).toEqual({});
    expect(idempotencyKeyOf('abc-123_XYZ:=')).toEqual({ key: 'abc-123_XYZ:=' });
    expect(idempotencyKeyOf('')).toMatchObject({ problem: { actual: '""' } });
    expect(idempotencyKeyOf(['a', 'b'])).toMatchObject({ problem: { actual: '2 headers' } });
  });
});
