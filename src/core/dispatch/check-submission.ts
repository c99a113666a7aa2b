/** Checks of what `submit` is given: the submission's own fields, then each contact against its type. */
import { PHONE_EXPECTED, isPhone } from '../phone.js';
import { type Problem, problem } from '../problems.js';
import type { Submission, SubmissionContact } from '../submission.js';
import type { ContactRejection } from './types.js';

/**
 * Retries of a contact the engine accepts (its counter is a byte). The HTTP contract allows fewer
 * (`MAX_RETRIES` of sendpool/contract); other hosts may ask for up to this many.
 */
export const ENGINE_MAX_RETRIES = 100;
export const MAX_RETRY_INTERVAL = 30 * 86_400_000;
export const MAX_WEIGHT = 1000;
/** Contacts of one submission at most: a contact's index must fit the message id and typed arrays. */
export const MAX_CONTACTS = 2 ** 31 - 1;

/** Checks a submission's own fields; every problem with its JSON path. */
export function checkSubmission(input: Submission): Problem[] {
  const problems: Problem[] = [];
  if (typeof input !== 'object' || input === null) return [problem('$', 'a submission object', input)];
  const int = (key: keyof Submission, min: number, max: number, required: boolean, what: string) => {
    const v = input[key];
    if (v === undefined && !required) return;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) problems.push(problem(`$.${key}`, what, v));
  };
  int('businessId', 1, Number.MAX_SAFE_INTEGER, true, 'a business id (a positive integer)');
  int('typeId', 1, Number.MAX_SAFE_INTEGER, true, 'a template type id (a positive integer)');
  int('campaignId', 0, Number.MAX_SAFE_INTEGER, false, 'a campaign id (an integer, 0 or more)');
  int('queueId', 0, Number.MAX_SAFE_INTEGER, false, 'a queue id (an integer, 0 or more)');
  int('botId', 0, Number.MAX_SAFE_INTEGER, false, 'a bot id (an integer, 0 or more)');
  int('maxRetries', 0, ENGINE_MAX_RETRIES, false, `an integer from 0 to ${ENGINE_MAX_RETRIES}`);
  int('retryInterval', 0, MAX_RETRY_INTERVAL, false, `milliseconds from 0 to ${MAX_RETRY_INTERVAL} (30 days)`);
  int('deadline', 0, Number.MAX_SAFE_INTEGER, false, 'a clock time in milliseconds');
  int('weight', 1, MAX_WEIGHT, false, `an integer from 1 to ${MAX_WEIGHT}`);
  int('retriesUsed', 0, typeof input.maxRetries === 'number' ? Math.min(input.maxRetries, ENGINE_MAX_RETRIES) : 0, false, 'an integer from 0 to maxRetries');
  int('notBefore', 0, Number.MAX_SAFE_INTEGER, false, 'a clock time in milliseconds');
  if (input.ahead !== undefined && typeof input.ahead !== 'boolean') problems.push(problem('$.ahead', 'true or false', input.ahead));
  if (!Array.isArray(input.contacts) || input.contacts.length === 0) problems.push(problem('$.contacts', 'a non-empty array of contacts', input.contacts));
  else if (input.contacts.length > MAX_CONTACTS) problems.push(problem('$.contacts', `at most ${MAX_CONTACTS} contacts`, input.contacts));
  return problems;
}

/** Checks one contact against the type; a rejection when it cannot be sent. */
export function checkContact(contact: SubmissionContact | undefined, placeholders: number, index: number): ContactRejection | undefined {
  if (typeof contact !== 'object' || contact === null) return { index, reason: 'invalid_phone', problem: problem(contactPath(index, ''), 'a contact object', contact) };
  if (!isPhone(contact.phone)) {
    return { index, reason: 'invalid_phone', problem: problem(contactPath(index, '.phone'), PHONE_EXPECTED, contact.phone) };
  }
  const values = contact.variables ?? NO_VALUES;
  if (!Array.isArray(values) || values.length !== placeholders) {
    return { index, reason: 'invalid_variables', problem: problem(contactPath(index, '.variables'), `${placeholders} value(s), one for each placeholder of the type`, values) };
  }
  for (let v = 0; v < values.length; v++) {
    if (typeof values[v] !== 'string' || values[v] === '') {
      return { index, reason: 'invalid_variables', problem: problem(contactPath(index, `.variables[${v}]`), 'a non-empty string', values[v]) };
    }
  }
  return undefined;
}

const NO_VALUES: readonly string[] = [];

/** A contact's JSON path, built only for a rejection (the check runs for every contact submitted). */
function contactPath(index: number, suffix: string): string {
  return `$.contacts[${index}]${suffix}`;
}
