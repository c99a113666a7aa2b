/**
 * SMS encoding and parts (GSM 03.38 / 03.40). A text that only uses the GSM-7 default alphabet and
 * its extension table is sent as GSM-7: 160 septets in one part, 153 per part when concatenated
 * (the user data header takes 7). Extension characters (`^ { } \ [ ~ ] | €` and form feed) are sent
 * as escape + character, so they count twice and are never split across parts. Any other character
 * (`ç`, `ã`, emoji…) makes the whole text UCS-2: 70 UTF-16 units in one part, 67 when
 * concatenated; a surrogate pair is never split across parts.
 *
 * Brazilian Portuguese accents (`á`, `ã`, `ç`, `ê`) are not GSM-7: such texts cost 70 characters per
 * part. We do not transliterate: changing the caller's text is not the contract's call.
 */

/** How an SMS text is sent. */
export type SmsEncoding = 'GSM-7' | 'UCS-2';

/** Encoding, size and number of parts of an SMS text. */
export interface SmsSize {
  readonly encoding: SmsEncoding;
  /** Septets (GSM-7, extension characters count 2) or UTF-16 code units (UCS-2). */
  readonly units: number;
  /** Parts the text is sent in (1 for a text that fits one SMS; 0 for an empty text). */
  readonly parts: number;
}

/** GSM 03.38 default alphabet (the escape 0x1B itself is not a character of a text). */
const GSM7_BASIC = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** GSM 03.38 extension table: each costs an escape septet plus itself. */
const GSM7_EXTENSION = '\f^{}\\[~]|€';

const BASIC = new Set(GSM7_BASIC);
const EXTENSION = new Set(GSM7_EXTENSION);

export const GSM7_SINGLE = 160;
export const GSM7_CONCATENATED = 153;
export const UCS2_SINGLE = 70;
export const UCS2_CONCATENATED = 67;

/** Septets a character takes in GSM-7, or 0 when it is not a GSM-7 character. */
export function gsm7Septets(char: string): 0 | 1 | 2 {
  if (BASIC.has(char)) return 1;
  if (EXTENSION.has(char)) return 2;
  return 0;
}

/** Counts parts by filling each with whole characters (their unit sizes) up to `perPart`. */
function countParts(text: string, total: number, single: number, perPart: number, size: (char: string) => number): number {
  if (total === 0) return 0;
  if (total <= single) return 1;
  let parts = 1;
  let used = 0;
  for (const char of text) {
    const n = size(char);
    if (used + n > perPart) {
      parts++;
      used = 0;
    }
    used += n;
  }
  return parts;
}

const utf16Units = (char: string): number => char.length;

/**
 * The texts of the parts an SMS is sent in, cut by the rule {@link smsSize} counts with (whole
 * characters up to 153 septets or 67 UTF-16 units per part; one part when the text fits a single
 * SMS), so a gateway sends exactly `smsSize(text).parts` parts. Empty text: no parts.
 */
export function smsPartTexts(text: string, encoding: SmsEncoding): string[] {
  const [single, perPart, size] = encoding === 'GSM-7' ? [GSM7_SINGLE, GSM7_CONCATENATED, gsm7Septets] : [UCS2_SINGLE, UCS2_CONCATENATED, utf16Units];
  let total = 0;
  for (const char of text) total += size(char);
  if (total === 0) return [];
  if (total <= single) return [text];
  const parts: string[] = [];
  let used = 0;
  let start = 0;
  let at = 0;
  for (const char of text) {
    const n = size(char);
    if (used + n > perPart) {
      parts.push(text.slice(start, at));
      start = at;
      used = 0;
    }
    used += n;
    at += char.length;
  }
  parts.push(text.slice(start));
  return parts;
}

/** Detects the encoding of an SMS text and computes its size and number of parts. */
export function smsSize(text: string): SmsSize {
  let total = 0;
  for (const char of text) {
    const n = gsm7Septets(char);
    if (n === 0) {
      return { encoding: 'UCS-2', units: text.length, parts: countParts(text, text.length, UCS2_SINGLE, UCS2_CONCATENATED, utf16Units) };
    }
    total += n;
  }
  return { encoding: 'GSM-7', units: total, parts: countParts(text, total, GSM7_SINGLE, GSM7_CONCATENATED, gsm7Septets) };
}
