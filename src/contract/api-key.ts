/**
 * The API key header (spec 5): every request carries `x-api-key-id: <API_KEY>`. The spec leaves
 * the failure behaviour open; the contract answers 401 with code `missing_api_key` when the header
 * is absent or empty and `invalid_api_key` when it is present but unknown (or given twice). There
 * is no 403: the spec shows no key scopes. Keys are compared in constant time.
 */

/** Header name, lower case as Node and the Fetch API hand it over. */
export const API_KEY_HEADER = 'x-api-key-id';

/** Longest key considered; longer values are refused without comparing. */
const MAX_KEY_LENGTH = 512;

/** Request headers as Node (`IncomingHttpHeaders`) or the Fetch API (`Headers`) give them. */
export type HeaderSource = Readonly<Record<string, string | readonly string[] | undefined>> | { get(name: string): string | null };

/** The outcome of the header check. */
export type ApiKeyCheck = { readonly ok: true; readonly key: string } | { readonly ok: false; readonly code: 'missing_api_key' | 'invalid_api_key' };

function headerValue(headers: HeaderSource): string | readonly string[] | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(API_KEY_HEADER) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  if (Object.prototype.hasOwnProperty.call(record, API_KEY_HEADER)) return record[API_KEY_HEADER];
  const name = Object.keys(record).find((k) => k.toLowerCase() === API_KEY_HEADER);
  return name === undefined ? undefined : record[name];
}

/**
 * Checks the API key header. `isKnown` says whether a key is valid (e.g. {@link apiKeyMatcher} of
 * the configured keys, or a lookup of a hash in the host's database).
 */
export function checkApiKey(headers: HeaderSource, isKnown: (key: string) => boolean): ApiKeyCheck {
  const value = headerValue(headers);
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return { ok: false, code: 'missing_api_key' };
  // Repeated headers arrive as an array (or joined with ", " by Fetch): ambiguous, refused.
  if (typeof value !== 'string' || value.includes(',')) return { ok: false, code: 'invalid_api_key' };
  const key = value.trim();
  if (key === '') return { ok: false, code: 'missing_api_key' };
  if (key.length > MAX_KEY_LENGTH || !isKnown(key)) return { ok: false, code: 'invalid_api_key' };
  return { ok: true, key };
}

/** Compares two strings in time that depends only on their lengths, not on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

/** A key check against a fixed list of keys: every key is compared, in constant time. */
export function apiKeyMatcher(keys: readonly string[]): (key: string) => boolean {
  const known = [...keys];
  return (key) => {
    let found = false;
    for (const k of known) found = constantTimeEqual(k, key) || found;
    return found;
  };
}
