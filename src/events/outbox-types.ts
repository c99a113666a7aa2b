/** The outbox's public types: events, options, attempts and their results, outcomes, snapshots. */
import type { RandomSource } from './random.js';

/** The webhook family of an event, i.e. which configured URL (spec 2.5) it goes to. */
export type WebhookFamily = 'report' | 'attendance' | 'hsm' | 'campaign' | 'sms-dlr' | 'sms-mo';

/** One event to deliver. */
export interface OutboxEvent {
  /** The payload's `event_id`; also the `webhook-id` header and the outbox's dedupe key. */
  readonly id: string;
  readonly family: WebhookFamily;
  /** Target URL (from the company's configuration at enqueue time). */
  readonly url: string;
  /** The JSON body text, exactly as it will be signed and sent. */
  readonly body: string;
  /** Company whose secret signs the delivery. */
  readonly companyId: number;
  /**
   * Events with the same `order` to the same URL are delivered one after another, in the order
   * they were enqueued: the next is sent once the one before it is delivered or dead-lettered (the
   * server gives a contact's notifications its id). Without it an event has no order with others.
   * @default none
   */
  readonly order?: string;
}

/** Options of {@link Outbox}. */
export interface OutboxOptions {
  /** Jitter source. */
  readonly random: RandomSource;
  /**
   * Backoff before the 2nd attempt, in ms; then multiplied by `backoffFactor` per failure.
   * @default 5_000
   */
  readonly initialDelayMs?: number;
  /** Growth of the backoff per failed attempt. @default 2 */
  readonly backoffFactor?: number;
  /** Ceiling of one backoff, in ms. @default 3_600_000 (1 hour) */
  readonly maxDelayMs?: number;
  /**
   * Age (from enqueue) after which an event that still failed is dead-lettered instead of retried.
   * @default 86_400_000 (24 hours)
   */
  readonly maxAgeMs?: number;
  /**
   * How long an attempt may stay unanswered before it counts as failed (timeout) and is retried.
   * Also covers a host restart: attempts in flight at the crash time out and go again.
   * @default 30_000
   */
  readonly attemptTimeoutMs?: number;
  /**
   * Longest wait between two probes of a receiver that is down (see {@link Outbox}: no connection
   * could be opened, or most of its recent events failed): one attempt each time, so a receiver back
   * after an outage gets its backlog within this long, not after the backoff its events reached.
   * Probes start sooner (the backoff of `initialDelayMs`, ×`backoffFactor` per failed probe) and
   * reach this ceiling. @default 30_000
   */
  readonly probeIntervalMs?: number;
  /**
   * The receiver's health window: how many distinct events, the last to end an attempt there, are
   * kept with their latest result (an event counts once, by its latest attempt). @default 20
   */
  readonly healthWindow?: number;
  /**
   * Events the health window must know before a receiver can be down for failing events (a
   * connection that cannot be opened makes it down at once). @default 5
   */
  readonly healthMinEvents?: number;
  /**
   * The receiver is down when more than this share of the events in its health window (and at least
   * `healthMinEvents` of them) failed their latest attempt. @default 0.5
   */
  readonly healthFailureShare?: number;
  /**
   * How long the id of a finished event is remembered, so a re-enqueue of it is a duplicate.
   * @default the `maxAgeMs`
   */
  readonly rememberFinishedMs?: number;
}

/** One attempt the host should make now. */
export interface DeliveryAttempt {
  readonly event: OutboxEvent;
  /** 1 for the first attempt. Pass it back to {@link Outbox.settle}. */
  readonly attempt: number;
  /** When the attempt counts as timed out; the HTTP timeout should be shorter. */
  readonly deadline: number;
}

/** What the host reports for an attempt. */
export type AttemptResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /**
       * Short description for the dead-letter report: `HTTP 503: <start of the answer>`,
       * `ECONNREFUSED`, `timeout`.
       */
      readonly error: string;
      /**
       * No connection could be opened (refused, name not resolved, host unreachable, TLS handshake,
       * connect timeout): nothing path-specific happened, so the receiver (origin) is down. A failure
       * after a connection was open (an HTTP error status, a reset, no answer in time) is the event's.
       * @default false
       */
      readonly connect?: boolean;
    };

/** Characters of a failing answer's body kept in its error. */
const ANSWER_CHARS = 256;

