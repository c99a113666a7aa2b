/**
 * What the server keeps of campaigns and phones in its database, a part (sqlite-tables.ts) each:
 * each company's campaign statistics (a row per campaign, a row per contact with a status), and the
 * phones the intake screens against (those each campaign took, those businesses took per template
 * type, and each company's blocklist).
 */
import type { CampaignRow, ContactRow } from '../events/campaign-stats.js';
import type { StoredBlockEntry, StoredSentPhones } from './server-storage.js';
import { type TableSet, phonesBlob, phonesOf } from './sqlite-tables.js';

/** Each company's campaign statistics: rows per campaign and per contact, and the company's last batch time in `meta` (`statistics.<company>`). */
export const statisticsTables: TableSet<'statistics'> = {
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
      write(step) {
        for (const { companyId, changes } of step.statistics ?? []) {
          meta.put(`statistics.${companyId}`, JSON.stringify({ lastBatchAt: changes.lastBatchAt }));
          // Settled first: a settled campaign keeps its counts in its row and no contact rows.
          for (const campaignId of changes.settled) q.deleteContacts.run(companyId, campaignId);
          for (const row of changes.campaigns) q.putCampaign.run(companyId, row.campaignId, JSON.stringify(row));
          for (const [campaignId, contact, admissions, attempt, progress, stage, settleAt] of changes.contacts) {
            q.putContact.run(companyId, campaignId, contact, admissions, attempt, progress, stage ?? null, settleAt ?? 0);
          }
        }
      },
      load(metaRows) {
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
        return { part: { statistics }, found: statistics.size > 0 };
      },
    };
  },
};

/**
 * The phones the intake screens a request against: those each campaign took (a row per request),
 * those businesses took per template type (`already_sent`: a row per request's phones in a time
 * bucket, or phones given back), and each company's blocked phones.
 */
export const screeningTables: TableSet<'campaignPhones' | 'sentPhones' | 'blocklist'> = {
  schema: `
    CREATE TABLE IF NOT EXISTS campaign_phones (n INTEGER PRIMARY KEY AUTOINCREMENT, company INTEGER NOT NULL, campaign INTEGER NOT NULL, phones BLOB NOT NULL);
    CREATE INDEX IF NOT EXISTS campaign_phones_campaign ON campaign_phones (company, campaign);
    CREATE TABLE IF NOT EXISTS sent_phones (n INTEGER PRIMARY KEY AUTOINCREMENT, business INTEGER NOT NULL, type INTEGER NOT NULL, bucket INTEGER NOT NULL, released INTEGER NOT NULL, phones BLOB NOT NULL);
    CREATE INDEX IF NOT EXISTS sent_phones_bucket ON sent_phones (bucket);
    CREATE TABLE IF NOT EXISTS blocklist (company INTEGER NOT NULL, phone TEXT NOT NULL, added_at INTEGER NOT NULL, source TEXT NOT NULL, PRIMARY KEY (company, phone)) WITHOUT ROWID;`,
  open(db) {
    const q = {
      putPhones: db.prepare('INSERT INTO campaign_phones (company, campaign, phones) VALUES (?, ?, ?)'),
      dropPhones: db.prepare('DELETE FROM campaign_phones WHERE company = ? AND campaign = ?'),
      putSent: db.prepare('INSERT INTO sent_phones (business, type, bucket, released, phones) VALUES (?, ?, ?, ?, ?)'),
      pruneSent: db.prepare('DELETE FROM sent_phones WHERE bucket < ?'),
      putBlock: db.prepare(
        'INSERT INTO blocklist (company, phone, added_at, source) VALUES (?, ?, ?, ?) ON CONFLICT(company, phone) DO UPDATE SET added_at = excluded.added_at, source = excluded.source',
      ),
      deleteBlock: db.prepare('DELETE FROM blocklist WHERE company = ? AND phone = ?'),
    };
    return {
      write(step) {
        for (const d of step.campaignPhones?.dropped ?? []) q.dropPhones.run(d.companyId, d.campaignId);
        for (const a of step.campaignPhones?.added ?? []) q.putPhones.run(a.companyId, a.campaignId, phonesBlob(a.phones));
        for (const r of step.sentPhones?.rows ?? []) q.putSent.run(r.businessId, r.typeId, r.bucket, r.released === true ? 1 : 0, phonesBlob(r.phones));
        if (step.sentPhones?.before !== undefined) q.pruneSent.run(step.sentPhones.before);
        for (const b of step.blocklist ?? []) {
          if (b.entry === null) q.deleteBlock.run(b.companyId, b.phone);
          else q.putBlock.run(b.companyId, b.phone, b.entry.addedAt, b.entry.source);
        }
      },
      load() {
        const campaignPhones = db
          .prepare('SELECT company, campaign, phones FROM campaign_phones ORDER BY n')
          .all()
          .map((r) => ({ companyId: Number(r['company']), campaignId: Number(r['campaign']), phones: phonesOf(r['phones']) }));
        const sentPhones = db
          .prepare('SELECT business, type, bucket, released, phones FROM sent_phones ORDER BY n')
          .all()
          .map((r): StoredSentPhones => ({
            businessId: Number(r['business']),
            typeId: Number(r['type']),
            bucket: Number(r['bucket']),
            phones: phonesOf(r['phones']),
            ...(Number(r['released']) === 1 ? { released: true } : {}),
          }));
        const blocklist = db
          .prepare('SELECT company, phone, added_at, source FROM blocklist')
          .all()
          .map((r) => ({
            companyId: Number(r['company']),
            entry: { phone: String(r['phone']), addedAt: Number(r['added_at']), source: String(r['source']) as StoredBlockEntry['source'] },
          }));
        return { part: { campaignPhones, sentPhones, blocklist }, found: campaignPhones.length > 0 || sentPhones.length > 0 || blocklist.length > 0 };
      },
    };
  },
};
