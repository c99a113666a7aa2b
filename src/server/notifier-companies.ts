/**
 * The companies as the notifier knows them: each one's webhook configuration (POST
 * /messenger/config/), its signing secret, and its campaign statistics, made together at the first
 * mention of the company (its secret from `secrets`, or generated then).
 *
 * Separate from the notifier because how a company's state is made, restored, loaded and written
 * is the same whichever notification asks for it; the notifier and the campaign statistics
 * (campaign-statistics-book.ts) only read it.
 */
import { EMPTY_WEBHOOK_CONFIG, type WebhookConfig } from '../contract/config-schema.js';
import { CampaignStatistics, type CampaignStatisticsSnapshot } from '../events/campaign-stats.js';
import type { RandomSource } from '../events/random.js';
import { generateWebhookSecret } from '../events/signing.js';
import type { CompanyWebhooks } from './ports/server-parts.js';

export type { CompanyWebhooks } from './ports/server-parts.js';

/** Per-company state: configuration, signing secret, statistics. */
export interface Company {
  config: WebhookConfig;
  secret: string;
  stats: CampaignStatistics;
}

/** A company's state as the snapshot file holds it. */
export interface CompanySnapshot {
  readonly companyId: number;
  readonly config: WebhookConfig;
  readonly secret: string;
  readonly stats: CampaignStatisticsSnapshot;
}

export interface NotifierCompaniesOptions {
  readonly random: RandomSource;
  /** Secrets set by the host, by company id (they win over generated and restored ones). */
  readonly secrets: Readonly<Record<number, string>>;
  readonly batchIntervalMs: number;
  /** The statistics' failure window (`CampaignStatisticsOptions.failureWindowMs`). @default 600_000 */
  readonly failureWindowMs?: number;
  /** The durable server: statistics remember what changed. @default false */
  readonly trackChanges?: boolean;
  /** A campaign's statistics settled. @default none */
  readonly onCampaignSettled?: (companyId: number, campaignId: number) => void;
}

/** Every company the notifier heard of, in the order it first did. */
export class NotifierCompanies {
  readonly #o: NotifierCompaniesOptions;
  readonly #companies = new Map<number, Company>();

  constructor(o: NotifierCompaniesOptions, snapshot: readonly CompanySnapshot[] = []) {
    this.#o = o;
    for (const c of snapshot) {
      this.#companies.set(c.companyId, {
        config: c.config,
        secret: o.secrets[c.companyId] ?? c.secret,
        stats: CampaignStatistics.restore(c.stats, this.#statsOptions(c.companyId)),
      });
    }
  }

  #statsOptions(companyId: number) {
    const onSettled = this.#o.onCampaignSettled;
    return {
      batchIntervalMs: this.#o.batchIntervalMs,
      ...(this.#o.failureWindowMs === undefined ? {} : { failureWindowMs: this.#o.failureWindowMs }),
      trackChanges: this.#o.trackChanges === true,
      ...(onSettled ? { onSettle: (campaignId: number) => onSettled(companyId, campaignId) } : {}),
    };
  }

  /** The company, made now if it is its first mention. */
  get(companyId: number): Company {
    let c = this.#companies.get(companyId);
    if (!c) {
      c = {
        config: { ...EMPTY_WEBHOOK_CONFIG },
        secret: this.#o.secrets[companyId] ?? generateWebhookSecret(this.#o.random),
        stats: new CampaignStatistics(this.#statsOptions(companyId)),
      };
      this.#companies.set(companyId, c);
    }
    return c;
  }

  /** The company if it was mentioned; makes nothing. */
  find(companyId: number): Company | undefined {
    return this.#companies.get(companyId);
  }

  entries(): IterableIterator<[number, Company]> {
    return this.#companies.entries();
  }

  /** Every company's configuration and secret (written by the durable server). */
  webhooks(): CompanyWebhooks[] {
    return [...this.#companies].map(([companyId, c]) => ({ companyId, config: c.config, secret: c.secret }));
  }

  /** Loads configurations and secrets kept by the durable server (statistics start empty). */
  loadWebhooks(list: readonly CompanyWebhooks[]): void {
    for (const w of list) {
      const c = this.get(w.companyId);
      c.config = w.config;
      c.secret = w.secret;
    }
  }

  /** Loads the statistics rows kept by the durable server. */
  loadStatistics(statistics: ReadonlyMap<number, Parameters<typeof CampaignStatistics.fromRows>[0]>): void {
    for (const [companyId, rows] of statistics) this.get(companyId).stats = CampaignStatistics.fromRows(rows, this.#statsOptions(companyId));
  }

  snapshot(): CompanySnapshot[] {
    return [...this.#companies].map(([companyId, c]) => ({ companyId, config: c.config, secret: c.secret, stats: c.stats.snapshot() }));
  }
}
