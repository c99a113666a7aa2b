/**
 * POST /messenger/messages/ body → a typed, normalised request plus the contacts to send and the
 * contacts rejected. Two levels of failure, on purpose:
 *
 * - the body does not follow the contract (wrong type, missing required field, unknown field,
 *   unknown template type, over the contacts limit): nothing is sent, every problem is listed
 *   (HTTP 422), up to `MAX_PROBLEMS_LISTED` and then counted (problem-cap.ts);
 * - a contact breaks a field rule (phone, document, variables, duplicate): that contact is
 *   rejected with its reason, the others are sent, as the campaign statistics' `count_invalid_phone`
 *   and `count_duplicated` imply.
 *
 * Never throws on any input.
 */
import { type Problem, pathIndex, pathKey, problem } from '../core/problems.js';
import type { ParseResult } from './check.js';
import { normaliseDocument } from './document.js';
import { type ContractLimits, DEFAULT_MAX_CONTACTS } from './limits.js';
import { normalisePhone } from './phone.js';
import { MAX_PROBLEMS_LISTED } from './problem-cap.js';
import { MAX_PROBLEMS_PER_REJECTION, type PhoneSet, type Rejection } from './rejection.js';
import { schemaProblems } from './schema-check.js';
import { type Contact, type SendRequest, SendRequestSchema, createSendRequestSchema } from './send-request-schema.js';
import { checkVariableCount, checkVariableValue } from './template-fields.js';

/**
 * What the contract needs to know of the fleet: the number of placeholders of a template type of a
 * business, or `undefined` when the business has no such type. The engine implements it.
 */
export interface TemplateTypeLookup {
  templateType(businessId: number, typeId: number): { readonly placeholders: number } | undefined;
}

/** Options of {@link parseSendRequest}. */
export interface SendRequestOptions extends Pick<ContractLimits, 'maxContacts'> {
  /** The fleet's template types, to refuse unknown types and check each contact's variables. */
  readonly templateTypes: TemplateTypeLookup;
  /**
   * Phones already submitted in this campaign by earlier requests: contacts with one of them are
   * rejected as `duplicated` (the spec's "sent once" across a campaign). @default none
   */
  readonly knownPhones?: PhoneSet;
}

/** A contact that passed every rule, as it will be sent. */
export interface AcceptedContact {
  /** Position in the request's `contacts`. */
  readonly index: number;
  /** The contact with `phone_number` and `document` normalised to digits. */
  readonly contact: Contact;
}

/** A POST /messenger/messages/ body that follows the contract. */
export interface ParsedSendRequest {
  /** The body, with every normalisable phone and document written as digits. */
  readonly request: SendRequest;
  /** Contacts to send, in request order, each phone once. */
  readonly accepted: readonly AcceptedContact[];
  /** Contacts not sent, in request order, each with its reason and problems. */
  readonly rejected: readonly Rejection[];
}

const schemas = new Map<number, ReturnType<typeof createSendRequestSchema>>([[DEFAULT_MAX_CONTACTS, SendRequestSchema]]);
function schemaFor(maxContacts: number) {
  let schema = schemas.get(maxContacts);
  if (schema === undefined) {
    schema = createSendRequestSchema(maxContacts);
    if (schemas.size < 16) schemas.set(maxContacts, schema);
  }
  return schema;
}

/** Parses and checks a POST /messenger/messages/ body (already decoded from JSON). */
export function parseSendRequest(body: unknown, options: SendRequestOptions): ParseResult<ParsedSendRequest, Problem> {
  const problems: Problem[] = [];
  try {
    for (const p of schemaProblems(schemaFor(options.maxContacts ?? DEFAULT_MAX_CONTACTS), body, MAX_PROBLEMS_LISTED)) problems.push(p);
  } catch {
    // Only exotic inputs (proxies, throwing getters) get here; JSON never does.
    return { ok: false, problems: [problem('$', 'a JSON object', body)] };
  }
  if (problems.length > 0) {
    return { ok: false, problems: withLookup(problems, body, options.templateTypes) };
  }
  const request = body as SendRequest;
  const type = options.templateTypes.templateType(request.business_id, request.template_type_id);
  if (type === undefined) {
    return { ok: false, problems: [unknownType(request)] };
  }
  return { ok: true, value: checkContacts(request, type.placeholders, options.knownPhones) };
}

