/**
 * Tenants: API keys bound to companies, and which businesses each company owns.
 *
 * A business belongs to the company of its `companyId` in the fleet description, or to the default
 * company when it has none. A key sees and changes only its company's businesses, configuration
 * and reports. Keys are compared in constant time against every configured key (no early exit),
 * so the time of a lookup says nothing about which key, or which prefix, matched.
 */
import { readFileSync } from 'node:fs';
import { constantTimeEqual } from '../contract/api-key.js';
import type { Engine } from '../core/engine.js';

/** One API key and the company it acts for. */
export interface ApiKeyEntry {
  /** The secret sent in `x-api-key-id`. At least 16 characters. */
  readonly key: string;
  /** The company the key acts for (a positive integer). */
  readonly companyId: number;
  /** A name for logs and audits (the key itself is never logged). */
  readonly label?: string;
}

/** Environment variable read by {@link loadApiKeys}: `company:key` pairs separated by commas. */
export const API_KEYS_ENV = 'SENDPOOL_API_KEYS';

/** Shortest accepted key: a guessable key is no key. */
export const MIN_KEY_LENGTH = 16;

const API_KEYS = Symbol.for('sendpool.ApiKeysError');

/** Thrown for a keys file or variable that cannot be used; `problems` lists every problem. */
export class ApiKeysError extends Error {
  readonly [API_KEYS] = true;
  /** Every problem, each naming the entry (`keys[2].companyId`), expected and actual. */
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`API keys: ${problems.length} problem${problems.length === 1 ? '' : 's'}: ${problems.join('; ')}`);
    this.name = 'ApiKeysError';
    this.problems = problems;
  }
}

/** True when `e` is an {@link ApiKeysError}, from this copy of sendpool or another. */
export function isApiKeysError(e: unknown): e is ApiKeysError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[API_KEYS] === true;
}

/** Checks a list of key entries; throws {@link ApiKeysError} with every problem. */
export function checkApiKeys(entries: unknown, where = 'keys'): ApiKeyEntry[] {
  const problems: string[] = [];
  if (!Array.isArray(entries)) throw new ApiKeysError([`${where}: expected an array of { key, companyId }, got ${typeof entries}`]);
  const seen = new Set<string>();
  const out: ApiKeyEntry[] = [];
  entries.forEach((e: unknown, i) => {
    const at = `${where}[${i}]`;
    if (typeof e !== 'object' || e === null) {
      problems.push(`${at}: expected an object`);
      return;
    }
    const { key, companyId, label } = e as Record<string, unknown>;
    if (typeof key !== 'string' || key.length < MIN_KEY_LENGTH || key.length > 512 || /[\s,]/.test(key)) {
      problems.push(`${at}.key: expected a string of ${MIN_KEY_LENGTH} to 512 characters without spaces or commas`);
    } else if (seen.has(key)) problems.push(`${at}.key: the same key is listed twice`);
    else seen.add(key);
    if (typeof companyId !== 'number' || !Number.isSafeInteger(companyId) || companyId < 1) {
      problems.push(`${at}.companyId: expected a positive integer, got ${JSON.stringify(companyId)}`);
    }
    if (label !== undefined && typeof label !== 'string') problems.push(`${at}.label: expected a string`);
    if (typeof key === 'string' && typeof companyId === 'number') {
      out.push({ key, companyId, ...(typeof label === 'string' ? { label } : {}) });
    }
  });
  if (problems.length > 0) throw new ApiKeysError(problems);
  return out;
}

/**
 * Reads keys from a JSON file (`{ "keys": [{ "key", "companyId", "label"? }] }`) and/or the
 * `SENDPOOL_API_KEYS` variable (`1:key-of-company-1,2:key-of-company-2`). Both may be used; keys
 * are the union.
 */
export function loadApiKeys(source: { readonly file?: string; readonly env?: NodeJS.ProcessEnv }): ApiKeyEntry[] {
  const entries: ApiKeyEntry[] = [];
  if (source.file !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(source.file, 'utf8'));
    } catch (e) {
      throw new ApiKeysError([`${source.file}: ${e instanceof Error ? e.message : String(e)}`]);
    }
    const keys = typeof parsed === 'object' && parsed !== null ? (parsed as { keys?: unknown }).keys : undefined;
    entries.push(...checkApiKeys(keys, `${source.file}: keys`));
  }
  const text = source.env?.[API_KEYS_ENV];
  if (text !== undefined && text.trim() !== '') {
    const raw = text.split(',').map((pair, i) => {
      const colon = pair.indexOf(':');
      const company = colon < 0 ? Number.NaN : Number(pair.slice(0, colon).trim());
      return { key: colon < 0 ? pair.trim() : pair.slice(colon + 1).trim(), companyId: company, label: `${API_KEYS_ENV}[${i}]` };
    });
    entries.push(...checkApiKeys(raw, API_KEYS_ENV));
  }
  return checkApiKeys(entries, 'keys');
}

/** Key → company, and company → businesses. */
export class Tenants {
  readonly #keys: readonly ApiKeyEntry[];
  readonly #defaultCompany: number;
  readonly #engine: Engine;

  constructor(keys: readonly ApiKeyEntry[], engine: Engine, defaultCompanyId: number) {
    this.#keys = checkApiKeys([...keys]);
    this.#engine = engine;
    this.#defaultCompany = defaultCompanyId;
  }

  /** The entry of a key, comparing against every key in constant time. */
  resolve(key: string): ApiKeyEntry | undefined {
    let found: ApiKeyEntry | undefined;
    for (const entry of this.#keys) {
      if (constantTimeEqual(entry.key, key) && found === undefined) found = entry;
    }
    return found;
  }

  /** The company a business belongs to. */
  companyOf(businessId: number): number | undefined {
    try {
      return this.#engine.companyOf(businessId) ?? this.#defaultCompany;
    } catch {
      return undefined; // unknown business
    }
  }

  /** Whether `companyId` owns `businessId` (false for an unknown business). */
  owns(companyId: number, businessId: number): boolean {
    return this.companyOf(businessId) === companyId;
  }

  /** Every company that has a key (webhook secrets and configurations are per company). */
  companies(): number[] {
    return [...new Set(this.#keys.map((k) => k.companyId))].sort((a, b) => a - b);
  }
}
