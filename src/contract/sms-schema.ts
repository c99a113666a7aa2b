/**
 * POST /sms/messages/ body (spec 2.4, 4.3): a JSON array of SMS items. Required: `message` and
 * `phone`; the rest is optional. Unknown fields are refused.
 */
import { Type, type Static } from '@sinclair/typebox';
import { NULL_IS_ABSENT, optionalKeys } from './null-fields.js';
import { DEFAULT_MAX_SMS_ITEMS, MAX_DOCUMENT_LENGTH, MAX_ID, MAX_PHONE_LENGTH, MAX_SMS_MESSAGE_LENGTH, MAX_TEXT_LENGTH, MAX_URL_LENGTH } from './limits.js';

const Url = (description: string) => Type.String({ format: 'uri', minLength: 1, maxLength: MAX_URL_LENGTH, description: `${description}; ${NULL_IS_ABSENT}` });

/** Element of the POST /sms/messages/ array (spec 2.4). */
export const SmsItemSchema = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: MAX_SMS_MESSAGE_LENGTH, description: 'text; GSM-7 or UCS-2 is detected' }),
    phone: Type.String({ minLength: 1, maxLength: MAX_PHONE_LENGTH, description: 'digits including the country code' }),
    url_callback_dlr: Type.Optional(Url('receives the send status (absolute http(s), public host)')),
    url_callback_mo: Type.Optional(Url('receives replies (absolute http(s), public host)')),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH, description: NULL_IS_ABSENT })),
    campaign_id: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ID, description: NULL_IS_ABSENT })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH, description: NULL_IS_ABSENT })),
    cpf: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_DOCUMENT_LENGTH, description: `recipient document: CPF or CNPJ; ${NULL_IS_ABSENT}` })),
  },
  { additionalProperties: false, title: 'SmsItem' },
);
export type SmsItem = Static<typeof SmsItemSchema>;
/** Optional fields of an SMS item (null is the same as absent). */
export const SMS_ITEM_OPTIONAL = optionalKeys(SmsItemSchema);

/** Builds the batch schema for a given items limit (the limit is a parser option). */
export function createSmsBatchSchema(maxItems: number = DEFAULT_MAX_SMS_ITEMS) {
  return Type.Array(SmsItemSchema, { minItems: 1, maxItems, title: 'SmsBatch' });
}

/** POST /sms/messages/ body with the default limits. */
export const SmsBatchSchema = createSmsBatchSchema();
export type SmsBatch = Static<typeof SmsBatchSchema>;
