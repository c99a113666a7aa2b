/**
 * One campaign of the statistics aggregator (campaign-stats.ts): its contacts' states, the id
 * ranges admitted as accepted, and the counts kept over both. Every operation here keeps `counts`
 * equal to a recount of the contacts (campaign-counts.ts) and answers what it changed; marking the
 * campaign for the next batch and for the change log is the aggregator's.
 *
 * A contact admitted as accepted by a range and not reported since has no entry of its own: it is
 * one of `unseen`, and gets an entry at its first report. Contacts in their failure window are
 * queued by its end (`windows`), so settling the due ones never scans the campaign.
 */
import { ArgumentError } from '../core/errors.js';
import { EMPTY_CONTACT, addCounts, addInto, admitContact, classifyContact, emptyCounts, recount, settleDueContact, type CampaignCounts, type ContactState } from './campaign-counts.js';
import { IdRanges } from './id-ranges.js';
import { SettleQueue } from './settle-queue.js';

/** The state of one campaign. */
export interface CampaignEntry {
  readonly campaignId: number;
  name: string;
  readonly createdAt: number;
  /** Contacts with a state of their own (reported about beyond a range admission). */
  readonly contacts: Map<string, ContactState>;
  /** Ids admitted as accepted by a range (`CampaignStatistics.admitAccepted`). */
  readonly accepted: IdRanges;
  /** Contacts of `accepted` without an entry in `contacts` (each: accepted, nothing since). */
  unseen: number;
  /** Integer ids with an entry in `contacts` that `accepted` does not cover (a range admitted later must not count them twice). */
  readonly loose: IdRanges;
  counts: CampaignCounts;
  /** Contacts in their failure window, by its end (stale entries are skipped when taken). */
  readonly windows: SettleQueue;
  /** The campaign object sent in the last batch, without `datetime` (to tell "changed"). */
  lastSent: string | undefined;
  /** When a change was last seen: by a batch, or by a settling pass (its creation before that). */
  lastChangeAt: number;
  /** Changes so far, and how many a settling pass had seen (to tell a quiet campaign). */
  changes: number;
  seen: number;
  /** Per-contact states dropped; `counts` is final for the contacts it had. */
  settled: boolean;
  /** When settled: the counts of the dropped contacts (those it keeps count on top). */
  base: CampaignCounts | undefined;
}

/** A campaign declared now, with nothing admitted. */
export function newCampaignEntry(campaignId: number, name: string, createdAt: number): CampaignEntry {
  return {
    campaignId,
    name,
    createdAt,
    contacts: new Map(),
    accepted: new IdRanges(),
    unseen: 0,
    loose: new IdRanges(),
    counts: emptyCounts(),
    windows: new SettleQueue(),
    lastSent: undefined,
    lastChangeAt: createdAt,
    changes: 0,
    seen: 0,
    settled: false,
    base: undefined,
  };
}

const ACCEPTED: ContactState = admitContact(EMPTY_CONTACT, 'accepted');

/** The integer a contact id spells in canonical decimal, or -1 (only such ids can be in a range). */
export function numericId(contactId: string): number {
  if (contactId.length === 0 || contactId.length > 16) return -1;
  const n = Number(contactId);
  return Number.isSafeInteger(n) && n >= 0 && String(n) === contactId ? n : -1;
}

/** Adds `n` contacts admitted as accepted and reported nothing since: each is total and remaining. */
export function addAccepted(counts: CampaignCounts, n: number): void {
  counts.total += n;
  counts.remaining += n;
}

/** Replaces a contact's state, moving its contribution to the counts. */
function replaceContact(c: CampaignEntry, contactId: string, before: ContactState | undefined, after: ContactState): void {
  if (before) addInto(c.counts, classifyContact(before), -1);
  addInto(c.counts, classifyContact(after), 1);
  c.contacts.set(contactId, after);
  if (after.settleAt !== 0 && after.settleAt !== before?.settleAt) c.windows.push(after.settleAt, contactId);
}

function sameState(a: ContactState, b: ContactState): boolean {
  return a.admissions === b.admissions && a.attempt === b.attempt && a.progress === b.progress && a.stage === b.stage && a.settleAt === b.settleAt;
}

/**
 * Applies a report to one contact: `changed`, `unchanged` (a duplicate), or `ignored` (a contact a
 * settled campaign no longer knows).
 */