/**
 * The result of an HTTP response: any 2xx is a success, anything else a failure to retry, whose
 * error carries the start of the answer when one is given (`HTTP 413: payload too large`), control
 * characters replaced by spaces.
 */
export function httpAttemptResult(status: number, body?: string): AttemptResult {
  if (status >= 200 && status <= 299) return { ok: true };
  const text =
    body === undefined
      ? ''
      : body
          .slice(0, ANSWER_CHARS)
          // Control characters (C0, DEL, C1) and the replacement character of a UTF-8 sequence cut short.
          // eslint-disable-next-line no-control-regex
          .replace(/[\u0000-\u001f\u007f-\u009f\ufffd]+/g, ' ')
          .replace(/ {2,}/g, ' ')
          .trim();
  return { ok: false, error: text === '' ? `HTTP ${status}` : `HTTP ${status}: ${text}` };
}

/** A final outcome, produced once per event by {@link Outbox.takeOutcomes}. */
export type DeliveryOutcome =
  | { readonly kind: 'delivered'; readonly event: OutboxEvent; readonly attempts: number; readonly at: number }
  | {
      readonly kind: 'dead-lettered';
      readonly event: OutboxEvent;
      readonly attempts: number;
      readonly at: number;
      /** The last failure seen. */
      readonly lastError: string;
    };

/** Answer of {@link Outbox.enqueue}. */
export type EnqueueOutcome = { readonly kind: 'enqueued' } | { readonly kind: 'duplicate' };

/** Answer of {@link Outbox.settle}. */
export type SettleOutcome =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'retry'; readonly at: number }
  | { readonly kind: 'dead-lettered' }
  /** Nothing changed: the event is unknown or finished, or the failure is of an attempt already timed out. */
  | { readonly kind: 'ignored'; readonly reason: 'unknown-event' | 'already-final' | 'stale-attempt' };

/**
 * Where an event stands: due at `dueAt`, in flight until `deadline`, or held behind an earlier
 * event of the same `order` to the same URL.
 */
export type EntryState = { readonly kind: 'pending'; readonly dueAt: number } | { readonly kind: 'in-flight'; readonly deadline: number } | { readonly kind: 'held' };

/** Serialisable outbox state (JSON-safe). */
export interface OutboxSnapshot {
  readonly version: 1;
  readonly entries: readonly {
    readonly event: OutboxEvent;
    readonly createdAt: number;
    readonly attempts: number;
    readonly state: EntryState;
    readonly lastError: string | null;
  }[];
  /** Ids of finished events and when they finished. */
  readonly finished: readonly (readonly [string, number])[];
  /** Outcomes produced but not yet taken by the host. */
  readonly outcomes: readonly DeliveryOutcome[];
}

/** A receiver (a URL's origin) as the outbox sees it, for inspection ({@link Outbox.targets}). */
export interface OutboxTargetView {
  /** Scheme, host and port of the URLs it receives (the URL itself when it does not parse). */
  readonly origin: string;
  /** Its events not finished yet: `held` + `due` + `retrying` + `inFlight`. */
  readonly pending: number;
  /** Those events per company (the company whose secret signs them). */
  readonly pendingByCompany: ReadonlyMap<number, number>;
  /**
   * Down (origin-level): no connection could be opened, or most of its recent events failed (the
   * rule in {@link Outbox}). Its due events then wait for one probe at a time.
   */
  readonly down: boolean;
  /** Why it is down: `connect` (no connection could be opened) or `failing` (most recent events failed); null while up. */
  readonly downReason: 'connect' | 'failing' | null;
  /** Events of its health window whose latest attempt failed (one event with a broken path counts once). */
  readonly failures: number;
  /** The error of its last failed attempt (`HTTP 500: …`, `ECONNREFUSED`, `timeout`), null while no event of its health window failed. */
  readonly lastError: string | null;
  /** While down: when the next probe may go; null while up. */
  readonly probeAt: number | null;
  /** Events due now by their own schedule, waiting for the delivery worker (or, while down, for the probe). */
  readonly due: number;
  /** Events in their own backoff after a failed attempt, not due yet. */
  readonly retrying: number;
  /** Events with an attempt in flight. */
  readonly inFlight: number;
  /** Events held behind an earlier event of their order chain. */
  readonly held: number;
}
