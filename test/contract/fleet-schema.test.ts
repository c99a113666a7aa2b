/**
 * The fleet JSON Schema agrees with `validateFleet`: the schema accepts a fleet exactly when every
 * problem the validator finds spans the document (unique ids and phones, references, one
 * placeholder count per type, contiguous placeholders, `variables` against the text, real dates),
 * which no JSON Schema can express. So valid fleets pass both, and a fleet with a problem of one
 * field is refused by both. Checked with Ajv (what editors implement: plain JSON Schema) and with
 * TypeBox's own `Value.Check`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import Ajv from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FleetSchema } from '../../src/contract/index.js';
import { validateFleet } from '../../src/core/fleet-validate.js';
import type { Problem } from '../../src/core/problems.js';
import { renderFleetSchema } from '../../scripts/fleet-schema-render.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shipped = JSON.parse(readFileSync(`${root}docs/fleet.schema.json`, 'utf8')) as object;
const ajvCheck = new Ajv({ allErrors: true, strict: true }).compile(shipped);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = readonly (string | number)[];

const schemaAccepts = (fleet: unknown): boolean => {
  const ajv = ajvCheck(fleet);
  // TypeBox reads the same schema the same way.
  expect(Value.Check(FleetSchema, fleet), 'TypeBox Value.Check agrees with Ajv').toBe(ajv);
  return ajv;
};

/** The value at a problem's JSON path (`$.templates[2].variables[0].index`). */
function at(doc: unknown, path: string): unknown {
  let value = doc;
  for (const [, key, index] of path.matchAll(/\.([A-Za-z0-9_$]+)|\[(\d+)\]/g)) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key ?? Number(index)];
  }
  return value;
}

const CLOCK_TIME = /^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:\d{2})$/;

/** A problem only the whole document shows: the schema leaves it to the validator. */
function spansDocument(fleet: unknown, p: Problem): boolean {
  const e = p.expected;
  if (
    /^a (business|phone|phone-number|template type|template|portfolio) (id )?not used before/.test(e) ||
    e.startsWith('a phone not used before') ||
    e.startsWith('the id of a business of the fleet') ||
    e.startsWith('the id of a template of the fleet') ||
    e.startsWith('the id of a portfolio of the fleet') ||
    e.startsWith('a template associated with business') ||
    e.startsWith('a template taking') ||
    e.startsWith('contiguous placeholders') ||
    e.startsWith('an index not named before') ||
    e.startsWith('a button index not used before') ||
    e.startsWith('a parameter name not used before') ||
    e.includes("a template's parameters are all named or all positional")
  ) {
    return true;
  }
  const value = at(fleet, p.path);
  // An index the schema allows (any placeholder) that the text does not have.
  if (/^(a zero-based placeholder index|no variables entry|a zero-based index into the contact's|no variable:)/.test(e))
    return Number.isInteger(value) && (value as number) >= 0 && (value as number) < 100;
  // A date-time of the right form that is no date (month 13).
  if (e.startsWith('a clock time')) return typeof value === 'string' && CLOCK_TIME.test(value);
  return false;
}

// ---------------------------------------------------------------------------------------------
// Valid fleets: every optional field, single braces in texts, shared templates.

const platformName = fc.stringMatching(/^[a-z0-9_]{1,10}$/);
const freeName = fc.oneof(platformName, fc.string({ minLength: 1, maxLength: 8 }));
const plain = fc.string({ maxLength: 6 }).map((s) => s.replace(/[{}]/g, ''));
const graphId = fc.stringMatching(/^[0-9]{1,12}$/);
const clockTime = fc.oneof(fc.nat(), fc.constantFrom('2025-01-01T09:00:00.000-03:00', '2030-06-30T23:59:59Z'));
const meta = fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined });

