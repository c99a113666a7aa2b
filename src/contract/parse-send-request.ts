/**
 * POST /messenger/messages/ body → a typed, normalised request plus the contacts to send and the
 * contacts rejected. Two levels of failure, on purpose:
 *
 * - the body does not follow the contract outside its contacts (wrong type, missing required
 *   field, unknown field, unknown template type, over the contacts limit): nothing is sent, every
 *   problem is listed (HTTP 422), up to `MAX_PROBLEMS_LISTED` and then counted (problem-cap.ts);
 * - a contact breaks the contract (a field of the wrong type, an unknown field, not an object) or
 *   a field rule (phone, document, variables, duplicate): that contact is rejected with its
 *   reason, the others are sent, as the campaign statistics' `count_invalid_phone`,
 *   `count_invalid_data` and `count_duplicated` imply.
 *
 * Never throws on any input.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { ArgumentError } from '../core/errors.js';
import { type Problem, pathIndex, pathKey, problem } from '../core/problems.js';
import type { ParseResult } from './check.js';
import { normaliseDocument } from './document.js';
import { type ContractLimits, DEFAULT_MAX_CONTACTS } from './limits.js';
import { normalisePhone } from './phone.js';
import { MAX_PROBLEMS_LISTED } from './problem-cap.js';
import { MAX_PROBLEMS_PER_REJECTION, type PhoneSet, type Rejection } from './rejection.js';
import { type ProblemSink, createProblemSink, fastCheck, schemaProblems, sinkListed, walkSchema } from './schema-check.js';
import { withoutNulls } from './null-fields.js';
import { CONTACT_OPTIONAL, type Contact, ContactSchema, REQUEST_OPTIONAL, type SendRequest, SendRequestSchema, createSendRequestSchema } from './send-request-schema.js';
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
  const steps = startSendRequest(body, options);
  while (!steps.step(Infinity));
  return steps.result();
}

/** A send request being parsed a few contacts at a time: {@link startSendRequest}. */
export interface SendRequestSteps {
  /** Checks up to `contacts` more contacts; answers true once the result is known. */
  step(contacts: number): boolean;
  /** The answer {@link parseSendRequest} gives; valid once `step` answered true. */
  result(): ParseResult<ParsedSendRequest, Problem>;
}

/**
 * Starts parsing a send request in steps, so a host can answer other requests between them
 * (checking 10,000 contacts takes about 20 ms on the reference machine). `step` it until it
 * answers true, then read `result()`: the same answer as {@link parseSendRequest}, which is this
 * run in one step.
 *
 * The body's fields other than the contacts are checked at once; the contacts, a step at a time.
 * The template type is looked up at the start and again at the end: when it changed in between
 * (the fleet was replaced), the contacts' rules are checked again against the type as it is at the
 * end, so the answer is always the one the fleet of that moment gives. A body refused at its
 * top-level fields is walked whole at once to list every problem (a body that does not follow
 * the contract costs that walk, about 2 µs per contact).
 *
 * @example
 * const parse = startSendRequest(body, { templateTypes: engine });
 * while (!parse.step(500)) await new Promise((r) => setImmediate(r));
 * const result = parse.result();
 */
export function startSendRequest(body: unknown, options: SendRequestOptions): SendRequestSteps {
  return new SendRequestParse(body, options);
}

const envelopes = new Map<number, TSchema>();
/** The body's schema with each contact unchecked: the fields checked at once, before the contacts' steps. */
function envelopeFor(maxContacts: number): TSchema {
  let envelope = envelopes.get(maxContacts);
  if (envelope === undefined) {
    const schema = schemaFor(maxContacts);
    const contacts = schema.properties.contacts;
    envelope = Type.Object({ ...schema.properties, contacts: Type.Array(Type.Unknown(), { minItems: contacts.minItems, maxItems: contacts.maxItems }) }, { additionalProperties: false });
    if (envelopes.size < 16) envelopes.set(maxContacts, envelope);
  }
  return envelope;
}

const notAnObject = (body: unknown): ParseResult<ParsedSendRequest, Problem> => ({ ok: false, problems: [problem('$', 'a JSON object', body)] });

