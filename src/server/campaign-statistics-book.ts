/**
 * Campaign statistics (spec 6.4) as the notifier keeps them: contacts admitted at intake (as id
 * ranges, nothing per contact), each HSM status of a contact's attempts, and the batches sent to
 * each company's campaign webhook on their period; on one process in each company's own
 * `CampaignStatistics`, on the server on Redis in the statistics every instance shares
 * (`StatisticsPort`, backends/redis/shared-statistics.ts), with none kept here.
 *
 * No URL configured: the batch is not taken (the counts stay dirty and go out once a URL is set),
 * so a batch sent after the URL is set carries the whole counts.
 *
 * Separate from the notifier because counting and batching follow the period, not the event: the
 * notifier tells each status as it happens; this decides what a campaign's counts are and when a
 * batch goes.
 */
import type { Clock } from '../core/clock.js';
import type { Admission } from '../events/campaign-counts.js';
import type { CampaignStatisticsChanges } from '../events/campaign-stats.js';
import type { ContactStatusChange } from '../events/campaign-stats-types.js';
import type { CampaignBatchPayload, CampaignStatisticsPayload } from '../events/schemas/campaign.js';
import type { RandomSource } from '../events/random.js';
import type { NotifierCompanies } from './notifier-companies.js';
import type { StatisticsPort } from './ports/campaign-statistics.js';

export type { StatisticsPort } from './ports/campaign-statistics.js';

export interface CampaignStatisticsBookOptions {
  readonly companies: NotifierCompanies;
  readonly clock: Clock;
  readonly random: RandomSource;
  /** Campaign statistics kept elsewhere (the server on Redis). @default each company's own */
  readonly statistics?: StatisticsPort;
  /** Stages a company's batch for its campaign webhook. */
  readonly send: (companyId: number, url: string, batch: CampaignBatchPayload) => void;
}

/** Every company's campaign statistics, here or shared. */
export class CampaignStatisticsBook {
  readonly #o: CampaignStatisticsBookOptions;
  readonly #companies: NotifierCompanies;
  #timer: NodeJS.Timeout | undefined;

  constructor(o: CampaignStatisticsBookOptions) {
    this.#o = o;
    this.#companies = o.companies;
  }

  #register(companyId: number, campaignId: number): void {
    this.#companies.get(companyId).stats.registerCampaign({ campaignId, name: `campaign ${campaignId}`, createdAt: this.#o.clock.now() });
  }

  /**
   * A send request was accepted: declare its campaign and admit its contacts, numbered `first` …
   * `first + count - 1`, as accepted (as id ranges: nothing per contact), except the rejected ones,
   * counted under their admission, or not at all when it has none.
   */
  admit(companyId: number, campaignId: number, first: number, count: number, rejections: readonly (readonly [contactId: number, admission: Admission | undefined])[]): void {
    const shared = this.#o.statistics;
    const { stats } = this.#companies.get(companyId);
    if (!shared) this.#register(companyId, campaignId);
    // Ranges around the rejections that no count takes (they are not part of the campaign's total);
    // a range is named by its first contact id, unique on every instance.
    const accept = (from: number, n: number) => (shared ? shared.admitRange(companyId, campaignId, String(from), n) : stats.admitAccepted(campaignId, from, n));
    const skipped = rejections
      .filter(([, a]) => a === undefined)
      .map(([id]) => id)
      .sort((a, b) => a - b);
    let from = first;
    for (const id of skipped) {
      if (id > from) accept(from, id - from);
      from = Math.max(from, id + 1);
    }
    if (first + count > from) accept(from, first + count - from);
    for (const [id, admission] of rejections) {
      if (admission === undefined) continue;
      if (shared) shared.admit(companyId, campaignId, id, admission);
      else stats.admit(campaignId, String(id), admission);
    }
  }

  /** A contact the engine refused after intake (an invalid phone), counted under its admission. */
  reject(companyId: number, campaignId: number, contactId: number, admission: Admission): void {
    if (this.#o.statistics) return this.#o.statistics.admit(companyId, campaignId, contactId, admission);
    const { stats } = this.#companies.get(companyId);
    this.#register(companyId, campaignId);
    stats.admit(campaignId, String(contactId), admission);
  }

  /** One status of a contact's attempt. */
  record(companyId: number, change: ContactStatusChange): void {
    const shared = this.#o.statistics;
    if (shared) return shared.record(companyId, change);
    const { stats } = this.#companies.get(companyId);
    // A contact's campaign is registered at intake (and kept by the durable server); one the
    // statistics do not know (a snapshot from an older version) is registered now: a status never
    // goes unsent for want of bookkeeping.
    if (!stats.has(change.campaignId)) this.#register(companyId, change.campaignId);
    stats.recordStatus(change);
  }

  /** Campaign statistics batches of every company whose period has passed (spec 6.4). */
  flush(): void {
    const shared = this.#o.statistics;
    if (shared) {
      const targets = [...this.#companies.entries()].flatMap(([companyId, c]) => (c.config.url_campaign_webhook ? [{ companyId, url: c.config.url_campaign_webhook }] : []));
      shared.flush(targets, (t, batch) => this.#o.send(t.companyId, t.url, batch));
      return;
    }
    const now = this.#o.clock.now();
    for (const [companyId, c] of this.#companies.entries()) {
      const wake = c.stats.nextWakeAt();
      if (wake === null || wake > now) continue;
      const url = c.config.url_campaign_webhook;
      // Without a target the batch is not taken (the counts stay dirty and go out once a URL is
      // set), but finished campaigns still settle, so memory does not grow.
      if (!url) {
        c.stats.settle(now);
        continue;
      }
      const batch = c.stats.takeBatch(now, this.#o.random);
      if (batch) this.#o.send(companyId, url, batch);
    }
  }

  /** Each company's statistics rows changed since the last call (every row with `full`). */
  takeChanges(full: boolean): { readonly companyId: number; readonly changes: CampaignStatisticsChanges }[] {
    const statistics = [...this.#companies.entries()].map(([companyId, c]) => ({ companyId, changes: c.stats.takeChanges({ full }) }));
    return statistics.filter((s) => full || s.changes.campaigns.length > 0 || s.changes.settled.length > 0);
  }

  /** Counts of a campaign of a company, or undefined when unknown. */
  counts(companyId: number, campaignId: number) {
    try {
      return this.#companies.get(companyId).stats.counts(campaignId);
    } catch {
      return undefined;
    }
  }

  /**
   * The campaigns whose statistics this server keeps, each company's in the order they were
   * declared (none on the server on Redis, where the statistics are shared); reads create nothing.
   */
  campaignKeys(companyId?: number): { readonly companyId: number; readonly campaignId: number }[] {
    if (this.#o.statistics) return [];
    const out: { companyId: number; campaignId: number }[] = [];
    for (const [id, c] of this.#companies.entries()) {
      if (companyId !== undefined && id !== companyId) continue;
      for (const campaignId of c.stats.campaignIds()) out.push({ companyId: id, campaignId });
    }
    return out;
  }

  /** A campaign's 6.4 object now, or undefined when this server keeps no statistics of it. */
  statistics(companyId: number, campaignId: number): CampaignStatisticsPayload | undefined {
    const c = this.#companies.find(companyId);
    if (!c || this.#o.statistics || !c.stats.has(campaignId)) return undefined;
    return c.stats.statistics(campaignId, this.#o.clock.now());
  }

  /** Starts the batch period timer. */
  start(periodMs: number): void {
    this.#timer = setInterval(() => this.flush(), periodMs);
    this.#timer.unref?.();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }
}
