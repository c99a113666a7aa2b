/**
 * The operator dashboard in a real browser (Chromium driven by playwright-core): the page loads
 * under its Content-Security-Policy without a complaint, shows the figures GET /messenger/businesses/
 * answers, pauses a number from the page (output falls on the page and in the API), shows a
 * company's key only its own fleet, and follows a campaign as it runs. Every wait is for a
 * condition on the page or the server, never a fixed time.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { api, contacts, fastChannel, KEY_1, KEY_2, startServer, testFleet, waitFor, WAIT_BOUND_MS } from '../server/helpers.js';
import { startSwitchedReceiver } from '../server/dead-letter-receiver.js';
import { chromiumPath, launch, useKey, watchProblems } from './browser.js';

const OPERATOR_KEY = 'test-operator-key-000000001';
const exampleFleet = () => JSON.parse(readFileSync(resolve(import.meta.dirname, '../../examples/fleet.json'), 'utf8'));
const keys = [
  { key: KEY_1, companyId: 1, label: 'one' },
  { key: KEY_2, companyId: 2, label: 'two' },
  { key: OPERATOR_KEY, operator: true as const, label: 'operators' },
];

/** Numbers the page shows in a column, by row attribute. */
async function column(page: Page, rows: string, attribute: string, cell: string): Promise<Record<string, number>> {
  return page.$$eval(`${rows} tr[${attribute}]`, (trs, [attr, sel]) => Object.fromEntries(trs.map((tr) => [tr.getAttribute(attr), Number(tr.querySelector(sel)!.getAttribute('data-value'))])), [
    attribute,
    cell,
  ] as const);
}

const waitOpts = { timeout: WAIT_BOUND_MS, polling: 50 } as const;

/**
 * The page's globals the predicates below read (the tests' TypeScript has no DOM library). Module
 * scoped: nothing else sees them. The predicates are functions, not strings: the page's CSP forbids
 * evaluating strings, Playwright's own calls included.
 */
interface PageElement {
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageElement | null;
  textContent: string | null;
}
declare const document: { querySelector(selector: string): PageElement | null; querySelectorAll(selector: string): { length: number } };
declare const sessionStorage: { getItem(key: string): string | null };
declare const localStorage: { length: number };

/** Waits until `predicate(arg)` holds in the page. */
async function until(page: Page, predicate: (arg: number) => boolean, arg = 0): Promise<void> {
  await page.waitForFunction(predicate, arg, waitOpts);
}

