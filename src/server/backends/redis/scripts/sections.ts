/**
 * Named, length-prefixed sections: the ARGV of a script that does several things in one atomic
 * call (the queue's step, its rebuild). One schema declares the sections; {@link encodeSections}
 * writes them, the Lua module {@link SECTIONS_LUA} reads them into a table of named values (the
 * schema is written into the script as a Lua literal, so both sides read one declaration), and
 * {@link readSections} reads them in TypeScript as the Lua does (the codec tests' round trip).
 *
 * Wire: each section is its name, the count of values that follow, then its value:
 *   str, int   one value (Lua sees the string: it calls tonumber where it counts)
 *   bool       '1' or '0' (Lua: true or false)
 *   key        the index in KEYS of a key (each key once); Lua sees the key
 *   strs       count n, then n values (Lua: a list)
 *   pairs      count n, then n field/value pairs (Lua: a flat list, ready for HSET)
 *   records    count n, then n records, each its fields in the schema's order, written as above
 * A section out of place, or whose values do not add up to its count, fails the script before it
 * writes anything.
 */
import { RedisScriptError } from './errors.js';
import { luaModule } from './lua.js';
import type { ScriptCall } from './codec.js';

export type FieldKind = 'str' | 'int' | 'bool' | 'key' | 'strs' | 'pairs';
/** A record's fields, in wire order. */
export type RecordShape = Readonly<Record<string, FieldKind>>;
export interface RecordsSpec<R extends RecordShape = RecordShape> {
  readonly records: R;
}
export type SectionSpec = FieldKind | RecordsSpec;
/** A script's sections, in wire order. */
export type SectionSchema = Readonly<Record<string, SectionSpec>>;

/** A field/value pair (HSET's). */
export type Pair = readonly [field: string, value: string];
type FieldValue<K extends FieldKind> = K extends 'int' ? number : K extends 'bool' ? boolean : K extends 'strs' ? readonly string[] : K extends 'pairs' ? readonly Pair[] : string;
export type RecordOf<R extends RecordShape> = { readonly [F in keyof R]: FieldValue<R[F]> };
type SectionValue<S extends SectionSpec> = S extends FieldKind ? FieldValue<S> : S extends RecordsSpec<infer R> ? readonly RecordOf<R>[] : never;
/** The named values a schema's sections carry. */
export type SectionsOf<S extends SectionSchema> = { readonly [N in keyof S]: SectionValue<S[N]> };

/** A section of records of `shape`. */
export function records<const R extends RecordShape>(shape: R): RecordsSpec<R> {
  return { records: shape };
}

const NAME = /^[A-Za-z][A-Za-z0-9]*$/;

/** Checks a schema's names once, at its declaration (they are written into Lua). */
export function sectionSchema<const S extends SectionSchema>(script: string, schema: S): S {
  for (const [name, spec] of Object.entries(schema)) {
    const names = typeof spec === 'string' ? [name] : [name, ...Object.keys(spec.records)];
    for (const n of names) if (!NAME.test(n)) throw new RedisScriptError(script, `section or field name ${JSON.stringify(n)}: expected letters and digits`);
  }
  return schema;
}

/** Writes `values` as `schema`'s sections; keys go in KEYS, each once, in the order first met. */
export function encodeSections<S extends SectionSchema>(script: string, schema: S, values: SectionsOf<S>): ScriptCall {
  const keys: string[] = [];
  const index = new Map<string, number>();
  const argv: string[] = [];
  const field = (kind: FieldKind, v: unknown, where: string): void => {
    const refuse = (): never => {
      throw new RedisScriptError(script, `${where}: expected ${kind}, got ${typeof v === 'number' ? String(v) : typeof v}`);
    };
    switch (kind) {
      case 'str':
        argv.push(typeof v === 'string' ? v : refuse());
        return;
      case 'int':
        argv.push(typeof v === 'number' && Number.isFinite(v) ? String(v) : refuse());
        return;
      case 'bool':
        argv.push(typeof v === 'boolean' ? (v ? '1' : '0') : refuse());
        return;
      case 'key': {
        const key = typeof v === 'string' ? v : refuse();
        let i = index.get(key);
        if (i === undefined) index.set(key, (i = keys.push(key)));
        argv.push(String(i));
        return;
      }
      case 'strs': {
        const list = Array.isArray(v) && v.every((s) => typeof s === 'string') ? (v as readonly string[]) : refuse();
        argv.push(String(list.length));
        for (const value of list) argv.push(value);
        return;
      }
      case 'pairs': {
        const list = Array.isArray(v) && v.every(isPair) ? (v as readonly Pair[]) : refuse();
        argv.push(String(list.length));
        for (const [f, value] of list) argv.push(f, value);
        return;
      }
    }
  };
  for (const [name, spec] of Object.entries(schema)) {
    const v = (values as Record<string, unknown>)[name];
    argv.push(name, '');
    const sizeAt = argv.length - 1;
    if (typeof spec === 'string') field(spec, v, name);
    else {
      if (!Array.isArray(v)) throw new RedisScriptError(script, `${name}: expected a list of records, got ${typeof v}`);
      argv.push(String(v.length));
      v.forEach((r: Record<string, unknown>, i) => {
        for (const [f, kind] of Object.entries(spec.records)) field(kind, r[f], `${name}[${i}].${f}`);
      });
    }
    argv[sizeAt] = String(argv.length - sizeAt - 1);
  }
  return { keys, argv };
}

