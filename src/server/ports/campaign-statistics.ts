/**
 * Campaign statistics kept outside the notifier (campaign-statistics-book.ts keeps each company's
 * own): what a backend that shares them across a fleet implements.
 */
import type { Admission } from '../../events/campaign-counts.js';
import type { ContactStatusChange } from '../../events/campaign-stats-types.js';
import type { CampaignBatchPayload } from '../../events/schemas/campaign.js';

/**
 * Campaign statistics kept outside the notifier: on the server on Redis, shared by every instance
 * (backends/redis/shared-statistics.ts). The notifier then keeps none of its own.
 */
export interface StatisticsPort {
  /** A range of `count` accepted contacts, named uniquely (a range reported twice counts once). */
  admitRange(companyId: number, campaignId: number, name: string, count: number): void;
  admit(companyId: number, campaignId: number, contactId: number, admission: Admission): void;
  record(companyId: number, change: ContactStatusChange): void;
  /** The batch period, for the companies with a campaign webhook: `send` stages a batch. */
  flush(targets: readonly { readonly companyId: number; readonly url: string }[], send: (target: { readonly companyId: number; readonly url: string }, batch: CampaignBatchPayload) => void): void;
}
