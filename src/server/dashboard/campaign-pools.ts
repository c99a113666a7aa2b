/**
 * Which pools (business, template type) and which engine submissions carry each campaign, learnt
 * from accepted send requests and from the messages handed out, so the dashboard can tell a
 * campaign's queued contacts, its retries waiting and an ETA from its pools. The engine counts per
 * submission and per pool, the statistics per campaign; this is the join. Bounded: the most
 * recently active campaigns are kept, finished submissions are dropped when read.
 */
import type { OutgoingMessage } from '../../core/dispatch/types.js';
import type { SubmissionStatus } from '../../core/dispatch/types.js';
import { serverContact } from '../contacts.js';

/** Campaigns remembered at most; the least recently active is forgotten first. */
const MAX_CAMPAIGNS = 10_000;
/** Live submissions remembered per campaign at most. */
const MAX_SUBMISSIONS = 1_000;

export interface CampaignPools {
  /** `business:type` keys of the pools it was sent on. */
  readonly pools: Set<string>;
  /** Engine submissions of the campaign not known finished. */
  readonly submissions: Set<string>;
}

/** What a campaign's known submissions hold now. */
export interface CampaignQueue {
  readonly queued: number;
  readonly waitingRetry: number;
  readonly inFlight: number;
  /** True when at least one submission of the campaign is known. */
  readonly known: boolean;
}

export const poolKey = (businessId: number, typeId: number): string => `${businessId}:${typeId}`;
/** The history key of a business's own output line (each number once), beside its pools'. */
export const businessKey = (businessId: number): string => `b${businessId}`;

export class CampaignPoolIndex {
  readonly #campaigns = new Map<string, CampaignPools>();
  #lastSubmission = '';

  /** A send request was accepted for the campaign on this pool. */
  accepted(companyId: number, campaignId: number, businessId: number, typeId: number): void {
    this.#entry(companyId, campaignId).pools.add(poolKey(businessId, typeId));
  }

  /** Messages handed out to the channel: their submissions (once per run of one submission, to stay off the hot path's bill). */
  handedOut(messages: readonly OutgoingMessage[]): void {
    for (const m of messages) {
      if (m.submissionId === this.#lastSubmission) continue;
      this.#lastSubmission = m.submissionId;
      const entry = this.#entry(serverContact(m.contact).companyId, m.campaignId ?? 0);
      entry.pools.add(poolKey(m.businessId, m.typeId));
      if (entry.submissions.size < MAX_SUBMISSIONS) entry.submissions.add(m.submissionId);
    }
  }

  get(companyId: number, campaignId: number): CampaignPools | undefined {
    return this.#campaigns.get(`${companyId}:${campaignId}`);
  }

  /** Sums the campaign's live submissions; those the engine reports finished (or forgot) are dropped. */
  queue(companyId: number, campaignId: number, status: (submissionId: string) => SubmissionStatus | undefined): CampaignQueue {
    const entry = this.get(companyId, campaignId);
    let queued = 0;
    let waitingRetry = 0;
    let inFlight = 0;
    if (entry === undefined) return { queued, waitingRetry, inFlight, known: false };
    const known = entry.submissions.size > 0;
    for (const id of entry.submissions) {
      const s = status(id);
      if (s === undefined || s.finished) {
        entry.submissions.delete(id);
        continue;
      }
      queued += s.queued;
      waitingRetry += s.waitingRetry;
      inFlight += s.inFlight;
    }
    return { queued, waitingRetry, inFlight, known };
  }

  #entry(companyId: number, campaignId: number): CampaignPools {
    const key = `${companyId}:${campaignId}`;
    let entry = this.#campaigns.get(key);
    if (entry !== undefined) {
      // Most recently active last, so the first is the one to forget.
      this.#campaigns.delete(key);
      this.#campaigns.set(key, entry);
      return entry;
    }
    entry = { pools: new Set(), submissions: new Set() };
    this.#campaigns.set(key, entry);
    if (this.#campaigns.size > MAX_CAMPAIGNS) this.#campaigns.delete(this.#campaigns.keys().next().value!);
    return entry;
  }
}
