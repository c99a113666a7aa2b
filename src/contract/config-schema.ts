/**
 * POST /messenger/config/ (spec 2.5, 4.4). The body is a partial update: any subset of the four
 * URLs, `null` clears one, an absent key keeps the current value. The stored configuration always
 * has all four keys, each a URL or `null`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_URL_LENGTH } from './limits.js';

/** The four webhook target keys, in the spec's order. */
export const WEBHOOK_URL_KEYS = ['url_report_webhook', 'url_attendance_callback', 'url_hsm_callback', 'url_campaign_webhook'] as const;
export type WebhookUrlKey = (typeof WEBHOOK_URL_KEYS)[number];

const Url = (description: string) => Type.String({ format: 'uri', minLength: 1, maxLength: MAX_URL_LENGTH, description });
const UrlOrNull = (description: string) => Type.Union([Url(description), Type.Null()]);

/** POST /messenger/config/ body. */
export const ConfigUpdateSchema = Type.Object(
  {
    url_report_webhook: Type.Optional(UrlOrNull('target for report notifications; null clears')),
    url_attendance_callback: Type.Optional(UrlOrNull('target for attendance notifications; null clears')),
    url_hsm_callback: Type.Optional(UrlOrNull('target for HSM delivery-result callbacks; null clears')),
    url_campaign_webhook: Type.Optional(UrlOrNull('target for campaign statistics; null clears')),
  },
  { additionalProperties: false, title: 'ConfigUpdate' },
);
export type ConfigUpdate = Static<typeof ConfigUpdateSchema>;

/** The configuration after a merge, and the POST /messenger/config/ response body. */
export const WebhookConfigSchema = Type.Object(
  {
    url_report_webhook: UrlOrNull('target for report notifications'),
    url_attendance_callback: UrlOrNull('target for attendance notifications'),
    url_hsm_callback: UrlOrNull('target for HSM delivery-result callbacks'),
    url_campaign_webhook: UrlOrNull('target for campaign statistics'),
  },
  { additionalProperties: false, title: 'WebhookConfig' },
);
export type WebhookConfig = Static<typeof WebhookConfigSchema>;

/** A configuration with no target set. */
export const EMPTY_WEBHOOK_CONFIG: WebhookConfig = Object.freeze({
  url_report_webhook: null,
  url_attendance_callback: null,
  url_hsm_callback: null,
  url_campaign_webhook: null,
});
