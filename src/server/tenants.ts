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

/** One API key: a company's ({@link CompanyApiKey}) or an operator's ({@link OperatorApiKey}). */
export type ApiKeyEntry = CompanyApiKey | OperatorApiKey;

/** A key that acts for one company: it sees and changes only that company's businesses. */
export interface CompanyApiKey {
  /** The secret sent in `x-api-key-id`. At least 16 characters. */
  readonly key: string;
  /** The company the key acts for (a positive integer). */
  readonly companyId: number;
  /** A name for logs and audits (the key itself is never logged). */
  readonly label?: string;
  readonly operator?: false;
}

/**
 * A key of the platform's operators: it reads and steers every company's numbers, templates and
 * queues (GET and POST under /operator/numbers/, /operator/templates/, /operator/queues/) and the
 * dashboard's data, and is refused everywhere else (it sends nothing and holds no configuration).
 */
export interface OperatorApiKey {
  /** The secret sent in `x-api-key-id`. At least 16 characters. */
  readonly key: string;
  readonly operator: true;
  /** A name for logs and audits (the key itself is never logged). */
  readonly label?: string;
}

/** Environment variable read by {@link loadApiKeys}: `company:key` pairs (`operator:key` for an operator key) separated by commas. */
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
    const { key, companyId, label, operator } = e as Record<string, unknown>;
    const keyProblem = secretProblem(key, seen, at);
    if (keyProblem !== undefined) problems.push(keyProblem);
    problems.push(...holderProblems(operator, companyId, at));
    if (label !== undefined && typeof label !== 'string') problems.push(`${at}.label: expected a string`);
    const named = typeof label === 'string' ? { label } : {};
    if (typeof key === 'string' && operator === true) out.push({ key, operator: true, ...named });
    else if (typeof key === 'string' && typeof companyId === 'number') out.push({ key, companyId, ...named });
  });
  if (problems.length > 0) throw new ApiKeysError(problems);
  return out;
}

/** What is wrong with an entry's secret (`at.key`), if anything; a good key is added to `seen`. */
function secretProblem(key: unknown, seen: Set<string>, at: string): string | undefined {
  if (typeof key !== 'string' || key.length < MIN_KEY_LENGTH || key.length > 512 || /[\s,]/.test(key)) {
    return `${at}.key: expected a string of ${MIN_KEY_LENGTH} to 512 characters without spaces or commas`;
  }
  if (seen.has(key)) return `${at}.key: the same key is listed twice`;
  seen.add(key);
  return undefined;
}

/** What is wrong with whom an entry acts for: an operator (every company) or one company. */
function holderProblems(operator: unknown, companyId: unknown, at: string): string[] {
  const problems: string[] = [];
  if (operator !== undefined && typeof operator !== 'boolean') problems.push(`${at}.operator: expected true or false, got ${JSON.stringify(operator)}`);
  if (operator === true) {
    if (companyId !== undefined) problems.push(`${at}.companyId: an operator key acts for every company: leave companyId out, got ${JSON.stringify(companyId)}`);
  } else if (typeof companyId !== 'number' || !Number.isSafeInteger(companyId) || companyId < 1) {
    problems.push(`${at}.companyId: expected a positive integer, got ${JSON.stringify(companyId)}`);
  }
  return problems;
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
      const who = colon < 0 ? '' : pair.slice(0, colon).trim();
      const key = colon < 0 ? pair.trim() : pair.slice(colon + 1).trim();
      const label = `${API_KEYS_ENV}[${i}]`;
      return who === 'operator' ? { key, operator: true, label } : { key, companyId: colon < 0 ? Number.NaN : Number(who), label };
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

  /**
   * Whether a request's key sees `businessId`: an operator key sees every business, a company's key
   * those of its company (false for an unknown business).
   */
  sees(key: { readonly companyId: number; readonly operator: boolean }, businessId: number): boolean {
    return key.operator ? this.companyOf(businessId) !== undefined : this.owns(key.companyId, businessId);
  }

  /** Whether `companyId` owns `businessId` (false for an unknown business). */
  owns(companyId: number, businessId: number): boolean {
    return this.companyOf(businessId) === companyId;
  }

  /** Every company that has a key (webhook secrets and configurations are per company). */
  companies(): number[] {
    return [...new Set(this.#keys.flatMap((k) => (k.operator === true ? [] : [k.companyId])))].sort((a, b) => a - b);
  }
}
