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
import {
  ADMISSIONS,
  EMPTY_CONTACT,
  addCounts,
  addInto,
  admitContact,
  campaignStatisticsPayload,
  classifyContact,
  contactStatus,
  emptyCounts,
  recount,
  type Admission,
  type CampaignCounts,
  type ContactState,
} from './campaign-counts.js';
import { formatTime } from './datetime.js';
import { IdRanges } from './id-ranges.js';
import { requireBoolean, requireInteger, requireOneOf, requireString } from './ids.js';
import type { RandomSource } from './random.js';
import type { CampaignBatchPayload, CampaignStatisticsPayload } from './schemas/campaign.js';
import { HSM_STATUSES, type HsmStatus } from './schemas/hsm.js';
import { uuidV4 } from './uuid.js';

/** Options of {@link CampaignStatistics}. */
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
   * Remember what changed, for {@link CampaignStatistics.takeChanges} (a host that writes the
   * statistics to a database step by step).
   * @default false
   */
  readonly trackChanges?: boolean;
  /**
   * Called when a campaign settles (its contact states dropped), e.g. to drop what the host keeps
   * per campaign for as long. @default none
   */
  readonly onSettle?: (campaignId: number) => void;
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
}

interface CampaignEntry {
  readonly campaignId: number;
  name: string;
  readonly createdAt: number;
  /** Contacts with a state of their own (reported about beyond a range admission). */
  readonly contacts: Map<string, ContactState>;
  /** Ids admitted as accepted by {@link CampaignStatistics.admitAccepted}. */
  readonly accepted: IdRanges;
  /** Contacts of `accepted` without an entry in `contacts` (each: accepted, nothing since). */
  unseen: number;
  /** Integer ids with an entry in `contacts` that `accepted` does not cover (a range admitted later must not count them twice). */
  readonly loose: IdRanges;
  counts: CampaignCounts;
  /** The campaign object sent in the last batch, without `datetime` (to tell "changed"). */
  lastSent: string | undefined;
  /** When a change was last seen: by a batch, or by {@link CampaignStatistics.settle} (its creation before that). */
  lastChangeAt: number;
  /** Changes so far, and how many {@link CampaignStatistics.settle} had seen (to tell a quiet campaign). */
  changes: number;
  seen: number;
  /** Per-contact states dropped; `counts` is final for the contacts it had. */
  settled: boolean;
  /** When settled: the counts of the dropped contacts (those it keeps count on top). */
  base: CampaignCounts | undefined;
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

/** One contact's state as a row: campaign, contact id, admissions, attempt, progress. */
export type ContactRow = readonly [campaignId: number, contactId: string, admissions: number, attempt: number, progress: number];

/** Serialisable state of {@link CampaignStatistics}. Version 1 (no `accepted` ranges) is still read. */
export interface CampaignStatisticsSnapshot {
  readonly version: 1 | 2;
  readonly lastBatchAt: number | null;
  readonly campaigns: readonly (CampaignRow & { readonly contacts: readonly (readonly [string, number, number, number])[] })[];
}

/** What changed since the last {@link CampaignStatistics.takeChanges}. */
export interface CampaignStatisticsChanges {
  readonly lastBatchAt: number | null;
  /** Campaigns whose row changed (new, renamed, admitted to, batched, settled, or with changed contacts). */
  readonly campaigns: readonly CampaignRow[];
  /** Contacts whose state changed. */
  readonly contacts: readonly ContactRow[];
  /** Campaigns settled since: their contact rows are gone. */
  readonly settled: readonly number[];
}

const ACCEPTED: ContactState = admitContact(EMPTY_CONTACT, 'accepted');

/** The integer a contact id spells in canonical decimal, or -1 (only such ids can be in a range). */
function numericId(contactId: string): number {
  if (contactId.length === 0 || contactId.length > 16) return -1;
  const n = Number(contactId);
  return Number.isSafeInteger(n) && n >= 0 && String(n) === contactId ? n : -1;
}

/**
 * The statistics aggregator. Feed it with {@link admit}, {@link admitAccepted} and
 * {@link recordStatus}; call {@link takeBatch} at {@link nextWakeAt} for the 6.4 payload.
 */
export class CampaignStatistics {
  readonly #campaigns = new Map<number, CampaignEntry>();
  readonly #dirty = new Set<number>();
  readonly #doesNotExist: ReadonlySet<number>;
  readonly #interval: number;
  readonly #retain: number;
  #lastBatchAt: number | null = null;
  #lateIgnored = 0;
  /** With trackChanges: campaigns whose row changed, and their contacts that changed. */
  readonly #changed: Map<number, Set<string>> | undefined;
  readonly #settledSince = new Set<number>();
  readonly #onSettle: ((campaignId: number) => void) | undefined;

