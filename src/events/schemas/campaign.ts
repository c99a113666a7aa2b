/** Campaign statistics webhook payload (spec 6.4), sent in batch to `url_campaign_webhook`. */
import { Type, type Static } from '@sinclair/typebox';
import { CLOSED, DateTimeSchema, EventIdSchema } from './common.js';

/**
 * Campaign statuses sendpool emits: `RUNNING` (the spec's only value) while contacts remain, and
 * our extension `FINISHED` when none remain (see docs/decisions.md, webhook events).
 */
export const CAMPAIGN_STATUSES = ['RUNNING', 'FINISHED'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/**
 * The `count_*` keys of a campaign object, in the spec's order, then sendpool's extension
 * `count_invalid_data` (contacts refused for a field other than the phone; docs/decisions.md).
 */
export const CAMPAIGN_COUNT_KEYS = [
  'count_total',
  'count_already_sent',
  'count_blocked',
  'count_blocklist_response',
  'count_does_not_exist',
  'count_duplicated',
  'count_invalid_phone',
  'count_processed',
  'count_sent',
  'count_failed',
  'count_delivered',
  'count_read',
  'count_replied',
  'count_expired',
  'count_remaining',
  'count_invalid_data',
] as const;
export type CampaignCountKey = (typeof CAMPAIGN_COUNT_KEYS)[number];

const Count = Type.Integer({ minimum: 0 });

/** One campaign's consolidated statistics. */
export const CampaignStatisticsSchema = Type.Object(
  {
    campaign_id: Type.Integer(),
    campaign_name: Type.String(),
    status: Type.Union([Type.Literal('RUNNING'), Type.Literal('FINISHED')]),
    count_total: Count,
    count_already_sent: Count,
    count_blocked: Count,
    count_blocklist_response: Count,
    count_does_not_exist: Count,
    count_duplicated: Count,
    count_invalid_phone: Count,
    count_processed: Count,
    count_sent: Count,
    count_failed: Count,
    count_delivered: Count,
    count_read: Count,
    count_replied: Count,
    count_expired: Count,
    count_remaining: Count,
    /** Extension: contacts refused for a field other than the phone (document, variables, …). */
    count_invalid_data: Count,
    created_at: DateTimeSchema,
    datetime: DateTimeSchema,
  },
  { ...CLOSED, title: 'campaign statistics' },
);
export type CampaignStatisticsPayload = Static<typeof CampaignStatisticsSchema>;

/** The batch: the campaigns whose statistics changed since the previous batch. */
export const CampaignBatchSchema = Type.Object({ event_id: EventIdSchema, campaigns: Type.Array(CampaignStatisticsSchema, { minItems: 1 }) }, { ...CLOSED, title: 'campaign statistics batch' });
export type CampaignBatchPayload = Static<typeof CampaignBatchSchema>;
