/**
 * `sendpool serve --channel whatsapp`: credentials from the environment or a file, checked before
 * anything starts and never echoed; a fleet without WhatsApp ids refused with their paths; and a
 * real server process sending through a local fake Graph API and answering Meta's handshake, with
 * no secret in its output.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, contacts, testFleet, waitFor } from '../server/helpers.js';
import { ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN, deliver, graphAccount, startFakeGraph, statusNotification, whatsappFleet, type FakeGraph } from '../server/whatsapp-fake-graph.js';
import { BIN, ROOT, scratch, startServe } from './helpers.js';

const API_KEY = 'cli-serve-whatsapp-key-company-1';
const fleet = whatsappFleet(testFleet());
const dir = scratch({
  'fleet.json': fleet,
  'bare-fleet.json': testFleet(),
  'credentials.json': { accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN },
  'partial.json': { accessToken: ACCESS_TOKEN },
  'extra.json': { accessToken: ACCESS_TOKEN, token: 'x' },
});
const SECRETS = { SENDPOOL_WHATSAPP_ACCESS_TOKEN: ACCESS_TOKEN, SENDPOOL_WHATSAPP_APP_SECRET: APP_SECRET, SENDPOOL_WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN };
const NO_SECRETS = { SENDPOOL_WHATSAPP_ACCESS_TOKEN: '', SENDPOOL_WHATSAPP_APP_SECRET: '', SENDPOOL_WHATSAPP_VERIFY_TOKEN: '' };

function serve(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [BIN, 'serve', ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('serve --channel whatsapp: bad configuration exits 2 before anything starts', () => {
  it.each([
    [['--channel', 'sms'], {}, '--channel: expected "simulated" or "whatsapp", got "sms"'],
    [['--whatsapp-credentials', join(dir, 'credentials.json')], {}, '--whatsapp-credentials: needs --channel whatsapp'],
    [['--channel', 'whatsapp'], NO_SECRETS, '--channel whatsapp: needs accessToken: set SENDPOOL_WHATSAPP_ACCESS_TOKEN or give "accessToken" in --whatsapp-credentials FILE'],
    [
      ['--channel', 'whatsapp'],
      { ...SECRETS, SENDPOOL_WHATSAPP_APP_SECRET: 'short-secret' },
      'SENDPOOL_WHATSAPP_APP_SECRET: expected a string of 16 to 512 characters without whitespace, got a string of 12 characters',
    ],
    [['--channel', 'whatsapp', '--whatsapp-credentials', join(dir, 'partial.json')], NO_SECRETS, '--channel whatsapp: needs appSecret'],
    [['--channel', 'whatsapp', '--whatsapp-credentials', join(dir, 'extra.json')], NO_SECRETS, 'no such field "token" (known: accessToken, appSecret, verifyToken)'],
    [['--channel', 'whatsapp', '--whatsapp-credentials', join(dir, 'missing.json')], NO_SECRETS, 'cannot read: no such file'],
    [['--channel', 'whatsapp', '--graph-url', 'graph.facebook.com'], SECRETS, '--graph-url: expected an http or https URL'],
    [['--channel', 'whatsapp', '--graph-api-version', '23'], SECRETS, '--graph-api-version: expected a Graph API version such as v23.0, got "23"'],
  ] as [string[], Record<string, string>, string][])('%j', (flags, env, message) => {
    const r = serve([join(dir, 'fleet.json'), '--memory', ...flags], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    for (const secret of [ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN, 'short-secret']) expect(r.stderr).not.toContain(secret);
  });

  it('refuses a fleet without WhatsApp ids, naming every missing one', () => {
    const r = serve([join(dir, 'bare-fleet.json'), '--memory', '--channel', 'whatsapp', '--port', '0'], SECRETS);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("fleet.$.businesses[0].numbers[0].whatsapp: expected the number's WhatsApp ids");
    expect(r.stderr).toContain('fleet.$.templates[3].whatsapp');
    for (const secret of [ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN]) expect(r.stderr).not.toContain(secret);
  });
});

describe('sendpool serve --channel whatsapp', () => {
  let graph: FakeGraph;
  beforeAll(async () => {
    graph = await startFakeGraph(graphAccount(fleet));
  });
  afterAll(async () => {
    await graph.close();
  });

  it('sends through the Graph API and serves Meta’s webhooks; no secret in its output', async () => {
    const serving = await startServe([join(dir, 'fleet.json'), '--port', '0', '--memory', '--channel', 'whatsapp', '--whatsapp-credentials', join(dir, 'credentials.json'), '--graph-url', graph.url], {
      SENDPOOL_API_KEYS: `1:${API_KEY}`,
      ...NO_SECRETS,
    });
    try {
      await waitFor(() => serving.stderr().includes(`channel whatsapp; Meta's webhooks at ${serving.url}/whatsapp/webhook`), 'the channel line');
      const hook = `${serving.url}/whatsapp/webhook`;
      const handshake = await fetch(`${hook}?hub.mode=subscribe&hub.challenge=42&hub.verify_token=${VERIFY_TOKEN}`);
      expect(await handshake.text()).toBe('42');

      const sent = await api(serving.url, '/messenger/messages/', { key: API_KEY, body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(30) } });
      expect(sent.status, sent.text).toBe(202);
      await waitFor(() => graph.requests.filter((r) => r.wamid !== undefined).length === 30, 'thirty sends accepted by the platform');
      expect(graph.requests.every((r) => r.problems.length === 0)).toBe(true);

      const first = graph.requests[0]!;
      const number = graphAccount(fleet).numbers.find((n) => n.phoneNumberId === first.phoneNumberId)!;
      expect((await deliver(hook, statusNotification(number, { wamid: first.wamid!, status: 'delivered', recipient: first.body.to, opaque: first.body.biz_opaque_callback_data }))).status).toBe(200);
      expect((await deliver(hook, statusNotification(number, { wamid: first.wamid!, status: 'read', recipient: first.body.to }), { secret: 'forged-secret-0000000000' })).status).toBe(401);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
    for (const secret of [ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN]) expect(serving.stderr()).not.toContain(secret);
  });

  it('takes the credentials from the environment and shows none of them, whatever it logs', async () => {
    const serving = await startServe([join(dir, 'fleet.json'), '--port', '0', '--memory', '--channel', 'whatsapp', '--graph-url', graph.url], { SENDPOOL_API_KEYS: `1:${API_KEY}`, ...SECRETS });
    try {
      await waitFor(() => serving.stderr().includes('channel whatsapp'), 'the channel line');
      const hook = `${serving.url}/whatsapp/webhook`;
      expect(await (await fetch(`${hook}?hub.mode=subscribe&hub.challenge=7&hub.verify_token=${VERIFY_TOKEN}`)).text()).toBe('7');
      expect((await fetch(`${hook}?hub.mode=subscribe&hub.challenge=7&hub.verify_token=${VERIFY_TOKEN}x`)).status).toBe(403);
      const sent = await api(serving.url, '/messenger/messages/', { key: API_KEY, body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(3, 100) } });
      expect(sent.status, sent.text).toBe(202);
      await waitFor(() => graph.requests.filter((r) => r.wamid !== undefined && r.body?.to === contacts(1, 102)[0]!.phone_number).length === 1, 'the sends accepted');
      const number = graphAccount(fleet).numbers[0]!;
      expect((await deliver(hook, statusNotification(number, { wamid: 'wamid.x', status: 'read', recipient: '5511980000000' }), { secret: 'forged-secret-0000000000' })).status).toBe(401);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
    for (const secret of [ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN]) expect(serving.stderr()).not.toContain(secret);
  });
});
