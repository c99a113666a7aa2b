import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBusinessesResponse, parseConfig, parseJsonBody, parseSendRequest, parseSmsBatch } from '../../src/contract/index.js';
import type { Problem } from '../../src/core/problems.js';
import { lookupFor, sendRequestArb, smsBatchArb } from './arbitraries.js';

const lookup = lookupFor(1, 10, 1);
const parsers: [string, (v: unknown) => { ok: boolean; problems?: readonly Problem[] }][] = [
  ['send', (v) => parseSendRequest(v, { templateTypes: lookup })],
  ['sms', (v) => parseSmsBatch(v)],
  ['config', (v) => parseConfig(v)],
  ['businesses', (v) => parseBusinessesResponse(v)],
];

function wellFormed(r: { ok: boolean; problems?: readonly Problem[] }): void {
  if (r.ok) return;
  expect(r.problems?.length).toBeGreaterThan(0);
  for (const p of r.problems ?? []) {
    expect(p.path.startsWith('$')).toBe(true);
    expect(p.message).toBe(`${p.path}: expected ${p.expected}, got ${p.actual}`);
  }
}

/** Replaces one node (chosen by `pick`) of a JSON value with `replacement`. */
function replaceNode(value: unknown, pick: number, replacement: unknown): unknown {
  const nodes: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach((x, i) => (nodes.push({ parent: v, key: i }), walk(x)));
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        nodes.push({ parent: v as Record<string, unknown>, key: k });
        walk(x);
      }
    }
  };
  walk(value);
  const node = nodes[pick % Math.max(1, nodes.length)];
  if (node === undefined) return replacement;
  (node.parent as Record<string | number, unknown>)[node.key] = replacement;
  return value;
}

describe('parsers never throw', () => {
  for (const [name, parse] of parsers) {
    it(`${name}: random JSON gives a value or well-formed problems`, () => {
      fc.assert(
        fc.property(fc.jsonValue(), (v) => wellFormed(parse(v))),
        { numRuns: 300 },
      );
    });
    it(`${name}: random JS values (undefined, NaN, bigint, symbols, functions, null prototypes)`, () => {
      fc.assert(
        fc.property(fc.anything({ withBigInt: true, withNullPrototype: true, withMap: true, withSet: true, withDate: true, withTypedArray: true, withSparseArray: true, withBoxedValues: true }), (v) =>
          wellFormed(parse(v)),
        ),
        { numRuns: 300 },
      );
    });
    it(`${name}: random JSON text through parseJsonBody`, () => {
      fc.assert(
        fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
          const body = parseJsonBody(text);
          if (body.ok) wellFormed(parse(body.value));
        }),
        { numRuns: 200 },
      );
    });
  }

  it('valid bodies with one node replaced by random JSON never throw', () => {
    fc.assert(
      fc.property(sendRequestArb, smsBatchArb, fc.nat(), fc.jsonValue(), ({ body }, batch, pick, junk) => {
        wellFormed(parseSendRequest(replaceNode(structuredClone(body), pick, junk), { templateTypes: lookup }));
        wellFormed(parseSmsBatch(replaceNode(structuredClone(batch), pick, junk)));
      }),
      { numRuns: 300 },
    );
  });

  it('hostile objects: throwing getters, proxies and cycles come back as a problem at $', () => {
    const getter = Object.defineProperty({}, 'business_id', {
      enumerable: true,
      get: () => {
        throw new Error('boom');
      },
    });
    const proxy = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('boom');
        },
      },
    );
    const cyclic: Record<string, unknown> = { business_id: 1 };
    cyclic['contacts'] = [cyclic];
    for (const v of [getter, proxy, cyclic, [proxy]]) for (const [, parse] of parsers) wellFormed(parse(v));
  });
});

describe('the compiled fast check agrees with the problem walker', () => {
  it('whatever the compiled check accepts, the walker finds no problem in (and the reverse)', async () => {
    const { fastCheck, checkSchema } = await import('../../src/contract/schema-check.js');
    const { SendRequestSchema, SmsBatchSchema, ConfigUpdateSchema } = await import('../../src/contract/index.js');
    const schemas = [SendRequestSchema, SmsBatchSchema, ConfigUpdateSchema];
    const input = fc.oneof(
      sendRequestArb.chain(({ body }) => fc.tuple(fc.nat(), fc.jsonValue()).map(([pick, junk]) => replaceNode(structuredClone(body), pick, junk))),
      smsBatchArb.chain((batch) => fc.tuple(fc.nat(), fc.jsonValue()).map(([pick, junk]) => replaceNode(structuredClone(batch), pick, junk))),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(input, (value) => {
        for (const schema of schemas) {
          const problems: Problem[] = [];
          checkSchema(schema, value, '$', problems);
          expect(fastCheck(schema)(value)).toBe(problems.length === 0);
        }
      }),
      { numRuns: 300 },
    );
  });
});
