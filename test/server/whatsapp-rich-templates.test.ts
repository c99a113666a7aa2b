/**
 * Rich templates through the real channel and the whole server, over HTTP, against the fake Graph
 * API checking every component as the platform does (132000 / 131008 otherwise): a campaign on a
 * type whose templates have an image header and URL and quick reply buttons, named parameters with
 * a text header and a copy code button, and a template the platform does not have in the
 * language the fleet says (132001): that template is disabled and the type's others carry the
 * campaign, without one FAILED (there is no language fallback, docs/decisions.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWhatsAppChannel } from '../../src/server/channels/whatsapp/index.js';
import type { SimulatedChannel } from '../../src/server/index.js';
import { api, startReceiver, startServer, testFleet, waitFor, type Receiver, type Started } from './helpers.js';
import { ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN, startFakeGraph, whatsappFleet, type FakeGraph, type GraphTemplate } from './whatsapp-fake-graph.js';

/** Business 1's three templates of type 10 take three values: a name, an amount, a payment code. */
function richFleet() {
  const fleet = whatsappFleet(testFleet());
  const [a, b, c] = fleet.templates;
  a.text = 'A: Hi {{1}}, your bill of {{2}} is due. Pay at https://pay.example.com/{{3}}';
  a.whatsapp = {
    language: 'pt_BR',
    components: {
      header: { type: 'image', link: 'https://cdn.example.com/bill.png' },
      buttons: [
        { type: 'quick_reply', index: 1, payload: 'STOP' },
        { type: 'url', index: 0, variable: 2 },
      ],
    },
  };
  b.text = 'B: Bill for {{1}}: {{1}}, {{2}} is due. Code {{3}}';
  b.whatsapp = {
    language: 'pt_BR',
    components: {
      header: { type: 'text', variable: 0, parameterName: 'customer_name' },
      body: [
        { variable: 0, parameterName: 'customer_name' },
        { variable: 1, parameterName: 'amount' },
      ],
      buttons: [{ type: 'copy_code', index: 0, variable: 2 }],
    },
  };
  c.text = 'C: Dear {{1}}, {{2}} is due ({{3}}).';
  // Approved in pt_BR only: the platform answers 132001 for en_US.
  c.whatsapp = { language: 'en_US' };
  return fleet;
}

/** The approved templates as the Message Templates API returns their components. */
const approved: GraphTemplate[] = [
  {
    name: 'billing_a',
    language: 'pt_BR',
    placeholders: 2,
    components: [
      { type: 'HEADER', format: 'IMAGE' },
      { type: 'BODY', text: 'Hi {{1}}, your bill of {{2}} is due.' },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'URL', text: 'Pay', url: 'https://pay.example.com/{{1}}' },
          { type: 'QUICK_REPLY', text: 'Stop' },
        ],
      },
    ],
  },
  {
    name: 'billing_b',
    language: 'pt_BR',
    placeholders: 2,
    parameterFormat: 'NAMED',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Bill for {{customer_name}}' },
      { type: 'BODY', text: '{{customer_name}}, {{amount}} is due.' },
      { type: 'BUTTONS', buttons: [{ type: 'COPY_CODE', example: 'PAY123' }] },
    ],
  },
  { name: 'billing_c', language: 'pt_BR', placeholders: 3 },
];

