/**
 * Campaign statistics (spec 6.4): an aggregator fed by admissions and status changes, producing
 * every `count_*` with the definitions of docs/events.md, and the periodic batch payload.
 *
 * Each contact of a campaign has a state that is a join of what was reported about it (admission
 * kinds as a bit set; the latest send attempt and its merged {@link MessageProgress}), so any order
 * or duplication of the same reports gives the same state. The counts are a sum over contacts of a
 * pure classification of that state; they are kept incrementally (remove the contact's old
 * contribution, add the new one), which equals a recount from scratch, as the tests check.
 *
 * Every contact is in exactly one bucket, so the counts add up:
 *   count_total     = count_processed + count_remaining
 *   count_processed = count_invalid_phone + count_duplicated + count_blocked + count_already_sent
 *                   + count_does_not_exist + count_failed + count_expired + count_sent
 *   count_blocklist_response <= count_replied <= count_read <= count_delivered
 *                            <= count_sent + count_expired
 */
import { ArgumentError } from '../core/errors.js';
import { problem, type Problem } from '../core/problems.js';
import { formatTime } from './datetime.js';
import { requireBoolean, requireInteger, requireOneOf, requireString } from './ids.js';
import type { RandomSource } from './random.js';
import type { CampaignBatchPayload, CampaignStatisticsPayload, CampaignStatus } from './schemas/campaign.js';
import { HSM_STATUSES, type HsmStatus } from './schemas/hsm.js';
import {
  NO_PROGRESS,
  currentStatus,
  failedAsDoesNotExist,
  hasObserved,
  observe,
  reached,
  repliedAsBlocklist,
  type MessageProgress,
} from './status-merge.js';
import { uuidV4 } from './uuid.js';

/** How a contact was admitted to a campaign (before any send). */
export type Admission = 'accepted' | 'invalid-phone' | 'duplicated' | 'blocked' | 'already-sent' | 'does-not-exist';

/** Admission kinds, in precedence order: a contact reported with two rejections counts under the first. */
export const ADMISSIONS: readonly Admission[] = [
  'invalid-phone',
  'duplicated',
  'blocked',
  'already-sent',
  'does-not-exist',
  'accepted',
];

/** The `count_*` values of one campaign, in camelCase. */
export interface CampaignCounts {
  total: number;
  alreadySent: number;
  blocked: number;
  blocklistResponse: number;
  doesNotExist: number;
  duplicated: number;
  invalidPhone: number;
  processed: number;
  sent: number;
  failed: number;
  delivered: number;
  read: number;
  replied: number;
  expired: number;
  remaining: number;
}

const COUNT_NAMES: readonly (keyof CampaignCounts)[] = [
  'total',
  'alreadySent',
  'blocked',
  'blocklistResponse',
  'doesNotExist',
  'duplicated',
  'invalidPhone',
  'processed',
  'sent',
  'failed',
  'delivered',
  'read',
  'replied',
  'expired',
  'remaining',
];

/** All counts at zero. */
export function emptyCounts(): CampaignCounts {
  return {
    total: 0,
    alreadySent: 0,
    blocked: 0,
    blocklistResponse: 0,
    doesNotExist: 0,
    duplicated: 0,
    invalidPhone: 0,
    processed: 0,
    sent: 0,
    failed: 0,
    delivered: 0,
    read: 0,
    replied: 0,
    expired: 0,
    remaining: 0,
  };
}

/**
 * What is known about one contact: admission kinds seen (bit set over {@link ADMISSIONS}) and the
 * merged progress of its latest send attempt (`attempt` -1 is the first try, k the retry of index k).
 */
export interface ContactState {
  readonly admissions: number;
  readonly attempt: number;
  readonly progress: MessageProgress;
}

const EMPTY_CONTACT: ContactState = { admissions: 0, attempt: -1, progress: NO_PROGRESS };

function admissionBit(a: Admission): number {
  return 1 << ADMISSIONS.indexOf(a);
}

/** Adds an admission report to a contact state. */
export function admitContact(state: ContactState, admission: Admission): ContactState {
  return { ...state, admissions: state.admissions | admissionBit(admission) };
}

/**
 * Adds a status report to a contact state. A later attempt replaces an earlier one (the contact's
 * outcome is its latest try); reports of earlier attempts are ignored; the same attempt merges.
 */
