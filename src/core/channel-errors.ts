/**
 * What the dispatch queue does when the channel reports a failed send: the error-to-action table.
 *
 * Codes are the WhatsApp Cloud API's (the chat channel of the spec); a host on another provider
 * maps its errors onto these actions with its own table. Unknown codes get {@link UNKNOWN_ACTION}:
 * a contact retry, because giving up on a contact for an error nobody has classified loses a
 * message that might have gone, while a retry is bounded by the submission's `maxRetries`.
 */

const HOUR = 3_600_000;

/** What to do with a message whose send failed. */
export type FailureAction =
  /** The number is throttled: the message goes back to the head of its queue (not a contact retry) and the number rests `restMs`. */
  | { readonly kind: 'requeue'; readonly restMs: number }
  /** A contact retry: counts against `maxRetries`; the next try is not before `notBeforeMs` (nor before the submission's `retryInterval`). */
  | { readonly kind: 'retry'; readonly notBeforeMs: number }
  /** Terminal: the contact ends `failed` without further tries. */
  | { readonly kind: 'give-up' }
  /** Failover: the template leaves every pool (paused for `pauseMs`, or disabled) and the message is assigned again. */
  | { readonly kind: 'template-out'; readonly status: 'paused' | 'disabled'; readonly pauseMs?: number }
  /** Failover: the number leaves every pool for `pauseMs` (until resumed when absent) and the message is assigned again. */
  | { readonly kind: 'number-out'; readonly pauseMs?: number }
  /**
   * The exchange failed, not the contact (no answer, a 5xx, the provider unreachable, credentials
   * refused): the contact tries again after `backoffMs`, doubled at each such failure of it (at most
   * {@link MAX_BACKOFF_MS}), without using one of its `maxRetries`; after
   * {@link MAX_TRANSPORT_ATTEMPTS} of them it ends `failed`. The number rests `restMs` when given.
   */
  | { readonly kind: 'transport'; readonly backoffMs: number; readonly restMs?: number }
  /**
   * The recipient may not be messaged from this number now (the pair rate limit): this contact waits
   * `waitMs`, doubled at each such failure of it, without using a retry; other recipients go on. It
   * counts toward the same bound as `transport`.
   */
  | { readonly kind: 'recipient-wait'; readonly waitMs: number };

/**
 * Failures of one contact that use none of its retries (`transport`, `recipient-wait`) before it
 * ends `failed`. The waits before its last try add up to 511 s with a 1 s base (no answer, the
 * provider unreachable), 1,835 s with 5 s (the provider's downtime), 1,962 s with the 6 s of the
 * pair rate limit and 2,430 s (40 minutes 30 s) with the 10 s of a credentials error.
 */
export const MAX_TRANSPORT_ATTEMPTS = 10;
/** Longest wait between two tries of a `transport` or `recipient-wait` failure. */
export const MAX_BACKOFF_MS = 10 * 60_000;

/**
 * The wait before the try after the `k`-th (from 0) `transport` or `recipient-wait` failure of a
 * contact: `baseMs` doubled `k` times, at most {@link MAX_BACKOFF_MS} (or the base, if longer).
 */
export function backoffMs(baseMs: number, k: number): number {
  return Math.min(Math.max(baseMs, 1) * 2 ** k, Math.max(baseMs, MAX_BACKOFF_MS));
}

/**
 * Why a failure blocks a number for everything it sends, not one message: the operator must act
 * (renew the token, grant the permission) or the provider is unreachable. The server logs it as an
 * error naming the number and the code, counts it and shows the number blocked.
 */
export type BlockingCause = 'credentials' | 'unreachable';

/** One known channel error code. */
export interface ChannelErrorInfo {
  readonly code: number;
  /** Provider label used in `reason` strings (spec 7.1: "provider label, numeric code, description"). */
  readonly provider: string;
  /** Short description, as the provider documents it. */
  readonly description: string;
  readonly action: FailureAction;
  /** Set when the code blocks the number for every message (see {@link BlockingCause}). */
  readonly blocks?: BlockingCause;
}

const WHATSAPP = 'WhatsApp';

function entry(code: number, description: string, action: FailureAction, blocks?: BlockingCause): ChannelErrorInfo {
  return Object.freeze({ code, provider: WHATSAPP, description, action: Object.freeze(action), ...(blocks ? { blocks } : {}) });
}

