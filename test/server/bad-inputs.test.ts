/** Each endpoint's bad inputs, the 401 cases, limits, the intake bound and tenant isolation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { api, contacts, KEY_1, KEY_2, startServer, testFleet, waitFor, type Started } from './helpers.js';

function expectError(res: { status: number; json: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.json?.error?.code).toBe(code);
  expect(typeof res.json.error.message).toBe('string');
}

describe('authentication', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.server.close());

  const endpoints: [string, string, unknown?][] = [
    ['GET', '/messenger/businesses/'],
    ['POST', '/messenger/messages/', { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(1) }],
    ['POST', '/sms/messages/', [{ message: 'hi', phone: '5511987654321' }]],
    ['POST', '/messenger/config/', {}],
    ['GET', '/messenger/config/'],
    ['POST', '/reports/', { report_type: 'numbers' }],
    ['GET', '/reports/1/download/?token=x'],
    ['POST', '/operator/numbers/5511990000001/pause/', {}],
  ];
  for (const [method, path, body] of endpoints) {
    it(`${method} ${path}: 401 without a key, with a wrong key, with two keys`, async () => {
      expectError(await api(s.url, path, { method, key: null, body }), 401, 'missing_api_key');
      expectError(await api(s.url, path, { method, key: 'not-a-key-of-this-server', body }), 401, 'invalid_api_key');
      expectError(await api(s.url, path, { method, key: `${KEY_1}, ${KEY_1}`, body }), 401, 'invalid_api_key');
      expectError(await api(s.url, path, { method, key: '', body }), 401, 'missing_api_key');
    });
  }

  it('answers 404 and 405 with the error body', async () => {
    expectError(await api(s.url, '/nothing/here/'), 404, 'not_found');
    const res = await api(s.url, '/messenger/businesses/', { method: 'DELETE' });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toContain('GET');
  });
});

describe('bad inputs', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer({ limits: { maxContacts: 5, maxBodyBytes: 4096, maxSmsItems: 3 } });
  });
  afterAll(() => s.server.close());

  it('POST /messenger/messages/: not JSON, wrong type, too large, every schema problem', async () => {
    expectError(await api(s.url, '/messenger/messages/', { raw: '{"business_id":', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
    expectError(await api(s.url, '/messenger/messages/', { raw: 'business_id=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
    expectError(await api(s.url, '/messenger/messages/', { raw: JSON.stringify({ pad: 'x'.repeat(5000) }), headers: { 'content-type': 'application/json' } }), 413, 'body_too_large');
    const res = await api(s.url, '/messenger/messages/', { body: { business_id: 'one', template_type_id: 10, contacts: [{ phone_number: 5511987654321 }], extra: true } });
    expectError(res, 422, 'invalid_body');
    const paths = res.json.error.problems.map((p: any) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['$.business_id', '$.campaign_id', '$.contacts[0].phone_number', '$.extra']));
    expect(res.json.error.problem_count).toBe(res.json.error.problems.length);
  });

  it('a body that is not UTF-8: 400 invalid_json naming the first invalid byte, nothing stored as U+FFFD', async () => {
    const json = Buffer.from(JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: 1, contacts: [{ phone_number: '5511987654321', template_variables: ['NAME'] }] }));
    const at = json.indexOf('NAME');
    json[at] = 0xff;
    json[at + 1] = 0xfe;
    const res = await api(s.url, '/messenger/messages/', { raw: json, headers: { 'content-type': 'application/json' } });
    expectError(res, 400, 'invalid_json');
    expect(res.json.error.problems).toEqual([expect.objectContaining({ path: '$', expected: 'a body encoded in UTF-8', actual: `bytes that are not UTF-8 at byte ${at} (\\xff\\xfe\\x4d\\x45)` })]);
  });

  it('an optional field given as null is left out: the request is accepted, SMS too', async () => {
    const [contact] = contacts(1, 40);
    const res = await api(s.url, '/messenger/messages/', {
      body: { business_id: 1, template_type_id: 10, campaign_id: 41, bot_id: null, queue_id: null, contacts: [{ ...contact, document: null, data: null }] },
    });
    expect(res.status).toBe(202);
    expect(res.json.accepted).toBe(1);
    const sms = await api(s.url, '/sms/messages/', { body: [{ message: 'Hi', phone: '5511987654321', reference: null, url_callback_dlr: null }] });
    expect(sms.status).toBe(202);
  });

  it('a contact that breaks the schema is rejected alone: a numeric phone, an unknown field, not an object', async () => {
    const [good] = contacts(1, 50);
    const res = await api(s.url, '/messenger/messages/', {
      body: { business_id: 1, template_type_id: 10, campaign_id: 51, contacts: [{ phone_number: 5511987654321 }, good, { ...good, phone_number: '5511900000052', nickname: 'x' }, 'not a contact'] },
    });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ accepted: 1, rejected: 3, rejection_counts: { invalid_phone: 1, invalid_data: 2 } });
    expect(res.json.rejections.map((r: { index: number; reason: string; problems: { path: string }[] }) => [r.index, r.reason, r.problems[0]!.path])).toEqual([
      [0, 'invalid_phone', '$.contacts[0].phone_number'],
      [2, 'invalid_data', '$.contacts[2].nickname'],
      [3, 'invalid_data', '$.contacts[3]'],
    ]);
  });

  it('POST /messenger/messages/: contacts per request limit', async () => {
    const res = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(6) } });
    expectError(res, 422, 'invalid_body');
    expect(res.json.error.problems[0].path).toBe('$.contacts');
  });

  it("POST /messenger/messages/: unknown business, another company's business, unknown type", async () => {
    let res = await api(s.url, '/messenger/messages/', { body: { business_id: 99, template_type_id: 10, campaign_id: 1, contacts: contacts(1) } });
    expectError(res, 422, 'invalid_body');
    expect(res.json.error.problems[0]).toMatchObject({ path: '$.business_id', expected: 'the id of one of your businesses (1)' });
    res = await api(s.url, '/messenger/messages/', { body: { business_id: 2, template_type_id: 10, campaign_id: 1, contacts: contacts(1) } });
    expect(res.json.error.problems[0].path).toBe('$.business_id');
    res = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 77, campaign_id: 1, contacts: contacts(1) } });
    expectError(res, 422, 'invalid_body');
    expect(res.json.error.problems[0].path).toBe('$.template_type_id');
  });

  it('POST /messenger/messages/: bad contacts are rejected alone, with reasons', async () => {
    const res = await api(s.url, '/messenger/messages/', {
      body: {
        business_id: 1,
        template_type_id: 10,
        campaign_id: 3,
        contacts: [
          { phone_number: '5511987654321', template_variables: ['Ana'] },
          { phone_number: '123', template_variables: ['Bia'] },
          { phone_number: '5511987654321', template_variables: ['Ana'] },
          { phone_number: '5511987654322', template_variables: [] },
        ],
      },
    });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ accepted: 1, rejected: 3 });
    expect(res.json.rejections.map((r: any) => r.reason)).toEqual(['invalid_phone', 'duplicated', 'invalid_variables']);
  });

  it('POST /sms/messages/: not an array, too many items, private callback URL without the option', async () => {
    expectError(await api(s.url, '/sms/messages/', { body: { message: 'hi' } }), 422, 'invalid_body');
    const four = Array.from({ length: 4 }, () => ({ message: 'hi', phone: '5511987654321' }));
    expectError(await api(s.url, '/sms/messages/', { body: four }), 422, 'invalid_body');
    const res = await api(s.url, '/sms/messages/', { body: [{ message: '', phone: 'x', url_callback_dlr: 'ftp://a' }] });
    expectError(res, 422, 'invalid_body');
    expect(res.json.error.problems.map((p: any) => p.path)).toEqual(expect.arrayContaining(['$[0].message', '$[0].url_callback_dlr']));
  });

  it('POST /messenger/config/: unknown key, bad URL, metadata host', async () => {
    const res = await api(s.url, '/messenger/config/', { body: { url_hsm_callback: 'not a url', url_report_webhook: 'http://169.254.169.254/x', nope: 1 } });
    expectError(res, 422, 'invalid_body');
    expect(res.json.error.problems.map((p: any) => p.path).sort()).toEqual(['$.nope', '$.url_hsm_callback', '$.url_report_webhook']);
    expectError(await api(s.url, '/messenger/config/', { body: [] }), 422, 'invalid_body');
  });

  it('POST /reports/: unknown type, bad name, unknown field; report ids that do not exist', async () => {
    const res = await api(s.url, '/reports/', { body: { report_type: 'sales', report_name: '../etc/passwd', x: 1 } });
    expectError(res, 422, 'invalid_body');
    expect(res.json.error.problems.map((p: any) => p.path)).toEqual(['$.report_type', '$.report_name', '$.x']);
    expectError(await api(s.url, '/reports/999/'), 404, 'not_found');
    expectError(await api(s.url, '/reports/abc/download/?token=x'), 404, 'not_found');
  });

  it("operator endpoints: unknown number or template, another company's, bad pause end", async () => {
    expectError(await api(s.url, '/operator/numbers/5599999999999/pause/', { body: {} }), 404, 'not_found');
    expectError(await api(s.url, '/operator/numbers/5521990000001/pause/', { body: {} }), 404, 'not_found');
    expectError(await api(s.url, '/operator/templates/300/disable/', { body: {} }), 404, 'not_found');
    const res = await api(s.url, '/operator/numbers/5511990000001/pause/', { body: { until: 'yesterday', x: 1 } });
    expectError(res, 422, 'invalid_body');
    const ok = await api(s.url, '/operator/numbers/5511990000001/pause/', { body: { duration_seconds: 60 } });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ phone: '5511990000001', status: 'paused' });
    expect((await api(s.url, '/operator/numbers/5511990000001/resume/', { method: 'POST' })).json.status).toBe('active');
  });
});

describe('intake bound', () => {
  it('answers 429 with Retry-After when the queue is at its bound, and accepts again once it drains', async () => {
    const engine = createEngine(testFleet());
    for (const phone of ['5511990000001', '5511990000002', '5511990000003']) engine.setNumberStatus(phone, 'paused');
    const s = await startServer({ engine, maxQueuedContacts: 10 });
    try {
      const body = { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(8) };
      expect((await api(s.url, '/messenger/messages/', { body })).status).toBe(202);
      const res = await api(s.url, '/messenger/messages/', { body: { ...body, contacts: contacts(8, 100) } });
      expectError(res, 429, 'rate_limited');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(engine.stats().submitted).toBe(8); // the refused request changed nothing
      await api(s.url, '/operator/numbers/5511990000001/resume/', { method: 'POST' });
      await waitFor(() => s.server.sendpool.idle(), 'the queue to drain');
      expect((await api(s.url, '/messenger/messages/', { body: { ...body, contacts: contacts(8, 100) } })).status).toBe(202);
    } finally {
      await s.server.close();
    }
  });
});

describe('tenant isolation', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.server.close());

  it("a key sees only its company's businesses, configuration and reports", async () => {
    expect((await api(s.url, '/messenger/businesses/', { key: KEY_2 })).json.map((b: any) => b.id)).toEqual([2]);
    expect((await api(s.url, '/messenger/businesses/', { key: KEY_1 })).json.map((b: any) => b.id)).toEqual([1]);

    await api(s.url, '/messenger/config/', { key: KEY_1, body: { url_hsm_callback: 'https://one.example.com/hsm' } });
    expect((await api(s.url, '/messenger/config/', { key: KEY_2 })).json.url_hsm_callback).toBeNull();
    expect((await api(s.url, '/messenger/config/', { key: KEY_1 })).json.url_hsm_callback).toBe('https://one.example.com/hsm');
    expect(s.server.sendpool.webhookSecret(1)).not.toBe(s.server.sendpool.webhookSecret(2));

    const created = await api(s.url, '/reports/', { key: KEY_1, body: { report_type: 'numbers' } });
    expect(created.status).toBe(202);
    const id = created.json.report_id;
    let report: any;
    await waitFor(async () => {
      report = (await api(s.url, `/reports/${id}/`, { key: KEY_1 })).json;
      return report.status === 'ready';
    }, 'the report to be ready');
    expectError(await api(s.url, `/reports/${id}/`, { key: KEY_2 }), 404, 'not_found');
    const token = new URL(report.file_url).searchParams.get('token')!;
    // The other company's key with a genuine link: not found.
    expectError(await api(s.url, `/reports/${id}/download/?token=${encodeURIComponent(token)}`, { key: KEY_2 }), 404, 'not_found');
    const download = await api(s.url, `/reports/${id}/download/?token=${encodeURIComponent(token)}`, { key: KEY_1 });
    expect(download.status).toBe(200);
    expect(download.text).toContain('5511990000001');
    expect(download.text).not.toContain('5521990000001');
    expectError(await api(s.url, `/reports/${id}/download/?token=${encodeURIComponent(token.slice(0, -2))}xx`, { key: KEY_1 }), 422, 'invalid_body');
  });
});
