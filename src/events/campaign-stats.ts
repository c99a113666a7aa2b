/**
 * Campaign statistics (spec 6.4): an aggregator fed by admissions and status changes, producing
 * every `count_*` (campaign-counts.ts) and the periodic batch payload.
 *
 * The counts are a sum over contacts of a pure classification of each contact's state; they are
 * kept incrementally (remove the contact's old contribution, add the new one), which equals a
 * recount from scratch, as the tests check. A contact admitted as accepted and not reported since
 * needs no entry of its own: hosts that number contacts from a counter admit a request as one id
 * range ({@link CampaignStatistics.admitAccepted}), and a contact gets an entry at its first status.
 *
 * With `trackChanges`, {@link CampaignStatistics.takeChanges} lists what changed since the last
 * call (campaign rows and contact rows), so a host can keep the statistics in a database row by row
 * and rebuild them with {@link CampaignStatistics.fromRows} after a restart.
 */
import { ArgumentError } from '../core/errors.js';
import { ADMISSIONS, admitContact, campaignStatisticsPayload, contactStatus, type Admission, type CampaignCounts } from './campaign-counts.js';
import { CampaignChangeLog } from './campaign-change-log.js';
import { admitRange, awaitsSettling, newCampaignEntry, nextWindowEnd, recountEntry, settleDue, settleEntry, updateContact, type CampaignEntry } from './campaign-entry.js';
import { campaignRow, contactRow, entryFromRow, snapshotContacts, snapshotFromRows } from './campaign-rows.js';
import type { CampaignRow, CampaignStatisticsChanges, CampaignStatisticsOptions, CampaignStatisticsSnapshot, ContactRow, ContactStatusChange } from './campaign-stats-types.js';
import { formatTime } from './datetime.js';
import { requireBoolean, requireInteger, requireOneOf, requireString } from './ids.js';
import type { RandomSource } from './random.js';
import type { CampaignBatchPayload, CampaignStatisticsPayload } from './schemas/campaign.js';
import { HSM_STATUSES } from './schemas/hsm.js';
import { uuidV4 } from './uuid.js';

export type { CampaignRow, CampaignStatisticsChanges, CampaignStatisticsOptions, CampaignStatisticsSnapshot, ContactRow, ContactStatusChange } from './campaign-stats-types.js';

/**
 * The statistics aggregator. Feed it with {@link admit}, {@link admitAccepted} and
 * {@link recordStatus}; call {@link takeBatch} at {@link nextWakeAt} for the 6.4 payload. The state
 * of each campaign and how a report changes it are in campaign-entry.ts; this class adds batching,
 * settling and the change log.
 */
export class CampaignStatistics {
  readonly #campaigns = new Map<number, CampaignEntry>();
  readonly #dirty = new Set<number>();
  readonly #doesNotExist: ReadonlySet<number>;
  readonly #interval: number;
  readonly #retain: number;
  readonly #window: number;
  #lastBatchAt: number | null = null;
  #lateIgnored = 0;
  /** With trackChanges: what changed since the last {@link takeChanges}. */
  readonly #log: CampaignChangeLog | undefined;
  readonly #onSettle: ((campaignId: number) => void) | undefined;

