/**
 * From parsed requests to what the engine and the SMS sender take. Pure: the same parsed request
 * always maps to the same value.
 *
 * The engine renders each text itself at send time (it picks the template then), so contacts carry
 * their `variables`; the contract has already checked that their count matches the type and that
 * no value is empty, so rendering never leaves a placeholder.
 */
import type { Submission, SubmissionContact } from '../core/submission.js';
import { MS_PER_MINUTE } from './limits.js';
import type { ParsedSendRequest } from './parse-send-request.js';
import type { ParsedSmsBatch } from './parse-sms-batch.js';
import type { SmsEncoding } from './sms-encoding.js';

/** The engine's submission for the accepted contacts of a send request. `retry_interval` minutes → ms. */
export function toSubmission(parsed: ParsedSendRequest, contacts: readonly SubmissionContact[] = submissionContacts(parsed)): Submission {
  const { request } = parsed;
  return {
    businessId: request.business_id,
    typeId: request.template_type_id,
    campaignId: request.campaign_id,
    ...(request.queue_id === undefined ? {} : { queueId: request.queue_id }),
    ...(request.bot_id === undefined ? {} : { botId: request.bot_id }),
    maxRetries: request.max_retries ?? 0,
    retryInterval: (request.retry_interval ?? 0) * MS_PER_MINUTE,
    contacts,
  };
}

/** The accepted contacts as the engine takes them, in order. */
export function submissionContacts(parsed: ParsedSendRequest): SubmissionContact[] {
  const contacts: SubmissionContact[] = new Array<SubmissionContact>(parsed.accepted.length);
  for (let i = 0; i < parsed.accepted.length; i++) {
    const { contact } = parsed.accepted[i] as ParsedSendRequest['accepted'][number];
    const mapped: { -readonly [K in keyof SubmissionContact]: SubmissionContact[K] } = {
      phone: contact.phone_number,
      variables: contact.template_variables ?? [],
    };
    if (contact.document !== undefined) mapped.document = contact.document;
    if (contact.contract !== undefined) mapped.contract = contact.contract;
    if (contact.data !== undefined) mapped.data = contact.data;
    contacts[i] = mapped;
  }
  return contacts;
}

/** One SMS to hand to the SMS provider, with where its status and replies go. */
export interface SmsSend {
  /** Position in the request array (to match the response and the callbacks). */
  readonly index: number;
  /** Digits including the country code. */
  readonly phone: string;
  readonly message: string;
  readonly encoding: SmsEncoding;
  /** Parts the text is sent in (each part is billed). */
  readonly parts: number;
  /** Where delivery reports (DLR) and replies (MO) go; absent when the item gave none. */
  readonly callbacks: { readonly dlr?: string; readonly mo?: string };
  readonly reference?: string;
  readonly campaignId?: number;
  readonly name?: string;
  /** The item's `cpf`: CPF or CNPJ digits. */
  readonly document?: string;
}

/** The SMS sends for the accepted items of a batch, in request order. */
export function toSmsSends(parsed: ParsedSmsBatch): SmsSend[] {
  return parsed.accepted.map(({ index, item, size }) => ({
    index,
    phone: item.phone,
    message: item.message,
    encoding: size.encoding,
    parts: size.parts,
    callbacks: {
      ...(item.url_callback_dlr === undefined ? {} : { dlr: item.url_callback_dlr }),
      ...(item.url_callback_mo === undefined ? {} : { mo: item.url_callback_mo }),
    },
    ...(item.reference === undefined ? {} : { reference: item.reference }),
    ...(item.campaign_id === undefined ? {} : { campaignId: item.campaign_id }),
    ...(item.name === undefined ? {} : { name: item.name }),
    ...(item.cpf === undefined ? {} : { document: item.cpf }),
  }));
}
