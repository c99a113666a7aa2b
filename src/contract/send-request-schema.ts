/**
 * POST /messenger/messages/ body (spec 2.3, 4.2). Required: `business_id`, `template_type_id`,
 * `campaign_id` (every HSM notification carries a non-null campaign_id) and `contacts`; of a
 * contact only `phone_number`. Unknown fields are refused (`additionalProperties: false`), so a
 * misspelt optional field is an error rather than silently ignored.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  DEFAULT_MAX_CONTACTS,
  MAX_DATA_KEYS,
  MAX_DATA_KEY_LENGTH,
  MAX_DATA_VALUE_LENGTH,
  MAX_DOCUMENT_LENGTH,
  MAX_ID,
  MAX_PHONE_LENGTH,
  MAX_REQUEST_RETRIES,
  MAX_RETRY_INTERVAL_MINUTES,
  MAX_TEXT_LENGTH,
  MAX_VARIABLES,
  MAX_VARIABLE_LENGTH,
} from './limits.js';
import { NULL_IS_ABSENT, optionalKeys } from './null-fields.js';

const Id = Type.Integer({ minimum: 1, maximum: MAX_ID });
/** An optional id: null is the same as leaving it out (null-fields.ts). */
const OptionalId = (description: string) => Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ID, description: `${description}; ${NULL_IS_ABSENT}` }));

/** Element of `contacts` (spec 2.3). */
export const ContactSchema = Type.Object(
  {
    phone_number: Type.String({
      minLength: 1,
      maxLength: MAX_PHONE_LENGTH,
      description: 'digits including the country code; +, spaces, dashes, dots and parentheses are removed',
    }),
    document: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_DOCUMENT_LENGTH, description: `CPF (11 digits) or CNPJ (14 digits); ${NULL_IS_ABSENT}` })),
    contract: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH, description: NULL_IS_ABSENT })),
    template_variables: Type.Optional(
      Type.Array(Type.String({ maxLength: MAX_VARIABLE_LENGTH }), {
        maxItems: MAX_VARIABLES,
        description: `values of {{1}}, {{2}}, ... in order; exactly as many as the template type has; ${NULL_IS_ABSENT}`,
      }),
    ),
    data: Type.Optional(
      Type.Record(Type.String({ pattern: `^[\\s\\S]{1,${MAX_DATA_KEY_LENGTH}}$` }), Type.String({ maxLength: MAX_DATA_VALUE_LENGTH }), {
        maxProperties: MAX_DATA_KEYS,
        additionalProperties: false,
        description: `free key/value pairs returned in webhooks as data; ${NULL_IS_ABSENT}`,
      }),
    ),
  },
  { additionalProperties: false, title: 'Contact' },
);
export type Contact = Static<typeof ContactSchema>;

/** Builds the body schema for a given contacts limit (the limit is a parser option). */
export function createSendRequestSchema(maxContacts: number = DEFAULT_MAX_CONTACTS) {
  return Type.Object(
    {
      business_id: Id,
      template_type_id: Id,
      campaign_id: Id,
      queue_id: OptionalId('queue identifier'),
      bot_id: OptionalId('bot identifier'),
      max_retries: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_REQUEST_RETRIES, description: `retries of a failed contact; default 0; ${NULL_IS_ABSENT}` })),
      retry_interval: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: MAX_RETRY_INTERVAL_MINUTES,
          description: `minutes between a failure and the next try; default 0; ${NULL_IS_ABSENT}`,
        }),
      ),
      contacts: Type.Array(ContactSchema, { minItems: 1, maxItems: maxContacts }),
    },
    { additionalProperties: false, title: 'SendRequest' },
  );
}

/** POST /messenger/messages/ body with the default limits. */
export const SendRequestSchema = createSendRequestSchema();
export type SendRequest = Static<typeof SendRequestSchema>;

/** Optional fields of a contact and of the request (null is the same as absent). */
export const CONTACT_OPTIONAL = optionalKeys(ContactSchema);
export const REQUEST_OPTIONAL = optionalKeys(SendRequestSchema);