  constructor(options: CampaignStatisticsOptions = {}) {
    this.#doesNotExist = new Set(options.doesNotExistCodes ?? [131026]);
    this.#interval = options.batchIntervalMs ?? 60_000;
    this.#retain = options.retainContactsMs ?? 604_800_000;
    requireInteger('CampaignStatistics(options.batchIntervalMs)', this.#interval, 0);
    requireInteger('CampaignStatistics(options.retainContactsMs)', this.#retain, 0);
    this.#changed = options.trackChanges === true ? new Map() : undefined;
    this.#onSettle = options.onSettle;
  }

  /** Statuses that arrived for contacts of settled campaigns after their states were dropped. */
  get lateIgnored(): number {
    return this.#lateIgnored;
  }

  #touch(campaignId: number, contactId?: string): void {
    if (!this.#changed) return;
    let set = this.#changed.get(campaignId);
    if (!set) this.#changed.set(campaignId, (set = new Set()));
    if (contactId !== undefined) set.add(contactId);
  }

  #markDirty(campaignId: number): void {
    const c = this.#campaigns.get(campaignId);
    if (c) c.changes++;
    if (this.#dirty.has(campaignId)) return;
    this.#dirty.add(campaignId);
    this.#touch(campaignId);
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
    this.#campaigns.set(campaign.campaignId, {
      campaignId: campaign.campaignId,
      name: campaign.name,
      createdAt: campaign.createdAt,
      contacts: new Map(),
      accepted: new IdRanges(),
      unseen: 0,
      loose: new IdRanges(),
      counts: emptyCounts(),
      lastSent: undefined,
      lastChangeAt: campaign.createdAt,
      changes: 0,
      seen: 0,
      settled: false,
      base: undefined,
    });
    this.#touch(campaign.campaignId);
  }

  #campaign(campaignId: number, api: string): CampaignEntry {
    const c = this.#campaigns.get(campaignId);
    if (!c) throw new ArgumentError(`${api}(campaignId)`, 'a campaign declared with registerCampaign', String(campaignId));
    return c;
  }

