/** GET /operator/queues/ counts contacts waiting for their retry, per pool and in the totals. */
import { describe, expect, it } from 'vitest';
import { api, contacts, fastChannel, KEY_2, startServer, waitFor } from './helpers.js';

describe('GET /operator/queues/', () => {
  it('shows a contact that failed with a retryable code as waiting_retry, not as nothing', async () => {
    // 131000 is a contact retry; with retry_interval 5 (minutes) the contacts wait for their retry.
    const s = await startServer({ channel: fastChannel({ sendFailureProbability: 1, failureCodes: [{ code: 131000, weight: 1 }] }) });
    try {
      const send = await api(s.url, '/messenger/messages/', {
        body: { business_id: 1, template_type_id: 10, campaign_id: 1, max_retries: 2, retry_interval: 5, contacts: contacts(3) },
      });
      expect(send.status).toBe(202);
      await waitFor(() => s.server.sendpool.engine.stats().waitingRetry === 3, 'three contacts waiting for their retry');

      const res = await api(s.url, '/operator/queues/');
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        queues: [{ business_id: 1, template_type_id: 10, output: expect.any(Number), queued: 0, waiting_retry: 3 }],
        totals: { queued: 0, waiting_retry: 3 },
      });

      // Another company sees only its own pools.
      expect((await api(s.url, '/operator/queues/', { key: KEY_2 })).json).toEqual({
        queues: [{ business_id: 2, template_type_id: 10, output: 2000, queued: 0, waiting_retry: 0 }],
        totals: { queued: 0, waiting_retry: 0 },
      });
    } finally {
      await s.server.close();
    }
  });
});
