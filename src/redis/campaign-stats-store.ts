/**
 * Campaign statistics shared by every instance: the counts of src/events/campaign-stats.ts kept in
 * Redis, so the statistics webhook reports a campaign as a whole however many instances sent its
 * messages and received its notifications. Each report is one script call that joins it into the
 * contact's state and moves the counts (scripts/campaign.ts), so any order or duplication of the
 * same reports, from any instances, gives the same counts as one process would.
 *
 * A campaign's keys share the hash tag `{camp:<id>}` (one Redis Cluster slot per campaign).
 */
import { ADMISSIONS, campaignStatisticsPayload, emptyCounts, type Admission, type CampaignCounts } from '../events/campaign-counts.js';
import type { ContactStatusChange } from '../events/campaign-stats-types.js';
import type { RandomSource } from '../events/random.js';
import type { CampaignBatchPayload, CampaignStatisticsPayload } from '../events/schemas/campaign.js';
import { NO_PROGRESS, observe } from '../events/status-merge.js';
import { uuidV4 } from '../events/uuid.js';
import { ArgumentError } from '../core/errors.js';
import { formatTime } from '../events/datetime.js';
import { requireBoolean, requireInteger, requireOneOf, requireString } from '../events/ids.js';
import { HSM_STATUSES } from '../events/schemas/hsm.js';
import { runScript, script, type RedisScriptClient } from './script-runner.js';
import { BATCH_CLAIM_SCRIPT, BATCH_CONFIRM_SCRIPT, BATCH_RELEASE_SCRIPT, CAMPAIGN_SCRIPT } from './scripts/campaign.js';

const CAMPAIGN = script(CAMPAIGN_SCRIPT);
const BATCH_CLAIM = script(BATCH_CLAIM_SCRIPT);
const BATCH_RELEASE = script(BATCH_RELEASE_SCRIPT);
const BATCH_CONFIRM = script(BATCH_CONFIRM_SCRIPT);

/** The commands the statistics store uses (an ioredis `Redis`). */
export interface CampaignStatsClient extends RedisScriptClient {
  hgetall(key: string): Promise<Record<string, string>>;
  hset(key: string, ...fieldsAndValues: (string | number)[]): Promise<number>;
  hsetnx(key: string, field: string, value: string | number): Promise<number>;
  sadd(key: string, ...members: (string | number)[]): Promise<number>;
  smembers(key: string): Promise<string[]>;
  get(key: string): Promise<string | null>;
}

/** Options of {@link RedisCampaignStatistics}. */
export interface RedisCampaignStatisticsOptions {
  readonly client: CampaignStatsClient;
  /** Key prefix. @default 'sendpool:' */
  readonly prefix?: string;
  /** Codes whose FAILED counts as `count_does_not_exist`. @default [131026] */
  readonly doesNotExistCodes?: readonly number[];
  /** Minimum time between two batches, fleet-wide, in ms. @default 60_000 */
  readonly batchIntervalMs?: number;
  /**
   * How long a campaign with nothing remaining keeps its contacts' states after its last change,
   * in ms; then they expire in Redis and its counts are final (as `retainContactsMs` of the
   * in-process aggregator). A later report for a contact it no longer knows changes nothing.
   * @default 604_800_000 (7 days)
   */
  readonly retainContactsMs?: number;
}

const NAMES = Object.keys(emptyCounts()) as (keyof CampaignCounts)[];

export class RedisCampaignStatistics {
  readonly #client: CampaignStatsClient;
  readonly #prefix: string;
  readonly #doesNotExist: ReadonlySet<number>;
  readonly #interval: number;
  readonly #retain: number;

  constructor(options: RedisCampaignStatisticsOptions) {
    this.#client = options.client;
    this.#prefix = options.prefix ?? 'sendpool:';
    this.#doesNotExist = new Set(options.doesNotExistCodes ?? [131026]);
    this.#interval = options.batchIntervalMs ?? 60_000;
    const retain = options.retainContactsMs ?? 604_800_000;
    if (!Number.isSafeInteger(retain) || retain < 1) {
      throw new ArgumentError('RedisCampaignStatistics({ retainContactsMs })', 'a whole number of milliseconds, 1 or more', String(retain));
    }
    this.#retain = retain;
  }

