import { describe, expect, it } from 'vitest';
import { fleetTemplateFields, templateFields, templateTypeFields } from '../../src/core/template-fields.js';

describe('templateFields (data, example, variables of one template, spec 2.2)', () => {
  it('lists placeholders in order of first appearance, each once, with default names and [name] samples', () => {
    expect(templateFields({ text: '{{2}} is due, {{1}}. Total {{2}}.' })).toEqual({
      data: '{{2}} is due, {{1}}. Total {{2}}.',
      example: '[{{2}}] is due, [{{1}}]. Total [{{2}}].',
      variables: [
        { name: '{{2}}', index: 1 },
        { name: '{{1}}', index: 0 },
      ],
    });
  });

  it('uses names and samples by placeholder number; a missing one falls back', () => {
    const fields = templateFields({ text: 'Hi {{1}}, code {{2}}', names: ['customer'], samples: [undefined, '1234'] });
    expect(fields.example).toBe('Hi [customer], code 1234');
    expect(fields.variables).toEqual([
      { name: 'customer', index: 0 },
      { name: '{{2}}', index: 1 },
    ]);
  });

  it('a whole example wins over samples; a text without placeholders is its own example', () => {
    expect(templateFields({ text: 'Hi {{1}}', samples: ['Bia'], example: 'Hi Ana' }).example).toBe('Hi Ana');
    expect(templateFields({ text: 'Your order shipped.' })).toEqual({ data: 'Your order shipped.', example: 'Your order shipped.', variables: [] });
  });

  it('answers frozen values (the engine shares them between calls)', () => {
    const fields = templateFields({ text: 'Hi {{1}}' });
    expect(Object.isFrozen(fields)).toBe(true);
    expect(Object.isFrozen(fields.variables)).toBe(true);
    expect(Object.isFrozen(fields.variables[0])).toBe(true);
  });
});

describe('fleetTemplateFields', () => {
  it("takes names from the fleet's variables whatever their order, and the fleet's example", () => {
    const fields = fleetTemplateFields({
      text: 'Hi {{1}}, your bill of {{2}} is due.',
      variables: [
        { name: 'amount', index: 1 },
        { name: 'customer', index: 0 },
      ],
      example: 'Hi Ana, your bill of R$ 10,00 is due.',
    });
    expect(fields).toEqual({
      data: 'Hi {{1}}, your bill of {{2}} is due.',
      example: 'Hi Ana, your bill of R$ 10,00 is due.',
      variables: [
        { name: 'customer', index: 0 },
        { name: 'amount', index: 1 },
      ],
    });
  });

  it('without an example renders the names; without variables names the placeholders {{k}}', () => {
    expect(fleetTemplateFields({ text: 'Welcome, {{1}}!', variables: [{ name: 'customer', index: 0 }] }).example).toBe('Welcome, [customer]!');
    expect(fleetTemplateFields({ text: 'Alert: {{1}}', example: undefined, variables: undefined })).toEqual({
      data: 'Alert: {{1}}',
      example: 'Alert: [{{1}}]',
      variables: [{ name: '{{1}}', index: 0 }],
    });
  });
});

describe('templateTypeFields', () => {
  it('data and example of the first template, one variables list per template in order', () => {
    const a = fleetTemplateFields({ text: 'A {{1}}', variables: [{ name: 'x', index: 0 }] });
    const b = fleetTemplateFields({ text: 'B {{1}}' });
    expect(templateTypeFields([b, a])).toEqual({ data: 'B {{1}}', example: 'B [{{1}}]', variables: [[{ name: '{{1}}', index: 0 }], [{ name: 'x', index: 0 }]] });
  });

  it('no template, no fields', () => {
    expect(templateTypeFields([])).toBeUndefined();
  });
});
