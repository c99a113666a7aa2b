/**
 * Checks a value against the JSON Schema subset our TypeBox schemas use and collects every
 * problem, each with its JSON path, the expected value in words and the actual value; past a bound
 * (`schemaProblems`' limit) problems are only counted, so a hostile body costs no text.
 *
 * Two passes, measured (bench/contract.bench.ts): TypeBox's compiled validator answers "valid or
 * not" for a 10,000-contact body in about a millisecond, and only a body it refuses is walked by
 * this interpreter to list every problem in words. The compiled validator cannot be the only
 * pass: it fails any schema carrying a `format` it has not been told about (we document URLs as
 * `format: "uri"` but check them with our own SSRF-aware rules; registering formats is a
 * process-wide side effect), and its error list needs rewording and de-duplicating. So `format`
 * is stripped before compiling, and when compiling is impossible (`new Function` forbidden by a
 * content security policy) the interpreter alone answers.
 *
 * Supported keywords: type, const, anyOf, properties, required, additionalProperties (false),
 * patternProperties, min/maxProperties, items, min/maxItems, min/maxLength, pattern,
 * minimum/maximum. `format` is documentation only here. Lengths count UTF-16 code units.
 */
import { type TSchema, TypeGuard } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type Problem, pathIndex, pathKey, problem } from '../core/problems.js';
import { capProblems } from './problem-cap.js';

type Schema = Readonly<Record<string, unknown>>;

const regexCache = new Map<string, RegExp>();
function regex(source: string): RegExp {
  let re = regexCache.get(source);
  if (re === undefined) {
    re = new RegExp(source); // no `u` flag: lengths in UTF-16 units, as maxLength and TypeBox count
    regexCache.set(source, re);
  }
  return re;
}

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function num(schema: Schema, key: string): number | undefined {
  const v = schema[key];
  return typeof v === 'number' ? v : undefined;
}

function range(min: number | undefined, max: number | undefined, unit: string): string {
  const u = unit === '' ? '' : ` ${unit}`;
  if (min !== undefined && max !== undefined && max < Number.MAX_SAFE_INTEGER) {
    return min === max ? ` of exactly ${min}${min === 1 ? u.replace(/s$/, '') : u}` : ` of ${min} to ${max}${u}`;
  }
  if (max !== undefined && max < Number.MAX_SAFE_INTEGER) return ` of at most ${max}${u}`;
  if (min !== undefined && min > 0) return ` of at least ${min}${u}`;
  return '';
}

function numberRange(min: number | undefined, max: number | undefined): string {
  const hasMax = max !== undefined && max < Number.MAX_SAFE_INTEGER;
  if (min !== undefined && hasMax) return ` from ${min} to ${max}`;
  if (min !== undefined) return min === 1 ? ' from 1 (positive)' : ` from ${min}`;
  if (hasMax) return ` up to ${max}`;
  return '';
}

/** The value a schema wants, in words: `an integer from 0 to 10`, `a URL or null`. */
function expectedOf(schema: Schema): string {
  if (hasOwn(schema, 'const')) return JSON.stringify(schema['const']);
  const anyOf = schema['anyOf'];
  if (Array.isArray(anyOf)) {
    const branches = anyOf as Schema[];
    if (branches.every((b) => hasOwn(b, 'const'))) {
      return `one of ${branches.map((b) => JSON.stringify(b['const'])).join(', ')}`;
    }
    return branches.map(expectedOf).join(' or ');
  }
  switch (schema['type']) {
    case 'string': {
      const format = schema['format'];
      const base = format === 'uri' ? 'a URL' : format === 'date-time' ? 'a date-time (ISO 8601)' : 'a string';
      const min = num(schema, 'minLength');
      const max = num(schema, 'maxLength');
      if (min === 1 && max !== undefined) return `a non-empty ${base.slice(2)} of at most ${max} characters`;
      return `${base}${range(min, max, 'characters')}`;
    }
    case 'integer':
      return `an integer${numberRange(num(schema, 'minimum'), num(schema, 'maximum'))}`;
    case 'number':
      return `a number${numberRange(num(schema, 'minimum'), num(schema, 'maximum'))}`;
    case 'boolean':
      return 'a boolean';
    case 'null':
      return 'null';
    case 'array':
      return `an array${range(num(schema, 'minItems'), num(schema, 'maxItems'), 'items')}`;
    case 'object': {
      const pattern = schema['patternProperties'];
      const keys = range(num(schema, 'minProperties'), num(schema, 'maxProperties'), 'keys');
      if (typeof pattern === 'object' && pattern !== null) {
        const values = Object.values(pattern as Record<string, Schema>)[0];
        return `an object${keys} whose values are ${values ? expectedOf(values).replace(/^an? /, '') + 's' : 'values'}`;
      }
      return `an object${keys}`;
    }
    default:
      return 'a JSON value';
  }
}

