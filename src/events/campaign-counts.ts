/**
 * Campaign counts (spec 6.4): what one contact's state contributes to every `count_*`, with the
 * definitions of docs/events.md, and the campaign object of the batch payload. The aggregator over
 * a campaign's contacts is in campaign-stats.ts.
 *
 * Each contact of a campaign has one stage: a rejection bucket (its admission), `remaining` (it can
 * still be sent, or sent again), or a settled bucket (`sent`, `failed`, `does_not_exist`,
 * `expired`), for good: a settled contact never changes stage again, later statuses move only the
 * funnel (`delivered`, `read`, `replied`, `blocklist_response`) of a contact settled as sent. A
 * contact whose latest attempt reached SENT (or SERVER) and not DEVICE stays remaining for
 * `failureWindowMs` after that SENT was recorded, since a failure reported within it may still send
 * it again; then it settles as sent. A FAILED reported with `retrying` (the server sends the contact
 * again) keeps it remaining.
 *
 * The counts are a sum over contacts of a pure classification of that state; they are kept
 * incrementally (remove the contact's old contribution, add the new one), which equals a recount
 * from scratch, as the tests check. Every contact is in exactly one bucket, so the counts add up:
 *   count_total     = count_processed + count_remaining
 *   count_processed = count_invalid_phone + count_duplicated + count_blocked + count_already_sent
 *                   + count_invalid_data + count_does_not_exist + count_failed + count_expired
 *                   + count_sent
 *   count_blocklist_response <= count_replied <= count_read <= count_delivered <= count_sent
 */
import { problem, type Problem } from '../core/problems.js';
import { formatTime } from './datetime.js';
import { requireInteger, requireString } from './ids.js';
import type { CampaignStatisticsPayload, CampaignStatus } from './schemas/campaign.js';
import type { HsmStatus } from './schemas/hsm.js';
import { NO_PROGRESS, currentStatus, failedAsDoesNotExist, hasObserved, observe, reached, repliedAsBlocklist, type MessageProgress } from './status-merge.js';

/** How a contact was admitted to a campaign (before any send). */
export type Admission = 'accepted' | 'invalid-phone' | 'invalid-data' | 'duplicated' | 'blocked' | 'already-sent' | 'does-not-exist';

/** Admission kinds, in precedence order: a contact reported with two rejections counts under the first. */
export const ADMISSIONS: readonly Admission[] = ['invalid-phone', 'invalid-data', 'duplicated', 'blocked', 'already-sent', 'does-not-exist', 'accepted'];

/**
 * The bit of each admission in a contact state's `admissions` (stored in rows, snapshots and Redis:
 * a bit never moves; a new kind takes a new bit, whatever its precedence).
 */
export const ADMISSION_BITS: Readonly<Record<Admission, number>> = {
  'invalid-phone': 1,
  duplicated: 2,
  blocked: 4,
  'already-sent': 8,
  'does-not-exist': 16,
  accepted: 32,
  'invalid-data': 64,
};

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
  /** Extension `count_invalid_data`: refused for a field other than the phone. */
  invalidData: number;
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
  'invalidData',
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
    invalidData: 0,
  };
}

/**
 * A contact's stage beyond its admission: open (remaining, or a rejection bucket when it has one),
 * or settled, for good, as sent, failed, does-not-exist or expired. Numbers, as rows store them.
 */
export const STAGE = { open: 0, sent: 1, failed: 2, doesNotExist: 3, expired: 4 } as const;
export type Stage = (typeof STAGE)[keyof typeof STAGE];

/**
 * What is known about one contact: admission kinds seen (bit set, {@link ADMISSION_BITS}), the
 * merged progress of its latest send attempt (`attempt` -1 is the first try, k the retry of index
 * k), its stage, and, while it is open and that send reached SENT, when its failure window ends.
 */
export interface ContactState {
  readonly admissions: number;
  readonly attempt: number;
  readonly progress: MessageProgress;
  readonly stage: Stage;
  /** Open contacts only: when the failure window of its send's SENT ends (epoch ms); 0 for none. */
  readonly settleAt: number;
}

/** A contact nothing was reported about. */
export const EMPTY_CONTACT: ContactState = { admissions: 0, attempt: -1, progress: NO_PROGRESS, stage: STAGE.open, settleAt: 0 };