  #update(c: CampaignEntry, contactId: string, change: (s: ContactState) => ContactState): void {
    let before = c.contacts.get(contactId);
    let fromRange = false;
    let id = -1;
    if (before === undefined) {
      id = numericId(contactId);
      if (id >= 0 && c.accepted.has(id)) {
        before = ACCEPTED;
        fromRange = true;
      }
    }
    if (before === undefined && c.settled) {
      // A settled campaign's contact states are gone, so a late report cannot be told from a new
      // contact: taking either would break duplicate-independence. Its counts are final.
      this.#lateIgnored++;
      return;
    }
    const after = change(before ?? EMPTY_CONTACT);
    if (before && after.admissions === before.admissions && after.attempt === before.attempt && after.progress === before.progress) {
      return;
    }
    if (before) addInto(c.counts, classifyContact(before), -1);
    addInto(c.counts, classifyContact(after), 1);
    c.contacts.set(contactId, after);
    if (fromRange) c.unseen--;
    else if (before === undefined && id >= 0) c.loose.add(id, id + 1);
    this.#markDirty(c.campaignId);
    this.#touch(c.campaignId, contactId);
  }

  /** Reports how a contact was admitted (invalid phone, duplicated, blocked, already sent, …, or accepted). */
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
    if (c.settled) {
      this.#lateIgnored += count - c.accepted.countWithin(first, first + count);
      return;
    }
    const end = first + count;
    const added = c.accepted.add(first, end);
    if (added === 'covered') return;
    if (added === 'overlap') {
      throw new ArgumentError('admitAccepted(first)', `ids not admitted by an earlier range (${count} from ${first} overlap one)`, String(first));
    }
    // Contacts reported before their range: their own entries take the admission.
    const known = c.loose.takeWithin(first, end);
    for (const id of known) {
      const key = String(id);
      const before = c.contacts.get(key)!;
      const after = admitContact(before, 'accepted');
      if (after.admissions === before.admissions) continue;
      addInto(c.counts, classifyContact(before), -1);
      addInto(c.counts, classifyContact(after), 1);
      c.contacts.set(key, after);
      this.#touch(campaignId, key);
    }
    const fresh = count - known.length;
    c.unseen += fresh;
    addAccepted(c.counts, fresh);
    this.#markDirty(campaignId);
    this.#touch(campaignId);
  }

  /** Reports a status change of a contact's send. A contact not admitted yet counts as accepted. */
  recordStatus(change: ContactStatusChange): void {
    requireOneOf('recordStatus(status)', change.status, HSM_STATUSES);
    if (change.retryIndex !== null) requireInteger('recordStatus(retryIndex)', change.retryIndex, 0);
    if (change.failureCode !== undefined) requireInteger('recordStatus(failureCode)', change.failureCode);
    if (change.blocklistResponse !== undefined) requireBoolean('recordStatus(blocklistResponse)', change.blocklistResponse);
    const attempt = change.retryIndex ?? -1;
    const doesNotExist = change.status === 'FAILED' && change.failureCode !== undefined && this.#doesNotExist.has(change.failureCode);
    this.#update(this.#campaign(change.campaignId, 'recordStatus'), change.contactId, (s) =>
      contactStatus(s, attempt, {
        status: change.status,
        doesNotExist,
        blocklistResponse: change.blocklistResponse ?? false,
      }),
    );
  }

  /** Whether a campaign is declared. */
  has(campaignId: number): boolean {
    return this.#campaigns.has(campaignId);
  }

  /** The current counts of a campaign (a copy). */
  counts(campaignId: number): CampaignCounts {
    return { ...this.#campaign(campaignId, 'counts').counts };
  }

  /** Recount of a campaign from its contacts' states (equal to {@link counts}; for checks). */
  recount(campaignId: number): CampaignCounts {
    const c = this.#campaign(campaignId, 'recount');
    const fresh = recount(c.contacts.values());
    addAccepted(fresh, c.unseen);
    return c.base ? addCounts(c.base, fresh) : fresh;
  }

  /**
   * When to call {@link takeBatch} next: for a batch of changes, or to settle a finished campaign;
   * null when neither is pending; a time at or before now means "now".
   */
  nextWakeAt(): number | null {
    let at = this.#dirty.size === 0 ? Infinity : this.#lastBatchAt === null ? 0 : this.#lastBatchAt + this.#interval;
    // A finished campaign settles on a later call: wake for it too.
    for (const c of this.#campaigns.values()) {
      if (!c.settled && (c.contacts.size > 0 || c.unseen > 0) && c.counts.remaining === 0 && c.lastChangeAt + this.#retain < at) at = c.lastChangeAt + this.#retain;
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
      this.#touch(id);
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
   * Drops the contact states of campaigns finished and quiet for `retainContactsMs` ({@link takeBatch}
   * does it too; a host that takes no batches, for want of a target, calls this).
   */
  settle(now: number): void {
    for (const c of this.#campaigns.values()) {
      if (c.changes !== c.seen) {
        c.seen = c.changes;
        if (now > c.lastChangeAt) {
          c.lastChangeAt = now;
          this.#touch(c.campaignId);
        }
      }
      // A settled campaign keeps its counts: one with changes not batched yet still goes out in the next batch.
      if (c.settled || (c.contacts.size === 0 && c.unseen === 0) || c.counts.remaining > 0 || c.lastChangeAt + this.#retain > now) continue;
      // Nothing remains, so every range contact has an entry of its own (unseen is 0).
      c.base = c.base ? addCounts(c.base, recount(c.contacts.values())) : recount(c.contacts.values());
      c.contacts.clear();
      c.accepted.clear();
      c.loose.clear();
      c.unseen = 0;
      c.settled = true;
      if (this.#changed) {
        this.#changed.delete(c.campaignId);
        this.#touch(c.campaignId);
        this.#settledSince.add(c.campaignId);
      }
      this.#onSettle?.(c.campaignId);
    }
  }

  #row(c: CampaignEntry): CampaignRow {
    return {
      campaignId: c.campaignId,
      name: c.name,
      createdAt: c.createdAt,
      lastSent: c.lastSent ?? null,
      dirty: this.#dirty.has(c.campaignId),
      lastChangeAt: c.lastChangeAt,
      ...(c.base ? { settledCounts: { ...c.base } } : {}),
      ...(c.accepted.size > 0 ? { accepted: c.accepted.toArray() } : {}),
    };
  }

  /**
   * What changed since the last call (every campaign and contact with `full`), for a host writing
   * the statistics row by row.
   * @throws {ArgumentError} when the aggregator was built without `trackChanges`
   */
  takeChanges(options: { readonly full?: boolean } = {}): CampaignStatisticsChanges {
    if (!this.#changed) throw new ArgumentError('takeChanges()', 'an aggregator built with { trackChanges: true }', 'trackChanges off');
    const campaigns: CampaignRow[] = [];
    const contacts: ContactRow[] = [];
    const row = (c: CampaignEntry, id: string): void => {
      const s = c.contacts.get(id);
      if (s) contacts.push([c.campaignId, id, s.admissions, s.attempt, s.progress]);
    };
    if (options.full === true) {
      for (const c of this.#campaigns.values()) {
        campaigns.push(this.#row(c));
        for (const id of c.contacts.keys()) row(c, id);
      }
    } else {
      for (const [campaignId, ids] of this.#changed) {
        const c = this.#campaigns.get(campaignId);
        if (!c) continue;
        campaigns.push(this.#row(c));
        for (const id of ids) row(c, id);
      }
    }
    const settled = [...this.#settledSince];
    this.#changed.clear();
    this.#settledSince.clear();
    return { lastBatchAt: this.#lastBatchAt, campaigns, contacts, settled };
  }

  /** Serialisable state (JSON-safe), for a restart. */
  snapshot(): CampaignStatisticsSnapshot {
    return {
      version: 2,
      lastBatchAt: this.#lastBatchAt,
      campaigns: [...this.#campaigns.values()].map((c) => ({
        ...this.#row(c),
        contacts: [...c.contacts].map(([id, s]) => [id, s.admissions, s.attempt, s.progress] as const),
      })),
    };
  }

  /** Rebuilds an aggregator from {@link snapshot}; counts are recounted, not trusted. */
  static restore(snapshot: CampaignStatisticsSnapshot, options: CampaignStatisticsOptions = {}): CampaignStatistics {
    const s = new CampaignStatistics(options);
    s.#lastBatchAt = snapshot.lastBatchAt;
    for (const c of snapshot.campaigns) {
      const contacts = new Map<string, ContactState>(
        c.contacts.map(([id, admissions, attempt, progress]) => [id, { admissions, attempt, progress }]),
      );
      const accepted = IdRanges.from(c.accepted ?? []);
      const loose = new IdRanges();
      let covered = 0;
      for (const id of contacts.keys()) {
        const n = numericId(id);
        if (n < 0) continue;
        if (accepted.has(n)) covered++;
        else loose.add(n, n + 1);
      }
      const unseen = accepted.size - covered;
      const counts = recount(contacts.values());
      addAccepted(counts, unseen);
      s.#campaigns.set(c.campaignId, {
        campaignId: c.campaignId,
        name: c.name,
        createdAt: c.createdAt,
        contacts,
        accepted,
        unseen,
        loose,
        // A settled campaign's counts cover contacts no longer kept: they come from the snapshot.
        counts: c.settledCounts ? addCounts(c.settledCounts, counts) : counts,
        lastSent: c.lastSent ?? undefined,
        lastChangeAt: c.lastChangeAt ?? c.createdAt,
        changes: 0,
        seen: 0,
        settled: c.settledCounts !== undefined,
        base: c.settledCounts ? { ...c.settledCounts } : undefined,
      });
      if (c.dirty) s.#dirty.add(c.campaignId);
    }
    return s;
  }

  /** Rebuilds an aggregator from rows written from {@link takeChanges} (the last row of each wins). */
  static fromRows(
    rows: { readonly lastBatchAt: number | null; readonly campaigns: Iterable<CampaignRow>; readonly contacts: Iterable<ContactRow> },
    options: CampaignStatisticsOptions = {},
  ): CampaignStatistics {
    const byCampaign = new Map<number, CampaignRow & { contacts: [string, number, number, number][] }>();
    for (const c of rows.campaigns) byCampaign.set(c.campaignId, { ...c, contacts: [] });
    for (const [campaignId, id, admissions, attempt, progress] of rows.contacts) {
      byCampaign.get(campaignId)?.contacts.push([id, admissions, attempt, progress]);
    }
    return CampaignStatistics.restore({ version: 2, lastBatchAt: rows.lastBatchAt, campaigns: [...byCampaign.values()] }, options);
  }
}

/** Adds `n` contacts admitted as accepted and reported nothing since: each is total and remaining. */
function addAccepted(counts: CampaignCounts, n: number): void {
  counts.total += n;
  counts.remaining += n;
}
