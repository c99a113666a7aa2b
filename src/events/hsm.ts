/**
 * Builds the HSM notification (spec 6.3). The input is a union on `status`, so the conditional keys
 * cannot be got wrong by the caller: `bsuid`/`username` can only be given for SERVER, DEVICE, READ,
 * FAILED and REPLIED (and are then always written, null when unknown); a FAILED needs its failure,
 * a REPLIED its blocklist flag; `from`/`message` may be null only for ENQUEUED, EXPIRED and FAILED.
 */
import { ArgumentError } from '../core/errors.js';
import { describeValue } from '../core/problems.js';
import { requireBoolean, requireInteger, requireOneOf, requireString, requireStringOrNull, requireStringRecord } from './ids.js';
import { reasonFor, type SendFailure } from './failure-reason.js';
import { formatTime } from './datetime.js';
import type { RandomSource } from './random.js';
import { uuidV4 } from './uuid.js';
import { HSM_STATUSES, type HsmNotificationPayload, type HsmStatus } from './schemas/hsm.js';

/** Fields of every HSM notification. */
export interface HsmCommonInput {
  /** Payload `id`: the message id the receiver knows, or null when it has none. */
  readonly id: number | null;
  /** Destination phone number (digits with country code). */
  readonly to: string;
  readonly campaignId: number;
  /** The original request id, or null. */
  readonly requestId: string | null;
  readonly costCenterId: number;
  /** The contact's `data`. @default null */
  readonly data?: Readonly<Record<string, string>> | null;
  /** CPF or CNPJ. @default null */
  readonly document?: string | null;
  /** Recipient contract. @default null */
  readonly contract?: string | null;
  /** Send time, milliseconds since the epoch; written ISO 8601 with -03:00. */
  readonly sentAt: number;
  /**
   * Zero-based index of the contact retry this send is, or null for the first try (the dispatch
   * queue's `retry_index`); `is_retry` is derived from it, so the two can never disagree.
   */
  readonly retryIndex: number | null;
}

interface NoRecipientIds {
  readonly bsuid?: never;
  readonly username?: never;
}
interface RecipientIds {
  /** Business-scoped user id of the recipient. @default null */
  readonly bsuid?: string | null;
  /** Profile username of the recipient (null until the user adopts the feature). @default null */
  readonly username?: string | null;
}
interface NoOutcome {
  readonly failure?: never;
  readonly blocklistResponse?: never;
}

/** What changes with the status; one member per group of spec 6.3's conditional keys. */
export type HsmStatusInput =
  | ({ readonly status: 'ENQUEUED' | 'EXPIRED'; readonly from: string | null; readonly message: string | null } & NoRecipientIds & NoOutcome)
  | ({ readonly status: 'SENT'; readonly from: string; readonly message: string } & NoRecipientIds & NoOutcome)
  | ({ readonly status: 'SERVER' | 'DEVICE' | 'READ'; readonly from: string; readonly message: string } & RecipientIds & NoOutcome)
  | ({
      readonly status: 'FAILED';
      readonly from: string | null;
      readonly message: string | null;
      /** Why it failed; becomes `reason` (spec 7.1). */
      readonly failure: SendFailure;
      readonly blocklistResponse?: never;
    } & RecipientIds)
  | ({
      readonly status: 'REPLIED';
      readonly from: string;
      readonly message: string;
      /** True when the reply is a blocklist response (an opt-out). */
      readonly blocklistResponse: boolean;
      readonly failure?: never;
    } & RecipientIds);

/** Everything the HSM notification builder needs. */
export type HsmNotificationInput = HsmCommonInput & HsmStatusInput;

/** Statuses that carry `bsuid` and `username` (spec 6.3, conditional key 1). */
function carriesRecipientIds(status: HsmStatus): boolean {
  return status === 'SERVER' || status === 'DEVICE' || status === 'READ' || status === 'FAILED' || status === 'REPLIED';
}

/** Statuses whose `from` and `message` may be null (spec 6.3, conditional key 4). */
function allowsNullMessage(status: HsmStatus): boolean {
  return status === 'ENQUEUED' || status === 'EXPIRED' || status === 'FAILED';
}

