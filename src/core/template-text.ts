/**
 * Template text with positional placeholders `{{1}}`, `{{2}}`, … (spec 2.2). Placeholders are
 * 1-based and must be contiguous, as the channel requires; the spec's `variables` entries carry a
 * zero-based `index` into the contact's `template_variables`.
 */

const PLACEHOLDER = /\{\{\s*(\d+)\s*\}\}/g;

/** Most placeholders a template may take (the contract caps `template_variables` at the same). */
export const MAX_PLACEHOLDERS = 100;

/** What a template text asks for: how many values, or why the text is unusable. */
export type PlaceholderScan =
  | { readonly ok: true; readonly count: number }
  | { readonly ok: false; readonly expected: string };

/**
 * Counts the placeholders of a template text. Valid texts use each of `{{1}}` … `{{n}}` at least
 * once (a placeholder may repeat) and nothing else between double braces.
 */
export function scanPlaceholders(text: string): PlaceholderScan {
  const seen = new Set<number>();
  let max = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    const n = Number(match[1]);
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_PLACEHOLDERS) {
      return { ok: false, expected: `placeholders numbered from {{1}} to {{${MAX_PLACEHOLDERS}}}` };
    }
    seen.add(n);
    if (n > max) max = n;
  }
  if (seen.size !== max) {
    const missing: number[] = [];
    for (let i = 1; i <= max && missing.length <= 10; i++) if (!seen.has(i)) missing.push(i);
    const listed = missing.slice(0, 10).map((i) => `{{${i}}}`).join(', ');
    return { ok: false, expected: `contiguous placeholders {{1}}..{{${max}}} (missing ${listed}${missing.length > 10 ? ', …' : ''})` };
  }
  return { ok: true, count: max };
}

/**
 * Fills `{{k}}` with `values[k - 1]`. The caller checks the count first (see `scanPlaceholders`);
 * a placeholder without a value is left as written rather than replaced by "undefined".
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