class SendRequestParse implements SendRequestSteps {
  private answer: ParseResult<ParsedSendRequest, Problem> | undefined;
  private request: SendRequest | undefined;
  /** Next contact to check. */
  private next = 0;
  /** Placeholders of the type as the rules are being checked with; undefined while the type is unknown. */
  private placeholders: number | undefined;
  /** True when every contact is known to follow the schema (a second pass checks the rules only). */
  private schemaDone = false;
  private contacts: Contact[] = [];
  private accepted: AcceptedContact[] = [];
  /** The problems of the contact being checked (checkRules). */
  private readonly problems = new ContactProblems();
  private rejected: Rejection[] = [];
  private firstIndexOf = new Map<string, number>();

  private readonly body: unknown;

  constructor(
    given: unknown,
    private readonly options: SendRequestOptions,
  ) {
    const maxContacts = options.maxContacts ?? DEFAULT_MAX_CONTACTS;
    // An optional field given as null is left out (null-fields.ts); the contacts' are, one by one.
    const body = (this.body = withoutNulls(given, REQUEST_OPTIONAL));
    try {
      if (!fastCheck(envelopeFor(maxContacts))(body)) {
        // Refused at its fields (or compiling is not possible): the whole walk lists every problem.
        const problems = schemaProblems(schemaFor(maxContacts), contactsWithoutNulls(body), MAX_PROBLEMS_LISTED);
        if (problems.length > 0) {
          this.answer = { ok: false, problems: withLookup(problems, body, options.templateTypes) };
          return;
        }
        this.schemaDone = true;
      }
    } catch {
      // Only exotic inputs (proxies, throwing getters) get here; JSON never does.
      this.answer = notAnObject(body);
      return;
    }
    const request = body as SendRequest;
    this.request = request;
    this.placeholders = options.templateTypes.templateType(request.business_id, request.template_type_id)?.placeholders;
  }

  step(count: number): boolean {
    if (this.answer !== undefined) return true;
    const list = (this.request as SendRequest).contacts;
    const end = Math.min(list.length, this.next + Math.max(1, count));
    try {
      const check = fastCheck(ContactSchema);
      for (let index = this.next; index < end; index++) {
        const raw = withoutNulls(list[index] as Contact, CONTACT_OPTIONAL);
        if (!this.schemaDone && !check(raw)) {
          // A contact that breaks the schema is refused alone, as one that breaks a field rule.
          const sink = createProblemSink(MAX_PROBLEMS_PER_REJECTION);
          walkSchema(ContactSchema, raw, pathIndex('$.contacts', index), sink);
          if (sink.count > 0) {
            this.refuseMalformed(raw, index, sink);
            continue;
          }
        }
        if (this.placeholders !== undefined) this.checkRules(raw, index, this.placeholders);
      }
    } catch {
      this.answer = notAnObject(this.body);
      return true;
    }
    this.next = end;
    if (end === list.length) this.finish();
    return this.answer !== undefined;
  }

  result(): ParseResult<ParsedSendRequest, Problem> {
    if (this.answer === undefined) throw new ArgumentError('startSendRequest(…).result()', 'called once step() answered true', 'a call before');
    return this.answer;
  }

  private finish(): void {
    const request = this.request as SendRequest;
    const lookup = this.options.templateTypes;
    const type = lookup.templateType(request.business_id, request.template_type_id);
    if (type === undefined) {
      this.answer = { ok: false, problems: [unknownType(request)] };
      return;
    }
    if (type.placeholders !== this.placeholders) {
      // The type appeared or changed between the steps: check the rules again against it.
      this.placeholders = type.placeholders;
      this.schemaDone = true;
      this.next = 0;
      this.contacts = [];
      this.accepted = [];
      this.rejected = [];
      this.firstIndexOf = new Map();
      return;
    }
    this.answer = { ok: true, value: { request: { ...request, contacts: this.contacts }, accepted: this.accepted, rejected: this.rejected } };
  }

  /**
   * A contact that breaks the schema: rejected with the reason of the first field that breaks it
   * (`phone_number`, `document`, `template_variables`; `invalid_data` for any other field or a
   * contact that is not an object). It holds its place in the request's contacts with its phone
   * when it has one as text, so the contacts keep their indexes.
   */
  private refuseMalformed(raw: unknown, index: number, sink: ProblemSink): void {
    const listed = sinkListed(sink);
    // The path after `$.contacts[i].`: empty for a contact that is not an object.
    const field = (listed[0]?.path ?? '').slice(pathIndex('$.contacts', index).length + 1);
    const reason = MALFORMED_REASONS.find(([prefix]) => field.startsWith(prefix))?.[1] ?? 'invalid_data';
    const phone = typeof raw === 'object' && raw !== null ? (raw as { phone_number?: unknown }).phone_number : undefined;
    this.contacts.push({ phone_number: typeof phone === 'string' ? phone : '' });
    this.rejected.push({ index, reason, problems: listed, ...(sink.count > listed.length ? { problemCount: sink.count } : {}) });
  }

