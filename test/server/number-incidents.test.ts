/**
 * A number blocked for every message (an expired token, a revoked permission, a provider that cannot
 * be reached) is loud: an error log line naming the number and the code, a gauge, the dashboard's
 * number marked blocked; its contacts wait (no FAILED at first sight) and it clears when the number
 * sends again.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/index.js';
import { createWhatsAppChannel } from '../../src/server/channels/whatsapp/index.js';
import type { SimulatedChannel } from '../../src/server/index.js';
import { NumberIncidents } from '../../src/server/number-incidents.js';
import { api, contacts, startServer, testFleet, waitFor, type Started } from './helpers.js';
import { ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN, graphAccount, startFakeGraph, whatsappFleet, type FakeGraph } from './whatsapp-fake-graph.js';

/** A logger that keeps what it is told. */
function captured() {
  const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => void lines.push({ level, obj, msg });
  return { lines, log: { error: at('error'), warn: at('warn'), info: at('info') } as never };
}

describe('the book of blocked numbers', () => {
  it('logs an error naming the number and the code when it starts, again while it lasts, and a warning when it ends', () => {
    const clock = new ManualClock(0);
    const { lines, log } = captured();
    const book = new NumberIncidents(log, clock, 60_000);
    book.result('5511990000001', { status: 'failed', code: 190, refused: true, reason: 'Error validating access token' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', obj: { number: '5511990000001', code: 190, cause: 'credentials' } });
    expect(lines[0]!.msg).toContain('5511990000001');
    expect(lines[0]!.msg).toContain('190');
    expect(book.get('5511990000001')).toMatchObject({ cause: 'credentials', code: 190, failures: 1, since: 0 });
    clock.set(30_000);
    book.result('5511990000001', { status: 'failed', code: 190, refused: true });
    expect(lines).toHaveLength(1); // not again before a minute
    clock.set(61_000);
    book.result('5511990000001', { status: 'failed', code: 190, refused: true });
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: 'error', obj: { failures: 3, failuresSinceLastLine: 2 } });
    // Other failures neither open nor close an incident.
    book.result('5511990000001', { status: 'failed', code: 131026, refused: true });
    expect(book.size).toBe(1);
    book.result('5511990000001', { status: 'sent' });
    expect(book.size).toBe(0);
    expect(lines[2]).toMatchObject({ level: 'warn', obj: { number: '5511990000001', failures: 3 } });
  });

  it('counts an unreachable provider (a refused transport failure), not an unknown outcome', () => {
    const { lines, log } = captured();
    const book = new NumberIncidents(log, new ManualClock(0));
    book.result('5511990000002', { status: 'failed', reason: 'timeout', action: { kind: 'transport', backoffMs: 1_000 } });
    expect(book.size).toBe(0);
    book.result('5511990000002', { status: 'failed', reason: 'ECONNREFUSED', refused: true, action: { kind: 'transport', backoffMs: 1_000, restMs: 5_000 } });
    expect(book.get('5511990000002')).toMatchObject({ cause: 'unreachable' });
    expect(lines[0]!.level).toBe('error');
  });
});

describe('a token that expires mid-campaign, over HTTP', () => {
  const fleet = whatsappFleet(testFleet());
  let graph: FakeGraph;
  let s: Started;
  const logs: Record<string, unknown>[] = [];

  beforeAll(async () => {
    graph = await startFakeGraph(graphAccount(fleet));
    const channel = createWhatsAppChannel({ fleet, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url, attendanceIdleMs: false });
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    s = await startServer({ fleet, channel: channel as unknown as SimulatedChannel, logger: { level: 'warn', stream } as never, processMetrics: false });
  });
  afterAll(async () => {
    await s.server.close();
    await graph.close();
  });

  it('says so in the log, the metrics and the dashboard, and keeps the contacts', async () => {
    // Meta's answer to an expired token: HTTP 401, OAuthException code 190.
    graph.respond = () => ({ kind: 'error', code: 190, status: 401, details: 'Error validating access token: Session has expired' });
    const sent = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 9, contacts: contacts(30) } });
    expect(sent.status).toBe(202);
    await waitFor(() => logs.some((l) => l['level'] === 50 && l['code'] === 190), 'an error log line with the code');
    const line = logs.find((l) => l['level'] === 50 && l['code'] === 190)!;
    const blockedPhone = line['number'] as string;
    expect(String(line['msg'])).toContain(blockedPhone);
    expect(String(line['msg'])).toContain('190');

    const metrics = await api(s.url, '/metrics', { key: null });
    expect(metrics.text).toContain(`sendpool_numbers_blocked{number="${blockedPhone}",cause="credentials"} 1`);
    const { numbers } = (await api(s.url, '/dashboard/api/numbers/?business_id=1')).json as { numbers: { phone: string; blocked: { cause: string; code: number } | null }[] };
    expect(numbers.find((n) => n.phone === blockedPhone)!.blocked).toMatchObject({ cause: 'credentials', code: 190 });

    // Nothing failed at first sight: the contacts wait for the token (bounded by their transport tries).
    const stats = s.server.sendpool.stats().dispatch;
    expect(stats.failed).toBe(0);
    expect(stats.submitted).toBe(30);
  });
});
