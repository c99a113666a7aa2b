/**
 * A request of more than 100 contacts with an HSM webhook configured builds its ENQUEUED
 * notifications in slices before its contacts are queued (src/server/intake.ts `finishIntake`):
 * every contact's first notification is still its ENQUEUED, each contact has exactly one, and the
 * intake bound counts the contacts of a request still building them, so two such requests posted
 * at once are bounded as if one came after the other, and the phones it took are held meanwhile, so
 * a phone of the campaign is taken once. Nothing is recorded before the slices end (what a crash
 * meanwhile leaves behind: nothing, test/server/durable.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { NOTIFY_IN_ONE_PIECE } from '../../src/server/intake.js';
import { api, contacts, startReceiver, startServer, waitFor } from './helpers.js';

describe('ENQUEUED notifications of a large request, built in slices', () => {
  it('come first for every contact, once each, and nothing is sent before its ENQUEUED', async () => {
    const s = await startServer();
    const receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    try {
      await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } });
      const n = 4 * NOTIFY_IN_ONE_PIECE + 7;
      const res = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(n) } });
      expect(res.status).toBe(202);
      await waitFor(() => s.server.sendpool.engine.stats().sent === n, 'every contact sent');
      await waitFor(() => s.server.sendpool.idle(), 'every notification delivered');
      const byContact = new Map<number, string[]>();
      for (const e of receiver.all('/hsm') as { id: number; status: string }[]) byContact.set(e.id, [...(byContact.get(e.id) ?? []), e.status]);
      expect(byContact.size).toBe(n);
      for (const [id, statuses] of byContact) {
        expect(statuses[0], `contact ${id}: ${statuses.join(' ')}`).toBe('ENQUEUED');
        expect(
          statuses.filter((x) => x === 'ENQUEUED'),
          `contact ${id}`,
        ).toHaveLength(1);
        expect(statuses, `contact ${id}`).toContain('SENT');
      }
      expect(receiver.duplicates).toBe(0);
    } finally {
      await receiver.close();
      await s.server.close();
    }
  });

  it('counts a request still building its notifications against the intake bound', async () => {
    const size = 3 * NOTIFY_IN_ONE_PIECE;
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
    const size = 3 * NOTIFY_IN_ONE_PIECE;
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
