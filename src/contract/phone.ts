/**
 * Phone numbers (spec 2.3, 2.4: "digits, including country code"). Harmless formatting that people
 * and spreadsheets add (`+`, spaces, dashes, dots, parentheses) is removed; anything else is
 * refused rather than guessed at. E.164 allows 8 to 15 digits and no leading 0 (a `00` or `0`
 * trunk prefix is refused, not stripped: "0055…" could mean two things).
 *
 * Brazil (country code 55) is checked further, because most traffic goes there and because the
 * channel silently fails on malformed Brazilian numbers: the area code (DDD) must exist, and a
 * mobile must carry the ninth digit (`55 DD 9XXXX-XXXX`, 13 digits). A 12-digit number is a
 * landline (subscriber starting 2 to 5); a 12-digit number whose subscriber starts 6 to 9 is a
 * mobile written without its ninth digit, refused (we do not insert the 9 for the caller).
 */
import type { FieldCheck } from './check.js';

/** Area codes (DDD) in use in Brazil (ANATEL numbering plan). */
export const BRAZIL_AREA_CODES: ReadonlySet<number> = new Set([
  11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 24, 27, 28, 31, 32, 33, 34, 35, 37, 38, 41, 42, 43, 44, 45, 46, 47, 48, 49, 51, 53, 54, 55, 61, 62, 63, 64, 65, 66, 67, 68, 69, 71, 73, 74, 75, 77, 79,
  81, 82, 83, 84, 85, 86, 87, 88, 89, 91, 92, 93, 94, 95, 96, 97, 98, 99,
]);

const E164_DIGITS = 'digits including the country code (8 to 15 digits, not starting with 0)';
const BAD_CHARACTERS = `${E164_DIGITS}; only +, spaces, dashes, dots and parentheses may be added`;

/** The digits of `raw` without its harmless formatting, or `undefined` for any other character. */
function stripFormatting(raw: string): string | undefined {
  // A loop, not a regex replace: this runs for every contact of 10,000-contact requests, and
  // plain digits (the common case) come back as the same string, without building a new one.
  let clean = 0;
  while (clean < raw.length && raw.charCodeAt(clean) >= 0x30 && raw.charCodeAt(clean) <= 0x39) clean++;
  if (clean === raw.length) return raw;
  let digits = raw.slice(0, clean);
  let plus = false;
  for (let i = clean; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) digits += raw[i];
    else if (c === 0x2b && !plus && digits === '')
      plus = true; // one + before the digits
    else if (c !== 0x20 && c !== 0x2d && c !== 0x2e && c !== 0x28 && c !== 0x29 && c !== 0x09 && c !== 0xa0) return undefined;
  }
  return digits;
}

/**
 * Normalises a phone to its digits and checks it. `"+55 (11) 98765-4321"` → `"5511987654321"`.
 */
export function normalisePhone(raw: string): FieldCheck<string> {
  const text = stripFormatting(raw);
  if (text === undefined || text === '') return { ok: false, expected: BAD_CHARACTERS };
  if (text.length < 8 || text.length > 15 || text.charCodeAt(0) === 0x30) return { ok: false, expected: E164_DIGITS };
  if (text.charCodeAt(0) === 0x35 && text.charCodeAt(1) === 0x35) return checkBrazil(text);
  return { ok: true, value: text };
}

function checkBrazil(digits: string): FieldCheck<string> {
  if (digits.length !== 12 && digits.length !== 13) {
    return { ok: false, expected: 'a Brazilian number: 55, a 2-digit area code, then 9 + 8 digits (mobile) or 8 digits (landline)' };
  }
  const area = (digits.charCodeAt(2) - 48) * 10 + (digits.charCodeAt(3) - 48);
  if (!BRAZIL_AREA_CODES.has(area)) return { ok: false, expected: `a Brazilian area code (DDD) in use, not ${digits.slice(2, 4)}` };
  const first = digits.charCodeAt(4) - 48;
  if (digits.length === 13) {
    if (first !== 9) return { ok: false, expected: 'a Brazilian mobile starting with the ninth digit 9 after the area code' };
    return { ok: true, value: digits };
  }
  if (first >= 6) return { ok: false, expected: 'a Brazilian mobile with its ninth digit (55 DD 9XXXX-XXXX)' };
  if (first < 2) return { ok: false, expected: 'a Brazilian landline starting with 2 to 5 after the area code' };
  return { ok: true, value: digits };
}
