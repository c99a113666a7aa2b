/**
 * POST /messenger/config/ body → a checked partial update, and the merge with the current
 * configuration. Any subset of the four URLs may be given; `null` clears one; an absent key keeps
 * its value; `{}` changes nothing. Each URL passes the SSRF policy of url-policy.ts.
 *
 * Never throws on any input.
 */
import { type Problem, pathKey, problem } from '../core/problems.js';
import type { ParseResult } from './check.js';
import { type ConfigUpdate, ConfigUpdateSchema, WEBHOOK_URL_KEYS, type WebhookConfig } from './config-schema.js';
import { schemaProblems } from './schema-check.js';
import { type UrlPolicy, checkUrl } from './url-policy.js';

/** Options of {@link parseConfig}. */
export interface ConfigOptions {
  /** What webhook targets may point at. @default public hosts only */
  readonly urlPolicy?: UrlPolicy;
}

/** Parses and checks a POST /messenger/config/ body (already decoded from JSON). URLs come back normalised. */
export function parseConfig(body: unknown, options: ConfigOptions = {}): ParseResult<ConfigUpdate, Problem> {
  try {
    const problems: Problem[] = [];
    for (const p of schemaProblems(ConfigUpdateSchema, body)) problems.push(p);
    const update: ConfigUpdate = {};
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const record = body as Record<string, unknown>;
      for (const key of WEBHOOK_URL_KEYS) {
        if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
        const value = record[key];
        if (value === null) update[key] = null;
        else if (typeof value === 'string' && !problems.some((p) => p.path === pathKey('$', key))) {
          const url = checkUrl(value, options.urlPolicy);
          if (url.ok) update[key] = url.value;
          else problems.push(problem(pathKey('$', key), url.expected, value));
        }
      }
    }
    return problems.length > 0 ? { ok: false, problems } : { ok: true, value: update };
  } catch {
    return { ok: false, problems: [problem('$', 'a JSON object', body)] };
  }
}

/** The configuration after applying `update` to `current` (pure: neither is changed). */
export function mergeConfig(current: WebhookConfig, update: ConfigUpdate): WebhookConfig {
  const next: WebhookConfig = { ...current };
  for (const key of WEBHOOK_URL_KEYS) {
    const value = update[key];
    if (value !== undefined) next[key] = value;
  }
  return next;
}
