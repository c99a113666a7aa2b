/**
 * The payload schemas match the spec's part-6 tables field by field: same field names, same JSON
 * types and nullability (merged over the members of a union, since the conditional keys split a
 * payload into shapes), same formats. The tables come from a checked-in fixture, which is checked
 * against the spec itself when the spec is there (it is in CI).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { TSchema } from '@sinclair/typebox';
import { extractSpecTables, type SpecTables } from './spec-tables.js';
import fixture from './spec-tables.json' with { type: 'json' };
import { ReportErrorSchema, ReportReadySchema } from '../../src/events/schemas/report.js';
import { AttendanceMessageSchema, AttendanceNotificationSchema, SurveyAnswerSchema, SurveySchema } from '../../src/events/schemas/attendance.js';
import { HsmNotificationSchema } from '../../src/events/schemas/hsm.js';
import { CampaignBatchSchema, CampaignStatisticsSchema } from '../../src/events/schemas/campaign.js';

const tables = fixture as SpecTables;

interface FieldShape {
  types: Set<string>;
  formats: Set<string>;
}

/** JSON types a schema admits (`const` literals count as their type). */
function typesOf(s: TSchema, into: FieldShape): void {
  const x = s as { anyOf?: TSchema[]; type?: string; const?: unknown; format?: string };
  if (x.anyOf) {
    for (const m of x.anyOf) typesOf(m, into);
    return;
  }
  if (x.format) into.formats.add(x.format);
  if (x.type) into.types.add(x.type);
  else if (x.const !== undefined) into.types.add(typeof x.const === 'number' ? 'integer' : typeof x.const);
}

/** Field -> shape over every object member of a (union) schema. */
function fieldsOf(schema: TSchema): Map<string, FieldShape> {
  const members = (schema as { anyOf?: TSchema[] }).anyOf ?? [schema];
  const out = new Map<string, FieldShape>();
  for (const m of members) {
    const props = (m as { properties?: Record<string, TSchema> }).properties ?? {};
    for (const [k, v] of Object.entries(props)) {
      const shape = out.get(k) ?? { types: new Set(), formats: new Set() };
      typesOf(v, shape);
      out.set(k, shape);
    }
  }
  return out;
}

/** The spec's type text -> shape: "string (date-time) or null", "string uuid, UUID v4", "string: `scale` or `text`". */
function specShape(type: string): FieldShape {
  const head = type.split(/[:,]/)[0] ?? '';
  const shape: FieldShape = { types: new Set(), formats: new Set() };
  for (const alt of head.split(' or ')) {
    const t = alt.trim();
    const word = t.split(/[\s(]/)[0] ?? '';
    shape.types.add(word);
    const fmt = /\(?\b(uuid|date-time)\b\)?/.exec(t.slice(word.length));
    if (fmt?.[1]) shape.formats.add(fmt[1]);
  }
  return shape;
}

function nested(schema: TSchema, field: string): TSchema {
  const members = (schema as { anyOf?: TSchema[] }).anyOf ?? [schema];
  const prop = (members[0] as unknown as { properties: Record<string, TSchema> }).properties[field] as TSchema;
  const nonNull = ((prop as { anyOf?: TSchema[] }).anyOf ?? [prop]).find((s) => (s as { type?: string }).type !== 'null');
  return nonNull as TSchema;
}

const CASES: [string, TSchema][] = [
  ['report.ready', ReportReadySchema],
  ['report.error', ReportErrorSchema],
  ['attendance', AttendanceNotificationSchema],
  ['attendance.occurrence', nested(AttendanceNotificationSchema, 'occurrence')],
  ['attendance.user', nested(AttendanceNotificationSchema, 'user')],
  ['attendance.message', AttendanceMessageSchema],
  ['attendance.survey', SurveySchema],
  ['attendance.survey.answer', SurveyAnswerSchema],
  ['hsm', HsmNotificationSchema],
  ['campaign.batch', CampaignBatchSchema],
  ['campaign', CampaignStatisticsSchema],
];

/**
 * Fields sendpool adds to a spec object, each an extension recorded in docs/decisions.md: not in
 * the spec's table, and not in the fixture (which is the spec's).
 */
const EXTENSIONS: Readonly<Record<string, readonly string[]>> = {
  campaign: ['count_invalid_data'],
};

describe('schemas match the spec tables of part 6', () => {
  it('covers every table of the fixture', () => {
    expect(CASES.map(([k]) => k).sort()).toEqual(Object.keys(tables).sort());
  });

  for (const [key, schema] of CASES) {
    it(`${key}: same fields, types, nullability and formats`, () => {
      const spec = tables[key] ?? [];
      const mine = fieldsOf(schema);
      const extensions = EXTENSIONS[key] ?? [];
      for (const e of extensions)
        expect(
          spec.map((f) => f.field),
          `${key}.${e} is an extension, not the spec's`,
        ).not.toContain(e);
      expect([...mine.keys()].filter((f) => !extensions.includes(f)).sort()).toEqual(spec.map((f) => f.field).sort());
      for (const f of spec) {
        if (f.type === '') continue; // keys listed in notes, types not given
        const want = specShape(f.type);
        const got = mine.get(f.field) as FieldShape;
        expect([...got.types].sort(), `${key}.${f.field}`).toEqual([...want.types].sort());
        expect([...got.formats].sort(), `${key}.${f.field} format`).toEqual([...want.formats].sort());
      }
    });
  }

  it('the items of the arrays are the spec objects', () => {
    expect(nested(AttendanceNotificationSchema, 'messages')).toMatchObject({ items: AttendanceMessageSchema });
    expect(nested(AttendanceNotificationSchema, 'survey')).toBe(SurveySchema);
    expect(nested(CampaignBatchSchema, 'campaigns')).toMatchObject({ items: CampaignStatisticsSchema });
  });

  const specPath = fileURLToPath(new URL('../../../shared/spec/service.md', import.meta.url));
  it.runIf(existsSync(specPath))('the fixture is up to date with the spec', () => {
    expect(extractSpecTables(readFileSync(specPath, 'utf8'))).toEqual(tables);
  });
});