/** A text taking `{{1}}`..`{{count}}`, each at least once, with plain text and lone braces between. */
function textArb(count: number): fc.Arbitrary<string> {
  const pieces = Array.from({ length: count }, (_, i) => `{{${i + 1}}}`);
  return fc
    .tuple(
      fc.shuffledSubarray(pieces, { minLength: count, maxLength: count }),
      fc.array(fc.constantFrom('{{1}}', '{{2}}'), { maxLength: 2 }),
      fc.array(fc.oneof(plain, fc.constantFrom(' { ', ' } ', '}{', ' x')), { minLength: count + 3, maxLength: count + 3 }),
    )
    .map(([order, repeats, fill]) => {
      const used = [...order, ...repeats.filter((r) => Number(r[2]) <= count)];
      // A lone brace beside a placeholder would make a double one (`{{{1}}`): a space keeps them apart.
      const apart = fill.map((f) => `${f.startsWith('}') ? ' ' : ''}${f}${f.endsWith('{') ? ' ' : ''}`);
      const text = used.map((p, i) => `${apart[i] ?? ''}${p}`).join('') + apart.slice(used.length).join('');
      return text.length > 0 ? text : 'Hi';
    });
}

/** WhatsApp components of a template whose text takes `count` values: every kind of header and button, named or positional. */
function componentsArb(count: number): fc.Arbitrary<Json> {
  const variable = fc.integer({ min: 0, max: Math.max(0, count - 1) });
  const link = fc.constantFrom('https://example.com/a.png', 'http://cdn.example.com/x?y=1');
  const headers: fc.Arbitrary<Json>[] = [
    link.map((l) => ({ type: 'image', link: l })),
    graphId.map((id) => ({ type: 'video', id })),
    fc.tuple(link, fc.option(fc.constantFrom('bill.pdf', 'Fatura de março.pdf'), { nil: undefined })).map(([l, f]) => ({ type: 'document', link: l, ...(f ? { filename: f } : {}) })),
  ];
  if (count > 0)
    headers.push(
      variable.map((v) => ({ type: 'text', variable: v })),
      variable.map((v) => ({ type: 'image', variable: v })),
    );
  const buttonOf = (index: number, kind: number, v: number, code: string): Json => {
    const kinds: Json[] = [
      { type: 'quick_reply', index, payload: `P ${index}` },
      { type: 'copy_code', index, couponCode: code },
      ...(count > 0
        ? [
            { type: 'url', index, variable: v },
            { type: 'quick_reply', index, variable: v },
            { type: 'copy_code', index, variable: v },
            { type: 'otp', index, variable: v },
          ]
        : []),
    ];
    return kinds[kind % kinds.length]!;
  };
  return fc
    .record({
      header: fc.option(fc.oneof(...headers), { nil: undefined }),
      body: fc.option(fc.array(variable, { maxLength: count > 0 ? 3 : 0 }), { nil: undefined }),
      named: fc.boolean(),
      buttons: fc.option(
        fc
          .uniqueArray(fc.integer({ min: 0, max: 9 }), { maxLength: 3 })
          .chain((indexes) => fc.tuple(...indexes.map((index) => fc.tuple(fc.nat(), variable, fc.constantFrom('SAVE25', 'A', 'ABCDEFGHIJ12345')).map(([k, v, code]) => buttonOf(index, k, v, code))))),
        { nil: undefined },
      ),
    })
    .map(({ header, body, named, buttons }) => {
      // Named parameters: on every text parameter (header text and body) or on none, unique in the body.
      const h = header && named && (header as { type: string }).type === 'text' ? { ...(header as object), parameterName: 'header_name' } : header;
      return {
        ...(h !== undefined ? { header: h } : {}),
        ...(body !== undefined ? { body: body.map((v, i) => ({ variable: v, ...(named ? { parameterName: `p_${i}` } : {}) })) } : {}),
        ...(buttons !== undefined ? { buttons } : {}),
      };
    });
}

/** Status with its optional pause end. */
function statusArb<S extends string>(statuses: readonly S[]): fc.Arbitrary<{ status?: S | 'paused'; pausedUntil?: number | string }> {
  return fc.oneof(
    fc.constant({}),
    fc.constantFrom(...statuses).map((status) => ({ status })),
    clockTime.map((pausedUntil) => ({ status: 'paused' as const, pausedUntil })),
  );
}

