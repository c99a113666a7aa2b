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
  11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 24, 27, 28, 31, 32, 33, 34, 35, 37, 38, 41, 42, 43, 44, 45, 46, 47, 48, 49,
  51, 53, 54, 55, 61, 62, 63, 64, 65, 66, 67, 68, 69, 71, 73, 74, 75, 77, 79, 81, 82, 83, 84, 85, 86, 87, 88, 89, 91, 92,
  93, 94, 95, 96, 97, 98, 99,
]);

const FORMATTING = /[\s\-.()]/g;
const ALL_DIGITS = /^\d+$/;
const E164_DIGITS = 'digits including the country code (8 to 15 digits, not starting with 0)';

/**
 * Normalises a phone to its digits and checks it. `"+55 (11) 98765-4321"` → `"5511987654321"`.
 */
export function normalisePhone(raw: string): FieldCheck<string> {
  // Most phones arrive as plain digits: skip the replace for them (10,000-contact requests).
  let text = ALL_DIGITS.test(raw) ? raw : raw.replace(FORMATTING, '');
  if (text.startsWith('+')) text = text.slice(1);
  if (!ALL_DIGITS.test(text)) return { ok: false, expected: `${E164_DIGITS}; only +, spaces, dashes, dots and parentheses may be added` };
  if (text.length < 8 || text.length > 15 || text.startsWith('0')) return { ok: false, expected: E164_DIGITS };
  if (text.startsWith('55')) return checkBrazil(text);
  return { ok: true, value: text };
}

function checkBrazil(digits: string): FieldCheck<string> {
  if (digits.length !== 12 && digits.length !== 13) {
    return { ok: false, expected: 'a Brazilian number: 55, a 2-digit area code, then 9 + 8 digits (mobile) or 8 digits (landline)' };
  }
  const area = Number(digits.slice(2, 4));
  if (!BRAZIL_AREA_CODES.has(area)) return { ok: false, expected: `a Brazilian area code (DDD) in use, not ${digits.slice(2, 4)}` };
  const subscriber = digits.slice(4);
  if (digits.length === 13) {
    if (subscriber[0] !== '9') return { ok: false, expected: 'a Brazilian mobile starting with the ninth digit 9 after the area code' };
    return { ok: true, value: digits };
  }
  const first = subscriber.charCodeAt(0) - 48;
  if (first >= 6) return { ok: false, expected: 'a Brazilian mobile with its ninth digit (55 DD 9XXXX-XXXX)' };
  if (first < 2) return { ok: false, expected: 'a Brazilian landline starting with 2 to 5 after the area code' };
  return { ok: true, value: digits };
}