/** The bit of an admission. */
export function admissionBit(a: Admission): number {
  return ADMISSION_BITS[a];
}

const REJECTION_BITS = ADMISSIONS.filter((a) => a !== 'accepted').reduce((m, a) => m | ADMISSION_BITS[a], 0);

/** True when the admissions hold a rejection (the contact is never sent). */
function rejected(admissions: number): boolean {
  return (admissions & REJECTION_BITS) !== 0;
}

/** Adds an admission report to a contact state (a settled contact keeps its stage). */
export function admitContact(state: ContactState, admission: Admission): ContactState {
  const admissions = state.admissions | admissionBit(admission);
  if (admissions === state.admissions) return state;
  // A rejection of a contact in its failure window: it is not sent again, its window is moot.
  return { ...state, admissions, settleAt: rejected(admissions) ? 0 : state.settleAt };
}

/** What one status says, as the aggregator takes it. */
export interface ContactObservation {
  readonly status: HsmStatus;
  /** For FAILED: the code means the number is not on the channel. @default false */
  readonly doesNotExist?: boolean;
  /** For REPLIED: a blocklist response. @default false */
  readonly blocklistResponse?: boolean;
  /** For FAILED: the server sends the contact again (it stays remaining). @default false */
  readonly retrying?: boolean;
  /** When the server recorded the status (epoch ms): a SENT's failure window runs from it. */
  readonly at: number;
}

/** The contact settled as sent (its failure window passed, or its send reached DEVICE). */
function settledSent(state: ContactState, progress: MessageProgress = state.progress): ContactState {
  return { ...state, progress, stage: STAGE.sent, settleAt: 0 };
}

/**
 * Settles a contact whose failure window ended at or before `now` as sent; any other state as is.
 */
export function settleDueContact(state: ContactState, now: number): ContactState {
  return state.stage === STAGE.open && state.settleAt !== 0 && state.settleAt <= now ? settledSent(state) : state;
}

/**
 * Adds a status report to a contact state (the stage rules of the module comment), the failure
 * window of a SENT being `windowMs` (0: a SENT settles the contact at once).
 *
 * A settled contact keeps its stage: statuses of the attempt it settled with merge into its
 * progress (its funnel), others change nothing. For an open contact a later attempt replaces an
 * earlier one (the contact's outcome is its latest try) and reports of earlier attempts are ignored;
 * a FAILED with `retrying` ends that send without settling (the same attempt may be sent again, a
 * failover keeps its retry index), so the contact waits for its next send's statuses.
 */
export function contactStatus(state: ContactState, attempt: number, o: ContactObservation, windowMs: number): ContactState {
  // A window that ended before this status: the contact had settled as sent by then.
  const s = settleDueContact(state, o.at);
  if (s.stage !== STAGE.open) {
    if (s.stage !== STAGE.sent || attempt !== s.attempt) return s;
    const progress = observe(s.progress, o);
    return progress === s.progress ? s : { ...s, progress };
  }
  if (attempt < s.attempt) return s;
  const base = attempt > s.attempt ? { ...s, attempt, progress: NO_PROGRESS, settleAt: 0 } : s;
  const progress = observe(base.progress, o);
  // A rejected contact is never sent: its statuses are kept, it keeps its rejection bucket.
  if (rejected(base.admissions)) return { ...base, progress };
  switch (o.status) {
    case 'DEVICE':
    case 'READ':
    case 'REPLIED':
      return settledSent(base, progress);
    case 'SENT':
    case 'SERVER':
      if (windowMs === 0) return settledSent(base, progress);
      return { ...base, progress, settleAt: base.settleAt !== 0 ? base.settleAt : o.at + windowMs };
    case 'EXPIRED':
      return { ...base, progress, stage: STAGE.expired, settleAt: 0 };
    case 'FAILED':
      if (o.retrying === true) return { ...base, progress: NO_PROGRESS, settleAt: 0 };
      return { ...base, progress, stage: o.doesNotExist === true ? STAGE.doesNotExist : STAGE.failed, settleAt: 0 };
    default:
      return { ...base, progress };
  }
}

/**
 * The stage of a contact kept before stages were (a row or snapshot of an older version, whose
 * classification settled a contact at its first SENT): what that classification counted it as.
 */
