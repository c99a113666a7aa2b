/**
 * Template text with positional placeholders `{{1}}`, `{{2}}`, … (spec 2.2). Placeholders are
 * 1-based and must be contiguous, as the channel requires; the spec's `variables` entries carry a
 * zero-based `index` into the contact's `template_variables`.
 *
 * The grammar, exactly: a placeholder is `{{`, a decimal number from 1 to {@link MAX_PLACEHOLDERS}
 * written without sign, spaces or leading zeros, and `}}`. Every `{{` and every `}}` of a text,
 * overlapping ones included, must be the opening or closing braces of a placeholder; anything else
 * between or around double braces (`{{name}}`, `{{}}`, `{{ 1 }}`, `{{01}}`, `{{0}}`, `{{{1}}}`, a
 * lone `}}`) makes the text unusable, because the channel would send it as written. Single braces
 * are ordinary text.
 */

/** A placeholder as rendered: `{{k}}` with k from 1, no leading zero, no spaces. */
const PLACEHOLDER = /\{\{([1-9][0-9]*)\}\}/g;
/** Double braces around digits only, anchored where a scan finds `{{`: told apart from other text. */
const DIGITS_IN_BRACES = /\{\{([0-9]+)\}\}/y;

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
/** Longest piece of a text quoted in an error. */
const MAX_QUOTED = 40;

/** Most placeholders a template may take (the contract caps `template_variables` at the same). */
export const MAX_PLACEHOLDERS = 100;

/** What a template text asks for: how many values, or why the text is unusable. */
export type PlaceholderScan = { readonly ok: true; readonly count: number } | { readonly ok: false; readonly expected: string };

/** `text.slice(from, to)` quoted as JSON, cut to {@link MAX_QUOTED} characters. */
function quote(text: string, from: number, to: number): string {
  const piece = text.slice(from, Math.min(to, from + MAX_QUOTED));
  return JSON.stringify(to - from > MAX_QUOTED ? `${piece}…` : piece);
}

/** What follows a `{{` at `at` that is not a placeholder, as far as the next `}}` (for the error). */
function openingAt(text: string, at: number): string {
  const close = text.indexOf('}}', at + 2);
  return quote(text, at, close < 0 ? text.length : close + 2);
}

/**
 * Counts the placeholders of a template text. Valid texts use each of `{{1}}` … `{{n}}` at least
 * once (a placeholder may repeat) and nothing else between double braces (see the grammar above):
 * `{{name}}`, `{{}}`, `{{ 1 }}`, `{{0}}`, `{{01}}`, `{{101}}`, `{{{1}}}` and a `}}` that closes no
 * placeholder are refused, with the offending piece and its (zero-based) character position.
 */
export function scanPlaceholders(text: string): PlaceholderScan {
  const seen = new Set<number>();
  let max = 0;
  const last = text.length - 1;
  for (let i = 0; i < last; i++) {
    const c = text.charCodeAt(i);
    if ((c !== OPEN && c !== CLOSE) || text.charCodeAt(i + 1) !== c) continue;
    if (c === CLOSE) {
      return { ok: false, expected: `"}}" only as the end of a placeholder {{1}}..{{${MAX_PLACEHOLDERS}}} (found ${quote(text, Math.max(0, i - 10), i + 2)} at character ${i})` };
    }
    DIGITS_IN_BRACES.lastIndex = i;
    const match = DIGITS_IN_BRACES.exec(text);
    if (match === null) {
      return { ok: false, expected: `nothing but placeholders {{1}}..{{${MAX_PLACEHOLDERS}}} between double braces (found ${openingAt(text, i)} at character ${i})` };
    }
    const digits = match[1]!;
    const n = Number(digits);
    if (digits.charCodeAt(0) === 0x30 || n > MAX_PLACEHOLDERS) {
      const why = n >= 1 && n <= MAX_PLACEHOLDERS ? ', written without leading zeros' : '';
      return { ok: false, expected: `placeholders numbered from {{1}} to {{${MAX_PLACEHOLDERS}}}${why} (found ${quote(text, i, i + match[0].length)} at character ${i})` };
    }
    seen.add(n);
    if (n > max) max = n;
    // On to the placeholder's closing "}}": a "}" right after it makes a stray "}}" found there.
    i += match[0].length - 2;
  }
  if (seen.size !== max) {
    const missing: number[] = [];
    for (let i = 1; i <= max && missing.length <= 10; i++) if (!seen.has(i)) missing.push(i);
    const listed = missing
      .slice(0, 10)
      .map((i) => `{{${i}}}`)
      .join(', ');
    return { ok: false, expected: `contiguous placeholders {{1}}..{{${max}}} (missing ${listed}${missing.length > 10 ? ', …' : ''})` };
  }
  return { ok: true, count: max };
}

/**
 * Fills `{{k}}` with `values[k - 1]`. The caller checks the text and the count first (see
 * `scanPlaceholders`); only placeholders of the grammar above are filled, and a placeholder without
 * a value is left as written rather than replaced by "undefined".
 */
export function renderTemplate(text: string, values: readonly string[]): string {
  if (values.length === 0) return text;
  return text.replace(PLACEHOLDER, (whole, digits: string) => {
    const value = values[Number(digits) - 1];
    return value === undefined ? whole : value;
  });
}

/** A template text split at its placeholders: literal parts, and [zero-based index, text as written]. */
export type CompiledTemplate = readonly (string | readonly [number, string])[];

/** Splits a text into literal parts and placeholders (`{{2}}` becomes [1, "{{2}}"]). */
export function compileTemplate(text: string): CompiledTemplate {
  const parts: (string | readonly [number, string])[] = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push([Number(match[1]) - 1, match[0]]);
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

/** Renders a compiled text; a placeholder without a value is left as written, like {@link renderTemplate}. */
export function renderCompiled(parts: CompiledTemplate, values: readonly string[]): string {
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    out += typeof p === 'string' ? p : (values[p[0]] ?? p[1]);
  }
  return out;
}
