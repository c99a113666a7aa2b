/**
 * Brazilian documents (spec 2.3 `document`, 2.4 `cpf`): a CPF has 11 digits, a CNPJ 14, both end
 * with two check digits (mod 11). Punctuation as usually written (`123.456.789-09`,
 * `12.345.678/0001-95`) is removed. Numbers of one repeated digit pass the arithmetic but are not
 * issued, so they are refused. The SMS field is named `cpf` but the spec calls it "recipient
 * document", so it accepts a CNPJ too.
 */
import type { FieldCheck } from './check.js';

const PUNCTUATION = /[\s.\-/]/g;
const ALL_DIGITS = /^\d+$/;

function checkDigit(digits: string, weights: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += (digits.charCodeAt(i) - 48) * (weights[i] ?? 0);
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

const CPF_1 = [10, 9, 8, 7, 6, 5, 4, 3, 2];
const CPF_2 = [11, 10, 9, 8, 7, 6, 5, 4, 3, 2];
const CNPJ_1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
const CNPJ_2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];

/** True when `digits` (11 digits) is a CPF with valid check digits. */
export function isValidCpf(digits: string): boolean {
  if (!/^\d{11}$/.test(digits) || /^(\d)\1{10}$/.test(digits)) return false;
  return checkDigit(digits, CPF_1) === digits.charCodeAt(9) - 48 && checkDigit(digits, CPF_2) === digits.charCodeAt(10) - 48;
}

/** True when `digits` (14 digits) is a CNPJ with valid check digits. */
export function isValidCnpj(digits: string): boolean {
  if (!/^\d{14}$/.test(digits) || /^(\d)\1{13}$/.test(digits)) return false;
  return checkDigit(digits, CNPJ_1) === digits.charCodeAt(12) - 48 && checkDigit(digits, CNPJ_2) === digits.charCodeAt(13) - 48;
}

/** What kind of document a valid value is. */
export type DocumentKind = 'cpf' | 'cnpj';

/** Normalises a CPF or CNPJ to its digits and verifies its check digits. */
export function normaliseDocument(raw: string): FieldCheck<string> & { readonly kind?: DocumentKind } {
  const digits = ALL_DIGITS.test(raw) ? raw : raw.replace(PUNCTUATION, '');
  if (!ALL_DIGITS.test(digits) || (digits.length !== 11 && digits.length !== 14)) {
    return { ok: false, expected: 'a CPF (11 digits) or a CNPJ (14 digits); dots, dashes and slashes may be added' };
  }
  if (digits.length === 11) {
    return isValidCpf(digits) ? { ok: true, value: digits, kind: 'cpf' } : { ok: false, expected: 'a CPF with valid check digits' };
  }
  return isValidCnpj(digits) ? { ok: true, value: digits, kind: 'cnpj' } : { ok: false, expected: 'a CNPJ with valid check digits' };
}