export function updateContact(c: CampaignEntry, contactId: string, change: (s: ContactState) => ContactState): 'changed' | 'unchanged' | 'ignored' {
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
  // A settled campaign's contact states are gone, so a late report cannot be told from a new
  // contact: taking either would break duplicate-independence. Its counts are final.
  if (before === undefined && c.settled) return 'ignored';
  const after = change(before ?? EMPTY_CONTACT);
  if (before && sameState(before, after)) return 'unchanged';
  replaceContact(c, contactId, before, after);
  // A range contact's first report: it leaves `unseen` for an entry of its own.
  if (fromRange) c.unseen--;
  else if (before === undefined && id >= 0) c.loose.add(id, id + 1);
  return 'changed';
}

/** What {@link admitRange} did. */
export type RangeAdmission = { readonly kind: 'covered' } | { readonly kind: 'ignored'; readonly late: number } | { readonly kind: 'added'; readonly contactIds: readonly string[] };

/**
 * Admits as accepted the ids `first` … `first + count - 1` (count > 0): `covered` when a range
 * admitted before holds them all, `ignored` (with how many were new) in a settled campaign, else
 * `added` with the contacts that had entries of their own and took the admission.
 * @throws {ArgumentError} for a range that partly overlaps one admitted before
 */
export function admitRange(c: CampaignEntry, first: number, count: number): RangeAdmission {
  if (c.settled) return { kind: 'ignored', late: count - c.accepted.countWithin(first, first + count) };
  const end = first + count;
  const added = c.accepted.add(first, end);
  if (added === 'covered') return { kind: 'covered' };
  if (added === 'overlap') {
    throw new ArgumentError('admitAccepted(first)', `ids not admitted by an earlier range (${count} from ${first} overlap one)`, String(first));
  }
  // Contacts reported before their range: their own entries take the admission.
  const known = c.loose.takeWithin(first, end);
  const contactIds: string[] = [];
  for (const id of known) {
    const key = String(id);
    const before = c.contacts.get(key)!;
    const after = admitContact(before, 'accepted');
    if (sameState(before, after)) continue;
    replaceContact(c, key, before, after);
    contactIds.push(key);
  }
  const fresh = count - known.length;
  c.unseen += fresh;
  addAccepted(c.counts, fresh);
  return { kind: 'added', contactIds };
}

/**
 * Settles as sent the contacts whose failure window ended at or before `now`, at the cost of the
 * due ones: the ids of those that changed.
 */
export function settleDue(c: CampaignEntry, now: number): string[] {
  const changed: string[] = [];
  if (c.windows.size === 0 || c.windows.peek()! > now) return changed;
  for (const [at, id] of c.windows.takeDue(now)) {
    const before = c.contacts.get(id);
    // Stale: the contact left that window another way (a failure, a delivery, a new attempt).
    if (before === undefined || before.settleAt !== at) continue;
    const after = settleDueContact(before, now);
    if (after === before) continue;
    replaceContact(c, id, before, after);
    changed.push(id);
  }
  return changed;
}

/** When the earliest failure window of the campaign's contacts ends (stale entries dropped), or undefined. */
export function nextWindowEnd(c: CampaignEntry): number | undefined {
  for (;;) {
    const at = c.windows.peek();
    if (at === undefined) return undefined;
    if (c.contacts.get(c.windows.peekId()!)?.settleAt === at) return at;
    c.windows.dropFirst();
  }
}

/** The counts of a campaign recounted from its contacts' states (equal to `counts`; for checks). */
export function recountEntry(c: CampaignEntry): CampaignCounts {
  const fresh = recount(c.contacts.values());
  addAccepted(fresh, c.unseen);
  return c.base ? addCounts(c.base, fresh) : fresh;
}

/** A campaign with contacts, none of them remaining, that has not settled yet. */
export function awaitsSettling(c: CampaignEntry): boolean {
  return !c.settled && (c.contacts.size > 0 || c.unseen > 0) && c.counts.remaining === 0;
}

/** Drops the contact states of a finished campaign; its counts stay, final. */
export function settleEntry(c: CampaignEntry): void {
  // Nothing remains, so every range contact has an entry of its own (unseen is 0).
  c.base = c.base ? addCounts(c.base, recount(c.contacts.values())) : recount(c.contacts.values());
  c.contacts.clear();
  c.windows.clear();
  c.accepted.clear();
  c.loose.clear();
  c.unseen = 0;
  c.settled = true;
}
