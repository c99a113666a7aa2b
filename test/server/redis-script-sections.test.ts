/**
 * The Lua side of the named sections (src/server/backends/redis/scripts/sections.ts) on a real Redis: for any
 * schema and values, what `sections_read` gives a script is what the TypeScript reader reads (keys
 * resolved, lists and records whole, each section's start where its values are), and a call whose
 * sections do not fit the schema fails before the script does anything.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runScript, script } from '../../src/redis/script-runner.js';
import { composeLua } from '../../src/server/backends/redis/scripts/lua.js';
import { encodeSections, readSections, sectionsPrologue, SECTIONS_LUA, type SectionSchema, type SectionSpec } from '../../src/server/backends/redis/scripts/sections.js';
import { STEP_SECTIONS } from '../../src/server/backends/redis/scripts/step.js';
import { connect, describeTargets, type TestClient } from '../redis/helpers.js';
import { sectionSchemas, sectionValues } from './script-sections-arbitrary.js';

/** A script that answers what it read: the values and starts as JSON, and the ARGV value at each start. */
function echo(schema: SectionSchema) {
  return script(
    composeLua(
      [SECTIONS_LUA],
      `
${sectionsPrologue(schema)}
local at = {}
for name, first in pairs(AT) do at[name] = { first, ARGV[first] or cjson.null } end
return cjson.encode({ values = A, at = at })
`,
    ),
  );
}

/** Lua's values as TypeScript reads them: cjson writes an empty list as `{}`, and a script sees every int as its string. */
function normalized(spec: SectionSpec, v: unknown): unknown {
  const list = (x: unknown) => (Array.isArray(x) ? x : []);
  if (typeof spec !== 'string') return list(v).map((r: Record<string, unknown>) => Object.fromEntries(Object.entries(spec.records).map(([f, kind]) => [f, normalized(kind, r[f])])));
  switch (spec) {
    case 'int':
      return Number(v);
    case 'strs':
      return list(v);
    case 'pairs': {
      const flat = list(v);
      return Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]]);
    }
    default:
      return v;
  }
}

describeTargets('named sections read by Lua (Redis)', (target) => {
  let client: TestClient;
  beforeAll(() => {
    client = connect(target);
  });
  afterAll(() => {
    client.disconnect();
  });

  const read = async (schema: SectionSchema, call: { keys: readonly string[]; argv: readonly (string | number)[] }) => {
    const reply = JSON.parse((await runScript(client, echo(schema), call.keys, call.argv)) as string) as { values: Record<string, unknown>; at: Record<string, [number, unknown]> };
    return { values: Object.fromEntries(Object.entries(schema).map(([name, spec]) => [name, normalized(spec, reply.values[name])])), at: reply.at };
  };

  it('give a script what the TypeScript reader reads, for any schema and values', async () => {
    await fc.assert(
      fc.asyncProperty(
        sectionSchemas.chain((schema) => fc.tuple(fc.constant(schema), sectionValues(schema))),
        async ([schema, values]) => {
          const call = encodeSections('any', schema, values);
          const { values: lua, at } = await read(schema, call);
          expect(lua).toEqual(readSections('any', schema, call));
          // Each section's start: its value, or its first item (a list's), as the argv has it.
          for (const name of Object.keys(schema)) {
            const [first, value] = at[name]!;
            expect(value ?? null).toBe(first <= call.argv.length ? String(call.argv[first - 1]) : null);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("give the step's sections whole, its memory pairs where memory_write reads them", async () => {
    await fc.assert(
      fc.asyncProperty(sectionValues(STEP_SECTIONS), async (values) => {
        const call = encodeSections('step', STEP_SECTIONS, values);
        const { values: lua, at } = await read(STEP_SECTIONS, call);
        expect(lua).toEqual(values);
        const first = values.memory[0];
        if (first !== undefined) expect(at['memory']![1]).toBe(first[0]);
      }),
      { numRuns: 30 },
    );
  });

  it('refuse a call whose sections do not fit the schema, before the script does anything', async () => {
    const schema: SectionSchema = { a: 'str', b: 'strs' };
    const call = encodeSections('t', schema, { a: 'x', b: ['y', 'z'] });
    await expect(runScript(client, echo(schema), call.keys, [...call.argv.slice(3), ...call.argv.slice(0, 3)])).rejects.toThrow(/SECTIONS expected section a at ARGV\[1\]/);
    await expect(
      runScript(
        client,
        echo(schema),
        call.keys,
        call.argv.map((v, i) => (i === 4 ? '2' : v)),
      ),
    ).rejects.toThrow(/SECTIONS section b said 2 values, 3 read/);
    await expect(runScript(client, echo(schema), call.keys, [...call.argv, 'extra'])).rejects.toThrow(/SECTIONS values after the last section/);
  });
});
