/**
 * What the Cloud API's answer to a send means, as the engine's `SendOutcome`: accepted (with the
 * platform's message id, the wamid), refused with a Graph API error code (looked up in the one
 * error table, `CHANNEL_ERRORS`), or a transport failure without a code (`TRANSPORT_FAILURES`).
 * A throttling answer is marked so the channel can give the number the rest it needs (the answer's
 * `Retry-After`, or its own escalation): {@link restedOutcome} builds that outcome.
 */
import { TRANSPORT_FAILURES, actionForCode, type TransportFailure } from '../../../core/channel-errors.js';
import type { SendOutcome } from '../../../core/dispatch/types.js';

export interface SendAnswer {
  readonly outcome: SendOutcome;
  /** The platform's message id of an accepted send. */
  readonly wamid?: string;
  /** The recipient's WhatsApp id as the platform knows it (`contacts[0].wa_id`), when it says. */
  readonly waId?: string;
  /**
   * A throttling answer (HTTP 429 without a code, or a code of {@link THROTTLING_CODES}): the rest
   * the table gives it, which `Retry-After` replaces; `perNumber` when it is the number's own
   * throughput (130429, a bare 429), which the channel escalates on consecutive throttles.
   */
  readonly throttle?: { readonly restMs: number; readonly perNumber: boolean };
}

/**
 * Graph API codes that say "too many requests" rather than anything about the message: the
 * number's throughput (130429), the business account's rate (80007), the app's (4).
 */
export const THROTTLING_CODES: ReadonlySet<number> = new Set([4, 80007, 130429]);
const NUMBER_THROTTLE = 130429;

/** Longest rest a `Retry-After` may give a number: a longer one is more likely wrong than meant. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The wait a `Retry-After` header asks for, in milliseconds: delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`, counted from `now`; a date past is 0). Undefined when the
 * header is absent or neither form; at most {@link MAX_RETRY_AFTER_MS}.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d{1,10}$/.test(text)) ms = Number(text) * 1000;
  else {
    // An HTTP date names its weekday and its zone (RFC 9110, 5.6.7); a bare number or word is not one.
    if (!/^[A-Za-z]{3},? /.test(text) || !/(?:GMT|UTC|[+-]\d{4})$/.test(text)) return undefined;
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** A throttled send's outcome with the rest the number takes, overriding the table's. */
export function restedOutcome(outcome: SendOutcome, restMs: number): SendOutcome {
  if (outcome.status !== 'failed') return outcome;
  return { ...outcome, action: { kind: 'requeue', restMs: Math.max(0, Math.round(restMs)) } };
}

/** The rest the one table gives a throttling answer (1 s for 130429 and a bare 429). */
function tableRestMs(code: number | undefined): number {
  const action = code === undefined ? TRANSPORT_FAILURES.throttled.action : actionForCode(code);
  return action.kind === 'requeue' ? action.restMs : 1_000;
}

const SENT: SendOutcome = Object.freeze({ status: 'sent' });
const MAX_REASON = 200;

/** A failure without a provider code: the transport's row of the table, with what happened. */
export function transportOutcome(kind: TransportFailure, detail: string): SendOutcome {
  const info = TRANSPORT_FAILURES[kind];
  return { status: 'failed', reason: `${info.description}: ${detail}`.slice(0, MAX_REASON), action: info.action, ...(info.refused ? { refused: true } : {}) };
}

const ACCEPTED_START = '{"messaging_product":"whatsapp"';
const MESSAGE_ID = '"messages":[{"id":"';
const WA_ID = '"wa_id":"';

/**
 * The ids of an acceptance written as the platform writes it (`{"messaging_product":"whatsapp",
 * "contacts":[{"input":…,"wa_id":"…"}],"messages":[{"id":"wamid…"}]}`), read without building the
 * parsed object: this is every send's answer. Undefined when the text is not of that shape or an
 * id holds an escape (JSON.parse reads it then).
 */