describe('rich templates through the WhatsApp channel', () => {
  const fleet = richFleet();
  let graph: FakeGraph;
  let s: Started;
  let receiver: Receiver;

  beforeAll(async () => {
    graph = await startFakeGraph({ numbers: fleet.businesses.flatMap((b: any) => b.numbers.map((n: any) => ({ phone: n.phone, phoneNumberId: n.whatsapp.phoneNumberId }))), templates: approved });
    const channel = createWhatsAppChannel({ fleet, accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, graphUrl: graph.url, attendanceIdleMs: false });
    s = await startServer({ fleet, channel: channel as unknown as SimulatedChannel, dispatch: { maxInFlight: 20, pollLimit: 20 } });
    receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    expect((await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);
  });
  afterAll(async () => {
    await s.server.close();
    await receiver.close();
    await graph.close();
  });

  it('sends every component the platform checks, and fails a template missing in its language over to the others', async () => {
    const n = 300;
    const contacts = Array.from({ length: n }, (_, i) => ({
      phone_number: `55119${String(80_000_000 + i).padStart(8, '0')}`,
      template_variables: [`Ana "${i}" \\ Souza`, `R$ ${i},00`, `PAY${i}`],
    }));
    const sent = await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 7, max_retries: 0, contacts } });
    expect(sent.status).toBe(202);
    await waitFor(() => s.server.sendpool.idle(), 'the campaign to finish');
    await waitFor(() => receiver.all('/hsm').filter((x) => x.status === 'SENT').length === n, 'every SENT notification');

    expect(s.server.sendpool.stats().dispatch).toMatchObject({ submitted: n, sent: n, failed: 0 });
    expect(receiver.all('/hsm').filter((x) => x.status === 'FAILED')).toEqual([]);

    const byName = (name: string) => graph.requests.filter((r) => r.body.template.name === name);
    // billing_c does not exist in en_US: refused with 132001, disabled, and never sent again.
    expect(byName('billing_c').length).toBeGreaterThan(0);
    expect(byName('billing_c').every((r) => r.problems.length === 1 && r.problems[0]!.startsWith('132001'))).toBe(true);
    // Without the failover the rotation would have given it a third of the campaign.
    expect(byName('billing_c').length).toBeLessThan(n / 3);
    expect(s.server.sendpool.engine.templates().find((t) => t.id === 102)!.status).toBe('disabled');
    // Every other request had every component the platform wants.
    const others = [...byName('billing_a'), ...byName('billing_b')];
    expect(others.length).toBe(n);
    expect(others.filter((r) => r.problems.length > 0).map((r) => r.problems)).toEqual([]);

    const valuesOf = (to: string) => contacts.find((c) => c.phone_number === to)!.template_variables;
    const a = byName('billing_a')[0]!;
    const [name, amount, code] = valuesOf(a.body.to);
    expect(a.body.template.components).toEqual([
      { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/bill.png' } }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: name },
          { type: 'text', text: amount },
        ],
      },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: code }] },
      { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'STOP' }] },
    ]);
    const b = byName('billing_b')[0]!;
    const [nameB, amountB, codeB] = valuesOf(b.body.to);
    expect(b.body.template.components).toEqual([
      { type: 'header', parameters: [{ type: 'text', parameter_name: 'customer_name', text: nameB }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', parameter_name: 'customer_name', text: nameB },
          { type: 'text', parameter_name: 'amount', text: amountB },
        ],
      },
      { type: 'button', sub_type: 'copy_code', index: '0', parameters: [{ type: 'coupon_code', coupon_code: codeB }] },
    ]);
  });
});

describe('the fake Graph API checks components as the platform does', () => {
  let graph: FakeGraph;
  beforeAll(async () => {
    graph = await startFakeGraph({ numbers: [{ phone: '5511990000001', phoneNumberId: '106540352242920' }], templates: approved });
  });
  afterAll(async () => {
    await graph.close();
  });

  const send = async (name: string, components: unknown[]) => {
    const res = await fetch(`${graph.url}/v23.0/106540352242920/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ACCESS_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messaging_product: 'whatsapp', to: '5511980000000', type: 'template', template: { name, language: { code: 'pt_BR' }, components } }),
    });
    return { status: res.status, code: ((await res.json()) as { error?: { code: number } }).error?.code };
  };

  it('refuses a wrong body count (132000), a missing media header or URL parameter (131008)', async () => {
    const body = {
      type: 'body',
      parameters: [
        { type: 'text', text: 'Ana' },
        { type: 'text', text: 'R$ 1' },
      ],
    };
    const header = { type: 'header', parameters: [{ type: 'image', image: { link: 'https://x.example/a.png' } }] };
    const url = { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'abc' }] };
    expect(await send('billing_a', [header, body, url])).toEqual({ status: 200, code: undefined });
    expect(await send('billing_a', [header, { ...body, parameters: body.parameters.slice(1) }, url])).toEqual({ status: 400, code: 132000 });
    expect(await send('billing_a', [body, url])).toEqual({ status: 400, code: 131008 });
    expect(await send('billing_a', [header, body])).toEqual({ status: 400, code: 131008 });
    // Named parameters must carry the template's names.
    const named = {
      type: 'body',
      parameters: [
        { type: 'text', parameter_name: 'customer_name', text: 'Ana' },
        { type: 'text', text: 'R$ 1' },
      ],
    };
    const namedHeader = { type: 'header', parameters: [{ type: 'text', parameter_name: 'customer_name', text: 'Ana' }] };
    const coupon = { type: 'button', sub_type: 'copy_code', index: '0', parameters: [{ type: 'coupon_code', coupon_code: 'PAY1' }] };
    expect(await send('billing_b', [namedHeader, named, coupon])).toEqual({ status: 400, code: 132000 });
  });
});