const validFleetArb: fc.Arbitrary<Json> = fc
  .record({
    businessIds: fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 3 }),
    phones: fc.uniqueArray(fc.stringMatching(/^[1-9][0-9]{7,14}$/), { minLength: 9, maxLength: 9 }),
    phoneNumberIds: fc.uniqueArray(graphId, { minLength: 9, maxLength: 9 }),
    templateIds: fc.uniqueArray(fc.integer({ min: 1, max: 500 }), { minLength: 1, maxLength: 5 }),
    counts: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 5, maxLength: 5 }),
    seed: fc.array(fc.nat(), { minLength: 50, maxLength: 50 }),
    portfolios: fc.option(
      fc.uniqueArray(
        fc.record({
          id: fc.constantFrom('p1', '1234567890', 'acme portfolio'),
          messagingLimit24h: fc.integer({ min: 1, max: 1_000_000_000_000 }),
          uniqueRecipients: fc.option(fc.boolean(), { nil: undefined }),
        }),
        { selector: (p) => p.id, maxLength: 2 },
      ),
      { nil: undefined },
    ),
  })
  .chain(({ businessIds, phones, phoneNumberIds, templateIds, counts, seed, portfolios }) => {
    const templates = fc.tuple(
      ...templateIds.map((id, i) => {
        const count = counts[i]!;
        return fc
          .record({
            name: fc.boolean(),
            text: textArb(count),
            businessIds: fc.shuffledSubarray(businessIds, { minLength: 1 }),
            state: statusArb(['active', 'paused', 'disabled'] as const),
            account: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
            example: fc.option(
              fc.oneof(
                plain.filter((s) => s.length > 0),
                fc.constant('Hi {Ana}, due }{'),
              ),
              { nil: undefined },
            ),
            variables: fc.option(fc.uniqueArray(fc.integer({ min: 0, max: Math.max(0, count - 1) }), { maxLength: count }), { nil: undefined }),
            whatsapp: fc.option(
              fc.record({
                name: fc.option(platformName, { nil: undefined }),
                language: fc.constantFrom('pt_BR', 'en_US', 'es', 'fil'),
                id: fc.option(graphId, { nil: undefined }),
                wabaId: fc.option(graphId, { nil: undefined }),
                components: fc.option(componentsArb(count), { nil: undefined }),
              }),
              { nil: undefined },
            ),
            freeName: freeName,
            platformName: platformName,
            meta,
          })
          .map((t) => {
            // Without a platform name of its own, the template's name stands in and must be one.
            const name = t.whatsapp && t.whatsapp.name === undefined ? t.platformName : t.name ? t.freeName : t.platformName;
            return {
              id,
              name,
              text: t.text,
              businessIds: t.businessIds,
              ...t.state,
              ...(t.account ? { account: t.account } : {}),
              ...(t.example ? { example: t.example } : {}),
              ...(t.variables && count > 0 ? { variables: t.variables.map((index) => ({ name: `v${index}`, index })) } : {}),
              ...(t.whatsapp ? { whatsapp: JSON.parse(JSON.stringify(t.whatsapp)) as Json } : {}),
              ...(t.meta !== undefined ? { meta: t.meta } : {}),
              count,
            };
          });
      }),
    );
    const businesses = fc.tuple(
      ...businessIds.map((id, b) =>
        fc
          .record({
            name: freeName,
            companyId: fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
            numbers: fc.array(
              fc.record({
                throughputPerHour: fc.integer({ min: 1, max: 1_000_000_000 }),
                messagingLimit24h: fc.integer({ min: 1, max: 1_000_000_000_000 }),
                messagesPerSecond: fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: undefined }),
                state: statusArb(['active', 'paused'] as const),
                account: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
                whatsapp: fc.option(fc.record({ wabaId: fc.option(graphId, { nil: undefined }) }), { nil: undefined }),
                meta,
              }),
              { maxLength: 3 },
            ),
            whatsapp: fc.option(graphId, { nil: undefined }),
            typeCount: fc.integer({ min: 0, max: 3 }),
            meta,
          })
          .map((r) => ({ id, b, ...r })),
      ),
    );
    return fc.tuple(templates, businesses).map(([ts, bs]) => {
      let s = 0;
      const pick = () => seed[s++ % seed.length]!;
      // Businesses and numbers name a portfolio of the fleet now and then.
      const portfolioOf = (): { portfolioId?: string } => {
        const list = portfolios ?? [];
        const k = pick() % (list.length + 2);
        return k < list.length ? { portfolioId: list[k]!.id } : {};
      };
      const fleetBusinesses = bs.map((b) => {
        const mine = ts.filter((t) => t.businessIds.includes(b.id));
        const types = Array.from({ length: b.typeCount }, (_, k) => {
          // A type links templates of its business taking one placeholder count.
          const count = mine[pick() % Math.max(1, mine.length)]?.count;
          const ids = mine.filter((t) => t.count === count && pick() % 3 !== 0).map((t) => t.id);
          return { id: k + 1, name: `type ${k + 1}`, templateIds: ids };
        });
        return {
          id: b.id,
          name: b.name,
          ...(b.companyId !== undefined ? { companyId: b.companyId } : {}),
          numbers: b.numbers.map((n, i) => ({
            phone: phones[b.b * 3 + i]!,
            throughputPerHour: n.throughputPerHour,
            messagingLimit24h: n.messagingLimit24h,
            ...(n.messagesPerSecond !== undefined ? { messagesPerSecond: n.messagesPerSecond } : {}),
            ...n.state,
            ...(n.account ? { account: n.account } : {}),
            ...(n.whatsapp ? { whatsapp: { phoneNumberId: phoneNumberIds[b.b * 3 + i]!, ...(n.whatsapp.wabaId ? { wabaId: n.whatsapp.wabaId } : {}) } } : {}),
            ...portfolioOf(),
            ...(n.meta !== undefined ? { meta: n.meta } : {}),
          })),
          templateTypes: types,
          ...(b.whatsapp ? { whatsapp: { wabaId: b.whatsapp } } : {}),
          ...portfolioOf(),
          ...(b.meta !== undefined ? { meta: b.meta } : {}),
        };
      });
      const fleet = {
        businesses: fleetBusinesses,
        templates: ts.map(({ count: _, ...t }) => t),
        ...(portfolios ? { portfolios: portfolios.map((p) => JSON.parse(JSON.stringify(p)) as Json) } : {}),
      };
      return JSON.parse(JSON.stringify(fleet)) as Json;
    });
  });

