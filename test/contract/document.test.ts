import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidCnpj, isValidCpf, normaliseDocument } from '../../src/contract/index.js';
import { cnpjArb, cpfArb } from './arbitraries.js';

describe('CPF and CNPJ', () => {
  it('verifies known valid numbers, formatted or not', () => {
    expect(isValidCpf('52998224725')).toBe(true);
    expect(normaliseDocument('529.982.247-25')).toEqual({ ok: true, value: '52998224725', kind: 'cpf' });
    expect(isValidCnpj('11222333000181')).toBe(true);
    expect(normaliseDocument('11.222.333/0001-81')).toEqual({ ok: true, value: '11222333000181', kind: 'cnpj' });
  });

  it('refuses wrong check digits, naming which document', () => {
    expect(normaliseDocument('52998224726')).toEqual({ ok: false, expected: 'a CPF with valid check digits' });
    expect(normaliseDocument('11222333000182')).toEqual({ ok: false, expected: 'a CNPJ with valid check digits' });
  });

  it('refuses repeated digits, which pass the arithmetic but are never issued', () => {
    expect(isValidCpf('11111111111')).toBe(false);
    expect(isValidCnpj('00000000000000')).toBe(false);
  });

  it('refuses other lengths and letters', () => {
    for (const bad of ['5299822472', '529982247250', '1122233300018', 'ABC.982.247-25', '']) {
      expect(normaliseDocument(bad).ok, bad).toBe(false);
    }
  });

  it('every change of a check digit is caught (a data-digit change can map rest 0 and 1 alike, by design of mod 11)', () => {
    fc.assert(
      fc.property(fc.oneof(cpfArb, cnpjArb), fc.nat(), fc.integer({ min: 1, max: 9 }), (doc, at, delta) => {
        const i = doc.length - 1 - (at % 2);
        const changed = `${doc.slice(0, i)}${(Number(doc[i]) + delta) % 10}${doc.slice(i + 1)}`;
        expect(normaliseDocument(doc).ok).toBe(true);
        expect(normaliseDocument(changed).ok).toBe(false);
      }),
    );
  });
});
