/**
 * Building blocks shared by the payload schemas of spec part 6. Every object is closed
 * (`additionalProperties: false`): a payload carries exactly the spec's fields, so a typo in a
 * builder fails the schema instead of reaching a receiver.
 */
import { Type, type TSchema, type TNull, type TUnion } from '@sinclair/typebox';
import { UUID_V4_PATTERN } from '../uuid.js';

/** `event_id` of every payload: a UUID v4 string. */
export const EventIdSchema = Type.String({
  format: 'uuid',
  // The spec says v4; `format: 'uuid'` alone accepts any version.
  pattern: UUID_V4_PATTERN.source,
  description: 'UUID v4, for tracking and deduplication',
});

/** A payload datetime: RFC 3339 / ISO 8601; sendpool always writes the -03:00 offset. */
export const DateTimeSchema = Type.String({ format: 'date-time' });

/** `T` or `null`: the spec's "X or null". */
export function Nullable<T extends TSchema>(schema: T): TUnion<[T, TNull]> {
  return Type.Union([schema, Type.Null()]);
}

/** The `data` object of a contact (spec 2.3): free key/value pairs with string values, or null. */
export const ContactDataSchema = Nullable(Type.Record(Type.String(), Type.String()));

/** Closed-object options used by every payload object. */
export const CLOSED = { additionalProperties: false } as const;
