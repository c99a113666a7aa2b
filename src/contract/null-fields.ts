/**
 * An optional field given as `null` is the same as the field left out: clients serialise "no
 * value" as null (most JSON libraries do by default), and refusing a whole 10,000-contact request
 * for `"bot_id": null` helps nobody. Required fields stay required: null there is refused as any
 * other wrong type. The schemas say so per field (`NULL_IS_ABSENT` in their descriptions).
 */
import type { TObject } from '@sinclair/typebox';

/** The sentence each optional field's description ends with. */
export const NULL_IS_ABSENT = 'null is the same as leaving it out';

/**
 * `value` without its `optional` keys that are null: the same object when none is (the common
 * case allocates nothing), else a copy without them. Anything but a plain object is returned as is.
 */
export function withoutNulls<T>(value: T, optional: readonly string[]): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  let found = false;
  for (let i = 0; i < optional.length && !found; i++) found = record[optional[i]!] === null;
  if (!found) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(record)) if (!(record[key] === null && optional.includes(key))) copy[key] = record[key];
  return copy as T;
}

/** The keys of an object schema that may be left out (so may be given as null). */
export function optionalKeys(schema: TObject): readonly string[] {
  const required = new Set(schema.required ?? []);
  return Object.keys(schema.properties).filter((key) => !required.has(key));
}