// ---------------------------------------------------------------------------------------------
// Mutations: one change at one place, of any kind (a wrong type, a bad value, a key more or
// less, an element more or less), some of which only the whole document shows.

function paths(value: Json, prefix: Path = []): Path[] {
  const out: Path[] = [];
  if (Array.isArray(value)) value.forEach((v, i) => out.push([...prefix, i], ...paths(v, [...prefix, i])));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      // `meta` takes any value: nothing in it can be wrong.
      if (k === 'meta') continue;
      out.push([...prefix, k], ...paths(v, [...prefix, k]));
    }
  }
  return out;
}

const REPLACEMENTS: readonly Json[] = [
  null,
  true,
  {},
  [],
  0,
  -1,
  1.5,
  2 ** 53,
  1e13,
  '',
  'x',
  'ABC def',
  'active',
  'paused',
  'disabled',
  'stopped',
  '5511990000001',
  '1234567',
  '12345678a',
  7,
  100,
  99,
  3,
  '{{1}}',
  'Hi {{2}}',
  '{{0}}',
  '{{ 1 }}',
  '{{name}}',
  '{{101}}',
  'a }} b',
  '{{{1}}}',
  '{{1}}}',
  'Hi {{1}} and {{3}}',
  'pt-BR',
  'en_US',
  '12a',
  '2025-13-45T99:99:99Z',
  '2025-01-01',
  [1, 1],
  [1],
  { x: 1 },
  'https://example.com/b.png',
  'image',
  'document',
  'text',
  'url',
  'quick_reply',
  'otp',
  'first_name',
  'First Name',
  9,
  10,
  [{ variable: 0 }],
  { type: 'text', variable: 0 },
  { type: 'image', link: 'https://example.com/c.png', id: '1' },
  { type: 'url', index: 0 },
  { type: 'copy_code', index: 1, couponCode: 'NOT A CODE!' },
];

type Mutation = { kind: 'replace'; at: number; by: Json } | { kind: 'delete'; at: number } | { kind: 'add-key'; at: number } | { kind: 'copy-element'; at: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), by: fc.constantFrom(...REPLACEMENTS) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('add-key' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('copy-element' as const), at: fc.nat() }),
);

