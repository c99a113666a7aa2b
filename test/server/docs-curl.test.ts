/**
 * The curl examples of docs/server.md (between the curl-examples markers) run against a server
 * started like `npm start` (examples/fleet.json, the demo key), and /metrics answers Prometheus
 * text. Each curl line is parsed (-X, -H, -d with single quotes) and replayed with fetch.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { api, startServer, waitFor, type Started } from './helpers.js';

const DEMO_KEY = 'sendpool-demo-key-local-only';

function words(line: string): string[] {
  const out: string[] = [];
  const re = /'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(re)) out.push(m[1] ?? m[2]!);
  return out;
}

function parseCurl(line: string) {
  const w = words(line);
  expect(w[0]).toBe('curl');
  let method: string | undefined;
  let url = '';
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < w.length; i++) {
    const a = w[i]!;
    if (a === '-X') method = w[++i];
    else if (a === '-H') {
      const [k, ...v] = w[++i]!.split(':');
      headers[k!.trim().toLowerCase()] = v.join(':').trim();
    } else if (a === '-d') body = w[++i];
    else if (a === '-s') continue;
    else url = a;
  }
  return { method: method ?? (body === undefined ? 'GET' : 'POST'), url, headers, body };
}

/** The curl lines between a document's curl-examples markers. */
function examplesOf(file: string): string[] {
  const doc = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('<!-- curl-examples:start -->'), doc.indexOf('<!-- curl-examples:end -->'));
  return [...section.matchAll(/```sh\n(curl [^\n]+)\n```/g)].map((m) => m[1]!);
}

const examples = examplesOf('docs/server.md');
const exampleFleet = () => JSON.parse(readFileSync(new URL('../../examples/fleet.json', import.meta.url), 'utf8'));

describe('docs/server.md curl examples', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer({ engine: createEngine(exampleFleet()), apiKeys: [{ key: DEMO_KEY, companyId: 1 }], allowPrivateWebhookTargets: false, drainTimeoutMs: 500 });
  });
  afterAll(() => s.server.close());

  it('has the examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(7);
  });

  it('every example answers as documented', async () => {
    const statuses: number[] = [];
    for (const line of examples) {
      const c = parseCurl(line);
      const res = await fetch(c.url.replace('http://127.0.0.1:3000', s.url), { method: c.method, headers: c.headers, ...(c.body === undefined ? {} : { body: c.body }) });
      const json: any = await res.json();
      statuses.push(res.status);
      if (c.url.endsWith('/messenger/messages/')) expect(json).toMatchObject({ accepted: 1, rejected: 1, rejections: [{ index: 1, reason: 'invalid_phone' }] });
      if (!('x-api-key-id' in c.headers)) expect(json.error.code).toBe('missing_api_key');
    }
    expect(statuses).toEqual([200, 200, 202, 202, 202, 202, 200, 401]);
  });

  it("the README's examples answer as the README shows", async () => {
    const readme = examplesOf('README.md');
    expect(readme).toHaveLength(3);
    const answers: unknown[] = [];
    // A server of its own: the README sends a phone that docs/server.md's examples send to the same
    // campaign, which a second time is rejected as duplicated.
    const fresh = await startServer({ engine: createEngine(exampleFleet()), apiKeys: [{ key: DEMO_KEY, companyId: 1 }], drainTimeoutMs: 500 });
    try {
      for (const line of readme) {
        const c = parseCurl(line);
        const res = await fetch(c.url.replace('http://127.0.0.1:3000', fresh.url), { method: c.method, headers: c.headers, ...(c.body === undefined ? {} : { body: c.body }) });
        answers.push([res.status, await res.json()]);
      }
    } finally {
      await fresh.server.close();
    }
    const [businesses, send, noKey] = answers as [number, any][];
    expect(businesses![0]).toBe(200);
    expect(businesses![1][0]).toMatchObject({
      id: 1,
      name: 'Acme',
      template_types: [
        { id: 10, name: 'billing' },
        { id: 20, name: 'welcome' },
      ],
    });
    expect(send).toEqual([202, expect.objectContaining({ accepted: 1, rejected: 1, rejections: [expect.objectContaining({ index: 1, reason: 'invalid_phone' })] })]);
    expect(noKey).toEqual([401, { error: { code: 'missing_api_key', message: 'The x-api-key-id header is missing.' } }]);
  });

  it("the README's businesses answer is what a freshly started server answers, whole", async () => {
    // The examples above sent a message and paused a template: a new server answers as npm start does.
    const fresh = await startServer({ engine: createEngine(exampleFleet()), apiKeys: [{ key: DEMO_KEY, companyId: 1 }] });
    try {
      const readmeDoc = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
      const shown = /```sh\n(curl -s -H [^\n]+\/messenger\/businesses\/)\n```\n\n```json\n([^\n]+)\n```/.exec(readmeDoc);
      expect(shown, "the README's businesses answer").not.toBeNull();
      const c = parseCurl(shown![1]!);
      const res = await fetch(c.url.replace('http://127.0.0.1:3000', fresh.url), { headers: c.headers });
      expect(JSON.parse(shown![2]!)).toEqual(await res.json());
    } finally {
      await fresh.server.close();
    }
  });

  it("GET /metrics answers Prometheus text with the server's metrics", async () => {
    await waitFor(() => s.server.sendpool.engine.stats().sent >= 1, 'a send');
    const res = await api(s.url, '/metrics', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    for (const name of [
      'sendpool_assignments_total{number=',
      'sendpool_sends_total{number=',
      'sendpool_output{business="1",template_type="10"}',
      'sendpool_queue_depth{queue="queued"}',
      'sendpool_http_request_duration_seconds_bucket',
      'sendpool_contacts_total{kind="accepted"}',
    ]) {
      expect(res.text).toContain(name);
    }
    expect(res.text).not.toContain(DEMO_KEY);
    expect(res.text).not.toContain('5511987654321'); // no contact data
  });
});
