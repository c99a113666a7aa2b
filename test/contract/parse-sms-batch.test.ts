import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSmsBatch, toSmsSends } from '../../src/contract/index.js';
import { smsBatchArb } from './arbitraries.js';

const item = { message: 'Seu código é 1234', phone: '5511987654321', url_callback_dlr: 'https://hooks.example.com/dlr' };

describe('parseSmsBatch', () => {
  it('accepts items, normalises phone, cpf and URLs, and exposes encoding and parts', () => {
    const r = parseSmsBatch([
      { ...item, phone: '+55 11 98765-4321', cpf: '529.982.247-25', url_callback_mo: 'HTTPS://Hooks.Example.com' },
      { message: 'a'.repeat(161), phone: '5511912345678', campaign_id: 3 },
    ]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.accepted.map((a) => [a.index, a.item.phone, a.size.encoding, a.size.parts])).toEqual([
      [0, '5511987654321', 'UCS-2', 1],
      [1, '5511912345678', 'GSM-7', 2],
    ]);
    expect(r.value.batch[0]).toMatchObject({ cpf: '52998224725', url_callback_mo: 'https://hooks.example.com/' });
  });

  it('treats an optional field given as null as left out, and refuses null for a required one', () => {
    const item = { message: 'Hi', phone: '5511987654321' };
    const nulls = { url_callback_dlr: null, url_callback_mo: null, reference: null, campaign_id: null, name: null, cpf: null };
    expect(parseSmsBatch([{ ...item, ...nulls }])).toEqual(parseSmsBatch([item]));
    const refused = parseSmsBatch([{ ...nulls, message: null, phone: '5511987654321' }]);
    expect(refused.ok ? [] : refused.problems.map((p) => p.path)).toEqual(['$[0].message']);
  });

  it('lists every structural problem with its path, including refused URLs', () => {
    const r = parseSmsBatch([{ message: '', phone: 5, campaign_id: '3' }, { ...item, url_callback_dlr: 'http://169.254.169.254/' }, 'x']);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.path)).toEqual(['$[0].message', '$[0].phone', '$[0].campaign_id', '$[1].url_callback_dlr', '$[2]']);
  });

  it('refuses the whole batch for a private callback URL even when the rest is valid', () => {
    const r = parseSmsBatch([{ ...item, url_callback_mo: 'http://localhost:3000/mo' }]);
    expect(r).toMatchObject({ ok: false, problems: [{ path: '$[0].url_callback_mo' }] });
    expect(parseSmsBatch([{ ...item, url_callback_mo: 'http://localhost:3000/mo' }], { urlPolicy: { allowPrivateHosts: true } }).ok).toBe(true);
  });

  it('rejects invalid phones and documents per item, and flags a repeated phone + text as duplicated', () => {
    const r = parseSmsBatch([item, { ...item, phone: '123' }, { ...item, cpf: '111.111.111-11' }, { ...item, phone: '+5511987654321' }, { ...item, message: 'other' }]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.accepted.map((a) => a.index)).toEqual([0, 4]);
    expect(r.value.rejected.map((x) => [x.index, x.reason, x.duplicateOf])).toEqual([
      [1, 'invalid_phone', undefined],
      [2, 'invalid_document', undefined],
      [3, 'duplicated', 0],
    ]);
  });

  it('refuses a non-array body and an empty or oversized array', () => {
    expect(parseSmsBatch({})).toMatchObject({ ok: false, problems: [{ path: '$', actual: 'an object' }] });
    expect(parseSmsBatch([])).toMatchObject({ ok: false, problems: [{ path: '$' }] });
    expect(parseSmsBatch([item, item], { maxSmsItems: 1 })).toMatchObject({ ok: false, problems: [{ path: '$', expected: 'an array of exactly 1 item' }] });
  });

  it('every valid batch parses to the value it was built from and maps to one send per item', () => {
    fc.assert(
      fc.property(smsBatchArb, (batch) => {
        const r = parseSmsBatch(batch);
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        expect(r.value.batch).toEqual(batch);
        expect(r.value.rejected).toEqual([]);
        const sends = toSmsSends(r.value);
        expect(sends.map((s) => s.phone)).toEqual(batch.map((b) => b.phone));
        sends.forEach((s, i) => {
          expect(s.callbacks).toEqual({
            ...(batch[i]!.url_callback_dlr ? { dlr: batch[i]!.url_callback_dlr } : {}),
            ...(batch[i]!.url_callback_mo ? { mo: batch[i]!.url_callback_mo } : {}),
          });
          expect(s.parts).toBeGreaterThanOrEqual(1);
        });
      }),
    );
  });

  it('every single-field corruption of a valid batch is reported at that field’s path', () => {
    const bad: Record<string, unknown[]> = {
      message: ['', 5, null, 'x'.repeat(1601)],
      phone: ['12', 'abc', 5],
      url_callback_dlr: ['ftp://x.example.com/', 'http://10.0.0.1/', 'not a url', 3],
      url_callback_mo: ['http://[::1]/', 'https://u:p@example.com/'],
      reference: ['', 1],
      campaign_id: [0, '1', 2.5],
      name: ['', false],
      cpf: ['12345678900', 12],
      surprise: ['field'],
    };
    const fields = Object.keys(bad);
    fc.assert(
      fc.property(smsBatchArb, fc.nat(), fc.nat(), fc.nat(), (batch, at, f, v) => {
        const i = at % batch.length;
        const field = fields[f % fields.length]!;
        const values = bad[field]!;
        const copy = structuredClone(batch) as unknown as Record<string, unknown>[];
        copy[i]![field] = values[v % values.length];
        const r = parseSmsBatch(copy);
        const paths = r.ok ? r.value.rejected.flatMap((x) => x.problems.map((p) => p.path)) : r.problems.map((p) => p.path);
        expect(paths).toContain(`$[${i}].${field}`);
      }),
      { numRuns: 300 },
    );
  });
});