  #key(campaignId: number, part: string): string {
    return `${this.#prefix}{camp:${campaignId}}:${part}`;
  }

  #keys(campaignId: number): string[] {
    return [this.#key(campaignId, 'contacts'), this.#key(campaignId, 'counts'), this.#key(campaignId, 'dirty')];
  }

  /** Declares a campaign (idempotent; a new name replaces the old one). `createdAt` in epoch ms. */
  async registerCampaign(campaign: { readonly campaignId: number; readonly name: string; readonly createdAt: number }): Promise<void> {
    // As the in-process aggregator: a campaign object that could not be written is never stored.
    requireInteger('registerCampaign(campaignId)', campaign.campaignId);
    requireString('registerCampaign(name)', campaign.name);
    formatTime('registerCampaign(createdAt)', campaign.createdAt);
    const meta = this.#key(campaign.campaignId, 'meta');
    await this.#client.hsetnx(meta, 'createdAt', campaign.createdAt);
    await this.#client.hset(meta, 'name', campaign.name);
    await this.#client.sadd(`${this.#prefix}campaigns`, campaign.campaignId);
  }

  /** Reports how a contact was admitted. */
  async admit(campaignId: number, contactId: string, admission: Admission): Promise<void> {
    const index = ADMISSIONS.indexOf(admission);
    if (index < 0) throw new ArgumentError('admit(admission)', `one of ${ADMISSIONS.join(', ')}`, String(admission));
    await runScript(this.#client, CAMPAIGN, this.#keys(campaignId), [contactId, 'a', 1 << index, 0, this.#retain]);
  }

  /** Reports a status change of a contact's send. */
  async recordStatus(change: ContactStatusChange): Promise<void> {
    requireOneOf('recordStatus(status)', change.status, HSM_STATUSES);
    if (change.retryIndex !== null) requireInteger('recordStatus(retryIndex)', change.retryIndex, 0);
    if (change.failureCode !== undefined) requireInteger('recordStatus(failureCode)', change.failureCode);
    if (change.blocklistResponse !== undefined) requireBoolean('recordStatus(blocklistResponse)', change.blocklistResponse);
    const doesNotExist = change.status === 'FAILED' && change.failureCode !== undefined && this.#doesNotExist.has(change.failureCode);
    const bits = observe(NO_PROGRESS, { status: change.status, doesNotExist, blocklistResponse: change.blocklistResponse ?? false });
    await runScript(this.#client, CAMPAIGN, this.#keys(change.campaignId), [change.contactId, 's', change.retryIndex ?? -1, bits, this.#retain]);
  }

  /** The campaign's counts across every instance. */
  async counts(campaignId: number): Promise<CampaignCounts> {
    const raw = await this.#client.hgetall(this.#key(campaignId, 'counts'));
    const c = emptyCounts();
    for (const k of NAMES) c[k] = Number(raw[k] ?? 0);
    return c;
  }

  /**
   * The fleet's batch of changed campaigns, or null (nothing changed, or the interval since the
   * fleet's last batch has not passed). One instance at a time claims the interval, atomically (a
   * claim that finds nothing is given back). The changes are taken at once: a batch that is lost
   * before it is delivered is not sent again; see {@link prepareBatch} for a batch kept first.
   */
  async takeBatch(now: number, random: RandomSource): Promise<CampaignBatchPayload | null> {
    const prepared = await this.prepareBatch(now, random);
    if (prepared === null) return null;
    await prepared.confirm();
    return prepared.payload;
  }

  /**
   * As {@link takeBatch}, but the changes stay marked until `confirm()` is called (once the batch is
   * kept, e.g. written to a durable outbox): a batch lost before that (its instance died) is sent by
   * the next claimant instead, so a campaign's last counts are never lost. A report that lands
   * between the two stays marked for the next batch.
   */
  async prepareBatch(now: number, random: RandomSource): Promise<{ readonly payload: CampaignBatchPayload; confirm(): Promise<void> } | null> {
    // Checked before the claim: a time that cannot be written would fail after the claim was taken.
    formatTime('takeBatch(now)', now);
    const lastKey = `${this.#prefix}campaigns:lastBatchAt`;
    const previous = (await runScript(this.#client, BATCH_CLAIM, [lastKey], [now, this.#interval])) as string | number | null;
    if (previous === null) return null;
    const ids = (await this.#client.smembers(`${this.#prefix}campaigns`)).map(Number).sort((a, b) => a - b);
    const campaigns: CampaignStatisticsPayload[] = [];
    const marks: { readonly id: number; readonly dirty: string; readonly sent: string }[] = [];
    for (const id of ids) {
      const dirty = await this.#client.get(this.#key(id, 'dirty'));
      if (dirty === null) continue;
      const meta = await this.#client.hgetall(this.#key(id, 'meta'));
      const payload = campaignStatisticsPayload({ campaignId: id, name: meta['name'] ?? '', createdAt: Number(meta['createdAt'] ?? 0) }, await this.counts(id), now);
      const key = JSON.stringify({ ...payload, datetime: undefined });
      if (key === meta['lastSent']) {
        await this.#confirm(id, dirty, '');
        continue;
      }
      marks.push({ id, dirty, sent: key });
      campaigns.push(payload);
    }
    if (campaigns.length === 0) {
      await runScript(this.#client, BATCH_RELEASE, [lastKey], [now, String(previous)]);
      return null;
    }
    return {
      payload: { event_id: uuidV4(random), campaigns },
      confirm: async () => {
        for (const m of marks) await this.#confirm(m.id, m.dirty, m.sent);
      },
    };
  }

  async #confirm(campaignId: number, dirty: string, sent: string): Promise<void> {
    await runScript(this.#client, BATCH_CONFIRM, [this.#key(campaignId, 'dirty'), this.#key(campaignId, 'meta')], [dirty, sent]);
  }
}
