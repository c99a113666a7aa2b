/**
 * Campaign statistics as rows: a campaign's row and its contacts' rows, what a snapshot holds and
 * what a host writes to a database from `CampaignStatistics.takeChanges`; and a campaign rebuilt
 * from them, its counts recounted rather than trusted.
 */
import { STAGE, addCounts, legacyStage, recount, type ContactState, type Stage } from './campaign-counts.js';
import { addAccepted, newCampaignEntry, numericId, type CampaignEntry } from './campaign-entry.js';
import type { CampaignRow, CampaignStatisticsSnapshot, ContactRow, SnapshotContact } from './campaign-stats-types.js';
import { IdRanges } from './id-ranges.js';

/** The row of a campaign; `dirty` when it has changes not batched yet. */
export function campaignRow(c: CampaignEntry, dirty: boolean): CampaignRow {
  return {
    campaignId: c.campaignId,
    name: c.name,
    createdAt: c.createdAt,
    lastSent: c.lastSent ?? null,
    dirty,
    lastChangeAt: c.lastChangeAt,
    ...(c.base ? { settledCounts: { ...c.base } } : {}),
    ...(c.accepted.size > 0 ? { accepted: c.accepted.toArray() } : {}),
  };
}

/** The row of one contact with a state of its own, or undefined for one without. */
export function contactRow(c: CampaignEntry, contactId: string): ContactRow | undefined {
  const s = c.contacts.get(contactId);
  return s ? [c.campaignId, contactId, s.admissions, s.attempt, s.progress, s.stage, s.settleAt] : undefined;
}

/** The contacts of a campaign as a snapshot lists them. */
export function snapshotContacts(c: CampaignEntry): SnapshotContact[] {
  return [...c.contacts].map(([id, s]) => [id, s.admissions, s.attempt, s.progress, s.stage, s.settleAt] as const);
}

const STAGES: ReadonlySet<number> = new Set(Object.values(STAGE));

/** A contact's state from its row's values; a row without a stage is an older version's. */
function contactState(admissions: number, attempt: number, progress: number, stage: number | undefined, settleAt: number | undefined): ContactState {
  const known = stage !== undefined && STAGES.has(stage) ? (stage as Stage) : legacyStage(admissions, progress);
  return { admissions, attempt, progress, stage: known, settleAt: known === STAGE.open && settleAt !== undefined && settleAt > 0 ? settleAt : 0 };
}

/** A campaign rebuilt from its row and its contacts. */
export function entryFromRow(row: CampaignRow, rows: readonly SnapshotContact[]): CampaignEntry {
  const contacts = new Map<string, ContactState>(rows.map(([id, admissions, attempt, progress, stage, settleAt]) => [id, contactState(admissions, attempt, progress, stage, settleAt)]));
  const accepted = IdRanges.from(row.accepted ?? []);
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
  const entry = newCampaignEntry(row.campaignId, row.name, row.createdAt);
  for (const [id, s] of contacts) if (s.settleAt !== 0) entry.windows.push(s.settleAt, id);
  return {
    ...entry,
    contacts,
    accepted,
    unseen,
    loose,
    // A settled campaign's counts cover contacts no longer kept: they come from the row.
    counts: row.settledCounts ? addCounts(row.settledCounts, counts) : counts,
    lastSent: row.lastSent ?? undefined,
    lastChangeAt: row.lastChangeAt ?? row.createdAt,
    settled: row.settledCounts !== undefined,
    base: row.settledCounts ? { ...row.settledCounts } : undefined,
  };
}

/** Campaign and contact rows gathered into a snapshot (the last row of each campaign wins). */
export function snapshotFromRows(rows: { readonly lastBatchAt: number | null; readonly campaigns: Iterable<CampaignRow>; readonly contacts: Iterable<ContactRow> }): CampaignStatisticsSnapshot {
  const byCampaign = new Map<number, CampaignRow & { contacts: SnapshotContact[] }>();
  for (const c of rows.campaigns) byCampaign.set(c.campaignId, { ...c, contacts: [] });
  for (const [campaignId, id, ...state] of rows.contacts) byCampaign.get(campaignId)?.contacts.push([id, ...state]);
  return { version: 2, lastBatchAt: rows.lastBatchAt, campaigns: [...byCampaign.values()] };
}