describe.skipIf(chromiumPath === undefined)('the operator dashboard in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('loads under its Content-Security-Policy and shows the example fleet’s figures as GET /messenger/businesses/ answers them', async () => {
    const s = await startServer({ fleet: exampleFleet(), apiKeys: keys });
    const page = await browser.newPage();
    const problems = watchProblems(page);
    try {
      const response = await page.goto(`${s.url}/dashboard/`);
      expect(response!.status()).toBe(200);
      expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
      await useKey(page, KEY_1);
      await until(page, () => document.querySelectorAll('#pools tr[data-pool]').length === 3);

      const businesses = (await api(s.url, '/messenger/businesses/')).json as { id: number; template_types: { id: number; output: number }[] }[];
      const expected = Object.fromEntries(businesses.flatMap((b) => b.template_types.map((t) => [`${b.id}:${t.id}`, t.output])));
      expect(expected).toEqual({ '1:10': 3000, '1:20': 3000, '2:10': 80 });
      expect(await column(page, '#pools', 'data-pool', '.output')).toEqual(expected);
      // The total counts each number once: business 1's three numbers serve both its types.
      expect(Number(await page.getAttribute('#total-output', 'data-value'))).toBe(3000 + 80);
      expect(await page.textContent('#scope')).toBe('company 1');
      // Every number of the company, its windows drawn as bars.
      expect(await page.$$eval('#numbers tr[data-phone]', (trs) => trs.map((tr) => tr.getAttribute('data-phone')))).toEqual(['5511990000001', '5511990000002', '5511990000003', '5521990000001']);
      expect(await page.$$eval('#numbers tr[data-phone="5521990000001"] .window', (ws) => ws.map((w) => w.className))).toEqual(['window second', 'window hour', 'window day']);
      // The key lives in this tab's sessionStorage only, and nothing was refused (a CSP violation is a console error).
      expect(await page.evaluate(() => sessionStorage.getItem('sendpool.dashboard.key'))).toBe(KEY_1);
      expect(await page.evaluate(() => localStorage.length)).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await s.server.close();
    }
  });

  it('pauses a number from the page after a confirmation: the output shown and the API’s fall by its share, and come back on resume', async () => {
    const s = await startServer({ fleet: exampleFleet(), apiKeys: keys });
    const page = await browser.newPage();
    const problems = watchProblems(page);
    const apiOutput = async () => ((await api(s.url, '/messenger/businesses/')).json as { id: number; template_types: { id: number; output: number }[] }[])[0]!.template_types[0]!.output;
    const shown = () => page.getAttribute('#pools tr[data-pool="1:10"] .output', 'data-value').then(Number);
    try {
      await page.goto(`${s.url}/dashboard/`);
      await useKey(page, KEY_1);
      await page.waitForSelector('#numbers tr[data-phone="5511990000001"] button[data-action=pause]', waitOpts);
      expect(await shown()).toBe(3000);

      await page.click('#numbers tr[data-phone="5511990000001"] button[data-action=pause]');
      await page.waitForSelector('#confirm[open]', waitOpts);
      expect(await page.textContent('#confirm-text')).toContain('5511990000001');
      await page.selectOption('#confirm-duration', '3600');
      await page.click('#confirm-ok');
      await until(page, () => document.querySelector('#pools tr[data-pool="1:10"] .output')?.getAttribute('data-value') === '2000');
      expect(await apiOutput()).toBe(2000);
      const paused = await page.waitForSelector('#numbers tr[data-phone="5511990000001"][data-status=paused]', waitOpts);
      expect(await paused.textContent()).toMatch(/paused until .*by an operator/);
      const number = (await api(s.url, '/operator/numbers/')).json.find((n: { phone: string }) => n.phone === '5511990000001');
      expect(number.status).toBe('paused');
      expect(number.paused_until).toBeGreaterThan(Date.now() + 3_500_000);

      await page.click('#numbers tr[data-phone="5511990000001"] button[data-action=resume]');
      await page.waitForSelector('#confirm[open]', waitOpts);
      await page.click('#confirm-ok');
      await until(page, () => document.querySelector('#pools tr[data-pool="1:10"] .output')?.getAttribute('data-value') === '3000');
      expect(await apiOutput()).toBe(3000);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await s.server.close();
    }
  });

  it('marks a number whose token the provider refuses as blocked, with the code', async () => {
    const refused = '5511990000002';
    const channel = fastChannel();
    const send = channel.send.bind(channel);
    channel.send = async (m) => (m.phone === refused ? { status: 'failed', code: 190, refused: true, reason: 'Error validating access token' } : send(m));
    const s = await startServer({ fleet: exampleFleet(), apiKeys: keys, channel });
    const page = await browser.newPage();
    const problems = watchProblems(page);
    try {
      expect(
        (
          await api(s.url, '/messenger/messages/', {
            body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(6).map((c) => ({ ...c, template_variables: ['Ana', 'R$ 1'] })) },
          })
        ).status,
      ).toBe(202);
      await waitFor(async () => (await api(s.url, '/dashboard/api/numbers/')).json.numbers.some((n: { blocked: unknown }) => n.blocked !== null), 'a number blocked');
      await page.goto(`${s.url}/dashboard/`);
      await useKey(page, KEY_1);
      const pill = await page.waitForSelector(`#numbers tr[data-phone="${refused}"] [data-blocked=credentials]`, waitOpts);
      expect(await pill.textContent()).toBe('blocked: credentials refused (code 190)');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await s.server.close();
    }
  });

  it('shows a company’s key only its own numbers, templates and pools; an operator key shows every company’s', async () => {
    const s = await startServer({ apiKeys: keys });
    const page = await browser.newPage();
    const phones = () => page.$$eval('#numbers tr[data-phone]', (trs) => trs.map((tr) => tr.getAttribute('data-phone')));
    try {
      await page.goto(`${s.url}/dashboard/`);
      await useKey(page, KEY_2);
      await until(page, () => document.querySelector('#scope')?.textContent === 'company 2' && document.querySelectorAll('#numbers tr[data-phone]').length > 0);
      expect(await phones()).toEqual(['5521990000001']);
      expect(await page.$$eval('#pools tr[data-pool]', (trs) => trs.map((tr) => tr.getAttribute('data-pool')))).toEqual(['2:10']);
      expect(await page.$$eval('#templates tr[data-template]', (trs) => trs.map((tr) => tr.getAttribute('data-template')))).toEqual(['300']);
      // The API behind it answers the same scope, and the operator endpoints refuse the other company's number.
      expect((await api(s.url, '/dashboard/api/numbers/', { key: KEY_2 })).json.numbers.map((n: { phone: string }) => n.phone)).toEqual(['5521990000001']);
      expect((await api(s.url, '/operator/numbers/5511990000001/pause/', { key: KEY_2, method: 'POST' })).status).toBe(404);

      await useKey(page, OPERATOR_KEY);
      await until(page, () => document.querySelectorAll('#numbers tr[data-phone]').length === 4);
      expect(await page.textContent('#scope')).toBe('operator · every company');
      expect(await phones()).toEqual(['5511990000001', '5511990000002', '5511990000003', '5521990000001']);
      expect(await page.textContent('#numbers tr[data-phone="5521990000001"]')).toContain('company 2');

      await useKey(page, 'not-a-key-of-this-server-00');
      await until(page, () => document.querySelector('#live')?.textContent === 'key refused');
      expect(await page.textContent('#error')).toContain('does not carry a valid API key');
    } finally {
      await page.close();
      await s.server.close();
    }
  });

  it('follows a campaign as it runs: its progress rises on the page until it is done', async () => {
    // 3 numbers at 10 messages a second: 600 contacts take about 20 s, many of the page's polls even
    // on a loaded machine (the pace is the numbers' windows, in real time).
    const s = await startServer({ engine: createEngine(testFleet(10)), apiKeys: keys, channel: fastChannel(), dashboard: { sampleIntervalMs: 200 } });
    const page = await browser.newPage();
    const problems = watchProblems(page);
    const processed = () => page.getAttribute('#campaigns tr[data-campaign="1:42"]', 'data-processed').then(Number);
    try {
      await page.goto(`${s.url}/dashboard/`);
      await useKey(page, KEY_1);
      await page.waitForSelector('#campaigns tr.empty', waitOpts);
      const send = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 42, contacts: contacts(600) } });
      expect(send.status).toBe(202);

      await until(page, () => {
        const n = Number(document.querySelector('#campaigns tr[data-campaign="1:42"]')?.getAttribute('data-processed') ?? 0);
        return n > 0 && n < 600;
      });
      const first = await processed();
      // While it runs: an ETA from the pool's forecast, a stacked bar with sent and remaining contacts.
      expect(await page.textContent('#campaigns tr[data-campaign="1:42"] .eta')).toMatch(/^in \d|^sending the last ones$/);
      // (The simulated channel also lets a few expire or fail as not on the channel: other segments.)
      const segments = await page.$$eval('#campaigns tr[data-campaign="1:42"] .stack span', (ss) => ss.map((x) => x.getAttribute('data-segment')));
      expect(segments[0]).toBe('sent');
      expect(segments.at(-1)).toBe('remaining');
      await until(page, (before) => Number(document.querySelector('#campaigns tr[data-campaign="1:42"]')?.getAttribute('data-processed') ?? 0) > before, first);
      const second = await processed();
      expect(second).toBeGreaterThan(first);
      await until(page, () => document.querySelector('#campaigns tr[data-campaign="1:42"] .eta')?.textContent === 'done');
      expect(await processed()).toBe(600);
      await waitFor(() => s.server.sendpool.idle(), 'the server idle');
      // The output chart has samples of the run (the page keeps them between polls).
      expect(await page.$$eval('#total-chart polyline', (ls) => ls[0]!.getAttribute('points')!.split(' ').length)).toBeGreaterThan(2);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await s.server.close();
    }
  });

  it('lists dead letters with their last answer and replays one, then all, after a confirmation', async () => {
    const receiver = await startSwitchedReceiver();
    const s = await startServer({ apiKeys: keys, outbox: { initialDelayMs: 20, maxDelayMs: 50, probeIntervalMs: 20, maxAgeMs: 300, attemptTimeoutMs: 2_000 }, drainTimeoutMs: 100 });
    const page = await browser.newPage();
    const problems = watchProblems(page);
    try {
      expect((await api(s.url, '/messenger/config/', { body: { url_report_webhook: `${receiver.url}/reports` } })).status).toBe(200);
      for (let i = 0; i < 2; i++) expect((await api(s.url, '/reports/', { body: { report_type: 'numbers' } })).status).toBe(202);
      await waitFor(async () => (await api(s.url, '/messenger/webhooks/dead-letters/')).json.dead_letters.length === 2, 'two dead letters');
      const [newest, oldest] = (await api(s.url, '/messenger/webhooks/dead-letters/')).json.dead_letters;
      await page.goto(`${s.url}/dashboard/`);
      await useKey(page, KEY_1);
      await until(page, () => document.querySelectorAll('#dead-letters tr[data-event-id]').length === 2);
      expect(await page.$$eval('#dead-letters tr[data-event-id]', (trs) => trs.map((tr) => tr.getAttribute('data-event-id')))).toEqual([newest.event_id, oldest.event_id]);
      const row = `#dead-letters tr[data-event-id="${oldest.event_id}"]`;
      expect(await page.textContent(`${row} .last-error`)).toMatch(/^HTTP 500/);
      expect(await page.textContent(row)).toContain(`${receiver.url}/reports`);
      expect(await page.textContent(row)).toMatch(/ago/);

      receiver.failing = false;
      await page.click(`${row} button[data-action=replay]`);
      await page.waitForSelector('#confirm[open]', waitOpts);
      expect(await page.textContent('#confirm-text')).toContain(oldest.event_id);
      await page.click('#confirm-ok');
      await until(page, () => document.querySelectorAll('#dead-letters tr[data-event-id]').length === 1);
      await waitFor(() => receiver.accepted.some((a) => a.id === oldest.event_id), 'the replayed event delivered');

      await page.click('#dead-letters-replay-all');
      await page.waitForSelector('#confirm[open]', waitOpts);
      await page.click('#confirm-ok');
      await until(page, () => document.querySelectorAll('#dead-letters tr[data-event-id]').length === 0);
      await waitFor(() => receiver.accepted.some((a) => a.id === newest.event_id), 'the other replayed event delivered');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await s.server.close();
      await receiver.close();
    }
  });
});
