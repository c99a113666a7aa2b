/**
 * The period reports over HTTP: campaigns go out through the simulated channel (send failures and
 * retries, later FAILED and EXPIRED, replies that open attendances), then `official-messages`,
 * `attendance-history` and `attendance-statistics` are asked for and downloaded, and their rows are
 * checked against the HSM and attendance webhooks the server sent. A period keeps out what is
 * outside it, another company sees none of it, the types whose data sendpool does not hold end in
 * `report.error` naming the option, and a durable restart still reports what was sent before it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { buildServer, isServerOptionsError, runServer } from '../../src/server/index.js';
import { KEY_1, KEY_2, api, contacts, fastChannel, quietProvider, startReceiver, startServer, testFleet, waitFor, type Receiver, type Started } from './helpers.js';

/** RFC 4180 CSV (quoted cells may hold commas, quotes and line ends) as rows of cells. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += ch;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** The rows of a CSV as objects keyed by the header. */
function records(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

/** Asks for a report, waits for its end and answers it with its file (when ready). */
async function report(url: string, body: Record<string, unknown>, key = KEY_1) {
  const created = await api(url, '/reports/', { body, key });
  expect(created.status, JSON.stringify(created.json)).toBe(202);
  const id: number = created.json.report_id;
  let shown: any;
  await waitFor(async () => {
    shown = (await api(url, `/reports/${id}/`, { key })).json;
    return shown.status !== 'processing';
  }, `report ${id}`);
  if (shown.status !== 'ready') return { created: created.json, shown, rows: [] as Record<string, string>[] };
  const download = await fetch(shown.file_url, { headers: { 'x-api-key-id': key } });
  expect(download.status).toBe(200);
  return { created: created.json, shown, rows: records(await download.text()) };
}

type Hsm = {
  id: number;
  retry_index: number | null;
  status: string;
  from: string | null;
  to: string;
  message: string | null;
  datetime: string;
  reason: string | null;
  campaign_id: number;
  request_id: string;
  blocklistResponse?: boolean;
};

/** Send attempts as the HSM webhooks tell them: by `id:retry_index`, with the merged status. */
function attempts(hsm: readonly Hsm[]) {
  const byKey = new Map<string, Hsm[]>();
  for (const n of hsm) {
    if (n.from === null) continue; // ENQUEUED, or a contact that ended in the queue: no message sent
    const key = `${n.id}:${n.retry_index ?? ''}`;
    byKey.set(key, [...(byKey.get(key) ?? []), n]);
  }
  return new Map(
    [...byKey].map(([key, list]) => {
      const seen = new Set(list.map((n) => n.status));
      const order = ['SENT', 'SERVER', 'DEVICE', 'READ'];
      const status = seen.has('REPLIED') ? 'REPLIED' : seen.has('FAILED') ? 'FAILED' : seen.has('EXPIRED') ? 'EXPIRED' : order.filter((s) => seen.has(s)).at(-1)!;
      return [key, { first: list[0]!, status, reason: list.find((n) => n.status === 'FAILED')?.reason ?? '' }];
    }),
  );
}

/** True once every attempt the channel accepted has ended (replied with its attendance closed, failed or expired). */
function settled(s: Started, receiver: Receiver): boolean {
  if (!s.server.sendpool.idle()) return false;
  const hsm = receiver.all('/hsm') as Hsm[];
  const open = [...attempts(hsm).values()].filter((a) => a.status !== 'REPLIED' && a.status !== 'FAILED' && a.status !== 'EXPIRED');
  return open.length === 0 && receiver.all('/attendance').length === hsm.filter((n) => n.status === 'REPLIED').length;
}

describe('period reports over HTTP', () => {
  let s: Started;
  let one: Receiver;
  let two: Receiver;
  /** Between the two campaigns of company 1: after every time of the first, not after any of the second. */
  let between = '';

  beforeAll(async () => {
    s = await startServer({
      channel: fastChannel({
        seed: 11,
        sendFailureProbability: 0.2,
        failureCodes: [{ code: 131000, weight: 1 }],
        serverProbability: 0.9,
        deviceProbability: 0.8,
        readProbability: 1,
        replyProbability: 1,
        blocklistProbability: 0,
        attendanceProbability: 1,
      }),
    });
    one = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    two = await startReceiver(() => s.server.sendpool.webhookSecret(2));
    for (const [key, r] of [
      [KEY_1, one],
      [KEY_2, two],
    ] as const) {
      const config = { url_hsm_callback: `${r.url}/hsm`, url_attendance_callback: `${r.url}/attendance`, url_report_webhook: `${r.url}/reports` };
      expect((await api(s.url, '/messenger/config/', { key, body: config })).status).toBe(200);
    }
    const send = async (key: string, body: Record<string, unknown>) => expect((await api(s.url, '/messenger/messages/', { key, body })).status).toBe(202);
    await send(KEY_1, { business_id: 1, template_type_id: 10, campaign_id: 1, max_retries: 1, retry_interval: 0, contacts: contacts(30) });
    await waitFor(() => settled(s, one), 'campaign 1 to end');
    const after = Date.now();
    await waitFor(() => Date.now() > after, 'a later millisecond');
    between = new Date(Date.now()).toISOString();
    await waitFor(() => Date.now() > Date.parse(between), 'a later millisecond');
    await send(KEY_1, { business_id: 1, template_type_id: 10, campaign_id: 2, queue_id: 5, max_retries: 1, retry_interval: 0, contacts: contacts(20, 100) });
    await waitFor(() => settled(s, one), 'campaign 2 to end');
    await send(KEY_2, { business_id: 2, template_type_id: 10, campaign_id: 9, contacts: contacts(5, 500) });
    await waitFor(() => settled(s, two), 'the campaign of company 2 to end');
  });
  afterAll(async () => {
    await s.server.close();
    await one.close();
    await two.close();
  });

  it('official-messages lists every message sent with its latest status, as the HSM webhooks told it', async () => {
    const expected = attempts(one.all('/hsm'));
    // The run has what the report must show: retries, failures at send and later, expiries, replies.
    const statuses = [...expected.values()].map((a) => a.status);
    expect(statuses).toEqual(expect.arrayContaining(['FAILED', 'EXPIRED', 'REPLIED']));
    expect([...expected.values()].some((a) => a.first.retry_index === 0)).toBe(true);

    const { created, rows } = await report(s.url, { report_type: 'official-messages' });
    expect(created).toMatchObject({ report_type: 'official-messages', status: 'processing', end_date: expect.any(String), start_date: expect.any(String) });
    expect(rows).toHaveLength(expected.size);
    for (const row of rows) {
      const a = expected.get(`${row['id']}:${row['retry_index']}`);
      expect(a, `row ${JSON.stringify(row)}`).toBeDefined();
      const n = a!.first;
      expect(row).toMatchObject({
        request_id: n.request_id,
        campaign_id: String(n.campaign_id),
        business_id: '1',
        from: n.from,
        to: n.to,
        is_retry: String(n.retry_index !== null),
        message: n.message,
        datetime: n.datetime,
        status: a!.status,
        reason: a!.reason,
      });
      expect(row['cost_center_id']).toBe(n.campaign_id === 2 ? '5' : '0');
      if (a!.status === 'REPLIED') {
        expect(row['replied_datetime']).toBe(row['status_datetime']);
        expect(row['device_datetime']).not.toBe('');
        expect(row['blocklist_response']).toBe('false');
      }
    }
    // Oldest first.
    const times = rows.map((r) => Date.parse(r['datetime']!));
    expect(times).toEqual([...times].sort((x, y) => x - y));
  });

  it('attendance-history lists every closed attendance and attendance-statistics sums them per campaign', async () => {
    const closed = one.all('/attendance');
    expect(closed.length).toBeGreaterThan(5);
    const history = await report(s.url, { report_type: 'attendance-history' });
    expect(history.rows).toHaveLength(closed.length);
    const byId = new Map(history.rows.map((r) => [r['id'], r]));
    for (const a of closed) {
      const row = byId.get(String(a.id));
      expect(row, `attendance ${a.id}`).toBeDefined();
      expect(row).toMatchObject({
        ticket_id: String(a.ticket_id),
        ticket_uuid: a.ticket_uuid,
        campaign_id: String(a.campaign_id),
        request_id: a.request_id,
        number: a.number,
        datetime: a.datetime,
        messages: String(a.messages.length),
        client_messages: '1',
        attendant_messages: '1',
        user_id: String(a.user.id),
        occurrence_name: a.occurrence.name,
        survey_status: a.survey.status,
        survey_answers: String(a.survey.answers.length),
        survey_score: a.survey.answers[0].answer,
      });
    }

    const stats = await report(s.url, { report_type: 'attendance-statistics' });
    expect(stats.rows.map((r) => r['campaign_id'])).toEqual(['1', '2', 'all']);
    for (const row of stats.rows) {
      const mine = closed.filter((a) => row['campaign_id'] === 'all' || String(a.campaign_id) === row['campaign_id']);
      const scores = mine.map((a) => Number(a.survey.answers[0].answer));
      expect(row).toMatchObject({
        attendances: String(mine.length),
        with_attendant: String(mine.length),
        messages: String(mine.reduce((n, a) => n + a.messages.length, 0)),
        surveys: String(mine.length),
        surveys_completed: String(mine.length),
        surveys_declined: '0',
      });
      expect(Number(row['average_survey_score'])).toBeCloseTo(scores.reduce((x, y) => x + y, 0) / scores.length, 2);
    }
  });

  it('a period keeps out what is outside it', async () => {
    const before = await report(s.url, { report_type: 'official-messages', end_date: between });
    const after = await report(s.url, { report_type: 'official-messages', start_date: between });
    expect(before.rows.length).toBeGreaterThan(0);
    expect(after.rows.length).toBeGreaterThan(0);
    expect(new Set(before.rows.map((r) => r['campaign_id']))).toEqual(new Set(['1']));
    expect(new Set(after.rows.map((r) => r['campaign_id']))).toEqual(new Set(['2']));
    expect(before.rows.length + after.rows.length).toBe(attempts(one.all('/hsm')).size);
    expect(Date.parse(before.shown.end_date)).toBe(Date.parse(between));

    const attendancesBefore = await report(s.url, { report_type: 'attendance-history', end_date: between });
    expect(attendancesBefore.rows.length).toBe(one.all('/attendance').filter((a) => a.campaign_id === 1).length);
    expect(new Set(attendancesBefore.rows.map((r) => r['campaign_id']))).toEqual(new Set(['1']));
    const statsAfter = await report(s.url, { report_type: 'attendance-statistics', start_date: between });
    expect(statsAfter.rows.map((r) => r['campaign_id'])).toEqual(['2', 'all']);

    // Days are taken in -03:00, an end day whole: a day long past holds nothing.
    const old = await report(s.url, { report_type: 'official-messages', start_date: '2000-01-01', end_date: '2000-01-31' });
    expect(old.rows).toEqual([]);
    expect(old.shown).toMatchObject({ start_date: '2000-01-01T00:00:00.000-03:00', end_date: '2000-02-01T00:00:00.000-03:00' });
  });

  it('another company sees only its own', async () => {
    const own = attempts(two.all('/hsm'));
    expect(own.size).toBeGreaterThan(0);
    const messages = await report(s.url, { report_type: 'official-messages' }, KEY_2);
    expect(messages.rows).toHaveLength(own.size);
    expect(messages.rows.every((r) => r['campaign_id'] === '9' && r['from'] === '5521990000001' && r['business_id'] === '2')).toBe(true);
    const history = await report(s.url, { report_type: 'attendance-history' }, KEY_2);
    expect(history.rows).toHaveLength(two.all('/attendance').length);
    expect(history.rows.every((r) => r['campaign_id'] === '9')).toBe(true);
    const stats = await report(s.url, { report_type: 'attendance-statistics' }, KEY_2);
    expect(stats.rows.map((r) => r['campaign_id'])).toEqual(two.all('/attendance').length > 0 ? ['9', 'all'] : ['all']);
    // And company 1's reports hold nothing of company 2.
    const first = await report(s.url, { report_type: 'official-messages' });
    expect(first.rows.some((r) => r['campaign_id'] === '9' || r['from'] === '5521990000001')).toBe(false);
    // A report of company 1 is not found for company 2.
    expect((await api(s.url, `/reports/${first.created.report_id}/`, { key: KEY_2 })).status).toBe(404);
  });

  it('licenses, tickets-summary and ticket-detail end in report.error saying a generator must be registered', async () => {
    const types = ['licenses', 'tickets-summary', 'ticket-detail'];
    const ids: number[] = [];
    for (const report_type of types) {
      const { shown } = await report(s.url, { report_type, start_date: '2025-01-01' });
      expect(shown).toMatchObject({ report_type, status: 'error', file_url: null });
      expect(shown.error_message).toContain(`No generator is registered for report type "${report_type}"`);
      expect(shown.error_message).toContain('reportGenerators');
      ids.push(shown.report_id);
    }
    await waitFor(() => ids.every((id) => one.all('/reports').some((e) => e.report_id === id)), 'the report.error events');
    for (const id of ids) {
      const event = one.all('/reports').find((e) => e.report_id === id);
      expect(event).toMatchObject({ event: 'report.error', status: 'error' });
      expect(event.error_message).toMatch(/No generator is registered .* reportGenerators/);
    }
  });

  it('refuses a bad period, naming the field', async () => {
    const bad = async (body: Record<string, unknown>) => {
      const res = await api(s.url, '/reports/', { body });
      expect(res.status).toBe(422);
      return res.json.error.problems.map((p: { path: string }) => p.path);
    };
    expect(await bad({ report_type: 'official-messages', start_date: '2025-02-30' })).toEqual(['$.start_date']);
    expect(await bad({ report_type: 'official-messages', end_date: 1735732800000 })).toEqual(['$.end_date']);
    expect(await bad({ report_type: 'official-messages', start_date: '2025-02-02', end_date: '2025-02-01T00:00:00Z' })).toEqual(['$.end_date']);
    expect(await bad({ report_type: 'numbers', start_date: '2025-02-02' })).toEqual(['$.start_date']);
    const res = await api(s.url, '/reports/', { body: { report_type: 'official-messages', start_date: 'yesterday' } });
    expect(res.json.error.problems[0].message).toContain('a day YYYY-MM-DD');
  });
});

describe('report data options', () => {
  it('bad bounds are refused before anything is built, each named', () => {
    let thrown: unknown;
    try {
      buildServer({ engine: createEngine(testFleet()), logger: false, reportRetentionMs: 0, maxReportMessages: -1, maxReportAttendances: 1.5, maxReportRows: '10' as unknown as number });
    } catch (e) {
      thrown = e;
    }
    expect(isServerOptionsError(thrown)).toBe(true);
    expect((thrown as { problems: { message: string }[] }).problems.map((p) => p.message)).toEqual([
      'reportRetentionMs: expected an integer from 1 to 9007199254740991, got 0 (number)',
      'maxReportMessages: expected an integer from 0 to 9007199254740991, got -1 (number)',
      'maxReportAttendances: expected an integer from 0 to 9007199254740991, got 1.5 (number)',
      'maxReportRows: expected an integer from 1 to 9007199254740991, got "10" (string)',
    ]);
  });
});

describe('report size bound', () => {
  it('a period holding more rows than maxReportRows ends in report.error; statistics are not bounded by it', async () => {
    const s = await startServer({ maxReportRows: 2, channel: fastChannel({ serverProbability: 1, deviceProbability: 1, readProbability: 0 }) });
    try {
      expect((await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 3, contacts: contacts(3) } })).status).toBe(202);
      await waitFor(() => s.server.sendpool.idle() && s.channel.counts.sent === 3, 'three sent');
      const { shown } = await report(s.url, { report_type: 'official-messages' });
      expect(shown.status).toBe('error');
      expect(shown.error_message).toContain('The period holds 3 messages, more than the 2 rows a report may have (maxReportRows)');
      expect((await report(s.url, { report_type: 'attendance-statistics' })).shown.status).toBe('ready');
    } finally {
      await s.server.close();
    }
  });
});

