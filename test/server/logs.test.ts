/** Structured logs: request ids, and no API key, token or contact data in them. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { api, contacts, KEY_1, startServer } from './helpers.js';

describe('logs', () => {
  it('carry request ids and never the key, a token or contact data', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const s = await startServer({ logger: { level: 'info', stream } as never });
    try {
      const sent = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(3) } });
      expect(sent.status).toBe(202);
      await api(s.url, '/reports/1/download/?token=v1.secret-token-text', {});
      await api(s.url, '/messenger/businesses/', { key: 'wrong-key-that-must-not-be-logged' });
      const text = lines.join('');
      const records = lines.map((l) => JSON.parse(l));
      expect(records.some((r) => r.reqId === sent.json.request_id)).toBe(true);
      expect(sent.headers.get('x-request-id')).toBe(sent.json.request_id);
      expect(text).not.toContain(KEY_1);
      expect(text).not.toContain('wrong-key-that-must-not-be-logged');
      expect(text).not.toContain('secret-token-text');
      expect(text).not.toContain('551198');
    } finally {
      await s.server.close();
    }
  });
});
