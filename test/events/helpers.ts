/** Test doubles for the events subsystem: a seeded random source. */
import fc from 'fast-check';
import type { TSchema } from '@sinclair/typebox';
import { expect } from 'vitest';
import { isArgumentError } from '../../src/core/errors.js';
import type { RandomSource } from '../../src/events/random.js';
import { validatePayload } from '../../src/events/validate.js';

/** A deterministic RandomSource (mulberry32), so runs replay exactly. */
export function seededRandom(seed = 1): RandomSource & { calls: number } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const source = {
    calls: 0,
    randomBytes(n: number): Uint8Array {
      source.calls++;
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = next() & 0xff;
      return out;
    },
  };
  return source;
}

/** Arbitrary seeded random source. */
export const arbRandom = fc.integer().map((s) => seededRandom(s));

/** 2025-01-01T12:00:00Z. */
export const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);

/** Values a JavaScript caller (or arithmetic) could put where the types promise something else. */
export const BAD_VALUES: readonly unknown[] = [1.5, -0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, -1, 0, 'x', '', null, undefined, true, {}, []];

type Key = string | number;

/** Every path to a leaf (a value that is not a plain object or array) of `value`. */
export function leafPaths(value: unknown, path: readonly Key[] = []): Key[][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leafPaths(v, [...path, i]));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...path, k]));
  return [[...path]];
}

/** A deep copy of `value` with the leaf at `path` replaced by `leaf`. */
export function withLeaf<T>(value: T, path: readonly Key[], leaf: unknown): T {
  const copy = structuredClone(value) as unknown as Record<Key, unknown>;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<Key, unknown>;
  at[path[path.length - 1]!] = leaf;
  return copy as unknown as T;
}

/**
 * Replaces each leaf of a valid builder input, in turn, by each of {@link BAD_VALUES} and checks the
 * builder's promise: it throws `ArgumentError` naming the field (and draws no event id), or it
 * returns a payload that passes `schema`. Answers how many inputs were refused, so a caller can
 * check the guard is exercised.
 */
export function expectRefusedOrValid<I>(input: I, schema: TSchema, build: (input: I, random: RandomSource & { calls: number }) => unknown): number {
  let refused = 0;
  for (const path of leafPaths(input)) {
    const field = String(path[path.length - 1]);
    for (const bad of BAD_VALUES) {
      const corrupted = withLeaf(input, path, bad);
      const random = seededRandom(1);
      let payload: unknown;
      try {
        payload = build(corrupted, random);
      } catch (e) {
        const where = `${path.join('.')} = ${String(bad)}`;
        expect(isArgumentError(e), `${where}: ${String(e)}`).toBe(true);
        expect((e as { argument: string }).argument, where).toContain(field);
        expect(random.calls, `${where}: an event id was drawn before refusing`).toBe(0);
        refused++;
        continue;
      }
      expect(validatePayload(schema, payload), `${path.join('.')} = ${String(bad)}`).toEqual([]);
    }
  }
  return refused;
}
