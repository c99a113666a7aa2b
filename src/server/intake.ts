/**
 * Intake of POST /messenger/messages/: contract check (scoped to the key's company), the intake
 * bound, ids and context on each contact, submission to the engine, admissions in the campaign
 * statistics and ENQUEUED notifications. The bound is checked before anything is queued, so a
 * refused request (429) changes nothing.
 */
import type { Problem } from '../core/problems.js';
import { toSubmission } from '../contract/mapping.js';
import type { ParseResult } from '../contract/check.js';
import { type ParsedSendRequest, type SendRequestOptions, parseSendRequest } from '../contract/parse-send-request.js';
import type { PhoneSet, Rejection } from '../contract/rejection.js';
import { errorResponse, sendResponse, type HttpAnswer } from '../contract/responses.js';
import type { Admission } from '../events/campaign-counts.js';
import { webhooksPending, type ServerContext } from './context.js';
import { serverContacts } from './contacts.js';
import { type Screening, type SentScreen, startScreening } from './screening.js';

/** An answer and its extra headers (Retry-After). */
export interface IntakeAnswer {
  readonly answer: HttpAnswer<unknown>;
  readonly headers?: Record<string, string>;
}

/** The statistics' admission of each rejection: every contact posted counts in `count_total`. */
const ADMISSION: Readonly<Partial<Record<Rejection['reason'], Admission>>> = {
  invalid_phone: 'invalid-phone',
  // A field other than the phone: sendpool's extension count `count_invalid_data`.
  invalid_document: 'invalid-data',
  invalid_variables: 'invalid-data',
  invalid_data: 'invalid-data',
  blocked: 'blocked',
  duplicated: 'duplicated',
  already_sent: 'already-sent',
};

/** Longest `Retry-After`: the 24 h limit holds a send for 24 h plus one bucket (25 h with 60-minute buckets). */
const MAX_RETRY_AFTER_S = 25 * 3600;
/** `Retry-After` when nothing but an operator's call (a resume, a limit change) can unblock the pool. */
const UNKNOWN_RETRY_AFTER_S = 60;

/**
 * Seconds until `excess` contacts have left the engine, for a 429's `Retry-After`, from what the
 * engine knows of the request's pool: what it may send now goes at once; when its numbers are all
 * spent, the wait starts when the first regains capacity (its hour or 24 h window resets) or a
 * timed pause ends; the rest goes at the numbers' rates, their 24 h limits included
 * (`engine.estimateSendTime`). When the excess is more than is queued and in flight, contacts
 * waiting for a retry must leave too: not before the next retry falls due. 1 s to 25 h.
 */
function retryAfterSeconds(ctx: ServerContext, businessId: number, typeId: number, excess: number): number {
  let at: number | undefined;
  try {
    at = ctx.engine.estimateSendTime(businessId, typeId, excess);
    const s = ctx.engine.stats();
    const retryAt = excess > s.queued + s.inFlight ? ctx.engine.nextRetryAt() : undefined;
    if (at !== undefined && retryAt !== undefined && retryAt > at) at = retryAt;
  } catch {
    at = undefined;
  }
  if (at === undefined) return UNKNOWN_RETRY_AFTER_S;
  return Math.max(1, Math.min(MAX_RETRY_AFTER_S, Math.ceil((at - ctx.clock.now()) / 1000)));
}

/** How a send request of a key's company is parsed: its company's template types, the server's contacts limit. */
export function sendRequestOptions(ctx: ServerContext, companyId: number): SendRequestOptions {
  const { engine, tenants } = ctx;
  return {
    // A business of another company does not exist for this key.
    templateTypes: { templateType: (b, t) => (tenants.owns(companyId, b) ? engine.templateType(b, t) : undefined) },
    ...(ctx.limits.maxContacts === undefined ? {} : { maxContacts: ctx.limits.maxContacts }),
  };
}

/** What a request is screened against: this instance's sets. */
export type ScreeningSets = Pick<ServerContext, 'blocklist' | 'campaignPhones' | 'sentPhones'>;

/** A request's contacts screened before its one piece (intake-parse.ts), and the version of the sets they were screened against. */
export interface Prescreen {
  readonly version: string;
  readonly screened: ParsedSendRequest;
}

/** A send body parsed before `intakeSend` (intake-parse.ts), and (a large one, not on Redis) its contacts screened. */
export interface PreparedSend {
  readonly parsed: ParseResult<ParsedSendRequest, Problem>;
  readonly prescreen?: Prescreen;
}

/**
 * The version of what a request is screened against at `now` (the blocklist, the campaigns' phones,
 * the phones already sent): a screening done at one version is the screening of any moment it is
 * unchanged.
 */
export function screeningVersion(ctx: ScreeningSets, now: number): string {
  return `${ctx.blocklist.version}/${ctx.campaignPhones.version}/${ctx.sentPhones.enabled ? ctx.sentPhones.version(now) : ''}`;
}

/**
 * The screening of a parsed request against this instance's sets at `now`; `taken` and `sent`
 * replace the campaign's phones and those already sent (on Redis, the phones the route reserved).
 */
export function startRequestScreening(ctx: ScreeningSets, companyId: number, parsed: ParsedSendRequest, now: number, taken?: PhoneSet, sent?: PhoneSet): Screening {
  const { business_id: businessId, template_type_id: typeId, campaign_id: campaignId } = parsed.request;
  const sentScreen = ctx.sentPhones.enabled ? alreadySent(ctx, businessId, typeId, sent ?? ctx.sentPhones.view(businessId, typeId, now)) : undefined;
  return startScreening(parsed, ctx.blocklist.view(companyId), taken ?? ctx.campaignPhones.known(companyId, campaignId), sentScreen);
}