export function contactStatus(state: ContactState, attempt: number, o: Parameters<typeof observe>[1]): ContactState {
  if (attempt < state.attempt) return state;
  const base = attempt > state.attempt ? NO_PROGRESS : state.progress;
  return { ...state, attempt, progress: observe(base, o) };
}

/** Joins two states of the same contact (commutative, associative, idempotent). */
export function mergeContact(a: ContactState, b: ContactState): ContactState {
  const admissions = a.admissions | b.admissions;
  if (a.attempt !== b.attempt) return { ...(a.attempt > b.attempt ? a : b), admissions };
  return { admissions, attempt: a.attempt, progress: a.progress | b.progress };
}

/** The counts one contact contributes (each contact: total 1, one bucket, and funnel flags). */
export function classifyContact(state: ContactState): CampaignCounts {
  const c = emptyCounts();
  c.total = 1;
  const rejection = ADMISSIONS.find((a) => a !== 'accepted' && (state.admissions & admissionBit(a)) !== 0);
  if (rejection !== undefined) {
    c.processed = 1;
    if (rejection === 'invalid-phone') c.invalidPhone = 1;
    else if (rejection === 'duplicated') c.duplicated = 1;
    else if (rejection === 'blocked') c.blocked = 1;
    else if (rejection === 'already-sent') c.alreadySent = 1;
    else c.doesNotExist = 1;
    return c;
  }
  const p = state.progress;
  const status = currentStatus(p);
  if (status === null || status === 'ENQUEUED') {
    c.remaining = 1;
    return c;
  }
  c.processed = 1;
  if (status === 'FAILED') {
    if (failedAsDoesNotExist(p)) c.doesNotExist = 1;
    else c.failed = 1;
    return c;
  }
  if (status === 'EXPIRED') c.expired = 1;
  else c.sent = 1;
  // Funnel with fill-in: a READ without DEVICE was delivered; a REPLIED was read.
  if (reached(p, 'DEVICE')) c.delivered = 1;
  if (reached(p, 'READ')) c.read = 1;
  if (hasObserved(p, 'REPLIED')) {
    c.replied = 1;
    if (repliedAsBlocklist(p)) c.blocklistResponse = 1;
  }
  return c;
}

function addInto(target: CampaignCounts, delta: CampaignCounts, sign: 1 | -1): void {
  for (const k of COUNT_NAMES) target[k] += sign * delta[k];
}

/** The sum of two sets of counts (a new object). */
function addCounts(a: CampaignCounts, b: CampaignCounts): CampaignCounts {
  const out = { ...a };
  addInto(out, b, 1);
  return out;
}

/** Sums the classification of every contact: the "recount from scratch". */
export function recount(contacts: Iterable<ContactState>): CampaignCounts {
  const total = emptyCounts();
  for (const s of contacts) addInto(total, classifyContact(s), 1);
  return total;
}

/** Checks the identities of the module comment on a set of counts (e.g. a received payload). */
export function countProblems(c: CampaignCounts, path = '$'): Problem[] {
  const out: Problem[] = [];
  for (const k of COUNT_NAMES) {
    if (!Number.isSafeInteger(c[k]) || c[k] < 0) out.push(problem(`${path}.${k}`, 'a non-negative integer', c[k]));
  }
  const rejected = c.invalidPhone + c.duplicated + c.blocked + c.alreadySent;
  const processed = rejected + c.doesNotExist + c.failed + c.expired + c.sent;
  if (c.total !== c.processed + c.remaining) out.push(problem(`${path}.total`, `processed + remaining = ${c.processed + c.remaining}`, c.total));
  if (c.processed !== processed) out.push(problem(`${path}.processed`, `the sum of the processed buckets = ${processed}`, c.processed));
  const chain: [keyof CampaignCounts, number][] = [
    ['blocklistResponse', c.replied],
    ['replied', c.read],
    ['read', c.delivered],
    ['delivered', c.sent + c.expired],
  ];
  for (const [k, max] of chain) if (c[k] > max) out.push(problem(`${path}.${k}`, `at most ${max}`, c[k]));
  return out;
}

/** The campaign status: RUNNING while contacts remain (or none were admitted yet); FINISHED after. */
export function campaignStatus(c: CampaignCounts): CampaignStatus {
  return c.total > 0 && c.remaining === 0 ? 'FINISHED' : 'RUNNING';
}

