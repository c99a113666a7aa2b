import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderTemplate } from '../../src/core/template-text.js';
import { parseSendRequest } from '../../src/contract/index.js';
import type { SendRequest, SendRequestOptions } from '../../src/contract/index.js';
import { lookupFor, sendRequestArb, variableArb } from './arbitraries.js';

const lookup = lookupFor(1, 10, 2);
const base = (contacts: unknown[], extra: Record<string, unknown> = {}) => ({ business_id: 1, template_type_id: 10, campaign_id: 7, contacts, ...extra });
const ana = { phone_number: '5511987654321', template_variables: ['Ana', 'R$ 10'] };

function ok(body: unknown, options: SendRequestOptions = { templateTypes: lookup }) {
  const r = parseSendRequest(body, options);
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  return r.value;
}
function problems(body: unknown, options: SendRequestOptions = { templateTypes: lookup }) {
  const r = parseSendRequest(body, options);
  if (r.ok) throw new Error('expected problems');
  return r.problems;
}

describe('parseSendRequest: the body', () => {
  it('accepts a minimal body and normalises the phone', () => {
    const v = ok(base([{ ...ana, phone_number: '+55 (11) 98765-4321' }]));
    expect(v.accepted).toHaveLength(1);
    expect(v.accepted[0]?.contact.phone_number).toBe('5511987654321');
    expect(v.request.contacts[0]?.phone_number).toBe('5511987654321');
    expect(v.rejected).toEqual([]);
  });

  it('lists every problem at once, each with path, expected and actual', () => {
    const ps = problems({ business_id: '1', template_type_id: 0, contacts: [{ phone_number: 5511, extra: true }], retry_interval: 1.5, max_retries: 11 });
    expect(ps.map((p) => p.path).sort()).toEqual(
      ['$.business_id', '$.template_type_id', '$.campaign_id', '$.contacts[0].phone_number', '$.contacts[0].extra', '$.retry_interval', '$.max_retries'].sort(),
    );
    const byPath = Object.fromEntries(ps.map((p) => [p.path, p]));
    expect(byPath['$.business_id']).toMatchObject({ expected: 'an integer from 1 (positive)', actual: '"1" (string)' });
    expect(byPath['$.campaign_id']).toMatchObject({ actual: 'missing' });
    expect(byPath['$.max_retries']).toMatchObject({ expected: 'an integer from 0 to 10', actual: '11 (number)' });
    expect(byPath['$.retry_interval']).toMatchObject({ expected: 'an integer from 0 to 10080' });
    expect(byPath['$.contacts[0].extra']?.expected).toContain('no such field');
  });

  it('refuses an unknown template type at $.template_type_id, with other problems too', () => {
    expect(problems(base([ana], { template_type_id: 11 })).map((p) => p.path)).toEqual(['$.template_type_id']);
    expect(problems(base([ana], { template_type_id: 11, max_retries: -1 })).map((p) => p.path)).toEqual(['$.template_type_id', '$.max_retries']);
  });

  it('refuses an empty contacts list and a list over the limit (reported once, not walked)', () => {
    expect(problems(base([])).map((p) => p.path)).toEqual(['$.contacts']);
    const many = Array.from({ length: 4 }, () => ({ phone_number: 5 }));
    const ps = problems(base(many), { templateTypes: lookup, maxContacts: 3 });
    expect(ps).toHaveLength(1);
    expect(ps[0]).toMatchObject({ path: '$.contacts', expected: 'an array of 1 to 3 items', actual: 'an array of 4' });
  });

  it('never lets a __proto__ key change a prototype', () => {
    const body = JSON.parse(
      '{"business_id":1,"template_type_id":10,"campaign_id":7,"contacts":[{"phone_number":"5511987654321","template_variables":["a","b"],"data":{"__proto__":{"polluted":"yes"}}}]}',
    ) as unknown;
    // The contact alone is refused (invalid_data), its problem at the key.
    expect(ok(body).rejected).toEqual([expect.objectContaining({ index: 0, reason: 'invalid_data', problems: [expect.objectContaining({ path: '$.contacts[0].data.__proto__' })] })]);
    const body2 = JSON.parse(
      '{"__proto__":{"x":1},"business_id":1,"template_type_id":10,"campaign_id":7,"contacts":[{"phone_number":"5511987654321","template_variables":["a","b"],"data":{"__proto__":"v"}}]}',
    ) as unknown;
    const ps = problems(body2);
    expect(ps.map((p) => p.path)).toEqual(['$.__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('parseSendRequest: an optional field given as null', () => {
  const optionalTop = ['queue_id', 'bot_id', 'max_retries', 'retry_interval'];
  const optionalContact = ['document', 'contract', 'template_variables', 'data'];

  it('is the same as the field left out, at the top and in each contact, for any subset of them', () => {
    fc.assert(
      fc.property(fc.subarray(optionalTop), fc.array(fc.subarray(optionalContact), { minLength: 1, maxLength: 5 }), (top, perContact) => {
        const lookup0 = lookupFor(1, 10, 0);
        const contacts = perContact.map((keys, i) => ({ phone_number: `55119876543${String(i).padStart(2, '0')}`, ...Object.fromEntries(keys.map((k) => [k, null])) }));
        const withNulls = parseSendRequest(base(contacts, Object.fromEntries(top.map((k) => [k, null]))), { templateTypes: lookup0 });
        const without = parseSendRequest(base(contacts.map((c) => ({ phone_number: c.phone_number }))), { templateTypes: lookup0 });
        expect(withNulls).toEqual(without);
      }),
      { seed: 20_261_128, numRuns: 200 },
    );
  });

  it('still refuses null for a required field, and lists the other problems without the nulls', () => {
    const ps = problems({ business_id: null, template_type_id: 10, campaign_id: 7, bot_id: null, contacts: [{ phone_number: null, document: null }] });
    expect(ps.map((p) => p.path).sort()).toEqual(['$.business_id', '$.contacts[0].phone_number']);
  });
});

describe('parseSendRequest: per-contact rules', () => {
  it('rejects an invalid phone as invalid_phone, the others go through', () => {
    const v = ok(base([ana, { ...ana, phone_number: '551198765432' }, { ...ana, phone_number: 'abc' }]));
    expect(v.accepted.map((a) => a.index)).toEqual([0]);
    expect(v.rejected.map((r) => [r.index, r.reason, r.problems[0]?.path])).toEqual([
      [1, 'invalid_phone', '$.contacts[1].phone_number'],
      [2, 'invalid_phone', '$.contacts[2].phone_number'],
    ]);
  });

  it('sends a repeated phone once: later copies are duplicated, with the index of the first', () => {
    const v = ok(base([ana, { ...ana, phone_number: '+55 11 98765-4321' }, { ...ana, phone_number: '5511912345678' }]));
    expect(v.accepted.map((a) => a.index)).toEqual([0, 2]);
    expect(v.rejected).toEqual([expect.objectContaining({ index: 1, reason: 'duplicated', duplicateOf: 0 })]);
  });

  it('a rejected contact does not make a later one with the same phone a duplicate', () => {
    const v = ok(base([{ ...ana, document: '12345678900' }, ana]));
    expect(v.rejected.map((r) => r.reason)).toEqual(['invalid_document']);
    expect(v.accepted.map((a) => a.index)).toEqual([1]);
  });

  it('rejects phones already known in the campaign', () => {
    const v = ok(base([ana]), { templateTypes: lookup, knownPhones: new Set(['5511987654321']) });
    expect(v.rejected).toEqual([expect.objectContaining({ index: 0, reason: 'duplicated' })]);
    expect(v.rejected[0]?.duplicateOf).toBeUndefined();
  });

  it('rejects a document with wrong check digits as invalid_document and normalises a valid one', () => {
    const v = ok(
      base([
        { ...ana, document: '529.982.247-26' },
        { ...ana, phone_number: '5511912345678', document: '529.982.247-25' },
      ]),
    );
    expect(v.rejected[0]).toMatchObject({ index: 0, reason: 'invalid_document', problems: [{ path: '$.contacts[0].document', expected: 'a CPF with valid check digits' }] });
    expect(v.accepted[0]?.contact.document).toBe('52998224725');
  });

  it('rejects too few, too many, empty and placeholder-carrying variables as invalid_variables', () => {
    const v = ok(
      base([
        { phone_number: '5511911111111', template_variables: ['only one'] },
        { phone_number: '5511922222222', template_variables: ['a', 'b', 'c'] },
        { phone_number: '5511933333333', template_variables: ['a', '  '] },
        { phone_number: '5511944444444', template_variables: ['a', '{{1}}'] },
        { phone_number: '5511955555555' },
      ]),
    );
    expect(v.accepted).toEqual([]);
    expect(v.rejected.map((r) => [r.reason, r.problems.map((p) => p.path)])).toEqual([
      ['invalid_variables', ['$.contacts[0].template_variables']],
      ['invalid_variables', ['$.contacts[1].template_variables']],
      ['invalid_variables', ['$.contacts[2].template_variables[1]']],
      ['invalid_variables', ['$.contacts[3].template_variables[1]']],
      ['invalid_variables', ['$.contacts[4].template_variables']],
    ]);
    expect(v.rejected[0]?.problems[0]?.expected).toBe('exactly 2 template_variables, one per placeholder {{1}}..{{2}}');
  });

  it('a contact with several faults is rejected for the first reason and lists every problem', () => {
    const v = ok(base([{ phone_number: '12', document: '1', template_variables: [] }]));
    expect(v.rejected[0]?.reason).toBe('invalid_phone');
    expect(v.rejected[0]?.problems.map((p) => p.path)).toEqual(['$.contacts[0].phone_number', '$.contacts[0].document', '$.contacts[0].template_variables']);
  });
});

describe('parseSendRequest: properties', () => {
  it('every valid body parses to the value it was built from, all contacts accepted', () => {
    fc.assert(
      fc.property(sendRequestArb, ({ body, placeholders }) => {
        const r = parseSendRequest(body, { templateTypes: lookupFor(body.business_id, body.template_type_id, placeholders) });
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        expect(r.value.request).toEqual(body);
        expect(r.value.accepted.map((a) => a.index)).toEqual(body.contacts.map((_, i) => i));
        expect(r.value.rejected).toEqual([]);
      }),
    );
  });

  type Corruption = { path: string; apply: (b: Record<string, unknown>) => void };
  const corruptions = (body: SendRequest): Corruption[] => {
    const set = (key: string, value: unknown): Corruption => ({ path: `$.${key}`, apply: (b) => void (b[key] = value) });
    const list: Corruption[] = [
      set('business_id', '1'),
      set('business_id', 0),
      set('business_id', 1.5),
      set('business_id', null),
      set('template_type_id', -3),
      set('template_type_id', body.template_type_id + 1),
      set('campaign_id', true),
      set('queue_id', 'q'),
      set('bot_id', {}),
      set('max_retries', 11),
      set('retry_interval', 10_081),
      set('retry_interval', -1),
      set('contacts', 'none'),
      set('contacts', []),
      set('surprise', 1),
      { path: '$.campaign_id', apply: (b) => void delete b['campaign_id'] },
    ];
    body.contacts.forEach((contact, i) => {
      const at = (key: string, value: unknown): Corruption => ({
        path: `$.contacts[${i}].${key}`,
        apply: (b) => void ((b['contacts'] as Record<string, unknown>[])[i]![key] = value),
      });
      list.push(at('phone_number', 5511), at('phone_number', '551198765432'), at('phone_number', 'not a phone'), at('document', '12345678900'));
      list.push(at('document', 123), at('contract', ''), { ...at('data', { k: 1 }), path: `$.contacts[${i}].data.k` }, at('data', 'x'), at('template_variables', 'x'), at('extra', 'y'));
      list.push(at('template_variables', [...(contact.template_variables ?? []), 'one more']));
      if (i > 0) list.push(at('phone_number', body.contacts[0]!.phone_number));
      if ((contact.template_variables ?? []).length > 0) {
        list.push({ path: `$.contacts[${i}].template_variables[0]`, apply: (b) => void ((b['contacts'] as { template_variables: unknown[] }[])[i]!.template_variables[0] = '') });
      }
    });
    return list;
  };

  it('every single-field corruption of a valid body is reported at that field’s path', () => {
    fc.assert(
      fc.property(sendRequestArb, fc.nat(), ({ body, placeholders }, pick) => {
        const all = corruptions(body);
        const corruption = all[pick % all.length]!;
        const copy = structuredClone(body) as unknown as Record<string, unknown>;
        corruption.apply(copy);
        const r = parseSendRequest(copy, { templateTypes: lookupFor(body.business_id, body.template_type_id, placeholders) });
        const paths = r.ok ? r.value.rejected.flatMap((x) => x.problems.map((p) => p.path)) : r.problems.map((p) => p.path);
        expect(paths).toContain(corruption.path);
      }),
      { numRuns: 300 },
    );
  });

  it('rendering an accepted contact never leaves a placeholder, whatever the values', () => {
    const value = fc.oneof(variableArb, fc.constantFrom('', ' ', '{{1}}', '{{ 2 }}', 'x{{3}}y', '{{a}}'));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 }), fc.array(fc.array(value, { maxLength: 4 }), { minLength: 1, maxLength: 5 }), (n, lists) => {
        const text = Array.from({ length: n }, (_, i) => `{{${i + 1}}}`).join(' - ') || 'no placeholders';
        const body = base(lists.map((vs, i) => ({ phone_number: `55119${String(i).padStart(8, '0')}`, template_variables: vs })));
        const r = parseSendRequest(body, { templateTypes: lookupFor(1, 10, n) });
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        expect(r.value.accepted.length + r.value.rejected.length).toBe(lists.length);
        for (const { contact } of r.value.accepted) {
          expect(renderTemplate(text, contact.template_variables ?? [])).not.toMatch(/\{\{\s*\d+\s*\}\}/);
        }
      }),
    );
  });
});
