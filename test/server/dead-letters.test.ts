/**
 * Dead letters on the server in memory: an event the receiver refused until the outbox gave up is
 * listed (newest first, by family, in pages) with the receiver's last answer, only to its company,
 * counted in /metrics, and replayed under its event id, alone or all of a family; replayed
 * ENQUEUED and SENT of a contact come in that order. Every wait is for a condition.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runServer } from '../../src/server/index.js';
import { KEY_1, KEY_2, api, contacts, quietProvider, startServer, testFleet, waitFor, type Started } from './helpers.js';
import { startSwitchedReceiver, type SwitchedReceiver } from './dead-letter-receiver.js';

/** An outbox that gives up within a few hundred ms. */
const QUICK_OUTBOX = { initialDelayMs: 20, maxDelayMs: 50, probeIntervalMs: 20, maxAgeMs: 300, attemptTimeoutMs: 2_000 };

describe('dead letters (server in memory)', () => {
  let s: Started;
  let receiver: SwitchedReceiver;
  const list = async (query = '', key?: string) => (await api(s.url, `/messenger/webhooks/dead-letters/${query}`, key ? { key } : {})).json;

  beforeAll(async () => {
    receiver = await startSwitchedReceiver();
    const provider = quietProvider();
    s = await startServer({ channel: provider.channel(), outbox: QUICK_OUTBOX, drainTimeoutMs: 100 });
    expect((await api(s.url, '/messenger/config/', { body: { url_report_webhook: `${receiver.url}/reports`, url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);
  });
  afterAll(async () => {
    await s?.server.close();
    await receiver?.close();
  });

  it('keeps each dead-lettered event with its last answer, newest first, to its company only', async () => {
    expect((await api(s.url, '/reports/', { body: { report_type: 'numbers' } })).status).toBe(202);
    expect((await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 7, contacts: contacts(1) } })).status).toBe(202);
    // report.ready, and the contact's ENQUEUED then SENT (held behind it, then refused in turn).
    await waitFor(async () => (await list()).dead_letters.length === 3, 'three dead letters');
    expect(s.server.sendpool.stats().webhooksDeadLettered).toBe(3);
    const all = (await list()).dead_letters as any[];
    const times = all.map((d) => Date.parse(d.dead_lettered_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const report = all.find((d) => d.family === 'report');
    expect(report).toMatchObject({ company_id: 1, url: `${receiver.url}/reports`, payload: { event: 'report.ready', event_id: report.event_id } });
    expect(report.last_error).toMatch(/^HTTP 500/);
    expect(report.attempts).toBeGreaterThan(1);
    expect(Date.parse(report.created_at)).toBeLessThanOrEqual(Date.parse(report.dead_lettered_at));
    const hsm = all.filter((d) => d.family === 'hsm').map((d) => d.payload.status);
    expect(hsm.sort()).toEqual(['ENQUEUED', 'SENT']);
    // Another company sees none of them; a family filter; pages of one, each after the last.
    expect((await list('', KEY_2)).dead_letters).toEqual([]);
    expect((await list('?family=hsm')).dead_letters).toHaveLength(2);
    const paged: string[] = [];
    let before: string | null = '';
    while (before !== null) {
      const page: any = await list(`?limit=1${before ? `&before=${before}` : ''}`);
      paged.push(...page.dead_letters.map((d: any) => d.event_id));
      before = page.next_before;
    }
    expect(paged).toEqual(all.map((d) => d.event_id));
    // The gauge and the counter.
    const metrics = (await api(s.url, '/metrics', { key: null })).text;
    expect(metrics).toContain('sendpool_webhook_dead_letters{family="hsm"} 2');
    expect(metrics).toContain('sendpool_webhook_dead_letters{family="report"} 1');
    expect(metrics).toMatch(/sendpool_webhook_deliveries_total\{family="report",outcome="dead-lettered"\} 1/);
  });

  it('refuses bad queries and unknown ids with the error body naming the path', async () => {
    const bad = await api(s.url, '/messenger/webhooks/dead-letters/?family=mail&limit=0&before=x');
    expect(bad.status).toBe(422);
    expect(bad.json.error.code).toBe('invalid_body');
    expect(bad.json.error.problems.map((p: any) => p.path).sort()).toEqual(['$.query.before', '$.query.family', '$.query.limit']);
    const unknown = await api(s.url, '/messenger/webhooks/dead-letters/00000000-0000-4000-8000-000000000000/replay/', { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.message).toContain('No dead letter with event_id 00000000-0000-4000-8000-000000000000');
    const badBody = await api(s.url, '/messenger/webhooks/dead-letters/replay/', { body: { family: 'mail', x: 1 } });
    expect(badBody.status).toBe(422);
    expect(badBody.json.error.problems.map((p: any) => p.path).sort()).toEqual(['$.family', '$.x']);
    // Another company cannot replay company 1's dead letter.
    const report = ((await list()).dead_letters as any[]).find((d) => d.family === 'report');
    expect((await api(s.url, `/messenger/webhooks/dead-letters/${report.event_id}/replay`, { method: 'POST', key: KEY_2 })).status).toBe(404);
  });

  it('replays one under its event id, then all of a family in the order they were made', async () => {
    receiver.failing = false;
    const report = ((await list()).dead_letters as any[]).find((d) => d.family === 'report');
    const one = await api(s.url, `/messenger/webhooks/dead-letters/${report.event_id}/replay`, { method: 'POST' });
    expect(one.status).toBe(202);
    expect(one.json).toEqual({ replayed: 1, event_ids: [report.event_id] });
    await waitFor(() => receiver.accepted.some((a) => a.id === report.event_id), 'the replayed report.ready');
    expect(receiver.accepted.find((a) => a.id === report.event_id)!.payload).toEqual(report.payload);
    expect(((await list()).dead_letters as any[]).map((d) => d.family)).toEqual(['hsm', 'hsm']);

    const all = await api(s.url, '/messenger/webhooks/dead-letters/replay/', { body: { family: 'hsm' } });
    expect(all.status).toBe(202);
    expect(all.json).toEqual({ replayed: 2 });
    await waitFor(() => receiver.accepted.filter((a) => a.path === '/hsm').length === 2, 'the replayed HSM notifications');
    expect(receiver.accepted.filter((a) => a.path === '/hsm').map((a) => a.payload.status)).toEqual(['ENQUEUED', 'SENT']);
    expect((await list()).dead_letters).toEqual([]);
    expect((await api(s.url, '/metrics', { key: null })).text).not.toContain('sendpool_webhook_dead_letters{');
  });

  it('serves the same to the dashboard’s API', async () => {
    receiver.failing = true;
    expect((await api(s.url, '/reports/', { body: { report_type: 'numbers' } })).status).toBe(202);
    await waitFor(async () => (await api(s.url, '/dashboard/api/dead-letters/')).json.dead_letters.length === 1, 'a dead letter on the dashboard');
    const d = (await api(s.url, '/dashboard/api/dead-letters/')).json.dead_letters[0];
    expect(d.family).toBe('report');
    receiver.failing = false;
    expect((await api(s.url, '/dashboard/api/dead-letters/replay/', { method: 'POST' })).json).toEqual({ replayed: 1 });
    await waitFor(() => receiver.accepted.some((a) => a.id === d.event_id), 'the replay from the dashboard');
  });
});

describe('dead letters in the snapshot file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sendpool-dead-letters-snapshot-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are written at close and read back at start', async () => {
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(testFleet()));
    const receiver = await startSwitchedReceiver();
    const options = (): Parameters<typeof runServer>[0] => ({
      fleetFile,
      port: 0,
      snapshotFile: join(dir, 'state.json'),
      apiKeys: [{ key: KEY_1, companyId: 1 }],
      channel: quietProvider().channel(),
      logger: false,
      handleSignals: false,
      metrics: false,
      allowPrivateWebhookTargets: true,
      drainTimeoutMs: 50,
      outbox: QUICK_OUTBOX,
    });
    try {
      const first = await runServer(options());
      let kept: unknown[];
      try {
        await api(first.address, '/messenger/config/', { body: { url_report_webhook: `${receiver.url}/reports` } });
        expect((await api(first.address, '/reports/', { body: { report_type: 'numbers' } })).status).toBe(202);
        await waitFor(async () => (await api(first.address, '/messenger/webhooks/dead-letters/')).json.dead_letters.length === 1, 'a dead letter');
        kept = (await api(first.address, '/messenger/webhooks/dead-letters/')).json.dead_letters;
      } finally {
        await first.close();
      }
      const second = await runServer(options());
      try {
        expect(second.restored).toBe(true);
        expect((await api(second.address, '/messenger/webhooks/dead-letters/')).json.dead_letters).toEqual(kept);
      } finally {
        await second.close();
      }
    } finally {
      await receiver.close();
    }
  });
});
