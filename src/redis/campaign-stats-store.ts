/**
 * Campaign statistics shared by every instance: the counts of src/events/campaign-stats.ts kept in
 * Redis, so the statistics webhook reports a campaign as a whole however many instances sent its
 * messages and received its notifications. Each report is one script call that joins it into the
 * contact's state and moves the counts (scripts/campaign.ts) by the stage rules of
 * src/events/campaign-counts.ts, so the reports, from any instances, give the counts one process
 * would. Contacts in their failure window wait in a sorted set by its end; a batch claim (or
 * {@link RedisCampaignStatistics.settle}) settles the due ones.
 *
 * A campaign's keys share the hash tag `{camp:<id>}` (one Redis Cluster slot per campaign).
 */
import { ADMISSIONS, admissionBit, campaignStatisticsPayload, emptyCounts, type Admission, type CampaignCounts } from '../events/campaign-counts.js';
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
import { BATCH_CLAIM_SCRIPT, BATCH_CONFIRM_SCRIPT, BATCH_RELEASE_SCRIPT, CAMPAIGN_SCRIPT, SETTLE_SCRIPT } from './scripts/campaign.js';

const CAMPAIGN = script(CAMPAIGN_SCRIPT);
const BATCH_CLAIM = script(BATCH_CLAIM_SCRIPT);
const BATCH_RELEASE = script(BATCH_RELEASE_SCRIPT);
const BATCH_CONFIRM = script(BATCH_CONFIRM_SCRIPT);
const SETTLE = script(SETTLE_SCRIPT);

/** The flag added to a FAILED's progress bits when the contact is sent again (scripts/campaign.ts). */
const RETRYING_BIT = 1024;

/**
 * A status report's `a4` for the campaign scripts: "bits:at:window" (scripts/campaign.ts).
 * @internal shared with the server's step reports (server/redis/shared-statistics.ts)
 */
export function statusReportArg(change: ContactStatusChange, doesNotExist: boolean, failureWindowMs: number): string {
  let bits = observe(NO_PROGRESS, { status: change.status, doesNotExist, blocklistResponse: change.blocklistResponse ?? false });
  if (change.status === 'FAILED' && change.retrying === true) bits |= RETRYING_BIT;
  return `${bits}:${change.at}:${failureWindowMs}`;
}

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
  /**
   * How long after a contact's SENT a failure may still send it again: it stays remaining until
   * then (as `failureWindowMs` of the in-process aggregator).
   * @default 600_000
   */
  readonly failureWindowMs?: number;
  /**
   * The keys are those the server's step script writes (server/redis/shared-statistics.ts: `live`,
   * `ranges` and `window` beside `contacts`) rather than this store's own (`contacts:live`, …).
   * @default false
   */
  readonly stepKeys?: boolean;
}

const NAMES = Object.keys(emptyCounts()) as (keyof CampaignCounts)[];

export class RedisCampaignStatistics {
  readonly #client: CampaignStatsClient;
  readonly #prefix: string;
  readonly #doesNotExist: ReadonlySet<number>;
  readonly #interval: number;
  readonly #retain: number;
  readonly #window: number;
  readonly #stepKeys: boolean;

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
    this.#window = options.failureWindowMs ?? 600_000;
    requireInteger('RedisCampaignStatistics({ failureWindowMs })', this.#window, 0);
    this.#stepKeys = options.stepKeys === true;
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
    if (!ADMISSIONS.includes(admission)) throw new ArgumentError('admit(admission)', `one of ${ADMISSIONS.join(', ')}`, String(admission));
    await runScript(this.#client, CAMPAIGN, this.#keys(campaignId), [contactId, 'a', admissionBit(admission), 0, this.#retain]);
  }

  /** Reports a status change of a contact's send. */
  async recordStatus(change: ContactStatusChange): Promise<void> {
    requireOneOf('recordStatus(status)', change.status, HSM_STATUSES);
    if (change.retryIndex !== null) requireInteger('recordStatus(retryIndex)', change.retryIndex, 0);
    if (change.failureCode !== undefined) requireInteger('recordStatus(failureCode)', change.failureCode);
    if (change.blocklistResponse !== undefined) requireBoolean('recordStatus(blocklistResponse)', change.blocklistResponse);
    if (change.retrying !== undefined) requireBoolean('recordStatus(retrying)', change.retrying);
    requireInteger('recordStatus(at)', change.at, 0);
    const doesNotExist = change.status === 'FAILED' && change.failureCode !== undefined && this.#doesNotExist.has(change.failureCode);
    await runScript(this.#client, CAMPAIGN, this.#keys(change.campaignId), [change.contactId, 's', change.retryIndex ?? -1, statusReportArg(change, doesNotExist, this.#window), this.#retain]);
  }

  /** The keys of a campaign's settle script: contacts, counts, dirty, live, ranges, window. */
  #settleKeys(campaignId: number): string[] {
    const contacts = this.#key(campaignId, 'contacts');
    const [live, ranges, window] = this.#stepKeys ? ['live', 'ranges', 'window'].map((k) => this.#key(campaignId, k)) : [`${contacts}:live`, `${contacts}:ranges`, `${contacts}:window`];
    return [contacts, this.#key(campaignId, 'counts'), this.#key(campaignId, 'dirty'), live!, ranges!, window!];
  }

  /**
   * Settles as sent the contacts whose failure window ended by `now`, in every campaign (a batch
   * claim does it first); answers how many settled.
   */
  async settle(now: number): Promise<number> {
    requireInteger('settle(now)', now, 0);
    let n = 0;
    for (const id of await this.#client.smembers(`${this.#prefix}campaigns`)) {
      n += Number(await runScript(this.#client, SETTLE, this.#settleKeys(Number(id)), [now, this.#retain]));
    }
    return n;
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
    // Contacts whose failure window ended settle first: their campaigns' counts move (and are marked).
    await this.settle(now);
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
