/**
 * Takes docs/dashboard.png: the operator dashboard during a campaign, `npx tsx scripts/dashboard-screenshot.ts`.
 *
 * The server runs examples/fleet.json on the simulated channel with a manual clock that moves 50 s
 * of server time per 100 ms, so about 40 minutes of a working day (campaigns, a number paused by an
 * operator, a template the provider paused, a webhook receiver down) pass in under a minute and the
 * output chart has a history to show. Chromium from SENDPOOL_CHROMIUM or /usr/bin/chromium.
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createEngine, ManualClock } from '../src/index.js';
import { buildServer, createSimulatedChannel } from '../src/server/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const KEY = 'sendpool-demo-key-local-only';
const MINUTE = 60_000;
const chromiumPath = [process.env.SENDPOOL_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p !== undefined && p !== '' && existsSync(p));
if (chromiumPath === undefined) throw new Error('no Chromium: set SENDPOOL_CHROMIUM or apt-get install -y chromium');

const tick = () => new Promise((r) => setTimeout(r, 100));

// A receiver that answers every webhook, and a port where nothing listens (a receiver that is down).
const up = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
const down = http.createServer();
await new Promise<void>((r) => down.listen(0, '127.0.0.1', r));
const downPort = (down.address() as AddressInfo).port;
await new Promise<void>((r) => down.close(() => r()));

const fleet: unknown = JSON.parse(readFileSync(`${root}examples/fleet.json`, 'utf8'));
const clock = new ManualClock(Date.now() - 42 * MINUTE);
const channel = createSimulatedChannel({ seed: 7, sendDelayMs: { min: 1, max: 5 }, statusDelayMs: { min: 20, max: 200 } });
const server = buildServer({
  engine: createEngine(fleet, { clock }),
  clock,
  channel,
  apiKeys: [{ key: KEY, companyId: 1, label: 'demo' }],
  allowPrivateWebhookTargets: true,
  logger: false,
  processMetrics: false,
  campaignBatchIntervalMs: 1000,
  dashboard: { sampleIntervalMs: 100 },
});
await server.listen({ port: 0, host: '127.0.0.1' });
const url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
const call = async (path: string, body?: unknown) => {
  const res = await fetch(url + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key-id': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
};
const contacts = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => ({ phone_number: `55119${String(70_000_000 + from + i)}`, template_variables: [`Client ${from + i}`, `R$ ${(10 + ((from + i) % 90)).toFixed(2)}`] }));
/** Moves the server's clock on by `minutes`, 50 s a step, letting the server work between steps. */
const pass = async (minutes: number) => {
  for (let t = 0; t < minutes * MINUTE; t += 50_000) {
    clock.advance(50_000);
    server.sendpool.wake();
    await tick();
  }
};

await call('/messenger/config/', { url_hsm_callback: `http://127.0.0.1:${(up.address() as AddressInfo).port}/hsm`, url_campaign_webhook: `http://127.0.0.1:${downPort}/campaigns` });
await pass(4);
const oneValue = (list: ReturnType<typeof contacts>) => list.map((c) => ({ ...c, template_variables: [c.template_variables[0]!] }));
await call('/messenger/messages/', { business_id: 1, template_type_id: 20, campaign_id: 11, contacts: oneValue(contacts(1200, 0)) });
await pass(8);
await call('/messenger/messages/', { business_id: 2, template_type_id: 10, campaign_id: 12, contacts: oneValue(contacts(900, 5000)) });
await pass(6);
await call('/operator/numbers/5511990000003/pause/', { duration_seconds: 3600 });
channel.pauseTemplate(101); // the provider pauses it: sends with it fail with 132015 and go over to billing_a
await call('/messenger/messages/', { business_id: 1, template_type_id: 10, campaign_id: 7, max_retries: 2, retry_interval: 30, contacts: contacts(3500, 10_000) });
await pass(24);

const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
await page.goto(`${url}/dashboard/`);
await page.fill('#key-input', KEY);
await page.click('#key-form button[type=submit]');
await page.waitForSelector('#campaigns tr[data-campaign="1:7"]', { timeout: 60_000 });
await page.waitForSelector('#webhooks tr[data-origin] .pill.down', { timeout: 60_000 });
// Two more polls, so the page shows figures a moment old at most.
for (let i = 0; i < 2; i++) {
  const before = await page.getAttribute('body', 'data-updated');
  await page.waitForFunction((b) => (globalThis as unknown as { document: { body: { dataset: { updated?: string } } } }).document.body.dataset.updated !== b, before, { timeout: 60_000 });
}
await page.screenshot({ path: `${root}docs/dashboard.png`, fullPage: true });
console.log('wrote docs/dashboard.png');
await browser.close();
await server.close();
up.close();