/**
 * Checks what the input's types cannot say (integer ids, a non-negative retry index, a writable
 * time) and what a JavaScript caller could get wrong (an unknown status, a missing failure), so
 * the payload always passes `HsmNotificationSchema`.
 */
function checkInput(input: HsmNotificationInput): void {
  const at = (field: string) => `buildHsmNotification(input.${field})`;
  requireOneOf(at('status'), input.status, HSM_STATUSES);
  if (input.id !== null) requireInteger(at('id'), input.id);
  requireInteger(at('campaignId'), input.campaignId);
  requireInteger(at('costCenterId'), input.costCenterId);
  if (input.retryIndex !== null) requireInteger(at('retryIndex'), input.retryIndex, 0);
  requireString(at('to'), input.to);
  requireStringOrNull(at('requestId'), input.requestId);
  requireStringRecord(at('data'), input.data);
  if (input.document !== undefined) requireStringOrNull(at('document'), input.document);
  if (input.contract !== undefined) requireStringOrNull(at('contract'), input.contract);
  const nullable = allowsNullMessage(input.status);
  for (const field of ['from', 'message'] as const) {
    if (nullable) requireStringOrNull(at(field), input[field]);
    else requireString(at(field), input[field] as string);
  }
  if (carriesRecipientIds(input.status)) {
    if (input.bsuid !== undefined) requireStringOrNull(at('bsuid'), input.bsuid);
    if (input.username !== undefined) requireStringOrNull(at('username'), input.username);
  }
  const failure: unknown = input.status === 'FAILED' ? input.failure : {};
  if (typeof failure !== 'object' || failure === null) {
    throw new ArgumentError(at('failure'), 'a failure ({ code } or { reason }) for a FAILED notification', describeValue(failure));
  }
  if (input.status === 'REPLIED') requireBoolean(at('blocklistResponse'), input.blocklistResponse);
}

/**
 * Builds one HSM notification with a fresh `event_id` from `random`.
 * @throws {ArgumentError} for a fractional or unsafe id, a negative retry index, a time that cannot
 * be written, an unknown status or a field of the wrong kind: the payload always passes the schema
 */
export function buildHsmNotification(input: HsmNotificationInput, random: RandomSource): HsmNotificationPayload {
  return hsmNotification(input, () => uuidV4(random));
}

/**
 * {@link buildHsmNotification} with its `event_id` given: for notifications whose ids are derived
 * rather than drawn (a request's ENQUEUED, built when delivered and built the same again after a
 * restart). Internal: the package's API draws ids.
 */
export function hsmNotificationWithId(input: HsmNotificationInput, eventId: string): HsmNotificationPayload {
  return hsmNotification(input, () => eventId);
}

/** The payload; its id asked for only once the input is known good (a refused input draws none). */
function hsmNotification(input: HsmNotificationInput, eventId: () => string): HsmNotificationPayload {
  checkInput(input);
  const datetime = formatTime('buildHsmNotification(input.sentAt)', input.sentAt);
  const reason = input.status === 'FAILED' ? reasonFor(input.failure) : null;

  const ids = carriesRecipientIds(input.status) ? { bsuid: input.bsuid ?? null, username: input.username ?? null } : undefined;
  // Keys in the spec's table order, so a payload reads like the documentation; one object (this
  // runs for every notification). The union input guarantees the combination; the schema union
  // restates it for receivers.
  return {
    event_id: eventId(),
    id: input.id,
    from: input.from,
    to: input.to,
    ...ids,
    status: input.status,
    campaign_id: input.campaignId,
    request_id: input.requestId,
    cost_center_id: input.costCenterId,
    data: input.data ? { ...input.data } : null,
    document: input.document ?? null,
    contract: input.contract ?? null,
    message: input.message,
    datetime,
    is_retry: input.retryIndex !== null,
    retry_index: input.retryIndex,
    reason,
    blocklistResponse: input.status === 'REPLIED' ? input.blocklistResponse : null,
  } as HsmNotificationPayload;
}