export function legacyStage(admissions: number, progress: MessageProgress): Stage {
  if (rejected(admissions)) return STAGE.open;
  const status = currentStatus(progress);
  if (status === null || status === 'ENQUEUED') return STAGE.open;
  if (status === 'FAILED') return failedAsDoesNotExist(progress) ? STAGE.doesNotExist : STAGE.failed;
  return status === 'EXPIRED' ? STAGE.expired : STAGE.sent;
}

const REJECTION_COUNTS: readonly (readonly [Admission, keyof CampaignCounts])[] = [
  ['invalid-phone', 'invalidPhone'],
  ['invalid-data', 'invalidData'],
  ['duplicated', 'duplicated'],
  ['blocked', 'blocked'],
  ['already-sent', 'alreadySent'],
  ['does-not-exist', 'doesNotExist'],
];

/** The counts one contact contributes (each contact: total 1, one bucket, and funnel flags). */
export function classifyContact(state: ContactState): CampaignCounts {
  const c = emptyCounts();
  c.total = 1;
  switch (state.stage) {
    case STAGE.open: {
      const rejection = REJECTION_COUNTS.find(([a]) => (state.admissions & ADMISSION_BITS[a]) !== 0);
      if (rejection === undefined) {
        c.remaining = 1;
        return c;
      }
      c.processed = 1;
      c[rejection[1]] = 1;
      return c;
    }
    case STAGE.failed:
      c.processed = 1;
      c.failed = 1;
      return c;
    case STAGE.doesNotExist:
      c.processed = 1;
      c.doesNotExist = 1;
      return c;
    case STAGE.expired:
      c.processed = 1;
      c.expired = 1;
      return c;
    case STAGE.sent: {
      c.processed = 1;
      c.sent = 1;
      // Funnel with fill-in: a READ without DEVICE was delivered; a REPLIED was read.
      const p = state.progress;
      if (reached(p, 'DEVICE')) c.delivered = 1;
      if (reached(p, 'READ')) c.read = 1;
      if (hasObserved(p, 'REPLIED')) {
        c.replied = 1;
        if (repliedAsBlocklist(p)) c.blocklistResponse = 1;
      }
      return c;
    }
  }
}

/** Adds (`sign` 1) or removes (-1) one set of counts into another. */
export function addInto(target: CampaignCounts, delta: CampaignCounts, sign: 1 | -1): void {
  for (const k of COUNT_NAMES) target[k] += sign * delta[k];
}

/** The sum of two sets of counts (a new object). */
export function addCounts(a: CampaignCounts, b: CampaignCounts): CampaignCounts {
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
  const rejected = c.invalidPhone + c.duplicated + c.blocked + c.alreadySent + c.invalidData;
  const processed = rejected + c.doesNotExist + c.failed + c.expired + c.sent;
  if (c.total !== c.processed + c.remaining) out.push(problem(`${path}.total`, `processed + remaining = ${c.processed + c.remaining}`, c.total));
  if (c.processed !== processed) out.push(problem(`${path}.processed`, `the sum of the processed buckets = ${processed}`, c.processed));
  const chain: [keyof CampaignCounts, number][] = [
    ['blocklistResponse', c.replied],
    ['replied', c.read],
    ['read', c.delivered],
    ['delivered', c.sent],
  ];
  for (const [k, max] of chain) if (c[k] > max) out.push(problem(`${path}.${k}`, `at most ${max}`, c[k]));
  return out;
}

/** The campaign status: RUNNING while contacts remain (or none were admitted yet); FINISHED after. */
function campaignStatus(c: CampaignCounts): CampaignStatus {
  return c.total > 0 && c.remaining === 0 ? 'FINISHED' : 'RUNNING';
}

/**
 * The spec's campaign object from counts.
 * @throws {ArgumentError} for a fractional or unsafe campaign id, a count that is not an integer of
 * 0 or more, or a time that cannot be written: the object always passes `CampaignStatisticsSchema`
 */
export function campaignStatisticsPayload(campaign: { readonly campaignId: number; readonly name: string; readonly createdAt: number }, c: CampaignCounts, now: number): CampaignStatisticsPayload {
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
    count_invalid_data: c.invalidData,
    created_at: createdAt,
    datetime,
  };
}
