/**
 * Limits of one request (spec 8.4 leaves them "not shown"; docs/decisions.md (the HTTP contract) says why
 * these values). Every parser takes them as options so a host can raise or lower them.
 */
import { MAX_PLACEHOLDERS } from '../core/template-text.js';

/** Limits a parser applies to one request. */
export interface ContractLimits {
  /** Most contacts in one POST /messenger/messages/ body. @default 10000 */
  readonly maxContacts?: number;
  /** Most items in one POST /sms/messages/ body. @default 10000 */
  readonly maxSmsItems?: number;
  /** Largest request body, in bytes of UTF-8, checked by `parseJsonBody`. @default 10485760 (10 MiB) */
  readonly maxBodyBytes?: number;
}

export const DEFAULT_MAX_CONTACTS = 10_000;
export const DEFAULT_MAX_SMS_ITEMS = 10_000;
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * Largest `max_retries` of a request (HTTP contract). The engine bounds a submission's `maxRetries`
 * higher (100), for hosts whose own contract allows more; this is the service's limit.
 */
export const MAX_REQUEST_RETRIES = 10;
/** Largest `retry_interval`, in minutes: one week. */
export const MAX_RETRY_INTERVAL_MINUTES = 10_080;
/** Milliseconds per minute: `retry_interval` is in minutes on the wire, the engine counts ms. */
export const MS_PER_MINUTE = 60_000;
/** Longest URL accepted in a callback or webhook field. */
export const MAX_URL_LENGTH = 2048;
/**
 * Longest SMS text, in UTF-16 code units: 1,600 GSM-7 characters are 11 concatenated parts of 153
 * (more with extension characters, or in UCS-2); the parts count is exposed.
 */
export const MAX_SMS_MESSAGE_LENGTH = 1600;
/** Longest template variable value (the channel's limit for a body parameter). */
export const MAX_VARIABLE_LENGTH = 1024;
/** Most values in one contact's `template_variables`: as many as a template may take. */
export const MAX_VARIABLES = MAX_PLACEHOLDERS;
/** Most keys in one contact's `data`, longest key and longest value. */
export const MAX_DATA_KEYS = 50;
export const MAX_DATA_KEY_LENGTH = 64;
export const MAX_DATA_VALUE_LENGTH = 1024;
/** Longest free text field (`contract`, `reference`, `name`). */
export const MAX_TEXT_LENGTH = 255;
/** Longest raw phone or document before normalisation (room for `+55 (11) 99999-0000`). */
export const MAX_PHONE_LENGTH = 32;
export const MAX_DOCUMENT_LENGTH = 32;

/** Integer in 1..2^53-1: every identifier of the contract. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;