  /** The field rules of one contact that follows the schema: accepted, or rejected with its reason. */
  private checkRules(raw: Contact, index: number, placeholders: number): void {
    const problems = this.problems;
    const contact = checkContact(raw, index, placeholders, problems);
    this.contacts.push(contact);
    if (problems.reason !== undefined) {
      const listed = problems.found ?? [];
      this.rejected.push({ index, reason: problems.reason, problems: listed, ...(problems.count > listed.length ? { problemCount: problems.count } : {}) });
      return;
    }
    const earlier = this.firstIndexOf.get(contact.phone_number);
    if (earlier !== undefined || this.options.knownPhones?.has(contact.phone_number) === true) {
      const where = earlier === undefined ? 'earlier in this campaign' : `at $.contacts[${earlier}]`;
      this.rejected.push({
        index,
        reason: 'duplicated',
        problems: [problem(contactPath(index, 'phone_number'), `a phone not already in the campaign (sent once, ${where})`, contact.phone_number)],
        ...(earlier === undefined ? {} : { duplicateOf: earlier }),
      });
      return;
    }
    this.firstIndexOf.set(contact.phone_number, index);
    this.accepted.push({ index, contact });
  }
}

/** The body with each contact's null optional fields left out, for the walk that lists every problem. */
function contactsWithoutNulls(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return body;
  const contacts = (body as { contacts?: unknown }).contacts;
  if (!Array.isArray(contacts)) return body;
  return { ...body, contacts: contacts.map((c: unknown) => withoutNulls(c, CONTACT_OPTIONAL)) };
}

/** The reason of a contact refused by the schema, by the field its first problem is at. */
const MALFORMED_REASONS: readonly (readonly [string, Rejection['reason']])[] = [
  ['phone_number', 'invalid_phone'],
  ['document', 'invalid_document'],
  ['template_variables', 'invalid_variables'],
];

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

/**
 * The field-rule problems of the contact being checked: the first few, how many, and its reason.
 * One per parser, emptied for each contact, so a contact without problems allocates nothing here.
 */
class ContactProblems {
  found: Problem[] | undefined;
  count = 0;
  reason: Rejection['reason'] | undefined;

  clear(): void {
    this.found = undefined;
    this.count = 0;
    this.reason = undefined;
  }

  /** Past the first few, a problem is only counted: its path and text are never built. */
  add(path: () => string, expected: string, value: unknown): void {
    this.count++;
    if ((this.found ??= []).length < MAX_PROBLEMS_PER_REJECTION) this.found.push(problem(path(), expected, value));
  }
}

/**
 * The contact normalised (the same object when nothing changed: most phones come as digits
 * already), its problems written to `problems`.
 */
function checkContact(raw: Contact, index: number, placeholders: number, problems: ContactProblems): Contact {
  problems.clear();
  let contact = raw;
  const phone = normalisePhone(raw.phone_number);
  if (!phone.ok) {
    problems.add(() => contactPath(index, 'phone_number'), phone.expected, raw.phone_number);
    problems.reason = 'invalid_phone';
  } else if (phone.value !== raw.phone_number) contact = { ...contact, phone_number: phone.value };
  if (raw.document !== undefined) {
    const document = normaliseDocument(raw.document);
    if (!document.ok) {
      problems.add(() => contactPath(index, 'document'), document.expected, raw.document);
      problems.reason ??= 'invalid_document';
    } else if (document.value !== raw.document) contact = { ...contact, document: document.value };
  }
  const values = raw.template_variables;
  const n = values === undefined ? 0 : values.length;
  const countProblem = checkVariableCount(n, placeholders);
  if (countProblem !== undefined) problems.add(() => contactPath(index, 'template_variables'), countProblem, values ?? []);
  for (let i = 0; i < n; i++) {
    const value = (values as string[])[i] as string;
    const valueProblem = checkVariableValue(value);
    if (valueProblem !== undefined) problems.add(() => pathIndex(contactPath(index, 'template_variables'), i), valueProblem, value);
  }
  if (problems.found !== undefined) problems.reason ??= 'invalid_variables';
  return contact;
}