function typeMatches(type: unknown, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

/**
 * Where the walk puts problems: the first `limit` are built and listed, the rest only counted (a
 * problem's text costs far more than counting it, and a hostile body can hold a million).
 */
interface Sink {
  readonly list: Problem[];
  readonly limit: number;
  count: number;
}

/** Records a problem; what was expected is phrased (from the schema, or by `expected()`) only when the problem is listed. */
function report(sink: Sink, path: string, expected: Schema | (() => string), value: unknown): void {
  sink.count++;
  if (sink.list.length < sink.limit) sink.list.push(problem(path, typeof expected === 'function' ? expected() : expectedOf(expected), value));
}

/**
 * Checks `value` at `path` against `schema`, appending every problem to `problems`. One problem
 * per offending value; objects and arrays report each member, so a body with ten bad fields gets
 * ten problems.
 */
export function checkSchema(schema: Schema, value: unknown, path: string, problems: Problem[]): void {
  walk(schema, value, path, { list: problems, limit: Infinity, count: 0 });
}

function walk(schema: Schema, value: unknown, path: string, problems: Sink): void {
  const anyOf = schema['anyOf'];
  if (Array.isArray(anyOf)) {
    const branches = anyOf as Schema[];
    for (const branch of branches) {
      // Only "does it pass?" matters here: count, build nothing.
      const scratch: Sink = { list: [], limit: 0, count: 0 };
      walk(branch, value, path, scratch);
      if (scratch.count === 0) return;
    }
    // One branch of the right JSON type (a string for "a URL or null") explains the failure best.
    const typed = branches.filter((b) => b['type'] !== undefined && !hasOwn(b, 'const') && typeMatches(b['type'], value));
    if (typed.length === 1 && typed[0] !== undefined) {
      walk(typed[0], value, path, problems);
      return;
    }
    report(problems, path, schema, value);
    return;
  }
  if (hasOwn(schema, 'const')) {
    if (value !== schema['const']) report(problems, path, schema, value);
    return;
  }
  const type = schema['type'];
  if (!typeMatches(type, value)) {
    report(problems, path, schema, value);
    return;
  }
  switch (type) {
    case 'string':
      checkString(schema, value as string, path, problems);
      return;
    case 'integer':
    case 'number':
      checkNumber(schema, value as number, path, problems);
      return;
    case 'array':
      checkArray(schema, value as unknown[], path, problems);
      return;
    case 'object':
      checkObject(schema, value as Record<string, unknown>, path, problems);
      return;
    default:
      return;
  }
}

function checkString(schema: Schema, value: string, path: string, problems: Sink): void {
  const min = num(schema, 'minLength');
  const max = num(schema, 'maxLength');
  const pattern = schema['pattern'];
  if ((min !== undefined && value.length < min) || (max !== undefined && value.length > max) || (typeof pattern === 'string' && !regex(pattern).test(value))) {
    report(problems, path, schema, value);
  }
}

function checkNumber(schema: Schema, value: number, path: string, problems: Sink): void {
  const min = num(schema, 'minimum');
  const max = num(schema, 'maximum');
  if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
    report(problems, path, schema, value);
  }
}

function checkArray(schema: Schema, value: unknown[], path: string, problems: Sink): void {
  const min = num(schema, 'minItems');
  const max = num(schema, 'maxItems');
  if (max !== undefined && value.length > max) {
    // Too long: say so once and do not walk a body that is over the limit anyway.
    report(problems, path, schema, value);
    return;
  }
  if (min !== undefined && value.length < min) report(problems, path, schema, value);
  const items = schema['items'];
  if (typeof items !== 'object' || items === null) return;
  for (let i = 0; i < value.length; i++) walk(items as Schema, value[i], pathIndex(path, i), problems);
}