/** Meta's pair rate limit allows about one message every 6 s from one number to one recipient. */
export const PAIR_INTERVAL_MS = 6_000;

/**
 * Credentials and permissions: the number rests 10 s between probes, and each contact's try counts
 * toward the transport bound (about 40 minutes): a token replaced meanwhile is used at the next try.
 */
const CREDENTIALS: FailureAction = { kind: 'transport', backoffMs: 10_000, restMs: 10_000 };
/** The provider's own transient trouble: the contact tries again soon, no retry used. */
const PROVIDER_DOWN: FailureAction = { kind: 'transport', backoffMs: 5_000 };

/**
 * The catalog of known codes, in code order. Sources: the Cloud API's error codes page and the
 * Graph API's error handling page (docs/channels.md, "Sources"). Credentials and permission errors
 * (0, 3, 10, 190, 200) rest the number and keep the message for a bounded time: a token problem is
 * the operator's to fix (the server says so loudly), and failing every contact of a campaign at its
 * first sight would lose them all. The provider's transient trouble (2, 131016, 133004) is a
 * transport failure, not the contact's: it uses none of its retries.
 */
export const CHANNEL_ERRORS: readonly ChannelErrorInfo[] = Object.freeze([
  entry(0, 'AuthException: the access token could not be authenticated', CREDENTIALS, 'credentials'),
  entry(1, 'API Unknown: invalid request or possible server error', { kind: 'retry', notBeforeMs: 0 }),
  entry(2, 'API Service: temporary downtime or overload', PROVIDER_DOWN),
  entry(3, 'API Method: capability or permissions issue', CREDENTIALS, 'credentials'),
  entry(4, 'API Too Many Calls: application rate limit reached', { kind: 'requeue', restMs: 60_000 }),
  entry(10, 'Permission denied: permission not granted or removed', CREDENTIALS, 'credentials'),
  entry(100, 'Invalid parameter', { kind: 'give-up' }),
  entry(190, 'Access token has expired', CREDENTIALS, 'credentials'),
  entry(200, 'API Permission: permission not granted or removed', CREDENTIALS, 'credentials'),
  entry(368, 'Temporarily blocked for policy violations', { kind: 'number-out', pauseMs: 24 * HOUR }),
  entry(80007, 'Rate limit issues on the business account', { kind: 'requeue', restMs: 60_000 }),
  entry(130429, 'Rate limit hit: throughput of the number exceeded', { kind: 'requeue', restMs: 1_000 }),
  entry(130472, "User's number is part of an experiment", { kind: 'give-up' }),
  entry(131000, 'Something went wrong', { kind: 'retry', notBeforeMs: 0 }),
  entry(131005, 'Access denied: permission revoked for the number', { kind: 'number-out' }),
  entry(131008, 'Required parameter is missing', { kind: 'give-up' }),
  entry(131009, 'Parameter value is not valid', { kind: 'give-up' }),
  entry(131016, 'Service unavailable', PROVIDER_DOWN),
  entry(131021, 'Recipient cannot be sender', { kind: 'give-up' }),
  entry(131026, 'Message undeliverable', { kind: 'give-up' }),
  entry(131031, 'Business account locked', { kind: 'number-out' }),
  entry(131042, 'Business eligibility payment issue', { kind: 'number-out' }),
  entry(131047, 'Re-engagement message: more than 24 hours since the recipient last replied', { kind: 'give-up' }),
  entry(131048, 'Spam rate limit hit', { kind: 'number-out', pauseMs: HOUR }),
  entry(131049, 'Not delivered to maintain healthy ecosystem engagement (per-user marketing cap)', { kind: 'retry', notBeforeMs: 24 * HOUR }),
  entry(131050, 'User stopped marketing messages', { kind: 'give-up' }),
  entry(131051, 'Unsupported message type', { kind: 'give-up' }),
  entry(131056, 'Pair rate limit hit: too many messages to this recipient', { kind: 'recipient-wait', waitMs: PAIR_INTERVAL_MS }),
  entry(131057, 'Business account in maintenance mode', { kind: 'requeue', restMs: 60_000 }),
  entry(132000, 'Template parameter count mismatch', { kind: 'give-up' }),
  entry(132001, 'Template does not exist', { kind: 'template-out', status: 'disabled' }),
  entry(132005, 'Translated template text too long', { kind: 'give-up' }),
  entry(132007, 'Template format character policy violated', { kind: 'give-up' }),
  entry(132012, 'Template parameter format mismatch', { kind: 'give-up' }),
  entry(132015, 'Template is paused', { kind: 'template-out', status: 'paused', pauseMs: 3 * HOUR }),
  entry(132016, 'Template is disabled', { kind: 'template-out', status: 'disabled' }),
  entry(133004, 'Server temporarily unavailable', PROVIDER_DOWN),
  entry(133010, 'Phone number not registered', { kind: 'number-out' }),
]);

