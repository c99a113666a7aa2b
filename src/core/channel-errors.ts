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
  | { readonly kind: 'number-out'; readonly pauseMs?: number };

/** One known channel error code. */
export interface ChannelErrorInfo {
  readonly code: number;
  /** Provider label used in `reason` strings (spec 7.1: "provider label, numeric code, description"). */
  readonly provider: string;
  /** Short description, as the provider documents it. */
  readonly description: string;
  readonly action: FailureAction;
}

const WHATSAPP = 'WhatsApp';

function entry(code: number, description: string, action: FailureAction): ChannelErrorInfo {
  return Object.freeze({ code, provider: WHATSAPP, description, action: Object.freeze(action) });
}

/**
 * The catalog of known codes, in code order. Sources: the Cloud API's error codes page and the
 * Graph API's error handling page (docs/channels.md, "Sources"). Credentials and permission errors
 * (0, 3, 10, 190, 200) rest the number and keep the message: a token problem is the operator's to
 * fix, and failing every contact of a campaign for it would lose them all.
 */
export const CHANNEL_ERRORS: readonly ChannelErrorInfo[] = Object.freeze([
  entry(0, 'AuthException: the access token could not be authenticated', { kind: 'requeue', restMs: 60_000 }),
  entry(1, 'API Unknown: invalid request or possible server error', { kind: 'retry', notBeforeMs: 0 }),
  entry(2, 'API Service: temporary downtime or overload', { kind: 'retry', notBeforeMs: 60_000 }),
  entry(3, 'API Method: capability or permissions issue', { kind: 'requeue', restMs: 60_000 }),
  entry(4, 'API Too Many Calls: application rate limit reached', { kind: 'requeue', restMs: 60_000 }),
  entry(10, 'Permission denied: permission not granted or removed', { kind: 'requeue', restMs: 60_000 }),
  entry(100, 'Invalid parameter', { kind: 'give-up' }),
  entry(190, 'Access token has expired', { kind: 'requeue', restMs: 60_000 }),
  entry(200, 'API Permission: permission not granted or removed', { kind: 'requeue', restMs: 60_000 }),
  entry(368, 'Temporarily blocked for policy violations', { kind: 'number-out', pauseMs: 24 * HOUR }),
  entry(80007, 'Rate limit issues on the business account', { kind: 'requeue', restMs: 60_000 }),
  entry(130429, 'Rate limit hit: throughput of the number exceeded', { kind: 'requeue', restMs: 1_000 }),
  entry(130472, "User's number is part of an experiment", { kind: 'give-up' }),
  entry(131000, 'Something went wrong', { kind: 'retry', notBeforeMs: 0 }),
  entry(131005, 'Access denied: permission revoked for the number', { kind: 'number-out' }),
  entry(131008, 'Required parameter is missing', { kind: 'give-up' }),
  entry(131009, 'Parameter value is not valid', { kind: 'give-up' }),
  entry(131016, 'Service unavailable', { kind: 'retry', notBeforeMs: 60_000 }),
  entry(131021, 'Recipient cannot be sender', { kind: 'give-up' }),
  entry(131026, 'Message undeliverable', { kind: 'give-up' }),
  entry(131031, 'Business account locked', { kind: 'number-out' }),
  entry(131042, 'Business eligibility payment issue', { kind: 'number-out' }),
  entry(131047, 'Re-engagement message: more than 24 hours since the recipient last replied', { kind: 'give-up' }),
  entry(131048, 'Spam rate limit hit', { kind: 'number-out', pauseMs: HOUR }),
  entry(131049, 'Not delivered to maintain healthy ecosystem engagement (per-user marketing cap)', { kind: 'retry', notBeforeMs: 24 * HOUR }),
  entry(131050, 'User stopped marketing messages', { kind: 'give-up' }),
  entry(131051, 'Unsupported message type', { kind: 'give-up' }),
  entry(131056, 'Pair rate limit hit: too many messages to this recipient', { kind: 'requeue', restMs: 0 }),
  entry(131057, 'Business account in maintenance mode', { kind: 'requeue', restMs: 60_000 }),
  entry(132000, 'Template parameter count mismatch', { kind: 'give-up' }),
  entry(132001, 'Template does not exist', { kind: 'template-out', status: 'disabled' }),
  entry(132005, 'Translated template text too long', { kind: 'give-up' }),
  entry(132007, 'Template format character policy violated', { kind: 'give-up' }),
  entry(132012, 'Template parameter format mismatch', { kind: 'give-up' }),
  entry(132015, 'Template is paused', { kind: 'template-out', status: 'paused', pauseMs: 3 * HOUR }),
  entry(132016, 'Template is disabled', { kind: 'template-out', status: 'disabled' }),
  entry(133004, 'Server temporarily unavailable', { kind: 'retry', notBeforeMs: 60_000 }),
  entry(133010, 'Phone number not registered', { kind: 'number-out' }),
]);

const BY_CODE: ReadonlyMap<number, ChannelErrorInfo> = new Map(CHANNEL_ERRORS.map((e) => [e.code, e]));

/**
 * How an exchange with the provider ended when it gave no error code: the transport's side of the
 * table. `unknown-outcome` is a request that may have reached the provider (a timeout, a connection
 * lost after the request left, a 5xx without an error body): the message may have gone, so it is a
 * contact retry (bounded by `maxRetries`, and possibly a duplicate; docs/channels.md, "Timeouts").
 * `not-sent` is a request that never left (connection refused, no such host): nothing can have
 * gone, so the message goes back to its queue and the number rests, without using a retry.
 */
export type TransportFailure = 'unknown-outcome' | 'not-sent' | 'throttled';

/** One transport failure kind and its action. */
export interface TransportFailureInfo {
  readonly kind: TransportFailure;
  readonly description: string;
  readonly action: FailureAction;
}

/** The transport failures, beside the codes: the one table of what a failed send does. */
export const TRANSPORT_FAILURES: Readonly<Record<TransportFailure, TransportFailureInfo>> = Object.freeze({
  'unknown-outcome': Object.freeze({ kind: 'unknown-outcome', description: 'No answer from the provider (unknown outcome)', action: Object.freeze({ kind: 'retry', notBeforeMs: 0 }) }),
  'not-sent': Object.freeze({ kind: 'not-sent', description: 'The provider could not be reached (not sent)', action: Object.freeze({ kind: 'requeue', restMs: 5_000 }) }),
  throttled: Object.freeze({ kind: 'throttled', description: 'HTTP 429 without an error code', action: Object.freeze({ kind: 'requeue', restMs: 1_000 }) }),
});

/** The action for codes the catalog does not know: one contact retry after the usual interval. */
export const UNKNOWN_ACTION: FailureAction = Object.freeze({ kind: 'retry', notBeforeMs: 0 });

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
