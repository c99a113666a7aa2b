import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonBody, startJsonBody, startJsonBytes } from '../../src/contract/index.js';

/** Decodes `text` in steps of `units`, counting the steps. */
function sliced(text: string, units: number, maxBodyBytes?: number) {
  const body = startJsonBody(text, maxBodyBytes === undefined ? {} : { maxBodyBytes });
  let steps = 1;
  while (!body.step(units)) steps++;
  return { result: body.result(), steps };
}

/** Decodes `bytes` (the body's UTF-8) in steps of `units`. */
function slicedBytes(bytes: Uint8Array, units: number, maxBodyBytes?: number) {
  const body = startJsonBytes(bytes, maxBodyBytes === undefined ? {} : { maxBodyBytes });
  let steps = 1;
  while (!body.step(units)) steps++;
  return { result: body.result(), steps };
}

/** The sliced answer equals parseJsonBody's, member order included, from the text and from its bytes. */
function same(text: string, units: number, maxBodyBytes?: number): void {
  const expected = parseJsonBody(text, maxBodyBytes === undefined ? {} : { maxBodyBytes });
  for (const { result } of [sliced(text, units, maxBodyBytes), slicedBytes(Buffer.from(text, 'utf8'), units, maxBodyBytes)]) {
    expect(result).toEqual(expected);
    if (result.ok && expected.ok) expect(JSON.stringify(result.value)).toBe(JSON.stringify(expected.value));
  }
}

/** From bytes, the answer equals parseJsonBody's of the text `Buffer.toString('utf8')` makes of them (invalid sequences as U+FFFD). */
function sameFromBytes(bytes: Uint8Array, units: number): void {
  const expected = parseJsonBody(Buffer.from(bytes).toString('utf8'));
  const { result } = slicedBytes(bytes, units);
  expect(result).toEqual(expected);
  if (result.ok && expected.ok) expect(JSON.stringify(result.value)).toBe(JSON.stringify(expected.value));
}

const contacts = (n: number) => Array.from({ length: n }, (_, i) => ({ phone_number: `55119${80_000_000 + i}`, template_variables: [`Client "${i}" \\ ]}`, 'x'], data: { k: '[,{' } }));

describe('JSON body in slices', () => {
  it('decodes a large send body in many steps, to the value JSON.parse gives', () => {
    const text = JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(5000), queue_id: 3 });
    const { result, steps } = sliced(text, 16 * 1024);
    expect(steps).toBeGreaterThan(20);
    expect(result).toEqual({ ok: true, value: JSON.parse(text) });
    expect(Object.keys((result as { value: object }).value)).toEqual(['business_id', 'template_type_id', 'campaign_id', 'contacts', 'queue_id']);
  });

  it('decodes a body that is an array (an SMS batch) and bodies with several arrays', () => {
    same(JSON.stringify(contacts(3000)), 8 * 1024);
    same(JSON.stringify({ a: [1, 2, [3, [4]]], b: [], c: { d: [5] }, e: [{ f: [] }] }), 3);
    same(' [ ] ', 1);
    same('{ "a" : [ 1 , 2 ] , "b" : [ ] }', 2);
  });

  it('answers exactly as parseJsonBody for invalid JSON, empty elements, duplicate keys, and other shapes', () => {
    const cases = [
      '',
      ' ',
      '[1,,2]',
      '[1,]',
      '[,1]',
      '{"a":[1,2],}',
      '{"a":[1,2]',
      '{"a":[1,2]]',
      '{"a":[1,2]} x',
      '{"a":[1,2},"b":1}',
      '{"a":[1,2],"a":[3]}',
      '{"a":[1,2],"a":5}',
      '{"\\u0061":[1],"a":[2]}',
      '{"__proto__":[1,2],"b":[3]}',
      '{"a":["x\\"],y"]}',
      '{"a":["\\\\"],"b":["\\\\\\""]}',
      '{"a":[01]}',
      '{"a":[{"b":1]}]}',
      '"just a string"',
      '42',
      'null',
      '{}',
      '{"a":{"b":[1,2]},"c":"[,]"}',
      '[1 2]',
      '{"a" [1]}',
      '{a:[1]}',
    ];
    for (const text of cases) for (const units of [1, 3, 1000]) same(text, units);
  });

  it('keeps `__proto__` a plain member, as JSON.parse does', () => {
    const { result } = sliced('{"__proto__":[1,2]}', 1);
    expect(result.ok && Object.getPrototypeOf(result.value)).toBe(Object.prototype);
    expect(result.ok && Object.getOwnPropertyDescriptor(result.value, '__proto__')?.value).toEqual([1, 2]);
  });

  it('counts the size in slices and refuses a body over the limit (413) as parseJsonBody does', () => {
    const text = JSON.stringify(contacts(100));
    same(text, 100, 1000);
    same('"ção"', 1, 6);
    same('"ção"', 1, 7);
    const { steps } = sliced(text, 100, text.length * 2);
    expect(steps).toBeGreaterThan(text.length / 100);
  });

  it('from bytes, decodes a large body in steps without making its whole text, and answers as the text would for any bytes', () => {
    const text = JSON.stringify({ contacts: contacts(2000).map((c) => ({ ...c, name: 'João Ñandú 😀' })) });
    const bytes = Buffer.from(text);
    const { result, steps } = slicedBytes(bytes, 16 * 1024);
    // A unit of work is a byte scanned or decoded: each byte is scanned once and decoded once.
    expect(steps).toBeGreaterThanOrEqual(Math.floor(bytes.length / (2 * 16 * 1024)));
    expect(result).toEqual({ ok: true, value: JSON.parse(text) });
    // A byte order mark stays (JSON.parse refuses it), as in Buffer.toString's text.
    sameFromBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[1]')]), 1);
    // Bytes that are not UTF-8 inside strings, between elements, cut characters.
    for (const raw of [
      [0x5b, 0x22, 0xff, 0x22, 0x5d],
      [0x5b, 0x22, 0xe2, 0x82, 0x22, 0x2c, 0x31, 0x5d],
      [0x5b, 0x31, 0x2c, 0xc3, 0x5d],
      [0x7b, 0x22, 0x61, 0xf0, 0x9f, 0x22, 0x3a, 0x5b, 0x5d, 0x7d],
    ]) {
      for (const units of [1, 2, 100]) sameFromBytes(Uint8Array.from(raw), units);
    }
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 64 }), fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 }), (value, units, at, insert) => {
        const bytes = Buffer.from(JSON.stringify({ a: [value, 'é😀'], b: 1 }) ?? 'null');
        const i = at % (bytes.length + 1);
        sameFromBytes(Buffer.concat([bytes.subarray(0, i), insert, bytes.subarray(i + (units % 2))]), units);
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with parseJsonBody on random JSON and on random damage to it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 64 }), fc.nat(), fc.string({ maxLength: 2 }), (value, units, at, insert) => {
        const text = JSON.stringify(value, null, units % 3 === 0 ? 1 : undefined) ?? 'null';
        same(text, units);
        const i = at % (text.length + 1);
        same(text.slice(0, i) + insert + text.slice(i + (units % 2)), units);
      }),
      { numRuns: 2000 },
    );
  });
});