function quickAccepted(text: string): SendAnswer | undefined {
  if (!text.startsWith(ACCEPTED_START)) return undefined;
  const m = text.indexOf(MESSAGE_ID);
  if (m < 0) return undefined;
  const idEnd = text.indexOf('"', m + MESSAGE_ID.length);
  if (idEnd <= m + MESSAGE_ID.length) return undefined;
  const wamid = text.slice(m + MESSAGE_ID.length, idEnd);
  const w = text.indexOf(WA_ID);
  const waEnd = w < 0 || w > m ? -1 : text.indexOf('"', w + WA_ID.length);
  const waId = waEnd > w + WA_ID.length ? text.slice(w + WA_ID.length, waEnd) : undefined;
  if (wamid.includes('\\') || waId?.includes('\\')) return undefined;
  return waId === undefined ? { outcome: SENT, wamid } : { outcome: SENT, wamid, waId };
}

/** Reads an HTTP answer of the messages endpoint. */
export function classifyAnswer(statusCode: number, text: string): SendAnswer {
  if (statusCode >= 200 && statusCode < 300) return quickAccepted(text) ?? acceptedAnswer(parsedBody(text));
  return refusedAnswer(parsedBody(text)) ?? codelessAnswer(statusCode);
}

/** The answer's JSON, or undefined when it has none (empty, or not JSON). */
function parsedBody(text: string): unknown {
  try {
    return text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Accepted. An answer without the message id still means accepted; statuses find the message by
 * the id sent in biz_opaque_callback_data.
 */
function acceptedAnswer(body: unknown): SendAnswer {
  const accepted = body as { messages?: { id?: unknown }[]; contacts?: { wa_id?: unknown }[] } | undefined;
  const id = accepted?.messages?.[0]?.id;
  const waId = accepted?.contacts?.[0]?.wa_id;
  return {
    outcome: SENT,
    ...(typeof id === 'string' && id.length > 0 ? { wamid: id } : {}),
    ...(typeof waId === 'string' && waId.length > 0 ? { waId } : {}),
  };
}

/**
 * The platform answered the send with a Graph error code: it refused it, nothing went (its charge
 * goes back). Undefined when the answer has no such code.
 */
function refusedAnswer(body: unknown): SendAnswer | undefined {
  const error = (body as { error?: { code?: unknown; message?: unknown; error_data?: { details?: unknown } } } | undefined)?.error;
  if (!error || typeof error.code !== 'number' || !Number.isInteger(error.code)) return undefined;
  const details = typeof error.error_data?.details === 'string' ? error.error_data.details : typeof error.message === 'string' ? error.message : '';
  const outcome: SendOutcome = { status: 'failed', code: error.code, refused: true, ...(details ? { reason: details.slice(0, MAX_REASON) } : {}) };
  return THROTTLING_CODES.has(error.code) ? { outcome, throttle: { restMs: tableRestMs(error.code), perNumber: error.code === NUMBER_THROTTLE } } : { outcome };
}

/** An error status without a Graph error code: a bare 429 is the number's throttling; anything else may have been acted on. */
function codelessAnswer(statusCode: number): SendAnswer {
  if (statusCode === 429) return { outcome: transportOutcome('throttled', 'HTTP 429'), throttle: { restMs: tableRestMs(undefined), perNumber: true } };
  // A 5xx (or an unexpected 4xx) without a Graph error: the request may have been acted on.
  return { outcome: transportOutcome('unknown-outcome', `HTTP ${statusCode} without an error code`) };
}

/** Errors that say the request never left this process: nothing can have been sent. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** Reads a failed exchange (no HTTP answer). */
export function classifyError(error: unknown): SendOutcome {
  const e = error as { code?: unknown; name?: unknown; message?: unknown; cause?: { code?: unknown } } | undefined;
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  const detail = code ?? (typeof e?.message === 'string' ? e.message : String(error));
  if (code !== undefined && NOT_SENT.has(code)) return transportOutcome('not-sent', detail);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return transportOutcome('unknown-outcome', `timeout (${code})`);
  return transportOutcome('unknown-outcome', detail);
}