describe('durable restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sendpool-reports-restart-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports the messages sent and attendances closed before the restart, and their later statuses after it', async () => {
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(testFleet()));
    const provider = quietProvider();
    const options = (): Parameters<typeof runServer>[0] => ({
      fleetFile,
      port: 0,
      dataDir: join(dir, 'data'),
      apiKeys: [{ key: KEY_1, companyId: 1 }],
      channel: provider.channel(),
      logger: false,
      handleSignals: false,
      metrics: false,
    });
    const rowsOf = async (url: string, type: string) => (await report(url, { report_type: type })).rows;

    const first = await runServer(options());
    try {
      expect((await api(first.address, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 4, contacts: contacts(3) } })).status).toBe(202);
      await waitFor(() => provider.sent.length === 3 && first.server.sendpool.idle(), 'three sent');
      provider.sink().messageStatus({ messageId: provider.sent[0]!, status: 'READ' });
      provider.sink().messageStatus({ messageId: provider.sent[1]!, status: 'REPLIED', blocklistResponse: false });
      const now = Date.now();
      provider.sink().attendanceClosed({
        messageId: provider.sent[1]!,
        attendanceId: 77,
        ticketId: 7007,
        ticketUuid: '9b2f4c1e-8a3d-4f6b-9c2e-1a2b3c4d5e6f',
        closedAt: now,
        messages: [
          { sender: 'client', type: 'text', text: 'Hi', at: now - 60_000 },
          { sender: { attendantId: 3 }, type: 'text', text: 'Hello', at: now - 30_000 },
        ],
        survey: null,
      });
      const before = await rowsOf(first.address, 'official-messages');
      expect(before.map((r) => r['status']).sort()).toEqual(['READ', 'REPLIED', 'SENT']);
    } finally {
      await first.close();
    }

    const second = await runServer(options());
    try {
      expect(second.restored).toBe(true);
      const rows = await rowsOf(second.address, 'official-messages');
      expect(rows).toHaveLength(3);
      expect(rows.map((r) => r['campaign_id'])).toEqual(['4', '4', '4']);
      expect(rows.map((r) => r['status']).sort()).toEqual(['READ', 'REPLIED', 'SENT']);
      const history = await rowsOf(second.address, 'attendance-history');
      expect(history).toEqual([expect.objectContaining({ id: '77', ticket_id: '7007', campaign_id: '4', duration_seconds: '60', messages: '2', user_id: '', survey_status: '' })]);
      // A later status of a message sent before the restart moves its row.
      const third = rows.find((r) => r['status'] === 'SENT')!;
      const messageId = provider.messageOf(Number(third['id']!))!;
      provider.sink().messageStatus({ messageId, status: 'DEVICE' });
      const after = await rowsOf(second.address, 'official-messages');
      expect(after.find((r) => r['id'] === third['id'])).toMatchObject({ status: 'DEVICE', device_datetime: expect.stringMatching(/-03:00$/) });
    } finally {
      await second.close();
    }
  });
});