function checkObject(schema: Schema, value: Record<string, unknown>, path: string, problems: Sink): void {
  const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
  const patterns = schema['patternProperties'] as Record<string, Schema> | undefined;
  const required = (schema['required'] ?? []) as string[];
  const keys = Object.keys(value);
  const min = num(schema, 'minProperties');
  const max = num(schema, 'maxProperties');
  if ((min !== undefined && keys.length < min) || (max !== undefined && keys.length > max)) {
    report(problems, path, schema, value);
    if (max !== undefined && keys.length > max) return;
  }
  for (const key of required) {
    const property = properties[key];
    if (property !== undefined && !hasOwn(value, key)) report(problems, pathKey(path, key), property, undefined);
  }
  for (const key of keys) {
    const child = pathKey(path, key);
    const property = hasOwn(properties, key) ? properties[key] : undefined;
    if (property !== undefined) {
      walk(property, value[key], child, problems);
      continue;
    }
    if (patterns !== undefined) {
      const entry = Object.entries(patterns).find(([source]) => regex(source).test(key));
      if (entry !== undefined) walk(entry[1], value[key], child, problems);
      else report(problems, child, () => `a key matching /${Object.keys(patterns).join('|')}/`, key);
      continue;
    }
    if (schema['additionalProperties'] === false) {
      report(problems, child, () => `no such field (known: ${Object.keys(properties).join(', ')})`, value[key]);
    }
  }
}

/** A copy of a TypeBox schema without `format` (kept: TypeBox's symbol keys, which compiling needs). */
function withoutFormats(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutFormats);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string | symbol, unknown> = {};
  for (const key of Reflect.ownKeys(value)) {
    if (key === 'format') continue;
    out[key] = withoutFormats((value as Record<string | symbol, unknown>)[key]);
  }
  return out;
}

const compiled = new WeakMap<object, (value: unknown) => boolean>();

/**
 * The compiled "is it valid?" check of a schema (TypeBox, formats ignored), or a check that always
 * says "walk it" when compiling is not possible.
 */
export function fastCheck(schema: TSchema): (value: unknown) => boolean {
  let check = compiled.get(schema);
  if (check === undefined) {
    try {
      const stripped = withoutFormats(schema);
      const validator = TypeGuard.IsSchema(stripped) ? TypeCompiler.Compile(stripped) : undefined;
      check = validator === undefined ? () => false : (value) => validator.Check(value);
    } catch {
      check = () => false;
    }
    compiled.set(schema, check);
  }
  return check;
}

/**
 * Problems gathered over several walks, as one walk of the whole would list them: the first
 * `limit` listed, the rest counted. For a parser that checks the parts of a body one at a time.
 */
export interface ProblemSink {
  /** Problems found so far, listed or counted. */
  readonly count: number;
}

/** An empty sink that lists the first `limit` problems walked into it and counts the rest. */
export function createProblemSink(limit = Infinity): ProblemSink {
  const sink: Sink = { list: [], limit, count: 0 };
  return sink;
}

/** Walks `value` at `path` into `sink` (no compiled check first: call it on a value the compiled check refused). */
export function walkSchema(schema: TSchema, value: unknown, path: string, sink: ProblemSink): void {
  walk(schema, value, path, sink as Sink);
}

/** The problems a sink listed (its first `limit`), without the one that counts the rest. */
export function sinkListed(sink: ProblemSink): readonly Problem[] {
  return (sink as Sink).list;
}

/** The problems of a sink, capped as {@link schemaProblems} caps them. */
export function sinkProblems(sink: ProblemSink): Problem[] {
  const s = sink as Sink;
  return s.count > s.list.length ? capProblems(s.list, s.count, s.limit) : s.list;
}

/**
 * The problems of `value` against `schema` (empty when valid): compiled check first, walk on
 * failure. With `limit`, the first `limit` problems and, when there are more, one last problem
 * that counts the rest (see problem-cap.ts); the walk builds no text for those.
 */
export function schemaProblems(schema: TSchema, value: unknown, limit = Infinity): Problem[] {
  if (fastCheck(schema)(value)) return [];
  const sink = createProblemSink(limit);
  walkSchema(schema, value, '$', sink);
  return sinkProblems(sink);
}
