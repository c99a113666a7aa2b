/**
 * A 429's Retry-After tells the real wait: when the pool's numbers are spent, when the first one
 * regains capacity (the hour window, or the 24 h window when that is what holds them), then the
 * excess at their rates; contacts waiting for a retry leave no sooner than their retry time.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine } from '../../src/index.js';
import type { Channel } from '../../src/server/index.js';
import { api, contacts, fastChannel, startServer, waitFor } from './helpers.js';

const HOUR = 3_600_000;

/** Company 1's business 1: one number of `perHour` an hour and `per24h` a day, one template. */
function oneNumber(perHour: number, per24h: number) {
  return {
    businesses: [
      {
        id: 1,
        name: 'Acme',
        companyId: 1,
        numbers: [{ phone: '5511990000001', throughputPerHour: perHour, messagingLimit24h: per24h, status: 'active' }],
        templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
      },
    ],
    templates: [{ id: 100, name: 'billing_a', text: 'Hi {{1}}, your bill is due.', businessIds: [1], status: 'active' }],
  };
}

const send = (n: number, offset: number, extra: Record<string, unknown> = {}) => ({
  body: { business_id: 1, template_type_id: 10, campaign_id: 1, ...extra, contacts: contacts(n, offset) },
});

async function serverAt(clockAt: number, fleet: unknown, options: Record<string, unknown> = {}) {
  const clock = new ManualClock(clockAt);
  const engine = createEngine(fleet, { clock });
  const s = await startServer({ engine, clock, maxQueuedContacts: 10, ...options });
  return { s, engine, clock };
}

describe('Retry-After of POST /messenger/messages/', () => {
  it("is the 24 h window's reset when that is what holds the numbers, up to 25 h", async () => {
    // 10:30, and the number may send 5 a day: the 5 sent now weigh until 35:00 (their hour bucket, 25 h on).
    const { s, engine } = await serverAt(10.5 * HOUR, oneNumber(1000, 5));
    try {
      expect((await api(s.url, '/messenger/messages/', send(5, 0))).status).toBe(202);
      await waitFor(() => engine.stats().sent === 5, "the day's 5 sends");
      expect((await api(s.url, '/messenger/messages/', send(10, 100))).status).toBe(202);
      expect(engine.queueStatus(1, 10)).toMatchObject({ queued: 10, blocked: 'no-capacity', retryAt: 35 * HOUR });

      const one = await api(s.url, '/messenger/messages/', send(1, 200));
      expect(one.status).toBe(429);
      expect(one.json.error.code).toBe('rate_limited');
      expect(one.headers.get('retry-after')).toBe(String(24.5 * 3600));
      expect(one.json.error.message).toContain(`retry after ${24.5 * 3600} s`);

      // Five more need the first of the queue to go and four more at 5 a day: past the cap.
      const five = await api(s.url, '/messenger/messages/', send(5, 300));
      expect(five.status).toBe(429);
      expect(five.headers.get('retry-after')).toBe(String(25 * 3600));
      expect(engine.stats().submitted).toBe(15); // a 429 changes nothing
    } finally {
      await s.server.close();
    }
  });

  it("is the hour window's refill, then the excess at the hourly rate", async () => {
    // 10 an hour: one message every 6 minutes once the 10 of the hour are spent.
    const { s, engine } = await serverAt(HOUR, oneNumber(10, 1000));
    try {
      expect((await api(s.url, '/messenger/messages/', send(10, 0))).status).toBe(202);
      await waitFor(() => engine.stats().sent === 10, "the hour's 10 sends");
      expect((await api(s.url, '/messenger/messages/', send(10, 100))).status).toBe(202);
      const res = await api(s.url, '/messenger/messages/', send(5, 200));
      expect(res.status).toBe(429);
      // 5 of the queue must go: at 6, 12, 18, 24 and 30 minutes.
      expect(res.headers.get('retry-after')).toBe('1800');
    } finally {
      await s.server.close();
    }
  });

  it('is no sooner than the next retry when contacts waiting for their retry fill the queue', async () => {
    const channel = fastChannel({ sendFailureProbability: 1, failureCodes: [{ code: 131000, weight: 1 }] });
    const { s, engine } = await serverAt(HOUR, oneNumber(1000, 10_000), { channel, maxQueuedContacts: 3 });
    try {
      expect((await api(s.url, '/messenger/messages/', send(3, 0, { max_retries: 2, retry_interval: 5 }))).status).toBe(202);
      await waitFor(() => engine.stats().waitingRetry === 3, 'three contacts waiting for their retry');
      const res = await api(s.url, '/messenger/messages/', send(2, 100));
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('300'); // retry_interval: 5 minutes
    } finally {
      await s.server.close();
    }
  });

  it('is 60 s when only an operator can resume the pool', async () => {
    const { s, engine } = await serverAt(HOUR, oneNumber(1000, 10_000));
    try {
      engine.setNumberStatus('5511990000001', 'paused');
      expect((await api(s.url, '/messenger/messages/', send(10, 0))).status).toBe(202);
      const res = await api(s.url, '/messenger/messages/', send(1, 100));
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('60');
    } finally {
      await s.server.close();
    }
  });
});

describe('Retry-After of POST /sms/messages/', () => {
  it('is 30 s while the gateway has answered nothing in the last minute', async () => {
    const inner = fastChannel();
    const answers: (() => void)[] = [];
    const channel: Channel = {
      send: (m) => inner.send(m),
      sendSms: () => new Promise((resolve) => answers.push(() => resolve({ status: 'sent' }))),
      attach: (sink) => inner.attach(sink),
      close: () => inner.close?.(),
    };
    const s = await startServer({ channel, sms: { maxQueued: 5, maxInFlight: 1 } });
    try {
      const sms = (n: number) => Array.from({ length: n }, (_, i) => ({ message: `code ${i}`, phone: '5511987654321' }));
      expect((await api(s.url, '/sms/messages/', { body: sms(5) })).status).toBe(202);
      await waitFor(() => answers.length === 1, 'the first SMS at the gateway');
      const res = await api(s.url, '/sms/messages/', { body: sms(2) });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('30');
      expect(res.json.error.message).toContain('retry after 30 s');
    } finally {
      const release = setInterval(() => answers.splice(0).forEach((answer) => answer()), 1);
      await s.server.close();
      clearInterval(release);
    }
  });
});
