/**
 * Validation of payloads against their schemas, with problems in the project's shape (JSON path,
 * expected, actual). Used by tests, by receivers that want to check what they got, and by the
 * server issue before a payload leaves.
 */
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { problem, type Problem } from '../core/problems.js';
import { registerEventFormats } from './schemas/formats.js';

/** `/messages/2/from_me` (JSON Pointer, TypeBox's error path) -> `$.messages[2].from_me`. */
function jsonPath(pointer: string): string {
  if (pointer === '') return '$';
  return (
    '$' +
    pointer
      .split('/')
      .slice(1)
      .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((k) => (/^\d+$/.test(k) ? `[${k}]` : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`))
      .join('')
  );
}

/** The schema in words: `"SENT"`, `integer`, `string or null`, `a valid HSM notification`. */
function describeSchema(schema: TSchema): string {
  const s = schema as { title?: unknown; const?: unknown; type?: unknown; format?: unknown; anyOf?: readonly TSchema[] };
  if (s.anyOf) {
    const titled = s.anyOf.every((m) => typeof (m as { title?: unknown }).title === 'string');
    return titled ? `one of the shapes ${s.anyOf.map((m) => JSON.stringify((m as { title: string }).title)).join(', ')}` : s.anyOf.map(describeSchema).join(' or ');
  }
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (typeof s.title === 'string') return `a valid ${s.title}`;
  if (typeof s.type === 'string') return typeof s.format === 'string' ? `${s.type} (${s.format})` : s.type;
  return 'a valid value';
}

function expectedOf(schema: TSchema, message: string, value: unknown): string {
  if (value === undefined && /required/i.test(message)) return 'a required property';
  return describeSchema(schema);
}

/**
 * Problems of `value` at JSON Pointer `base`. A union failure is explained by its closest member
 * (the one with the fewest problems), so a FAILED notification missing `reason` reads
 * "$.reason: expected string" rather than "matches none of ten shapes".
 */
function collect(schema: TSchema, value: unknown, base: string): Problem[] {
  if (Value.Check(schema, value)) return [];
  const problems: Problem[] = [];
  for (const e of Value.Errors(schema, value)) {
    const at = base + e.path;
    const members = (e.schema as { anyOf?: readonly TSchema[] }).anyOf;
    if (members && typeof e.value === 'object' && e.value !== null && !Array.isArray(e.value)) {
      let best: Problem[] | undefined;
      for (const m of members) {
        const found = collect(m, e.value, at);
        if (best === undefined || found.length < best.length) best = found;
      }
      if (best && best.length > 0) {
        problems.push(...best);
        continue;
      }
    }
    problems.push(problem(jsonPath(at), expectedOf(e.schema, e.message, e.value), e.value));
  }
  return problems;
}

/** Every problem of `value` against `schema` (empty when it validates). */
export function validatePayload(schema: TSchema, value: unknown): Problem[] {
  registerEventFormats();
  // TypeBox reports a missing key twice (required, then its type): keep the first per path.
  const seen = new Set<string>();
  return collect(schema, value, '').filter((p) => !seen.has(p.path) && (seen.add(p.path), true));
}