function unknownType(request: { business_id: number; template_type_id: number }): Problem {
  return problem('$.template_type_id', `a template type of business ${request.business_id}`, request.template_type_id);
}

/** Adds the unknown-type problem to a failing body when both ids are themselves valid. */
function withLookup(problems: Problem[], body: unknown, lookup: TemplateTypeLookup): Problem[] {
  if (problems.some((p) => p.path === '$' || p.path === '$.business_id' || p.path === '$.template_type_id')) return problems;
  const ids = body as { business_id: number; template_type_id: number };
  if (lookup.templateType(ids.business_id, ids.template_type_id) !== undefined) return problems;
  return [unknownType(ids), ...problems];
}

/** JSON path of a field of contact `index` (built only for problems). */
function contactPath(index: number, key: string): string {
  return pathKey(pathIndex('$.contacts', index), key);
}

/** The field-rule problems of one contact (the first few, and how many), its reason, and the contact normalised. */
function checkContact(
  raw: Contact,
  index: number,
  placeholders: number,
): { contact: Contact; reason?: Rejection['reason']; problems?: Problem[]; count?: number } {
  const contact: Contact = { ...raw };
  let found: Problem[] | undefined;
  let count = 0;
  // Past the first few, a problem is only counted: its path and text are never built.
  const add = (path: () => string, expected: string, value: unknown): void => {
    count++;
    if ((found ??= []).length < MAX_PROBLEMS_PER_REJECTION) found.push(problem(path(), expected, value));
  };
  let reason: Rejection['reason'] | undefined;
  const phone = normalisePhone(raw.phone_number);
  if (phone.ok) contact.phone_number = phone.value;
  else {
    add(() => contactPath(index, 'phone_number'), phone.expected, raw.phone_number);
    reason = 'invalid_phone';
  }
  if (raw.document !== undefined) {
    const document = normaliseDocument(raw.document);
    if (document.ok) contact.document = document.value;
    else {
      add(() => contactPath(index, 'document'), document.expected, raw.document);
      reason ??= 'invalid_document';
    }
  }
  const values = raw.template_variables;
  const n = values === undefined ? 0 : values.length;
  const countProblem = checkVariableCount(n, placeholders);
  if (countProblem !== undefined) add(() => contactPath(index, 'template_variables'), countProblem, values ?? []);
  for (let i = 0; i < n; i++) {
    const value = (values as string[])[i] as string;
    const valueProblem = checkVariableValue(value);
    if (valueProblem !== undefined) add(() => pathIndex(contactPath(index, 'template_variables'), i), valueProblem, value);
  }
  if (found === undefined) return { contact };
  return { contact, reason: reason ?? 'invalid_variables', problems: found, count };
}

function checkContacts(request: SendRequest, placeholders: number, knownPhones: PhoneSet | undefined): ParsedSendRequest {
  const contacts: Contact[] = [];
  const accepted: AcceptedContact[] = [];
  const rejected: Rejection[] = [];
  const firstIndexOf = new Map<string, number>();
  for (let index = 0; index < request.contacts.length; index++) {
    const { contact, reason, problems, count } = checkContact(request.contacts[index] as Contact, index, placeholders);
    contacts.push(contact);
    if (reason !== undefined) {
      const listed = problems ?? [];
      rejected.push({ index, reason, problems: listed, ...(count !== undefined && count > listed.length ? { problemCount: count } : {}) });
      continue;
    }
    const earlier = firstIndexOf.get(contact.phone_number);
    if (earlier !== undefined || knownPhones?.has(contact.phone_number) === true) {
      const where = earlier === undefined ? 'earlier in this campaign' : `at $.contacts[${earlier}]`;
      rejected.push({
        index,
        reason: 'duplicated',
        problems: [problem(contactPath(index, 'phone_number'), `a phone not already in the campaign (sent once, ${where})`, contact.phone_number)],
        ...(earlier === undefined ? {} : { duplicateOf: earlier }),
      });
      continue;
    }
    firstIndexOf.set(contact.phone_number, index);
    accepted.push({ index, contact });
  }
  return { request: { ...request, contacts }, accepted, rejected };
}