  constructor(options: CampaignStatisticsOptions = {}) {
    this.#doesNotExist = new Set(options.doesNotExistCodes ?? [131026]);
    this.#interval = options.batchIntervalMs ?? 60_000;
    this.#retain = options.retainContactsMs ?? 604_800_000;
    requireInteger('CampaignStatistics(options.batchIntervalMs)', this.#interval, 0);
    requireInteger('CampaignStatistics(options.retainContactsMs)', this.#retain, 0);
    this.#window = options.failureWindowMs ?? 600_000;
    requireInteger('CampaignStatistics(options.failureWindowMs)', this.#window, 0);
    this.#log = options.trackChanges === true ? new CampaignChangeLog() : undefined;
    this.#onSettle = options.onSettle;
  }

  /** Statuses that arrived for contacts of settled campaigns after their states were dropped. */
  get lateIgnored(): number {
    return this.#lateIgnored;
  }

  #markDirty(campaignId: number): void {
    const c = this.#campaigns.get(campaignId);
    if (c) c.changes++;
    if (this.#dirty.has(campaignId)) return;
    this.#dirty.add(campaignId);
    this.#log?.touch(campaignId);
  }

  /** Declares a campaign (idempotent; a new name replaces the old one). `createdAt` in epoch ms. */
  registerCampaign(campaign: { readonly campaignId: number; readonly name: string; readonly createdAt: number }): void {
    requireInteger('registerCampaign(campaignId)', campaign.campaignId);
    requireString('registerCampaign(name)', campaign.name);
    // Checked here, not at the next batch: a campaign object that cannot be written is never kept.
    formatTime('registerCampaign(createdAt)', campaign.createdAt);
    const known = this.#campaigns.get(campaign.campaignId);
    if (known) {
      if (known.name !== campaign.name) this.#markDirty(campaign.campaignId);
      known.name = campaign.name;
      return;
    }
    this.#campaigns.set(campaign.campaignId, newCampaignEntry(campaign.campaignId, campaign.name, campaign.createdAt));
    this.#log?.touch(campaign.campaignId);
  }

  #campaign(campaignId: number, api: string): CampaignEntry {
    const c = this.#campaigns.get(campaignId);
    if (!c) throw new ArgumentError(`${api}(campaignId)`, 'a campaign declared with registerCampaign', String(campaignId));
    return c;
  }

  #update(c: CampaignEntry, contactId: string, change: Parameters<typeof updateContact>[2]): void {
    const updated = updateContact(c, contactId, change);
    if (updated === 'ignored') this.#lateIgnored++;
    if (updated !== 'changed') return;
    this.#markDirty(c.campaignId);
    this.#log?.touch(c.campaignId, contactId);
  }

  /** Reports how a contact was admitted (invalid phone, invalid data, duplicated, blocked, already sent, …, or accepted). */
  admit(campaignId: number, contactId: string, admission: Admission): void {
    requireOneOf('admit(admission)', admission, ADMISSIONS);
    this.#update(this.#campaign(campaignId, 'admit'), contactId, (s) => admitContact(s, admission));
  }

  /**
   * Admits as accepted the `count` contacts whose ids are `first` … `first + count - 1` (their
   * decimal strings are the contact ids of later reports), at the cost of one range: the way for a
   * host that numbers contacts from a counter. Reports that came earlier for some of these ids are
   * merged as {@link admit} would; a range admitted before, whole, changes nothing.
   * @throws {ArgumentError} for bounds that are not safe integers of 0 or more, or a range that
   * partly overlaps one admitted before (a contact is admitted by one range)
   */
  admitAccepted(campaignId: number, first: number, count: number): void {
    requireInteger('admitAccepted(first)', first, 0);
    requireInteger('admitAccepted(count)', count, 0);
    requireInteger('admitAccepted(first + count)', first + count, 0);
    const c = this.#campaign(campaignId, 'admitAccepted');
    if (count === 0) return;
    const admitted = admitRange(c, first, count);
    if (admitted.kind === 'ignored') this.#lateIgnored += admitted.late;
    if (admitted.kind !== 'added') return;
    for (const id of admitted.contactIds) this.#log?.touch(campaignId, id);
    this.#markDirty(campaignId);
    this.#log?.touch(campaignId);
  }

  /**
   * Reports a status change of a contact's send (the stage rules of campaign-counts.ts). A contact
   * not admitted yet counts as accepted.
   */
  recordStatus(change: ContactStatusChange): void {
    requireOneOf('recordStatus(status)', change.status, HSM_STATUSES);
    if (change.retryIndex !== null) requireInteger('recordStatus(retryIndex)', change.retryIndex, 0);
    if (change.failureCode !== undefined) requireInteger('recordStatus(failureCode)', change.failureCode);
    if (change.blocklistResponse !== undefined) requireBoolean('recordStatus(blocklistResponse)', change.blocklistResponse);
    if (change.retrying !== undefined) requireBoolean('recordStatus(retrying)', change.retrying);
    requireInteger('recordStatus(at)', change.at, 0);
    const attempt = change.retryIndex ?? -1;
    const doesNotExist = change.status === 'FAILED' && change.failureCode !== undefined && this.#doesNotExist.has(change.failureCode);
    const o = { status: change.status, doesNotExist, blocklistResponse: change.blocklistResponse ?? false, retrying: change.retrying ?? false, at: change.at };
    this.#update(this.#campaign(change.campaignId, 'recordStatus'), change.contactId, (s) => contactStatus(s, attempt, o, this.#window));
  }

  /** Settles as sent the contacts of a campaign whose failure window ended by `now`. */
  #settleDue(c: CampaignEntry, now: number): void {
    const changed = settleDue(c, now);
    if (changed.length === 0) return;
    this.#markDirty(c.campaignId);
    for (const id of changed) this.#log?.touch(c.campaignId, id);
  }

