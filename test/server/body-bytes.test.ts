/**
 * A request body is read as it arrives (src/server/body-bytes.ts) and a large one decoded from its
 * bytes in slices: whatever the client's chunks (a character cut between two writes, no
 * Content-Length at all), the server decodes the body the client meant, and the limits answer as
 * Fastify's did: 413 over the limit, announced or not.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { contacts, KEY_1, startServer, type Started } from './helpers.js';

interface Answer {
  readonly status: number;
  readonly json: {
    error?: { code: string; problems: { path: string; actual: string }[] };
    accepted?: number;
    rejections?: { index: number; reason: string; problems: { path: string; actual: string }[] }[];
  };
}

/**
 * POSTs `bytes` in pieces of `piece` bytes, with or without a Content-Length (then chunked), one
 * piece per turn of the event loop; stops writing once an answer has come (a 413 before the end).
 */
function post(url: string, bytes: Buffer, piece: number, withLength: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'x-api-key-id': KEY_1 };
    if (withLength) headers['content-length'] = bytes.length;
    let answered = false;
    const req = http.request(`${url}/messenger/messages/`, { method: 'POST', headers }, (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as Answer['json'] }));
    });
    // Writing after an early answer may meet a closed connection: the answer is what counts.
    req.on('error', (e) => {
      if (!answered) reject(e);
    });
    req.flushHeaders();
    let at = 0;
    const write = () => {
      if (answered) return;
      if (at >= bytes.length) return void req.end();
      req.write(bytes.subarray(at, at + piece));
      at += piece;
      setImmediate(write);
    };
    setImmediate(write);
  });
}

/** A send body of `n` contacts (over 128 KiB from about 1,500: decoded in slices), the last with `phone` as its phone. */
function body(n: number, phone: string, campaignId = 1): Buffer {
  // Phones of the campaign's own (a phone the business took in an earlier campaign is already_sent).
  const list: Record<string, unknown>[] = contacts(n, campaignId * 10_000);
  list[n - 1] = { ...list[n - 1], phone_number: phone };
  return Buffer.from(JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: campaignId, contacts: list }), 'utf8');
}

describe('request bodies read as they arrive', () => {
  let s: Started | undefined;
  afterEach(async () => {
    await s?.server.close();
    s = undefined;
  });

  it('decodes a large body written in pieces that cut characters, with and without a Content-Length', async () => {
    s = await startServer({ limits: { maxContacts: 5000 } });
    // A phone of letters and a 4-byte character: refused, and its refusal shows what the server decoded.
    const odd = 'João 😀 Ñandú';
    let campaign = 10;
    for (const withLength of [true, false]) {
      for (const piece of [7, 4093]) {
        const bytes = body(3000, odd, ++campaign);
        expect(bytes.length).toBeGreaterThan(128 * 1024);
        const res = await post(s.url, bytes, piece, withLength);
        expect(res.status, `piece ${piece}, length ${withLength}`).toBe(202);
        expect(res.json.accepted).toBe(2999);
        expect(res.json.rejections).toEqual([expect.objectContaining({ index: 2999, reason: 'invalid_phone', problems: [expect.objectContaining({ actual: `"${odd}" (string)` })] })]);
      }
    }
  });

  it('shows the decoded text of a bad field of a large body, as sent, in its contact’s rejection', async () => {
    s = await startServer({ limits: { maxContacts: 5000 } });
    const list: Record<string, unknown>[] = contacts(3000);
    list[2999] = { ...list[2999], nickname: 'João 😀 Ñandú' };
    const bytes = Buffer.from(JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: 2, contacts: list }), 'utf8');
    const res = await post(s.url, bytes, 5, false);
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ accepted: 2999, rejected: 1 });
    expect(res.json.rejections?.[0]).toMatchObject({ index: 2999, reason: 'invalid_data' });
    expect(res.json.rejections?.[0]?.problems).toEqual([expect.objectContaining({ path: '$.contacts[2999].nickname', actual: expect.stringContaining('João 😀 Ñandú') })]);
  });

  it('answers 413 over the limit, announced by Content-Length or found while reading a chunked body', async () => {
    s = await startServer({ limits: { maxContacts: 5000, maxBodyBytes: 200_000 } });
    const bytes = body(3000, '5511987654321');
    expect(bytes.length).toBeGreaterThan(200_000);
    for (const withLength of [true, false]) {
      const res = await post(s.url, bytes, 16 * 1024, withLength);
      expect(res.status).toBe(413);
      expect(res.json.error?.code).toBe('body_too_large');
    }
    // A body at the limit is read whole.
    const fits = body(1500, '5511987654321');
    expect(fits.length).toBeLessThan(200_000);
    expect((await post(s.url, fits, 1000, false)).status).toBe(202);
  });

  it('reads a body over the limit to its end before its 413, so a client that writes it all before reading gets the 413 (and keeps its connection)', async () => {
    const started = (s = await startServer({ limits: { maxContacts: 5000, maxBodyBytes: 200_000 } }));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    const blast = (size: number, withLength: boolean) =>
      new Promise<{ status: number; code: string | undefined; wroteAll: boolean }>((resolve, reject) => {
        const headers: Record<string, string | number> = { 'content-type': 'application/json', 'x-api-key-id': KEY_1 };
        if (withLength) headers['content-length'] = size;
        let wroteAll = false;
        const req = http.request(`${started.url}/messenger/messages/`, { method: 'POST', headers, agent }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, code: (JSON.parse(Buffer.concat(parts).toString('utf8')) as Answer['json']).error?.code, wroteAll }));
        });
        req.on('socket', (socket) => sockets.add(socket));
        req.on('finish', () => (wroteAll = true));
        // An error here (EPIPE, ECONNRESET) is what this test is about: the client never saw its answer.
        req.on('error', reject);
        // Written at once, in pieces the socket takes as it can: the client reads nothing until the end.
        for (let at = 0; at < size; at += 1 << 20) req.write(Buffer.alloc(Math.min(1 << 20, size - at), 0x20));
        req.end();
      });
    for (const withLength of [true, false]) {
      const answer = await blast(11 * 1024 * 1024, withLength);
      expect(answer).toEqual({ status: 413, code: 'body_too_large', wroteAll: true });
    }
    // The body was read to its end: the connection stays open for the next request.
    expect(sockets.size).toBe(1);
    agent.destroy();
  });
});
