/**
 * Campaign statistics of the server on Redis, shared by every instance: a campaign posted to three
 * instances and sent by all of them gets one statistics webhook with the whole campaign's counts.
 *
 * Reports (a request's accepted range, a rejection, a status) are not written one by one: they
 * gather here and go with the instance's next step, whose script joins each into the contact's
 * state and moves the counts (the join of src/redis/scripts/campaign.ts), in the same transaction
 * as what they report. A status is therefore counted exactly when its outcome and notification are
 * kept, and a step written twice (its reply lost) counts once. The keys are those of
 * {@link RedisCampaignStatistics} under the queue's hash tag (one Cluster slot with the queue:
 * the step is one script), a prefix per company: `<prefix>{queue}:st:c<company>:{camp:<id>}:…`.
 *
 * Batches: every instance runs the batch period; one claims it fleet-wide, builds the batch from
 * the shared counts, writes it as a webhook event with a step, and only then confirms it (the
 * campaigns' change markers are cleared): an instance that dies in between leaves the batch to the
 * next claimant.
 */
import { admissionBit, type Admission } from '../../../events/campaign-counts.js';
import type { ContactStatusChange } from '../../../events/campaign-stats-types.js';
import type { RandomSource } from '../../../events/random.js';
import type { CampaignBatchPayload } from '../../../events/schemas/campaign.js';
import { RedisCampaignStatistics, statusReportArg, type CampaignStatsClient } from '../../../redis/campaign-stats-store.js';
import type { CampaignReport } from './scripts/step.js';

/** How long a finished campaign keeps its contacts' states (as the in-process aggregator). */
export const RETAIN_CONTACTS_MS = 604_800_000;
/** FAILED codes counted as `count_does_not_exist` (as the in-process aggregator). */
const DOES_NOT_EXIST = new Set([131026]);

/** A company whose batches have a target. */
export interface BatchTarget {
  readonly companyId: number;
  readonly url: string;
}

interface Deps {
  readonly client: CampaignStatsClient;
  /** The queue's key prefix with its hash tag, e.g. `sendpool:{queue}:`. */
  readonly prefix: string;
  readonly batchIntervalMs: number;
  /** How long after a SENT a failure may still send the contact again (it stays remaining). */
  readonly failureWindowMs: number;
  readonly random: RandomSource;
  readonly now: () => number;
  /** A report waits: a step is to be taken (nobody waits for it). */
  readonly schedule: () => void;
  /** Writes a batch (staged as a webhook event) and resolves once it is kept. */
  readonly keep: () => Promise<void>;
  readonly onError: (error: unknown) => void;
}

export class SharedStatistics {
  readonly #deps: Deps;
  /** Reports for the next step, as `campaign_report` takes them (src/redis/scripts/campaign.ts). */
  #reports: CampaignReport[] = [];
  readonly #stores = new Map<number, RedisCampaignStatistics>();
  #flushing = false;

  constructor(deps: Deps) {
    this.#deps = deps;
  }

  /** A request's contacts `first … first + count - 1` admitted as accepted (a range named by the request). */
  admitRange(companyId: number, campaignId: number, name: string, count: number): void {
    if (count === 0) return;
    this.#reports.push({ company: String(companyId), campaign: String(campaignId), contact: name, op: 'r', a3: String(count), a4: '0' });
    this.#deps.schedule();
  }

  /** A contact admitted under a rejection (or refused by the engine after intake). */
  admit(companyId: number, campaignId: number, contactId: number, admission: Admission): void {
    if (admission === 'accepted') return; // the range says it
    this.#reports.push({ company: String(companyId), campaign: String(campaignId), contact: String(contactId), op: 'a', a3: String(admissionBit(admission)), a4: '0' });
    this.#deps.schedule();
  }

  /** A status of a contact's send. */
  record(companyId: number, change: ContactStatusChange): void {
    // The first ENQUEUED of an admitted contact changes nothing (it is remaining already): not sent.
    if (change.status === 'ENQUEUED' && change.retryIndex === null) return;
    const doesNotExist = change.status === 'FAILED' && change.failureCode !== undefined && DOES_NOT_EXIST.has(change.failureCode);
    const arg = statusReportArg(change, doesNotExist, this.#deps.failureWindowMs);
    this.#reports.push({ company: String(companyId), campaign: String(change.campaignId), contact: change.contactId, op: 's', a3: String(change.retryIndex ?? -1), a4: arg });
    this.#deps.schedule();
  }

  /**
   * Runs `fn` and answers, apart, the reports it made (a request's admissions: written with its
   * commit, or not at all when its request is voided, redis-persistence.ts).
   */
  capture<T>(fn: () => T): { readonly value: T; readonly reports: CampaignReport[] } {
    const from = this.#reports.length;
    const value = fn();
    return { value, reports: this.#reports.splice(from) };
  }

  /** Whether reports wait for a step. */
  get dirty(): boolean {
    return this.#reports.length > 0;
  }

  /** The reports for the step being taken, and the time a campaign first reported is created at. */
  take(): { readonly reports: CampaignReport[]; readonly at: number } {
    const reports = this.#reports;
    this.#reports = [];
    return { reports, at: this.#deps.now() };
  }

  /** A company's statistics as kept in Redis (counts, batches). */
  of(companyId: number): RedisCampaignStatistics {
    let s = this.#stores.get(companyId);
    if (!s) {
      s = new RedisCampaignStatistics({
        client: this.#deps.client,
        prefix: `${this.#deps.prefix}st:c${companyId}:`,
        batchIntervalMs: this.#deps.batchIntervalMs,
        retainContactsMs: RETAIN_CONTACTS_MS,
        failureWindowMs: this.#deps.failureWindowMs,
        stepKeys: true,
      });
      this.#stores.set(companyId, s);
    }
    return s;
  }

  /**
   * The batch period: for each company with a target, the fleet's batch if this instance claims it,
   * handed to `send` (which stages it as a webhook event), kept, then confirmed. Periods do not
   * overlap on one instance.
   */
  flush(targets: readonly BatchTarget[], send: (target: BatchTarget, batch: CampaignBatchPayload) => void): void {
    if (this.#flushing) return;
    this.#flushing = true;
    void (async () => {
      try {
        for (const t of targets) {
          const prepared = await this.of(t.companyId).prepareBatch(this.#deps.now(), this.#deps.random);
          if (prepared === null) continue;
          send(t, prepared.payload);
          await this.#deps.keep();
          await prepared.confirm();
        }
      } catch (e) {
        this.#deps.onError(e);
      } finally {
        this.#flushing = false;
      }
    })();
  }
}
