/**
 * POST /sms/messages/ body (a JSON array of SMS items) → typed, normalised items, the items to send
 * with their encoding and parts, and the items rejected.
 *
 * Request-level problems (nothing sent, HTTP 422): the array does not follow the contract, or a
 * callback URL is refused (a bad or internal callback is a client configuration error or an
 * attack, and the same URL is usually on every item: failing loudly is kinder than rejecting ten
 * thousand items one by one). Item-level rejections: invalid phone, invalid `cpf`, and an item
 * repeating the phone and text of an earlier item (`duplicated`, sent once).
 *
 * Never throws on any input.
 */
import { type Problem, pathIndex, pathKey, problem } from '../core/problems.js';
import type { ParseResult } from './check.js';
import { normaliseDocument } from './document.js';
import { type ContractLimits, DEFAULT_MAX_SMS_ITEMS } from './limits.js';
import { normalisePhone } from './phone.js';
import { MAX_PROBLEMS_LISTED, capProblems, isNotListed, problemTotal } from './problem-cap.js';
import type { Rejection } from './rejection.js';
import { withoutNulls } from './null-fields.js';
import { schemaProblems } from './schema-check.js';
import { type SmsSize, smsSize } from './sms-encoding.js';
import { SMS_ITEM_OPTIONAL, type SmsBatch, SmsBatchSchema, type SmsItem, createSmsBatchSchema } from './sms-schema.js';
import { type UrlPolicy, checkUrl } from './url-policy.js';

/** Options of {@link parseSmsBatch}. */
export interface SmsBatchOptions extends Pick<ContractLimits, 'maxSmsItems'> {
  /** What callback URLs may point at. @default public hosts only */
  readonly urlPolicy?: UrlPolicy;
}

/** An SMS item that passed every rule, as it will be sent. */
export interface AcceptedSms {
  /** Position in the request array. */
  readonly index: number;
  /** The item with `phone` and `cpf` as digits and URLs normalised. */
  readonly item: SmsItem;
  /** Encoding detected from the text, its size and number of parts. */
  readonly size: SmsSize;
}

/** A POST /sms/messages/ body that follows the contract. */
export interface ParsedSmsBatch {
  /** The items, with every normalisable phone and document written as digits and URLs normalised. */
  readonly batch: SmsBatch;
  readonly accepted: readonly AcceptedSms[];
  readonly rejected: readonly Rejection<'invalid_phone' | 'invalid_document' | 'duplicated'>[];
}

const URL_FIELDS = ['url_callback_dlr', 'url_callback_mo'] as const;

const schemas = new Map<number, ReturnType<typeof createSmsBatchSchema>>([[DEFAULT_MAX_SMS_ITEMS, SmsBatchSchema]]);
function schemaFor(maxItems: number) {
  let schema = schemas.get(maxItems);
  if (schema === undefined) {
    schema = createSmsBatchSchema(maxItems);
    if (schemas.size < 16) schemas.set(maxItems, schema);
  }
  return schema;
}

/** Parses and checks a POST /sms/messages/ body (already decoded from JSON). */
export function parseSmsBatch(given: unknown, options: SmsBatchOptions = {}): ParseResult<ParsedSmsBatch, Problem> {
  // An optional field given as null is left out (null-fields.ts).
  const body = Array.isArray(given) ? given.map((item: unknown) => withoutNulls(item, SMS_ITEM_OPTIONAL)) : given;
  try {
    const problems: Problem[] = [];
    for (const p of schemaProblems(schemaFor(options.maxSmsItems ?? DEFAULT_MAX_SMS_ITEMS), body, MAX_PROBLEMS_LISTED)) problems.push(p);
    if (problems.length > 0) {
      // Also report refused URLs among the items that are objects, so one answer lists everything.
      if (Array.isArray(body)) checkUrls(body, options.urlPolicy, problems, []);
      return { ok: false, problems: capped(sortByPath(problems)) };
    }
    const items = body as SmsBatch;
    const normalised: SmsItem[] = items.map((item) => ({ ...item }));
    checkUrls(items, options.urlPolicy, problems, normalised);
    if (problems.length > 0) return { ok: false, problems: capped(problems) };
    return { ok: true, value: checkItems(normalised) };
  } catch {
    return { ok: false, problems: [problem('$', 'a JSON array of SMS items', body)] };
  }
}

