/**
 * HSM webhook payload (spec 6.3), sent to `url_hsm_callback`, one per status change.
 *
 * The spec's conditional keys are written into the schema itself, as a union of closed objects per
 * group of statuses and per retry flag, so a validator (ours, or a receiver's JSON Schema tool)
 * rejects a payload that breaks them:
 * - `bsuid`, `username`: present (string or null) for SERVER, DEVICE, READ, FAILED, REPLIED; absent
 *   otherwise.
 * - `reason`: a string for FAILED, null otherwise; `blocklistResponse`: a boolean for REPLIED, null
 *   otherwise (the keys are always present: the spec types them "or null").
 * - `from`, `message`: may be null only for ENQUEUED, EXPIRED, FAILED.
 * - `is_retry: false` with `retry_index: null`, or `is_retry: true` with an integer `retry_index`.
 */
import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { CLOSED, ContactDataSchema, DateTimeSchema, EventIdSchema, Nullable } from './common.js';

/** HSM message statuses of spec part 3, in the spec's order. */
export const HSM_STATUSES = ['ENQUEUED', 'SENT', 'SERVER', 'DEVICE', 'READ', 'REPLIED', 'EXPIRED', 'FAILED'] as const;
export type HsmStatus = (typeof HSM_STATUSES)[number];

const common = {
  event_id: EventIdSchema,
  id: Nullable(Type.Integer()),
  to: Type.String(),
  campaign_id: Type.Integer(),
  request_id: Nullable(Type.String()),
  cost_center_id: Type.Integer(),
  data: ContactDataSchema,
  document: Nullable(Type.String()),
  contract: Nullable(Type.String()),
  datetime: DateTimeSchema,
};

const recipientIds = { bsuid: Nullable(Type.String()), username: Nullable(Type.String()) };
const nullableMessage = { from: Nullable(Type.String()), message: Nullable(Type.String()) };
const sentMessage = { from: Type.String(), message: Type.String() };
const noOutcome = { reason: Type.Null(), blocklistResponse: Type.Null() };

// eslint-disable-next-line @typescript-eslint/unbound-method -- TypeBox's builders do not use `this`
const L = Type.Literal;

/** The two retry shapes of one status group: first try, and retry with its zero-based index. */
function withRetry<P extends TProperties>(props: P, title: string) {
  return [
    Type.Object({ ...props, is_retry: Type.Literal(false), retry_index: Type.Null() }, { ...CLOSED, title }),
    Type.Object({ ...props, is_retry: Type.Literal(true), retry_index: Type.Integer({ minimum: 0 }) }, { ...CLOSED, title: `${title} (retry)` }),
  ] as const;
}

/** ENQUEUED, EXPIRED: no recipient ids; the message may not have gone out. */
const queuedOrExpired = withRetry({ ...common, status: Type.Union([L('ENQUEUED'), L('EXPIRED')]), ...nullableMessage, ...noOutcome }, 'HSM ENQUEUED/EXPIRED');
/** SENT: no recipient ids yet; `from` and `message` carry values. */
const sent = withRetry({ ...common, status: L('SENT'), ...sentMessage, ...noOutcome }, 'HSM SENT');
/** SERVER, DEVICE, READ: recipient ids present. */
const reached = withRetry({ ...common, status: Type.Union([L('SERVER'), L('DEVICE'), L('READ')]), ...recipientIds, ...sentMessage, ...noOutcome }, 'HSM SERVER/DEVICE/READ');
/** FAILED: recipient ids present, `reason` a string. */
const failed = withRetry(
  {
    ...common,
    status: L('FAILED'),
    ...recipientIds,
    ...nullableMessage,
    reason: Type.String(),
    blocklistResponse: Type.Null(),
  },
  'HSM FAILED',
);
/** REPLIED: recipient ids present, `blocklistResponse` a boolean. */
const replied = withRetry(
  {
    ...common,
    status: L('REPLIED'),
    ...recipientIds,
    ...sentMessage,
    reason: Type.Null(),
    blocklistResponse: Type.Boolean(),
  },
  'HSM REPLIED',
);

/** The HSM notification: a union whose members encode the conditional keys of spec 6.3. */
export const HsmNotificationSchema = Type.Union([...queuedOrExpired, ...sent, ...reached, ...failed, ...replied], { title: 'HSM notification' });
export type HsmNotificationPayload = Static<typeof HsmNotificationSchema>;
