/**
 * Checks of single server options, shared by `buildServer` (which names the option, e.g.
 * `metrics.key`) and `sendpool serve` (which names the flag). Pure and free of fastify, so the
 * command line can use them without loading the server. Each answers a {@link Problem} or nothing.
 */
import { problem, type Problem } from '../../core/problems.js';

/** Shortest metrics key: the length of an API key (a secret a scraper sends on every scrape). */
export const MIN_METRICS_KEY_LENGTH = 16;
/** Shortest report token key, in bytes: the output size of HMAC-SHA256, as RFC 2104 advises. */
export const MIN_REPORT_TOKEN_KEY_BYTES = 32;

/** An integer in `[min, max]`. */
export function integerProblem(path: string, value: unknown, min: number, max: number, unit = ''): Problem | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max) return undefined;
  return problem(path, `an integer from ${min} to ${max}${unit ? ` (${unit})` : ''}`, value);
}

/**
 * A secret string: `minLength` to 512 characters, no whitespace (it travels in a header). The value
 * is never shown, only its length.
 */
export function secretProblem(path: string, value: unknown, minLength: number): Problem | undefined {
  const expected = `a string of ${minLength} to 512 characters without whitespace`;
  if (typeof value !== 'string') return problem(path, expected, value);
  if (value.length >= minLength && value.length <= 512 && !/\s/.test(value)) return undefined;
  const actual = /\s/.test(value) ? `a string with whitespace (${value.length} characters)` : `a string of ${value.length} characters`;
  return { path, expected, actual, message: `${path}: expected ${expected}, got ${actual}` };
}

/** A key of at least {@link MIN_REPORT_TOKEN_KEY_BYTES} bytes (a string counts its UTF-8 bytes). Never shown. */
export function reportTokenKeyProblem(path: string, value: unknown): Problem | undefined {
  const expected = `a string or bytes of at least ${MIN_REPORT_TOKEN_KEY_BYTES} bytes`;
  let bytes: number;
  if (typeof value === 'string') bytes = Buffer.byteLength(value, 'utf8');
  else if (value instanceof Uint8Array) bytes = value.byteLength;
  else return problem(path, expected, value);
  if (bytes >= MIN_REPORT_TOKEN_KEY_BYTES) return undefined;
  const actual = `${bytes} byte${bytes === 1 ? '' : 's'}`;
  return { path, expected, actual, message: `${path}: expected ${expected}, got ${actual}` };
}

/**
 * The public origin of report links: an absolute http(s) URL, optionally with a path (a proxy's
 * prefix), without credentials, query or fragment (the download path and token are appended).
 */
export function publicBaseUrlProblem(path: string, value: unknown): Problem | undefined {
  const expected = 'an http or https URL without credentials, query or fragment, such as https://api.example.com';
  if (typeof value !== 'string') return problem(path, expected, value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return problem(path, expected, value);
  }
  const ok = (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.search === '' && url.hash === '' && !/[?#]/.test(value);
  return ok ? undefined : problem(path, expected, value);
}

/** A TCP port; 0 picks a free one. */
export function portProblem(path: string, value: unknown): Problem | undefined {
  return integerProblem(path, value, 0, 65_535);
}

/** A host to listen on: a name or an address, no scheme, no port. */
export function hostProblem(path: string, value: unknown): Problem | undefined {
  if (typeof value === 'string' && /^[A-Za-z0-9.:_-]{1,253}$/.test(value) && !value.includes('://')) return undefined;
  return problem(path, 'a host name or IP address, such as 127.0.0.1, 0.0.0.0 or ::1', value);
}
