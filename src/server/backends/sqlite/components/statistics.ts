/**
 * Each company's campaign statistics (events/campaign-stats.ts, kept by the notifier): a row per
 * campaign, a row per contact with a status, and the company's last batch time in `meta`
 * (`statistics.<company>`).
 */
import type { CampaignRow, ContactRow } from '../../../../events/campaign-stats.js';
import type { StoredStatistics } from '../../../../storage/server-storage.js';
import type { Database } from '../../../../storage/store-check.js';
import type { Durable } from './durable.js';

export const statistics: Durable<'statistics'> = {
  name: 'statistics',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS campaigns (company INTEGER NOT NULL, campaign INTEGER NOT NULL, row TEXT NOT NULL, PRIMARY KEY (company, campaign)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS campaign_contacts (
      company INTEGER NOT NULL, campaign INTEGER NOT NULL, contact TEXT NOT NULL,
      admissions INTEGER NOT NULL, attempt INTEGER NOT NULL, progress INTEGER NOT NULL,
      stage INTEGER, settle_at INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (company, campaign, contact)
    ) WITHOUT ROWID;`,
    // Schemas 2 to 4 have campaign contacts without a stage: the columns are added (NULL: the stage
    // the row's progress was counted as then, campaign-rows.ts).
    upgrade(db) {
      const columns = new Set(
        db
          .prepare('PRAGMA table_info(campaign_contacts)')
          .all()
          .map((c) => String(c['name'])),
      );
      if (!columns.has('stage')) db.exec('ALTER TABLE campaign_contacts ADD COLUMN stage INTEGER');
      if (!columns.has('settle_at')) db.exec('ALTER TABLE campaign_contacts ADD COLUMN settle_at INTEGER NOT NULL DEFAULT 0');
    },
    open(db, meta) {
      const q = {
        putCampaign: db.prepare('INSERT INTO campaigns (company, campaign, row) VALUES (?, ?, ?) ON CONFLICT(company, campaign) DO UPDATE SET row = excluded.row'),
        putContact: db.prepare(
          'INSERT INTO campaign_contacts (company, campaign, contact, admissions, attempt, progress, stage, settle_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ' +
            'ON CONFLICT(company, campaign, contact) DO UPDATE SET admissions = excluded.admissions, attempt = excluded.attempt, progress = excluded.progress, stage = excluded.stage, settle_at = excluded.settle_at',
        ),
        deleteContacts: db.prepare('DELETE FROM campaign_contacts WHERE company = ? AND campaign = ?'),
      };
      return {
        write(changes) {
          for (const { companyId, changes: c } of changes) {
            meta.put(`statistics.${companyId}`, JSON.stringify({ lastBatchAt: c.lastBatchAt }));
            // Settled first: a settled campaign keeps its counts in its row and no contact rows.
            for (const campaignId of c.settled) q.deleteContacts.run(companyId, campaignId);
            for (const row of c.campaigns) q.putCampaign.run(companyId, row.campaignId, JSON.stringify(row));
            for (const [campaignId, contact, admissions, attempt, progress, stage, settleAt] of c.contacts) {
              q.putContact.run(companyId, campaignId, contact, admissions, attempt, progress, stage ?? null, settleAt ?? 0);
            }
          }
        },
        load(metaRows) {
          const rows = loadStatistics(db, metaRows);
          return { rows, found: rows.size > 0 };
        },
      };
    },
  },
  component: ({ parts }) => ({
    takeChanges(full) {
      const changes = parts().notifier.takeStatistics(full);
      return changes.length > 0 ? changes : undefined;
    },
    restore: (rows) => parts().notifier.restoreStatistics(rows),
  }),
};

function loadStatistics(db: Database, metaRows: ReadonlyMap<string, string>): Map<number, StoredStatistics> {
  const statistics = new Map<number, { lastBatchAt: number | null; campaigns: CampaignRow[]; contacts: ContactRow[] }>();
  const company = (id: number) => {
    let s = statistics.get(id);
    if (!s) statistics.set(id, (s = { lastBatchAt: null, campaigns: [], contacts: [] }));
    return s;
  };
  for (const [key, text] of metaRows) {
    if (key.startsWith('statistics.')) company(Number(key.slice(11))).lastBatchAt = (JSON.parse(text) as { lastBatchAt: number | null }).lastBatchAt;
  }
  for (const r of db.prepare('SELECT company, row FROM campaigns').all()) company(Number(r['company'])).campaigns.push(JSON.parse(String(r['row'])) as CampaignRow);
  for (const r of db.prepare('SELECT company, campaign, contact, admissions, attempt, progress, stage, settle_at FROM campaign_contacts').all()) {
    const row = [Number(r['campaign']), String(r['contact']), Number(r['admissions']), Number(r['attempt']), Number(r['progress'])] as const;
    // A row of an older schema has no stage: it is read as such (campaign-rows.ts).
    company(Number(r['company'])).contacts.push(r['stage'] === null || r['stage'] === undefined ? row : [...row, Number(r['stage']), Number(r['settle_at'] ?? 0)]);
  }
  return statistics;
}
