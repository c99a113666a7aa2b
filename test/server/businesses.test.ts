/**
 * GET /messenger/businesses/ over HTTP: per template type `output` and the spec 2.2 fields under
 * implementation, `data`, `example` and `variables`, for the example fleet; they follow the
 * templates' statuses and are absent for a type without templates.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBusinessesResponse } from '../../src/contract/index.js';
import { createEngine } from '../../src/engine.js';
import { KEY_2, api, startServer, testFleet, type Started } from './helpers.js';

const exampleFleet = () => JSON.parse(readFileSync(new URL('../../examples/fleet.json', import.meta.url), 'utf8'));

const billingVariables = [
  [
    { name: 'customer', index: 0 },
    { name: 'amount', index: 1 },
  ],
  [
    { name: '{{1}}', index: 0 },
    { name: '{{2}}', index: 1 },
  ],
];

describe('GET /messenger/businesses/ with examples/fleet.json', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer({ engine: createEngine(exampleFleet()) });
  });
  afterAll(() => s.server.close());

  it('answers data, example and variables per template type, from the templates of the fleet', async () => {
    const res = await api(s.url, '/messenger/businesses/');
    expect(res.status).toBe(200);
    expect(res.json).toEqual([
      {
        id: 1,
        name: 'Acme',
        template_types: [
          {
            id: 10,
            name: 'billing',
            output: 3000,
            data: 'Hi {{1}}, your bill of {{2}} is due.',
            example: 'Hi Ana, your bill of R$ 10,00 is due.',
            variables: billingVariables,
          },
          { id: 20, name: 'welcome', output: 3000, data: 'Welcome to Acme, {{1}}!', example: 'Welcome to Acme, [customer]!', variables: [[{ name: 'customer', index: 0 }]] },
        ],
      },
      {
        id: 2,
        name: 'Globex',
        template_types: [{ id: 10, name: 'alerts', output: 80, data: 'Alert: {{1}}', example: 'Alert: [{{1}}]', variables: [[{ name: '{{1}}', index: 0 }]] }],
      },
    ]);
    // The keys in the order of spec 2.2, and an answer the contract's own check accepts.
    expect(Object.keys(res.json[0].template_types[0])).toEqual(['id', 'name', 'output', 'data', 'example', 'variables']);
    expect(parseBusinessesResponse(res.json).ok).toBe(true);
  });

  it("follows the templates' statuses: the active ones, or all when none is active", async () => {
    const billing = async () => (await api(s.url, '/messenger/businesses/')).json[0].template_types[0];

    expect((await api(s.url, '/operator/templates/100/pause/', { body: { duration_seconds: 3600 } })).status).toBe(200);
    expect(await billing()).toEqual({ id: 10, name: 'billing', output: 3000, data: '{{1}}, {{2}} is due tomorrow.', example: '[{{1}}], [{{2}}] is due tomorrow.', variables: [billingVariables[1]] });

    expect((await api(s.url, '/operator/templates/101/disable/', { method: 'POST' })).status).toBe(200);
    expect(await billing()).toEqual({
      id: 10,
      name: 'billing',
      output: 0,
      data: 'Hi {{1}}, your bill of {{2}} is due.',
      example: 'Hi Ana, your bill of R$ 10,00 is due.',
      variables: billingVariables,
    });

    expect((await api(s.url, '/operator/templates/100/resume/', { method: 'POST' })).status).toBe(200);
    expect(await billing()).toMatchObject({ output: 3000, data: 'Hi {{1}}, your bill of {{2}} is due.', variables: [billingVariables[0]] });
    expect((await api(s.url, '/operator/templates/101/resume/', { method: 'POST' })).status).toBe(200);
    expect((await billing()).variables).toEqual(billingVariables);
  });

  it("another company's key sees none of it", async () => {
    expect((await api(s.url, '/messenger/businesses/', { key: KEY_2 })).json).toEqual([]);
  });
});

describe('GET /messenger/businesses/ with a type without templates', () => {
  let s: Started;
  beforeAll(async () => {
    const fleet = testFleet();
    fleet.businesses[0]!.templateTypes.push({ id: 20, name: 'empty', templateIds: [] });
    s = await startServer({ fleet });
  });
  afterAll(() => s.server.close());

  it('answers the type without data, example and variables', async () => {
    const res = await api(s.url, '/messenger/businesses/');
    expect(res.status).toBe(200);
    expect(res.json[0].template_types).toEqual([
      {
        id: 10,
        name: 'billing',
        output: 3_000_000,
        data: 'A: Hi {{1}}, your bill is due.',
        example: 'A: Hi [{{1}}], your bill is due.',
        variables: [[{ name: '{{1}}', index: 0 }], [{ name: '{{1}}', index: 0 }], [{ name: '{{1}}', index: 0 }]],
      },
      { id: 20, name: 'empty', output: 0 },
    ]);
  });
});