/**
 * Stable order: by item index, then as found (the schema walk and the URL pass interleave). The
 * problem counting those the walk did not list stays last.
 */
function sortByPath(problems: Problem[]): Problem[] {
  const indexOf = (p: Problem): number => (isNotListed(p) ? Infinity : Number(/^\$\[(\d+)\]/.exec(p.path)?.[1] ?? -1));
  return problems
    .map((p, i) => [p, i] as const)
    .sort((a, b) => indexOf(a[0]) - indexOf(b[0]) || a[1] - b[1])
    .map(([p]) => p);
}

/** The schema walk's list and the URL pass's problems together, capped once more (a URL refused on every item is 10,000 problems). */
function capped(problems: Problem[]): Problem[] {
  const total = problemTotal(problems);
  if (total <= MAX_PROBLEMS_LISTED) return problems;
  return capProblems(
    problems.filter((p) => !isNotListed(p)),
    total,
  );
}

function checkUrls(items: readonly unknown[], policy: UrlPolicy | undefined, problems: Problem[], out: SmsItem[]): void {
  // Batches repeat the same callback URLs on every item: check each distinct URL once.
  const seen = new Map<string, ReturnType<typeof checkUrl>>();
  // One problem per offending value: a field the schema walk already reported is not reported again.
  const reported = new Set(problems.map((p) => p.path));
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    if (typeof item !== 'object' || item === null) continue;
    for (const field of URL_FIELDS) {
      if (!Object.prototype.hasOwnProperty.call(item, field)) continue;
      const value = (item as Record<string, unknown>)[field];
      if (typeof value !== 'string') continue; // the schema walk reported it
      let url = seen.get(value);
      if (url === undefined) {
        url = checkUrl(value, policy);
        seen.set(value, url);
      }
      const target = out[index];
      if (url.ok) {
        if (target !== undefined) target[field] = url.value;
      } else {
        const path = pathKey(pathIndex('$', index), field);
        if (!reported.has(path)) problems.push(problem(path, url.expected, value));
      }
    }
  }
}

function checkItems(items: SmsItem[]): ParsedSmsBatch {
  const accepted: AcceptedSms[] = [];
  const rejected: Rejection<'invalid_phone' | 'invalid_document' | 'duplicated'>[] = [];
  const firstIndexOf = new Map<string, number>();
  for (let index = 0; index < items.length; index++) {
    const item = items[index] as SmsItem;
    const at = (key: string): string => pathKey(pathIndex('$', index), key);
    const found: Problem[] = [];
    let reason: 'invalid_phone' | 'invalid_document' | undefined;
    const phone = normalisePhone(item.phone);
    if (phone.ok) item.phone = phone.value;
    else {
      found.push(problem(at('phone'), phone.expected, item.phone));
      reason = 'invalid_phone';
    }
    if (item.cpf !== undefined) {
      const document = normaliseDocument(item.cpf);
      if (document.ok) item.cpf = document.value;
      else {
        found.push(problem(at('cpf'), document.expected, item.cpf));
        reason ??= 'invalid_document';
      }
    }
    if (reason !== undefined) {
      rejected.push({ index, reason, problems: found });
      continue;
    }
    // The same text to the same phone twice in one batch is a client retry or a copy error; two
    // different texts to one phone are two messages.
    const key = `${item.phone}\u0000${item.message}`;
    const earlier = firstIndexOf.get(key);
    if (earlier !== undefined) {
      rejected.push({
        index,
        reason: 'duplicated',
        problems: [problem(at('phone'), `a phone and message not already in this batch (same as $[${earlier}])`, item.phone)],
        duplicateOf: earlier,
      });
      continue;
    }
    firstIndexOf.set(key, index);
    accepted.push({ index, item, size: smsSize(item.message) });
  }
  return { batch: items, accepted, rejected };
}
