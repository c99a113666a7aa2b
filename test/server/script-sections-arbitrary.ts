/**
 * fast-check arbitraries of the named sections (src/server/backends/redis/scripts/sections.ts): values for a
 * schema, and schemas themselves. Keys carry one hash tag, so a call's keys are in one Cluster slot.
 */
import fc from 'fast-check';
import type { FieldKind, RecordShape, SectionSchema, SectionSpec, SectionsOf } from '../../src/server/backends/redis/scripts/sections.js';

const KINDS: readonly FieldKind[] = ['str', 'int', 'bool', 'key', 'strs', 'pairs'];

/** Strings as a script may be given them: empty, with spaces, quotes, digits that read as numbers, any character. */
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', '0', '1', '-1', 'nil', "a'b", 'x y'), fc.string({ unit: 'grapheme', maxLength: 6 }));
/** Keys of a few names (so some repeat: each goes in KEYS once), under one hash tag. */
const key = fc.constantFrom('a', 'b', 'c', 's:1', 'p:1:0-1').map((k) => `{t}:${k}`);

function field(kind: FieldKind): fc.Arbitrary<unknown> {
  switch (kind) {
    case 'str':
      return text;
    case 'int':
      return fc.integer({ min: -1e12, max: 1e12 });
    case 'bool':
      return fc.boolean();
    case 'key':
      return key;
    case 'strs':
      return fc.array(text, { maxLength: 5 });
    case 'pairs':
      return fc.array(fc.tuple(text, text), { maxLength: 4 });
  }
}

function section(spec: SectionSpec): fc.Arbitrary<unknown> {
  if (typeof spec === 'string') return field(spec);
  return fc.array(fc.record(Object.fromEntries(Object.entries(spec.records).map(([name, kind]) => [name, field(kind)]))), { maxLength: 4 });
}

/** Values of `schema`'s sections. */
export function sectionValues<S extends SectionSchema>(schema: S): fc.Arbitrary<SectionsOf<S>> {
  return fc.record(Object.fromEntries(Object.entries(schema).map(([name, spec]) => [name, section(spec)]))) as unknown as fc.Arbitrary<SectionsOf<S>>;
}

const name = fc.stringMatching(/^[a-z][A-Za-z0-9]{0,7}$/);

/** Schemas: up to six sections, each a field or records of up to four fields. */
export const sectionSchemas: fc.Arbitrary<SectionSchema> = fc.dictionary(
  name,
  fc.oneof(
    fc.constantFrom(...KINDS),
    fc.dictionary(name, fc.constantFrom(...KINDS), { minKeys: 1, maxKeys: 4 }).map((records: RecordShape) => ({ records })),
  ),
  { minKeys: 1, maxKeys: 6 },
);
