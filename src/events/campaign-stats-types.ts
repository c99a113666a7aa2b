/**
 * The public types of the campaign statistics aggregator (campaign-stats.ts): its options, the
 * status change it is fed, and the rows and snapshot a host keeps it in.
 */
import type { CampaignCounts } from './campaign-counts.js';
import type { HsmStatus } from './schemas/hsm.js';

/** Options of `CampaignStatistics`. */
export interface CampaignStatisticsOptions {
  /**
   * Channel error codes whose FAILED counts as `count_does_not_exist` rather than `count_failed`
   * (the number is not on the channel).
   * @default [131026]
   */
  readonly doesNotExistCodes?: readonly number[];
  /**
   * Minimum time between two batches, in milliseconds.
   * @default 60_000
   */
  readonly batchIntervalMs?: number;
  /**
   * A campaign with nothing remaining and no change for this long is settled: its counts stay,
   * final, and the per-contact states behind them are dropped, so memory does not grow with every
   * contact ever sent. A later report (status or admission) for a contact it no longer knows is
   * counted in `lateIgnored` and changes nothing: send new contacts under a new campaign id.
   * @default 604_800_000 (7 days)
   */
  readonly retainContactsMs?: number;
  /**
   * Remember what changed, for `CampaignStatistics.takeChanges` (a host that writes the
   * statistics to a database step by step).
   * @default false
   */
  readonly trackChanges?: boolean;
  /**
   * Called when a campaign settles (its contact states dropped), e.g. to drop what the host keeps
   * per campaign for as long. @default none
   */
  readonly onSettle?: (campaignId: number) => void;
  /**
   * How long after a contact's SENT (its `at`) a failure reported by the provider may still send it
   * again: the contact stays remaining until then (unless its send reaches DEVICE first), and then
   * settles as sent at the next call that takes a time ({@link CampaignStatistics.takeBatch},
   * `settle`, `statistics`) or its next status. 0 settles a SENT at once.
   * @default 600_000 (10 minutes, the server's `DEFAULT_FAILURE_WINDOW_MS`)
   */
  readonly failureWindowMs?: number;
}

/** A status change fed to the aggregator (what an HSM notification says about a contact). */
export interface ContactStatusChange {
  readonly campaignId: number;
  /**
   * The contact's stable id within the campaign, the same over every hand-out and retry of it (the
   * dispatch queue's `OutgoingMessage.contactId`, or the host's own contact id); never a message id,
   * or a retried contact would count twice.
   */
  readonly contactId: string;
  /** Zero-based retry index, or null for the first try. */
  readonly retryIndex: number | null;
  readonly status: HsmStatus;
  /** For FAILED: the channel error code, if known. */
  readonly failureCode?: number;
  /** For REPLIED: true for a blocklist response. @default false */
  readonly blocklistResponse?: boolean;
  /**
   * For FAILED: true when the server sends the contact again (a retry, a failover, a rest, a
   * backoff), which keeps it remaining; false, a final failure. @default false
   */
  readonly retrying?: boolean;
  /** When the server recorded the status, in epoch ms (a SENT's failure window runs from it). */
  readonly at: number;
}

/** One campaign of a {@link CampaignStatisticsSnapshot} without its contacts: a database row. */
export interface CampaignRow {
  readonly campaignId: number;
  readonly name: string;
  readonly createdAt: number;
  readonly lastSent: string | null;
  readonly dirty: boolean;
  /** Present when the campaign is settled: its final counts (its contacts are gone). */
  readonly settledCounts?: CampaignCounts;
  readonly lastChangeAt?: number;
  /** Ids admitted as accepted by range, flat `[start, end, …]` (half-open). @default [] */
  readonly accepted?: readonly number[];
}

/**
 * One contact's state as a row: campaign, contact id, admissions, attempt, progress, stage (0 open,
 * 1 sent, 2 failed, 3 does not exist, 4 expired) and, for an open contact in its failure window,
 * when that window ends (epoch ms, else 0). A row without a stage (written by an older version)
 * takes the stage its progress was counted as then.
 */
export type ContactRow = readonly [campaignId: number, contactId: string, admissions: number, attempt: number, progress: number, stage?: number, settleAt?: number];

/** A contact of a snapshot's campaign: contact id, admissions, attempt, progress, stage, settle time (as {@link ContactRow}). */
export type SnapshotContact = readonly [contactId: string, admissions: number, attempt: number, progress: number, stage?: number, settleAt?: number];

/** Serialisable state of `CampaignStatistics`. Version 1 (no `accepted` ranges) is still read. */
export interface CampaignStatisticsSnapshot {
  readonly version: 1 | 2;
  readonly lastBatchAt: number | null;
  readonly campaigns: readonly (CampaignRow & { readonly contacts: readonly SnapshotContact[] })[];
}

/** What changed since the last `CampaignStatistics.takeChanges`. */
export interface CampaignStatisticsChanges {
  readonly lastBatchAt: number | null;
  /** Campaigns whose row changed (new, renamed, admitted to, batched, settled, or with changed contacts). */
  readonly campaigns: readonly CampaignRow[];
  /** Contacts whose state changed. */
  readonly contacts: readonly ContactRow[];
  /** Campaigns settled since: their contact rows are gone. */
  readonly settled: readonly number[];
}
