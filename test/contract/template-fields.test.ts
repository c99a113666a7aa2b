import { describe, expect, it } from 'vitest';
import { BusinessesResponseSchema, describeTemplate, describeTemplateType, parseBusinessesResponse } from '../../src/contract/index.js';

describe('describeTemplate and describeTemplateType (data, example, variables of spec 2.2)', () => {
  it('derives variables in order of first appearance and fills the example', () => {
    const r = describeTemplate('{{2}} is due, {{1}}. Total {{2}}.', { samples: ['Ana', 'R$ 10'] });
    expect(r).toEqual({
      ok: true,
      value: {
        data: '{{2}} is due, {{1}}. Total {{2}}.',
        example: 'R$ 10 is due, Ana. Total R$ 10.',
        variables: [
          { name: '{{2}}', index: 1 },
          { name: '{{1}}', index: 0 },
        ],
      },
    });
  });

  it('uses names and falls back to [name] for a missing or empty sample, never leaving a placeholder', () => {
    const r = describeTemplate('Hi {{1}}, code {{2}}', { names: ['customer', 'code'], samples: [''] });
    expect(r.ok && r.value.example).toBe('Hi [customer], code [code]');
    expect(r.ok && r.value.variables).toEqual([
      { name: 'customer', index: 0 },
      { name: 'code', index: 1 },
    ]);
  });

  it('refuses texts with gaps in the placeholders', () => {
    expect(describeTemplate('Hi {{1}} {{3}}').ok).toBe(false);
  });

  it('a type gets one variables list per template and data/example of the first; the result fits the businesses schema', () => {
    const t = describeTemplateType(['Hi {{1}}, {{2}} is due.', '{{1}}, {{2}} is due tomorrow.'], { samples: ['Ana', 'R$ 10'] });
    expect(t.ok).toBe(true);
    if (!t.ok) return;
    expect(t.value.variables).toHaveLength(2);
    expect(t.value.example).toBe('Hi Ana, R$ 10 is due.');
    const response = [{ id: 1, name: 'Acme', template_types: [{ id: 10, name: 'billing', output: 3000, ...t.value }] }];
    expect(parseBusinessesResponse(response)).toEqual({ ok: true, value: response });
    expect(BusinessesResponseSchema.type).toBe('array');
  });

  it('the businesses response check accepts the engine shape plus annotation keys, and reports bad fields', () => {
    const engine = [{ id: 1, name: 'Acme', template_types: [{ id: 10, name: 'billing', output: 0, 'data (under implementation)': 'x' }] }];
    expect(parseBusinessesResponse(engine).ok).toBe(true);
    const bad = parseBusinessesResponse([{ id: 1, name: 'Acme', template_types: [{ id: 10, name: 'b', output: -1 }] }]);
    expect(bad).toMatchObject({ ok: false, problems: [{ path: '$[0].template_types[0].output', expected: 'an integer from 0' }] });
  });
});
