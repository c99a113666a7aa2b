/**
 * A webhook receiver down while a campaign runs, then up: the backlog is delivered, each contact's
 * notifications in the order they were made (docs/server.md, "Webhooks"), none lost, none twice.
 */
import { describe, expect, it } from 'vitest';
import { api, contacts, startReceiver, startServer, waitFor } from './helpers.js';

/** Where each HSM status comes in a contact's life; a contact's notifications are made in this order. */
const RANK: Record<string, number> = { ENQUEUED: 0, SENT: 1, SERVER: 2, DEVICE: 3, READ: 4, REPLIED: 5, FAILED: 6, EXPIRED: 6 };

describe('webhook backlog after an outage', () => {
  it('delivers every event once, each contact in order', async () => {
    const probe = await startReceiver(() => 'whsec_unused');
    const port = probe.port;
    await probe.close(); // nothing listens on `port` now
    const s = await startServer({ outbox: { initialDelayMs: 50, maxDelayMs: 400, probeIntervalMs: 100, attemptTimeoutMs: 5_000 } });
    try {
      const base = `http://127.0.0.1:${port}`;
      await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${base}/hsm` } });
      expect((await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 3, contacts: contacts(80) } })).status).toBe(202);
      await waitFor(() => s.server.sendpool.engine.stats().sent === 80, 'sends');
      // Statuses from the channel (server, device, read) keep coming while the receiver is down.
      await waitFor(() => s.server.sendpool.stats().webhooksPending >= 200, 'a backlog of notifications');
      expect(s.server.sendpool.stats().webhooksDelivered).toBe(0);

      const receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1), port);
      try {
        await waitFor(() => s.server.sendpool.idle() && s.server.sendpool.stats().webhooksPending === 0, 'the backlog to drain');
        const stats = s.server.sendpool.stats();
        expect(stats.webhooksDeadLettered).toBe(0);
        expect(receiver.duplicates).toBe(0);
        expect(receiver.badSignatures).toBe(0);
        expect(receiver.ids.size).toBe(stats.webhooksDelivered);
        const byContact = new Map<number, string[]>();
        for (const n of receiver.all('/hsm')) byContact.set(n.id, [...(byContact.get(n.id) ?? []), n.status]);
        expect(byContact.size).toBe(80);
        for (const [id, statuses] of byContact) {
          const ranks = statuses.map((x) => RANK[x]!);
          expect(ranks, `contact ${id}: ${statuses.join(' ')}`).toEqual([...ranks].sort((a, b) => a - b));
          expect(statuses[0], `contact ${id}`).toBe('ENQUEUED');
        }
      } finally {
        await receiver.close();
      }
    } finally {
      await s.server.close();
    }
  });
});
