/**
 * Raw request body → JSON value, with the size limit, before any contract check. Separate from
 * the parsers so a host whose framework already decoded JSON can skip it.
 */
import { type Problem, problem } from '../core/problems.js';
import { type ContractLimits, DEFAULT_MAX_BODY_BYTES } from './limits.js';

/** Options of {@link parseJsonBody}. */
export type JsonBodyOptions = Pick<ContractLimits, 'maxBodyBytes'>;

/** A decoded body, or why it could not be decoded (an {@link ErrorCode} of the error body). */
export type JsonBodyResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly code: 'body_too_large' | 'invalid_json'; readonly problems: readonly Problem[] };

/** UTF-8 length of a string without allocating (lone surrogates count 3, as TextEncoder writes U+FFFD). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Decodes a request body. `byteLength` may be passed when the host already knows it (from the
 * bytes received, not from a client's Content-Length).
 */
export function parseJsonBody(text: string, options: JsonBodyOptions = {}, byteLength?: number): JsonBodyResult {
  const max = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // A string of n UTF-16 units has at most 3n bytes: skip the count for small bodies.
  const size = byteLength ?? (text.length * 3 <= max ? 0 : utf8Length(text));
  if (size > max) {
    return { ok: false, code: 'body_too_large', problems: [problem('$', `a body of at most ${max} bytes`, `${size} bytes`)] };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    const detail = e instanceof Error ? e.message : 'syntax error';
    return { ok: false, code: 'invalid_json', problems: [{ path: '$', expected: 'valid JSON', actual: detail, message: `$: expected valid JSON, got ${detail}` }] };
  }
}

/** True for `application/json` and `application/*+json`, with or without parameters (charset must be UTF-8). */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [type = '', ...params] = header
    .toLowerCase()
    .split(';')
    .map((s) => s.trim());
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false;
  const charset = params.find((p) => p.startsWith('charset='));
  return charset === undefined || charset.replace(/"/g, '') === 'charset=utf-8';
}