/**
 * The spec's campaign object from counts.
 * @throws {ArgumentError} for a fractional or unsafe campaign id, a count that is not an integer of
 * 0 or more, or a time that cannot be written: the object always passes `CampaignStatisticsSchema`
 */
export function campaignStatisticsPayload(
  campaign: { readonly campaignId: number; readonly name: string; readonly createdAt: number },
  c: CampaignCounts,
  now: number,
): CampaignStatisticsPayload {
  requireInteger('campaignStatisticsPayload(campaign.campaignId)', campaign.campaignId);
  requireString('campaignStatisticsPayload(campaign.name)', campaign.name);
  for (const name of COUNT_NAMES) requireInteger(`campaignStatisticsPayload(counts.${name})`, c[name], 0);
  const createdAt = formatTime('campaignStatisticsPayload(campaign.createdAt)', campaign.createdAt);
  const datetime = formatTime('campaignStatisticsPayload(now)', now);
  return {
    campaign_id: campaign.campaignId,
    campaign_name: campaign.name,
    status: campaignStatus(c),
    count_total: c.total,
    count_already_sent: c.alreadySent,
    count_blocked: c.blocked,
    count_blocklist_response: c.blocklistResponse,
    count_does_not_exist: c.doesNotExist,
    count_duplicated: c.duplicated,
    count_invalid_phone: c.invalidPhone,
    count_processed: c.processed,
    count_sent: c.sent,
    count_failed: c.failed,
    count_delivered: c.delivered,
    count_read: c.read,
    count_replied: c.replied,
    count_expired: c.expired,
    count_remaining: c.remaining,
    created_at: createdAt,
    datetime,
  };
}

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
  readonly contacts: Map<string, ContactState>;
  counts: CampaignCounts;
  /** The campaign object sent in the last batch, without `datetime` (to tell "changed"). */
  lastSent: string | undefined;
  /** When its statistics last went out in a batch (its creation before that). */
  lastChangeAt: number;
  /** Per-contact states dropped; `counts` is final for the contacts it had. */
  settled: boolean;
  /** When settled: the counts of the dropped contacts (those it keeps count on top). */
  base: CampaignCounts | undefined;
}

/** Serialisable state of {@link CampaignStatistics}. */
export interface CampaignStatisticsSnapshot {
  readonly version: 1;
  readonly lastBatchAt: number | null;
  readonly campaigns: readonly {
    readonly campaignId: number;
    readonly name: string;
    readonly createdAt: number;
    readonly lastSent: string | null;
    readonly dirty: boolean;
    readonly contacts: readonly (readonly [string, number, number, number])[];
    /** Present when the campaign is settled: its final counts (its contacts are gone). */
    readonly settledCounts?: CampaignCounts;
    readonly lastChangeAt?: number;
  }[];
}

/**
 * The statistics aggregator. Feed it with {@link admit} and {@link recordStatus}; call
 * {@link takeBatch} at {@link nextWakeAt} for the 6.4 payload.
 */
export class CampaignStatistics {
  readonly #campaigns = new Map<number, CampaignEntry>();
  readonly #dirty = new Set<number>();
  readonly #doesNotExist: ReadonlySet<number>;
  readonly #interval: number;
  readonly #retain: number;
  #lastBatchAt: number | null = null;
  #lateIgnored = 0;

  constructor(options: CampaignStatisticsOptions = {}) {
    this.#doesNotExist = new Set(options.doesNotExistCodes ?? [131026]);
    this.#interval = options.batchIntervalMs ?? 60_000;
    this.#retain = options.retainContactsMs ?? 604_800_000;
    requireInteger('CampaignStatistics(options.batchIntervalMs)', this.#interval, 0);
    requireInteger('CampaignStatistics(options.retainContactsMs)', this.#retain, 0);
  }

  /** Statuses that arrived for contacts of settled campaigns after their states were dropped. */
  get lateIgnored(): number {
    return this.#lateIgnored;
  }

  /** Declares a campaign (idempotent; a new name replaces the old one). `createdAt` in epoch ms. */
  registerCampaign(campaign: { readonly campaignId: number; readonly name: string; readonly createdAt: number }): void {
    requireInteger('registerCampaign(campaignId)', campaign.campaignId);
    requireString('registerCampaign(name)', campaign.name);
    // Checked here, not at the next batch: a campaign object that cannot be written is never kept.
    formatTime('registerCampaign(createdAt)', campaign.createdAt);
    const known = this.#campaigns.get(campaign.campaignId);
    if (known) {
      if (known.name !== campaign.name) this.#dirty.add(campaign.campaignId);
      known.name = campaign.name;
      return;
    }
    this.#campaigns.set(campaign.campaignId, {
      campaignId: campaign.campaignId,
      name: campaign.name,
      createdAt: campaign.createdAt,
      contacts: new Map(),
      counts: emptyCounts(),
      lastSent: undefined,
      lastChangeAt: campaign.createdAt,
      settled: false,
      base: undefined,
    });
  }