/**
 * Takes a send request. `prepared` is the body already parsed with {@link sendRequestOptions}
 * (a large body is parsed in slices before: intake-parse.ts); without it the body is parsed here.
 * Everything from the intake bound on runs in one piece, so what the bound saw is what is queued.
 * `taken`: the campaign's phones other requests hold, `sent` the phones the business took for the
 * type within `alreadySentWindowMs` (on Redis, both reserved by the route before). The prepared
 * screening is used when nothing screened against changed since; otherwise it is done again here.
 */
export function intakeSend(ctx: ServerContext, companyId: number, body: unknown, requestId: string, prepared?: PreparedSend, taken?: PhoneSet, sent?: PhoneSet): IntakeAnswer {
  if (ctx.closing) return { answer: errorResponse('unavailable', [], ctx.closedBecause ?? 'The server is shutting down; send again to another instance or later.') };
  const parsed = prepared?.parsed ?? parseSendRequest(body, sendRequestOptions(ctx, companyId));
  const prescreen = prepared?.prescreen;
  if (!parsed.ok) return { answer: errorResponse('invalid_body', explainBusiness(ctx, companyId, body, parsed.problems)) };
  const campaignId = parsed.value.request.campaign_id;
  const now = ctx.clock.now();
  let screened: ParsedSendRequest;
  if (prescreen !== undefined && prescreen.version === screeningVersion(ctx, now)) screened = prescreen.screened;
  else {
    const screening = startRequestScreening(ctx, companyId, parsed.value, now, taken, sent);
    screening.step(Infinity);
    screened = screening.result();
  }
  const { request, accepted, rejected } = screened;

  // The intake bound: contacts waiting in the engine, and webhook events waiting in the outbox.
  // On Redis the contacts wait in the shared queue: the bound is the fleet's backlog there.
  const waiting = ctx.backend.backlog();
  if (waiting + accepted.length > ctx.maxQueuedContacts) {
    const seconds = retryAfterSeconds(ctx, request.business_id, request.template_type_id, waiting + accepted.length - ctx.maxQueuedContacts);
    return {
      answer: errorResponse('rate_limited', [], `The intake queue is full (${waiting} contacts waiting, bound ${ctx.maxQueuedContacts}); retry after ${seconds} s.`),
      headers: { 'retry-after': String(seconds) },
    };
  }
  const pending = webhooksPending(ctx);
  if (pending > ctx.maxPendingWebhooks) {
    return {
      answer: errorResponse('rate_limited', [], `Webhook deliveries are behind (${pending} pending); retry later.`),
      headers: { 'retry-after': '30' },
    };
  }

  // On Redis the ids come from the counter every instance shares (made ready before: the route's ensure).
  const base = ctx.backend.contactIds.take(request.contacts.length);
  const contacts = serverContacts(accepted, { firstId: base, requestId, companyId, costCenterId: request.queue_id ?? 0 });
  const submission = toSubmission(screened, contacts);

  // Everything the request does, in one piece: its contacts queued (on Redis to the shared queue,
  // with the step the 202 waits for), its phones remembered (on Redis, held before), its
  // admissions counted, its ENQUEUED notifications recorded (one run: a send never overtakes its ENQUEUED).
  ctx.backend.queue({ submission, requestId, companyId, campaignId, phones: contacts.map((c) => c.phone), now });
  // Statistics: the request's ids as ranges of accepted contacts, the rejections apart.
  ctx.notifier.admit(
    companyId,
    campaignId,
    base,
    request.contacts.length,
    rejected.map((r) => [base + r.index, ADMISSION[r.reason]] as const),
  );
  ctx.notifier.enqueued(contacts, campaignId, ctx.clock.now());
  ctx.metrics?.contactsAccepted.inc({ kind: 'accepted' }, accepted.length);
  if (rejected.length > 0) ctx.metrics?.contactsAccepted.inc({ kind: 'rejected' }, rejected.length);
  ctx.dispatch.kick();
  return { answer: sendResponse(screened, requestId) };
}

/** The `already_sent` check of a request: the phones, and what a refusal says it expected. */
function alreadySent(ctx: ScreeningSets, businessId: number, typeId: number, phones: PhoneSet): SentScreen {
  return { phones, expected: `a phone business ${businessId} has not sent template type ${typeId} within the last ${windowText(ctx.sentPhones.windowMs)} (already sent)` };
}

/** `24 h`, `90 min`, `45 s`, `250 ms`. */
function windowText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

/** An unknown business is said at `$.business_id`, with the caller's businesses, rather than as an unknown type. */
function explainBusiness(ctx: ServerContext, companyId: number, body: unknown, problems: readonly Problem[]): Problem[] {
  const id = typeof body === 'object' && body !== null ? (body as { business_id?: unknown }).business_id : undefined;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1 || ctx.tenants.owns(companyId, id)) return [...problems];
  const own = ctx.engine
    .businesses()
    .map((b) => b.id)
    .filter((b) => ctx.tenants.owns(companyId, b));
  const expected = own.length > 0 ? `the id of one of your businesses (${own.join(', ')})` : 'the id of one of your businesses (this key has none)';
  return [{ path: '$.business_id', expected, actual: String(id), message: `$.business_id: expected ${expected}, got ${id}` }, ...problems.filter((p) => p.path !== '$.template_type_id')];
}
