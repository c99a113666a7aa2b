/**
 * Brazilian documents (spec 2.3 `document`, 2.4 `cpf`): a CPF has 11 digits, a CNPJ 14, both end
 * with two check digits (mod 11). Punctuation as usually written (`123.456.789-09`,
 * `12.345.678/0001-95`) is removed. Numbers of one repeated digit pass the arithmetic but are not
 * issued, so they are refused. The SMS field is named `cpf` but the spec calls it "recipient
 * document", so it accepts a CNPJ too.
 */
import type { FieldCheck } from './check.js';

/** The digits of `raw` without dots, dashes, slashes and spaces, or `undefined` for any other character. */
function stripPunctuation(raw: string): string | undefined {
  let clean = 0;
  while (clean < raw.length && raw.charCodeAt(clean) >= 0x30 && raw.charCodeAt(clean) <= 0x39) clean++;
  if (clean === raw.length) return raw;
  let digits = raw.slice(0, clean);
  for (let i = clean; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) digits += raw[i];
    else if (c !== 0x2e && c !== 0x2d && c !== 0x2f && c !== 0x20) return undefined;
  }
  return digits;
}

/** True when every character is the first one (000.000.000-00 passes mod 11 but is not issued). */
function allSame(digits: string): boolean {
  for (let i = 1; i < digits.length; i++) if (digits.charCodeAt(i) !== digits.charCodeAt(0)) return false;
  return true;
}

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
  if (digits.length !== 11 || stripPunctuation(digits) !== digits || allSame(digits)) return false;
  return checkDigit(digits, CPF_1) === digits.charCodeAt(9) - 48 && checkDigit(digits, CPF_2) === digits.charCodeAt(10) - 48;
}

/** True when `digits` (14 digits) is a CNPJ with valid check digits. */
export function isValidCnpj(digits: string): boolean {
  if (digits.length !== 14 || stripPunctuation(digits) !== digits || allSame(digits)) return false;
  return checkDigit(digits, CNPJ_1) === digits.charCodeAt(12) - 48 && checkDigit(digits, CNPJ_2) === digits.charCodeAt(13) - 48;
}

/** What kind of document a valid value is. */
export type DocumentKind = 'cpf' | 'cnpj';

/** Normalises a CPF or CNPJ to its digits and verifies its check digits. */
export function normaliseDocument(raw: string): FieldCheck<string> & { readonly kind?: DocumentKind } {
  const digits = stripPunctuation(raw);
  if (digits === undefined || (digits.length !== 11 && digits.length !== 14)) {
    return { ok: false, expected: 'a CPF (11 digits) or a CNPJ (14 digits); dots, dashes and slashes may be added' };
  }
  if (digits.length === 11) {
    return isValidCpf(digits) ? { ok: true, value: digits, kind: 'cpf' } : { ok: false, expected: 'a CPF with valid check digits' };
  }
  return isValidCnpj(digits) ? { ok: true, value: digits, kind: 'cnpj' } : { ok: false, expected: 'a CNPJ with valid check digits' };
}