  #campaign(campaignId: number, api: string): CampaignEntry {
    const c = this.#campaigns.get(campaignId);
    if (!c) throw new ArgumentError(`${api}(campaignId)`, 'a campaign declared with registerCampaign', String(campaignId));
    return c;
  }

  #update(c: CampaignEntry, contactId: string, change: (s: ContactState) => ContactState): void {
    const before = c.contacts.get(contactId);
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
    this.#dirty.add(c.campaignId);
  }

  /** Reports how a contact was admitted (invalid phone, duplicated, blocked, already sent, …, or accepted). */
  admit(campaignId: number, contactId: string, admission: Admission): void {
    requireOneOf('admit(admission)', admission, ADMISSIONS);
    this.#update(this.#campaign(campaignId, 'admit'), contactId, (s) => admitContact(s, admission));
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

  /** The current counts of a campaign (a copy). */
  counts(campaignId: number): CampaignCounts {
    return { ...this.#campaign(campaignId, 'counts').counts };
  }

  /** Recount of a campaign from its contacts' states (equal to {@link counts}; for checks). */
  recount(campaignId: number): CampaignCounts {
    const c = this.#campaign(campaignId, 'recount');
    const fresh = recount(c.contacts.values());
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
      if (!c.settled && c.contacts.size > 0 && c.counts.remaining === 0 && c.lastChangeAt + this.#retain < at) at = c.lastChangeAt + this.#retain;
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
    this.#settle(now);
    if (this.#dirty.size === 0) return null;
    if (this.#lastBatchAt !== null && now < this.#lastBatchAt + this.#interval) return null;
    const campaigns: CampaignStatisticsPayload[] = [];
    for (const id of [...this.#dirty].sort((a, b) => a - b)) {
      const c = this.#campaigns.get(id);
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

  /** Drops the contact states of campaigns finished and quiet for `retainContactsMs`. */
  #settle(now: number): void {
    for (const c of this.#campaigns.values()) {
      if (c.settled || c.contacts.size === 0 || c.counts.remaining > 0 || c.lastChangeAt + this.#retain > now || this.#dirty.has(c.campaignId)) continue;
      c.base = c.base ? addCounts(c.base, recount(c.contacts.values())) : recount(c.contacts.values());
      c.contacts.clear();
      c.settled = true;
    }
  }

  /** Serialisable state (JSON-safe), for a restart. */
  snapshot(): CampaignStatisticsSnapshot {
    return {
      version: 1,
      lastBatchAt: this.#lastBatchAt,
      campaigns: [...this.#campaigns.values()].map((c) => ({
        campaignId: c.campaignId,
        name: c.name,
        createdAt: c.createdAt,
        lastSent: c.lastSent ?? null,
        dirty: this.#dirty.has(c.campaignId),
        contacts: [...c.contacts].map(([id, s]) => [id, s.admissions, s.attempt, s.progress] as const),
        lastChangeAt: c.lastChangeAt,
        ...(c.base ? { settledCounts: { ...c.base } } : {}),
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
      s.#campaigns.set(c.campaignId, {
        campaignId: c.campaignId,
        name: c.name,
        createdAt: c.createdAt,
        contacts,
        // A settled campaign's counts cover contacts no longer kept: they come from the snapshot.
        counts: c.settledCounts ? addCounts(c.settledCounts, recount(contacts.values())) : recount(contacts.values()),
        lastSent: c.lastSent ?? undefined,
        lastChangeAt: c.lastChangeAt ?? c.createdAt,
        settled: c.settledCounts !== undefined,
        base: c.settledCounts ? { ...c.settledCounts } : undefined,
      });
      if (c.dirty) s.#dirty.add(c.campaignId);
    }
    return s;
  }
}
