/**
 * A request's ENQUEUED notifications are kept as one run and built as the receiver takes them
 * (src/server/enqueued-runs.ts): every contact's first notification is still its ENQUEUED, each
 * contact has exactly one, and the request is recorded in one piece, so two requests posted at
 * once are bounded one after the other and a phone of the campaign is taken once.
 */
import { describe, expect, it } from 'vitest';
import { api, contacts, expectEnqueuedFirst, startReceiver, startServer, waitFor } from './helpers.js';

/** More contacts than one feed builds (512 a receiver), so the run is built in several. */
const SIZE = 400;

describe("a request's ENQUEUED notifications, kept as one run", () => {
  it('come first for every contact, once each, and nothing is sent before its ENQUEUED', async () => {
    // Attempts wait as long as a loaded machine needs: a timed-out attempt is delivered again (at
    // least once), which would count as a duplicate here although nothing was built twice.
    const s = await startServer({ delivery: { requestTimeoutMs: 60_000 }, outbox: { initialDelayMs: 20, maxDelayMs: 200, attemptTimeoutMs: 60_000 } });
    const receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    try {
      await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } });
      const n = 4 * SIZE + 7;
      const res = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(n) } });
      expect(res.status).toBe(202);
      await waitFor(() => s.server.sendpool.engine.stats().sent === n, 'every contact sent');
      await waitFor(() => s.server.sendpool.idle(), 'every notification delivered');
      expectEnqueuedFirst(receiver, n);
      expect(receiver.duplicates).toBe(0);
    } finally {
      await receiver.close();
      await s.server.close();
    }
  });

  it('two requests at once are bounded one after the other', async () => {
    const size = 3 * SIZE;
    // Room for one request's contacts, not two; every number paused so nothing leaves the queue.
    const s = await startServer({ maxQueuedContacts: size + 10 });
    const receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    try {
      for (const phone of s.server.sendpool.engine.numbers().map((x) => x.phone)) s.server.sendpool.engine.setNumberStatus(phone, 'paused');
      await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } });
      const post = (campaign: number, offset: number) =>
        api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: campaign, contacts: contacts(size, offset) } });
      const statuses = (await Promise.all([post(1, 0), post(2, size)])).map((r) => r.status).sort();
      expect(statuses).toEqual([202, 429]);
      expect(s.server.sendpool.engine.stats().queued).toBe(size);
    } finally {
      await receiver.close();
      await s.server.close();
    }
  });

  it('two requests of one campaign at once: each phone is taken once, the later request sees it duplicated', async () => {
    const size = 3 * SIZE;
    const s = await startServer();
    const receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    try {
      for (const phone of s.server.sendpool.engine.numbers().map((x) => x.phone)) s.server.sendpool.engine.setNumberStatus(phone, 'paused');
      await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } });
      // Half of the second request's phones are the first's.
      const post = (offset: number) => api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(size, offset) } });
      const answers = await Promise.all([post(0), post(size / 2)]);
      expect(answers.map((a) => a.status)).toEqual([202, 202]);
      const bodies = answers.map((a) => a.json as { accepted: number; rejected: number });
      expect(bodies[0]!.accepted + bodies[1]!.accepted).toBe(size + size / 2);
      expect(bodies[0]!.rejected + bodies[1]!.rejected).toBe(size / 2);
      expect(s.server.sendpool.engine.stats().queued).toBe(size + size / 2);
      // Numbers paused: nothing is sent, so the ENQUEUED are every notification there is.
      await waitFor(() => receiver.all('/hsm').length >= size + size / 2, 'every ENQUEUED delivered');
      expect(new Set((receiver.all('/hsm') as { id: number }[]).map((e) => e.id)).size).toBe(size + size / 2);
    } finally {
      await receiver.close();
      await s.server.close();
    }
  });
});

describe('a receiver down past the delivery window', () => {
  it('dead-letters every ENQUEUED of a run, not only those built before (the feed goes on after dead letters)', async () => {
    const probe = await startReceiver(() => 'whsec_unused');
    const port = probe.port;
    await probe.close(); // nothing listens on `port`
    const s = await startServer({ outbox: { initialDelayMs: 10, maxDelayMs: 50, probeIntervalMs: 50, maxAgeMs: 200, attemptTimeoutMs: 5_000 } });
    try {
      for (const phone of s.server.sendpool.engine.numbers().map((x) => x.phone)) s.server.sendpool.engine.setNumberStatus(phone, 'paused');
      await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `http://127.0.0.1:${port}/hsm` } });
      expect((await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(1_500) } })).status).toBe(202);
      await waitFor(() => s.server.sendpool.stats().webhooksDeadLettered === 1_500, 'every ENQUEUED dead-lettered');
      expect(s.server.sendpool.stats().webhooksPending).toBe(0);
    } finally {
      await s.server.close();
    }
  });
});