  /** Whether a campaign is declared. */
  has(campaignId: number): boolean {
    return this.#campaigns.has(campaignId);
  }

  /** The current counts of a campaign (a copy). */
  counts(campaignId: number): CampaignCounts {
    return { ...this.#campaign(campaignId, 'counts').counts };
  }

  /** Ids of the declared campaigns, in the order they were declared. */
  campaignIds(): number[] {
    return [...this.#campaigns.keys()];
  }

  /**
   * A campaign's 6.4 object as it stands at `now` (what a batch taken now would carry for it): its
   * contacts whose failure window ended by `now` settle first.
   */
  statistics(campaignId: number, now: number): CampaignStatisticsPayload {
    const c = this.#campaign(campaignId, 'statistics');
    this.#settleDue(c, now);
    return campaignStatisticsPayload(c, c.counts, now);
  }

  /** Recount of a campaign from its contacts' states (equal to {@link counts}; for checks). */
  recount(campaignId: number): CampaignCounts {
    return recountEntry(this.#campaign(campaignId, 'recount'));
  }

  /**
   * When to call {@link takeBatch} next: for a batch of changes, to settle contacts whose failure
   * window ends, or to settle a finished campaign; null when none is pending; a time at or before
   * now means "now".
   */
  nextWakeAt(): number | null {
    let at = this.#dirty.size === 0 ? Infinity : this.#lastBatchAt === null ? 0 : this.#lastBatchAt + this.#interval;
    // A finished campaign settles on a later call, as do contacts whose window ends: wake for them too.
    for (const c of this.#campaigns.values()) {
      if (awaitsSettling(c) && c.lastChangeAt + this.#retain < at) at = c.lastChangeAt + this.#retain;
      const window = nextWindowEnd(c);
      if (window !== undefined && window < at) at = window;
    }
    return Number.isFinite(at) ? at : null;
  }

  /**
   * The batch payload of the campaigns whose statistics changed since the last batch, or null when
   * none did or the batch interval has not passed since the last one.
   */
  takeBatch(now: number, random: RandomSource): CampaignBatchPayload | null {
    // Checked before anything changes: a time that cannot be written would fail mid-batch.
    formatTime('takeBatch(now)', now);
    this.settle(now);
    if (this.#dirty.size === 0) return null;
    if (this.#lastBatchAt !== null && now < this.#lastBatchAt + this.#interval) return null;
    const campaigns: CampaignStatisticsPayload[] = [];
    for (const id of [...this.#dirty].sort((a, b) => a - b)) {
      const c = this.#campaigns.get(id);
      this.#log?.touch(id);
      if (!c) continue;
      const payload = campaignStatisticsPayload(c, c.counts, now);
      const key = JSON.stringify({ ...payload, datetime: undefined });
      if (key === c.lastSent) continue;
      c.lastSent = key;
      c.lastChangeAt = now;
      campaigns.push(payload);
    }
    this.#dirty.clear();
    if (campaigns.length === 0) return null;
    this.#lastBatchAt = now;
    return { event_id: uuidV4(random), campaigns };
  }

  /**
   * Settles as sent the contacts whose failure window ended by `now`, and drops the contact states
   * of campaigns finished and quiet for `retainContactsMs` ({@link takeBatch} does it too; a host
   * that takes no batches, for want of a target, calls this).
   */
  settle(now: number): void {
    for (const c of this.#campaigns.values()) {
      this.#settleDue(c, now);
      if (c.changes !== c.seen) {
        c.seen = c.changes;
        if (now > c.lastChangeAt) {
          c.lastChangeAt = now;
          this.#log?.touch(c.campaignId);
        }
      }
      // A settled campaign keeps its counts: one with changes not batched yet still goes out in the next batch.
      if (!awaitsSettling(c) || c.lastChangeAt + this.#retain > now) continue;
      settleEntry(c);
      this.#log?.settled(c.campaignId);
      this.#onSettle?.(c.campaignId);
    }
  }

  /**
   * What changed since the last call (every campaign and contact with `full`), for a host writing
   * the statistics row by row.
   * @throws {ArgumentError} when the aggregator was built without `trackChanges`
   */
  takeChanges(options: { readonly full?: boolean } = {}): CampaignStatisticsChanges {
    if (!this.#log) throw new ArgumentError('takeChanges()', 'an aggregator built with { trackChanges: true }', 'trackChanges off');
    const { changed, settled } = this.#log.take();
    const campaigns: CampaignRow[] = [];
    const contacts: ContactRow[] = [];
    const add = (c: CampaignEntry, ids: Iterable<string>): void => {
      campaigns.push(campaignRow(c, this.#dirty.has(c.campaignId)));
      for (const id of ids) {
        const row = contactRow(c, id);
        if (row) contacts.push(row);
      }
    };
    if (options.full === true) {
      for (const c of this.#campaigns.values()) add(c, c.contacts.keys());
    } else {
      for (const [campaignId, ids] of changed) {
        const c = this.#campaigns.get(campaignId);
        if (c) add(c, ids);
      }
    }
    return { lastBatchAt: this.#lastBatchAt, campaigns, contacts, settled };
  }

  /** Serialisable state (JSON-safe), for a restart. */
  snapshot(): CampaignStatisticsSnapshot {
    return {
      version: 2,
      lastBatchAt: this.#lastBatchAt,
      campaigns: [...this.#campaigns.values()].map((c) => ({ ...campaignRow(c, this.#dirty.has(c.campaignId)), contacts: snapshotContacts(c) })),
    };
  }

  /** Rebuilds an aggregator from {@link snapshot}; counts are recounted, not trusted. */
  static restore(snapshot: CampaignStatisticsSnapshot, options: CampaignStatisticsOptions = {}): CampaignStatistics {
    const s = new CampaignStatistics(options);
    s.#lastBatchAt = snapshot.lastBatchAt;
    for (const c of snapshot.campaigns) {
      s.#campaigns.set(c.campaignId, entryFromRow(c, c.contacts));
      if (c.dirty) s.#dirty.add(c.campaignId);
    }
    return s;
  }

  /** Rebuilds an aggregator from rows written from {@link takeChanges} (the last row of each wins). */
  static fromRows(
    rows: { readonly lastBatchAt: number | null; readonly campaigns: Iterable<CampaignRow>; readonly contacts: Iterable<ContactRow> },
    options: CampaignStatisticsOptions = {},
  ): CampaignStatistics {
    return CampaignStatistics.restore(snapshotFromRows(rows), options);
  }
}