function isPair(p: unknown): p is Pair {
  return Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string';
}

/** Reads sections as the Lua module does (what a script sees of `encodeSections`' call). */
export function readSections<S extends SectionSchema>(script: string, schema: S, call: ScriptCall): SectionsOf<S> {
  const argv = call.argv.map(String);
  let at = 0;
  const fail = (message: string): never => {
    throw new RedisScriptError(script, `ARGV[${at + 1}]: ${message}`);
  };
  const take = (): string => (at < argv.length ? argv[at++]! : fail('expected a value, found the end'));
  const count = (): number => {
    const n = Number(take());
    return Number.isInteger(n) && n >= 0 ? n : fail('expected a count');
  };
  const field = (kind: FieldKind): unknown => {
    switch (kind) {
      case 'str':
        return take();
      case 'int':
        return Number(take());
      case 'bool':
        return take() === '1';
      case 'key': {
        const key = call.keys[Number(take()) - 1];
        return key ?? fail('expected the index of a key');
      }
      case 'strs':
        return Array.from({ length: count() }, take);
      case 'pairs':
        return Array.from({ length: count() }, (): Pair => [take(), take()]);
    }
  };
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(schema)) {
    if (take() !== name) fail(`expected section ${name}`);
    const size = count();
    const first = at;
    if (typeof spec === 'string') out[name] = field(spec);
    else out[name] = Array.from({ length: count() }, () => Object.fromEntries(Object.entries(spec.records).map(([f, kind]) => [f, field(kind)])));
    if (at !== first + size) fail(`section ${name}: ${at - first} values read, ${size} said`);
  }
  if (at !== argv.length) fail('values after the last section');
  return out as SectionsOf<S>;
}

/** The schema as a Lua literal for `sections_read`: `{ {name, kind}, … }`, a records spec as its fields' list. */
export function luaSchema(schema: SectionSchema): string {
  const entry = (name: string, kind: string) => `{ '${name}', ${kind} }`;
  const spec = (s: SectionSpec) =>
    typeof s === 'string'
      ? `'${s}'`
      : `{ ${Object.entries(s.records)
          .map(([f, k]) => entry(f, `'${k}'`))
          .join(', ')} }`;
  return `{ ${Object.entries(schema)
    .map(([name, s]) => entry(name, spec(s)))
    .join(', ')} }`;
}

/** The first lines of a sectioned script: `A` its named values, `AT` where each section's values start in ARGV. */
export function sectionsPrologue(schema: SectionSchema): string {
  return `local A, AT = sections_read(${luaSchema(schema)})`;
}

/**
 * `sections_read(schema)` answers the named values and, per section, the ARGV index of its first
 * value (of a list, its first item): a module that reads ARGV itself (memory_write) is given that.
 */
export const SECTIONS_LUA = luaModule(
  'sections',
  `
local function sections_field(spec, at)
  if spec == 'str' or spec == 'int' then return ARGV[at], at + 1 end
  if spec == 'bool' then return ARGV[at] == '1', at + 1 end
  if spec == 'key' then return KEYS[tonumber(ARGV[at])], at + 1 end
  local n = tonumber(ARGV[at])
  local out = {}
  at = at + 1
  if spec == 'strs' or spec == 'pairs' then
    local width = spec == 'strs' and 1 or 2
    for j = 1, width * n do out[j] = ARGV[at + j - 1] end
    return out, at + width * n
  end
  for j = 1, n do
    local r = {}
    for _, f in ipairs(spec) do r[f[1]], at = sections_field(f[2], at) end
    out[j] = r
  end
  return out, at
end
local function sections_read(schema)
  local values, starts = {}, {}
  local at = 1
  for _, s in ipairs(schema) do
    if ARGV[at] ~= s[1] then error('SECTIONS expected section ' .. s[1] .. ' at ARGV[' .. at .. ']') end
    local size = tonumber(ARGV[at + 1])
    local first = at + 2
    values[s[1]], at = sections_field(s[2], first)
    if at ~= first + size then
      error('SECTIONS section ' .. s[1] .. ' said ' .. size .. ' values, ' .. (at - first) .. ' read')
    end
    starts[s[1]] = (type(s[2]) == 'table' or s[2] == 'strs' or s[2] == 'pairs') and first + 1 or first
  end
  if at ~= #ARGV + 1 then error('SECTIONS values after the last section') end
  return values, starts
end
`,
);