const BY_CODE: ReadonlyMap<number, ChannelErrorInfo> = new Map(CHANNEL_ERRORS.map((e) => [e.code, e]));

/**
 * How an exchange with the provider ended when it gave no error code: the transport's side of the
 * table. `unknown-outcome` is a request that may have reached the provider (a timeout, a connection
 * lost after the request left, a 5xx without an error body): the message may have gone, so its next
 * try repeats its message id (a provider that deduplicates sends it once; docs/channels.md,
 * "Timeouts"). `not-sent` is a request that never left (connection refused, no such host): nothing can have
 * gone. Both are transport failures: the contact tries again with backoff, without using one of its
 * retries, and ends `failed` after {@link MAX_TRANSPORT_ATTEMPTS}; `not-sent` also rests the number
 * and gives its charge back.
 */
export type TransportFailure = 'unknown-outcome' | 'not-sent' | 'throttled';

/** One transport failure kind and its action. */
export interface TransportFailureInfo {
  readonly kind: TransportFailure;
  readonly description: string;
  readonly action: FailureAction;
  /** Nothing reached the provider: the hand-out's charge goes back to the number's windows. */
  readonly refused: boolean;
  readonly blocks?: BlockingCause;
}

/** The transport failures, beside the codes: the one table of what a failed send does. */
export const TRANSPORT_FAILURES: Readonly<Record<TransportFailure, TransportFailureInfo>> = Object.freeze({
  'unknown-outcome': Object.freeze({
    kind: 'unknown-outcome',
    description: 'No answer from the provider (unknown outcome)',
    action: Object.freeze({ kind: 'transport', backoffMs: 1_000 }),
    refused: false,
  }),
  'not-sent': Object.freeze({
    kind: 'not-sent',
    description: 'The provider could not be reached (not sent)',
    action: Object.freeze({ kind: 'transport', backoffMs: 1_000, restMs: 5_000 }),
    refused: true,
    blocks: 'unreachable',
  }),
  throttled: Object.freeze({ kind: 'throttled', description: 'HTTP 429 without an error code', action: Object.freeze({ kind: 'requeue', restMs: 1_000 }), refused: true }),
});

/** The action for codes the catalog does not know: one contact retry after the usual interval. */
export const UNKNOWN_ACTION: FailureAction = Object.freeze({ kind: 'retry', notBeforeMs: 0 });

/** Why a failure blocks its number, when it does (credentials, unreachable provider). */
export function blockingCause(code: number | undefined): BlockingCause | undefined {
  return code === undefined ? undefined : BY_CODE.get(code)?.blocks;
}

/** Looks a code up; `undefined` for codes not in the catalog. */
export function channelError(code: number): ChannelErrorInfo | undefined {
  return BY_CODE.get(code);
}

/** The action for a failure code (unknown or absent codes: {@link UNKNOWN_ACTION}). */
export function actionForCode(code: number | undefined): FailureAction {
  return code === undefined ? UNKNOWN_ACTION : (BY_CODE.get(code)?.action ?? UNKNOWN_ACTION);
}

/**
 * The spec's `reason` string (7.1): provider label, numeric code, short description, joined by
 * ", ". Unknown codes keep the caller's description, or "Unknown error".
 */
export function failureReason(code: number, description?: string, provider?: string): string {
  const known = BY_CODE.get(code);
  const label = provider ?? known?.provider ?? WHATSAPP;
  const text = description ?? known?.description ?? 'Unknown error';
  return `${label}, ${code}, ${text}`;
}
