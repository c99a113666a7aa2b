/**
 * Campaign counts (spec 6.4): what one contact's state contributes to every `count_*`, with the
 * definitions of docs/events.md, and the campaign object of the batch payload. The aggregator over
 * a campaign's contacts is in campaign-stats.ts.
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
import { problem, type Problem } from '../core/problems.js';
import { formatTime } from './datetime.js';
import { requireInteger, requireString } from './ids.js';
import type { CampaignStatisticsPayload, CampaignStatus } from './schemas/campaign.js';
import { NO_PROGRESS, currentStatus, failedAsDoesNotExist, hasObserved, observe, reached, repliedAsBlocklist, type MessageProgress } from './status-merge.js';

/** How a contact was admitted to a campaign (before any send). */
export type Admission = 'accepted' | 'invalid-phone' | 'duplicated' | 'blocked' | 'already-sent' | 'does-not-exist';

/** Admission kinds, in precedence order: a contact reported with two rejections counts under the first. */
export const ADMISSIONS: readonly Admission[] = ['invalid-phone', 'duplicated', 'blocked', 'already-sent', 'does-not-exist', 'accepted'];

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

/** A contact nothing was reported about. */
export const EMPTY_CONTACT: ContactState = { admissions: 0, attempt: -1, progress: NO_PROGRESS };

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
    created_at: createdAt,
    datetime,
  };
}