/** An object with a key no schema knows (an object in place of anything else). */
function addKey(value: Json): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value, surplus: 1 } : { surplus: 1 };
}

function mutate(fleet: Json, m: Mutation): Json {
  const copy = structuredClone(fleet);
  const all = paths(copy);
  if (all.length === 0) return copy;
  const path = all[m.at % all.length]!;
  const parent = path.slice(0, -1).reduce<Json>((v, k) => (v as Record<string | number, Json>)[k]!, copy);
  const key = path[path.length - 1]!;
  if (Array.isArray(parent)) {
    const i = key as number;
    if (m.kind === 'replace') parent[i] = m.by;
    else if (m.kind === 'delete') parent.splice(i, 1);
    else if (m.kind === 'add-key') parent[i] = addKey(parent[i]!);
    else parent.push(structuredClone(parent[i]!));
  } else {
    const o = parent as Record<string, Json>;
    const k = key as string;
    if (m.kind === 'replace') o[k] = m.by;
    else if (m.kind === 'delete') delete o[k];
    else if (m.kind === 'add-key') o[k] = addKey(o[k]!);
    else o[k] = [o[k]!, o[k]!];
  }
  return copy;
}

describe('the fleet JSON Schema (sendpool/contract FleetSchema, docs/fleet.schema.json)', () => {
  it('is up to date with FleetSchema (regenerate: npm run fleet-schema)', () => {
    expect(readFileSync(`${root}docs/fleet.schema.json`, 'utf8')).toBe(renderFleetSchema());
  });

  it('accepts the example fleets, also with a "$schema" key, which validateFleet ignores', () => {
    for (const file of ['examples/fleet.json', 'examples/fleet-whatsapp.json']) {
      const fleet = { $schema: './node_modules/sendpool/docs/fleet.schema.json', ...(JSON.parse(readFileSync(`${root}${file}`, 'utf8')) as object) };
      expect(validateFleet(fleet).ok, file).toBe(true);
      expect(schemaAccepts(fleet), file).toBe(true);
    }
  });

  it('accepts every fleet validateFleet accepts (property)', () => {
    fc.assert(
      fc.property(validFleetArb, (fleet) => {
        const checked = validateFleet(fleet);
        expect(checked.ok ? [] : checked.problems).toEqual([]);
        expect(schemaAccepts(fleet)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses exactly what validateFleet refuses field by field (property)', () => {
    let refusedByBoth = 0;
    fc.assert(
      fc.property(validFleetArb, fc.array(mutationArb, { minLength: 1, maxLength: 2 }), (fleet, mutations) => {
        const mutated = mutations.reduce(mutate, fleet);
        const checked = validateFleet(mutated);
        const problems = checked.ok ? [] : checked.problems;
        const fieldProblems = problems.filter((p) => !spansDocument(mutated, p));
        expect(schemaAccepts(mutated), JSON.stringify(fieldProblems)).toBe(fieldProblems.length === 0);
        if (fieldProblems.length > 0) refusedByBoth++;
      }),
      { numRuns: 600 },
    );
    // The mutations mostly break a field: the refusing half of the property was exercised.
    expect(refusedByBoth).toBeGreaterThan(100);
  });

  it('leaves to validateFleet what spans the document', () => {
    const base = JSON.parse(readFileSync(`${root}examples/fleet.json`, 'utf8')) as { businesses: { id: number; numbers: { phone: string }[] }[]; templates: { id: number; text: string }[] };
    const cases: [string, (f: typeof base) => void][] = [
      ['a phone used twice', (f) => (f.businesses[0]!.numbers[1]!.phone = f.businesses[0]!.numbers[0]!.phone)],
      ['a template id used twice', (f) => (f.templates[1]!.id = f.templates[0]!.id)],
      ['placeholders not contiguous', (f) => (f.templates[0]!.text = 'Hi {{2}}')],
    ];
    for (const [what, change] of cases) {
      const fleet = structuredClone(base);
      change(fleet);
      expect(validateFleet(fleet).ok, what).toBe(false);
      expect(schemaAccepts(fleet), what).toBe(true);
    }
  });
});
