/**
 * Golden test: every field of every table of spec parts 2 and 4 exists in the contract's schema
 * with its type and nullability, and the schemas have no field the spec does not name.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  BusinessSchema,
  ConfigUpdateSchema,
  ContactSchema,
  REPORT_STATUSES,
  REPORT_TYPES,
  ReportSchema,
  SendRequestSchema,
  SmsItemSchema,
  TemplateTypeSchema,
  WEBHOOK_URL_KEYS,
} from '../../src/contract/index.js';
import fixture from './spec-tables.json' with { type: 'json' };
import { extractSpecTables } from './spec-tables.js';

type Json = Record<string, unknown>;
const root = fileURLToPath(new URL('../..', import.meta.url));
const specPath = `${root}../shared/spec/service.md`;

const SCHEMA_OF: Record<string, Json> = {
  '2.1': BusinessSchema,
  '2.2': TemplateTypeSchema,
  '2.3': ContactSchema,
  '2.4': SmsItemSchema,
  '2.5': ConfigUpdateSchema,
  '4.2': SendRequestSchema,
};

/** Fields the contract decided may be null (docs/decisions.md, the HTTP contract): `null` clears a config URL. */
const NULLABLE = new Set(WEBHOOK_URL_KEYS.map((k) => `2.5.${k}`));

/** Splits `anyOf [X, null]` into X and whether null is allowed. */
function unwrapNull(schema: Json): { schema: Json; nullable: boolean } {
  const anyOf = schema['anyOf'] as Json[] | undefined;
  if (anyOf === undefined) return { schema, nullable: false };
  const rest = anyOf.filter((s) => s['type'] !== 'null');
  return { schema: rest.length === 1 ? rest[0]! : { anyOf: rest }, nullable: rest.length < anyOf.length };
}

/** True when a JSON Schema has the spec's type text (`integer`, `string (URL)`, `array of contact`…). */
function matchesSpecType(schema: Json, type: string): boolean {
  const array = /^array of (.+)$/.exec(type);
  if (array) {
    const items = schema['items'] as Json | undefined;
    if (schema['type'] !== 'array' || items === undefined) return false;
    const named: Record<string, Json> = { 'template type': TemplateTypeSchema, contact: ContactSchema };
    const target = named[array[1]!];
    if (target !== undefined) return items['title'] === target['title'];
    return matchesSpecType(items, array[1]!);
  }
  switch (type) {
    case 'integer':
      return schema['type'] === 'integer';
    case 'string':
      return schema['type'] === 'string';
    case 'string (URL)':
      return schema['type'] === 'string' && schema['format'] === 'uri';
    case 'object':
      return schema['type'] === 'object';
    default:
      return false;
  }
}

describe('golden: spec tables of parts 2 and 4', () => {
  it('the fixture lists the six tables', () => {
    expect(Object.keys(fixture.tables).sort()).toEqual(Object.keys(SCHEMA_OF).sort());
  });

  for (const [id, table] of Object.entries(fixture.tables)) {
    describe(`${id} ${table.title}`, () => {
      const schema = SCHEMA_OF[id]!;
      const properties = schema['properties'] as Record<string, Json>;
      for (const field of table.fields) {
        it(`${field.name}: ${field.type}`, () => {
          const property = properties[field.name];
          expect(property, `${id}.${field.name} missing from the schema`).toBeDefined();
          const { schema: inner, nullable } = unwrapNull(property!);
          expect(matchesSpecType(inner, field.type), `${id}.${field.name} is not ${field.type}: ${JSON.stringify(inner)}`).toBe(true);
          expect(nullable).toBe(NULLABLE.has(`${id}.${field.name}`));
        });
      }
      it('no field beyond the spec table', () => {
        expect(Object.keys(properties).sort()).toEqual(table.fields.map((f) => f.name).sort());
      });
    });
  }

  it('2.6 report record: the attributes the report events carry', () => {
    const properties = (ReportSchema as unknown as Json)['properties'] as Record<string, Json>;
    expect(Object.keys(properties).sort()).toEqual(['company_id', 'created_at', 'report_id', 'report_name', 'report_type', 'status']);
    expect(properties['report_id']!['type']).toBe('integer');
    expect(properties['company_id']!['type']).toBe('integer');
    expect(properties['report_name']!['type']).toBe('string');
    expect(properties['created_at']).toMatchObject({ type: 'string', format: 'date-time' });
    expect((properties['report_type']!['anyOf'] as Json[]).map((s) => s['const'])).toEqual([...REPORT_TYPES]);
    expect((properties['status']!['anyOf'] as Json[]).map((s) => s['const'])).toEqual([...REPORT_STATUSES]);
  });

  it.skipIf(!existsSync(specPath))('the fixture is up to date with ../shared/spec/service.md (regenerate: npx tsx scripts/spec-tables.ts)', () => {
    const spec = readFileSync(specPath, 'utf8');
    expect(extractSpecTables(spec)).toEqual(fixture);
    const types = /Report types \(values of `report_type`\): (.*)\./.exec(spec)?.[1];
    expect(types?.match(/`([^`]+)`/g)?.map((t) => t.slice(1, -1))).toEqual([...REPORT_TYPES]);
  });
});
