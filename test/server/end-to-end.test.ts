/**
 * End to end, as a new user would: start the server, read the businesses, configure webhooks, send
 * 1,000 contacts, receive HSM, campaign statistics and attendance webhooks on a real receiver that
 * verifies signatures and deduplicates by event_id; pause a template through the operator endpoint
 * mid-campaign (and let the platform pause another, reported by the channel as 132015) and see the
 * rest go through the remaining template; every contact accounted for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HsmNotificationSchema, AttendanceNotificationSchema, CampaignBatchSchema, validatePayload } from '../../src/events/index.js';
import type { SimulatedChannel, SimulatedSend } from '../../src/server/index.js';
import { api, contacts, fastChannel, startReceiver, startServer, waitFor, type Receiver, type Started } from './helpers.js';

describe('end to end: 1,000 contacts with failover', () => {
  let s: Started;
  let receiver: Receiver;

  // The pauses happen at fixed points of the campaign, whatever the machine's speed: the channel
  // holds every send from the 300th on until the operator's pause is in (so the sends after it are
  // known), and the platform pauses template 101 at the 600th send.
  let operatorPauseDone!: () => void;
  const operatorPaused = new Promise<void>((r) => (operatorPauseDone = r));
  let calls = 0;

  beforeAll(async () => {
    const base = fastChannel({
      seed: 7,
      sendFailureProbability: 0.03,
      replyProbability: 0.5,
      attendanceProbability: 1,
      failureCodes: [
        { code: 131026, weight: 1 },
        { code: 131000, weight: 1 },
      ],
    });
    const channel: SimulatedChannel = {
      ...base,
      async send(m) {
        const call = ++calls;
        if (call > 300) await operatorPaused;
        if (call === 601) base.pauseTemplate(101);
        return base.send(m);
      },
    };
    s = await startServer({ perSecond: 150, dispatch: { maxInFlight: 50, pollLimit: 50 }, channel });
    receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
  });
  afterAll(async () => {
    await s.server.close();
    await receiver.close();
  });

  it('sends every contact, fails over from paused templates, and reports it all by webhooks', async () => {
    const businesses = await api(s.url, '/messenger/businesses/');
    expect(businesses.status).toBe(200);
    const variables = [[{ name: '{{1}}', index: 0 }], [{ name: '{{1}}', index: 0 }], [{ name: '{{1}}', index: 0 }]];
    const billing = { id: 10, name: 'billing', output: 450, data: 'A: Hi {{1}}, your bill is due.', example: 'A: Hi [{{1}}], your bill is due.', variables };
    expect(businesses.json).toEqual([{ id: 1, name: 'Acme', template_types: [billing] }]);

    const config = await api(s.url, '/messenger/config/', {
      body: { url_hsm_callback: `${receiver.url}/hsm`, url_campaign_webhook: `${receiver.url}/campaign`, url_attendance_callback: `${receiver.url}/attendance` },
    });
    expect(config.status).toBe(200);

    const sent = await api(s.url, '/messenger/messages/', {
      body: { business_id: 1, template_type_id: 10, campaign_id: 42, max_retries: 2, retry_interval: 0, contacts: contacts(1000) },
    });
    expect(sent.status).toBe(202);
    expect(sent.json).toMatchObject({ accepted: 1000, rejected: 0 });
    const requestId: string = sent.json.request_id;

    // Operator pause of template 102 while the campaign runs: the channel holds the sends after
    // the 300th (at most 50 in flight) until the pause is in.
    const sends = s.channel.sends;
    await waitFor(() => sends.length === 300 && calls > 300, '300 sends, the next ones held');
    const paused = await api(s.url, '/operator/templates/102/pause/', { body: { duration_seconds: 3600 } });
    expect(paused.status).toBe(200);
    expect(paused.json).toMatchObject({ id: 102, status: 'paused' });
    const afterOperatorPause = sends.length;
    expect(afterOperatorPause).toBe(300);
    operatorPauseDone();

    // The platform pauses template 101 at the 601st send: the channel answers 132015 from then on
    // and the engine fails over.
    await waitFor(() => sends.length > 600, '600 sends');
    const afterPlatformPause = 600;

    await waitFor(() => s.server.sendpool.idle(), 'the campaign to finish');
    const stats = s.server.sendpool.stats().dispatch;
    expect(stats.submitted).toBe(1000);
    expect(stats.sent + stats.failed + stats.expired).toBe(1000);

    // After each pause, only messages already in flight (at most 50) used the paused template.
    expect(sends.slice(afterOperatorPause).filter((x) => x.templateId === 102).length).toBeLessThanOrEqual(50);
    expect(sends.slice(afterPlatformPause + 50).filter((x) => x.templateId !== 100 && x.outcome === 'sent')).toEqual([]);
    const failovers = sends.filter((x) => x.code === 132015);
    expect(failovers.length).toBeGreaterThan(0);
    // A failover is not the contact's failure: every 132015 contact went again, through template
    // 100. (There it is sent, or meets a failure of its own drawn by the channel, such as 131026:
    // which contacts draw one depends on the order of the sends, so on the machine's timing.)
    const contactId = (x: SimulatedSend): number => (x.contact as unknown as { id: number }).id;
    for (const f of failovers) {
      const again = sends.slice(sends.indexOf(f) + 1).filter((x) => contactId(x) === contactId(f));
      expect(
        again.some((x) => x.templateId === 100),
        `contact ${contactId(f)} went again after 132015`,
      ).toBe(true);
    }
    const sentIds = new Set(sends.filter((x) => x.outcome === 'sent').map(contactId));
    // No contact was accepted by the channel twice.
    expect(sentIds.size).toBe(sends.filter((x) => x.outcome === 'sent').length);
    expect(sentIds.size).toBe(stats.sent);

    // Webhooks: everything delivered, signed, none lost.
    await waitFor(() => s.server.sendpool.stats().webhooksPending === 0, 'webhooks delivered');
    s.server.sendpool.flushCampaignStatistics();
    await waitFor(() => receiver.all('/campaign').some((b) => b.campaigns.some((c: any) => c.count_remaining === 0 && c.count_total === 1000)), 'final statistics');
    // Late statuses of the simulated channel (read, replied) come after the sends.
    await waitFor(() => receiver.all('/hsm').some((n) => n.status === 'READ') && receiver.all('/hsm').some((n) => n.status === 'REPLIED'), 'read and replied statuses');
    await waitFor(() => s.server.sendpool.stats().webhooksPending === 0, 'webhooks delivered');
    expect(receiver.badSignatures).toBe(0);
    expect(s.server.sendpool.stats().webhooksDeadLettered).toBe(0);

    const hsm = receiver.all('/hsm');
    for (const n of hsm.slice(0, 50)) expect(validatePayload(HsmNotificationSchema, n)).toEqual([]);
    expect(hsm.every((n) => n.request_id === requestId && n.campaign_id === 42)).toBe(true);
    const byContact = new Map<number, string[]>();
    for (const n of hsm) byContact.set(n.id, [...(byContact.get(n.id) ?? []), n.status]);
    expect(byContact.size).toBe(1000);
    let sentCount = 0;
    let failedFinal = 0;
    for (const [id, statuses] of byContact) {
      expect(statuses, `contact ${id}`).toContain('ENQUEUED');
      const hasSent = statuses.includes('SENT');
      if (hasSent) sentCount++;
      else {
        expect(statuses, `contact ${id}`).toContain('FAILED');
        failedFinal++;
      }
    }
    expect(sentCount).toBe(stats.sent);
    expect(failedFinal).toBe(stats.failed);
    // Retries carry is_retry and retry_index.
    const retries = hsm.filter((n) => n.is_retry);
    expect(retries.every((n) => Number.isInteger(n.retry_index))).toBe(true);
    const failed = hsm.filter((n) => n.status === 'FAILED');
    expect(failed.filter((n) => n.reason.includes('132015'))).toEqual([]);
    expect(failed.every((n) => /^WhatsApp, \d+, .+/.test(n.reason))).toBe(true);
    expect(hsm.some((n) => n.status === 'READ')).toBe(true);
    expect(hsm.some((n) => n.status === 'REPLIED')).toBe(true);
    // Each template's text is what went out: B and C stop after their pauses.
    expect(hsm.filter((n) => n.status === 'SENT' && n.message.startsWith('A:')).length).toBeGreaterThan(300);

    const batches = receiver.all('/campaign');
    for (const b of batches) expect(validatePayload(CampaignBatchSchema, b)).toEqual([]);
    // The final figures (batches may arrive out of order: a batch retried after a later one was delivered).
    const last = batches.flatMap((b: any) => b.campaigns.filter((c: any) => c.campaign_id === 42)).reduce((a: any, c: any) => (c.count_processed > a.count_processed ? c : a));
    expect(last.count_total).toBe(last.count_processed + last.count_remaining);
    expect(last).toMatchObject({ count_total: 1000, count_processed: 1000, count_remaining: 0, status: 'FINISHED' });
    expect(last.count_sent + last.count_failed + last.count_does_not_exist + last.count_expired).toBe(1000);

    await waitFor(() => receiver.all('/attendance').length > 0, 'an attendance');
    const attendance = receiver.all('/attendance')[0];
    expect(validatePayload(AttendanceNotificationSchema, attendance)).toEqual([]);
    expect(attendance).toMatchObject({ from_me: true, campaign_id: 42, request_id: requestId });
    expect(attendance.survey.status).toBe('completed');
  });
});
