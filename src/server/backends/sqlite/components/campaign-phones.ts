/**
 * The phones each campaign took (campaign-phones.ts): a row per request, dropped with the campaign
 * once its statistics settle.
 */
import { phonesBlob, phonesOf } from '../../../../storage/sqlite-tables.js';
import type { Durable } from './durable.js';

export const campaignPhones: Durable<'campaignPhones'> = {
  name: 'campaignPhones',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS campaign_phones (n INTEGER PRIMARY KEY AUTOINCREMENT, company INTEGER NOT NULL, campaign INTEGER NOT NULL, phones BLOB NOT NULL);
    CREATE INDEX IF NOT EXISTS campaign_phones_campaign ON campaign_phones (company, campaign);`,
    open(db) {
      const put = db.prepare('INSERT INTO campaign_phones (company, campaign, phones) VALUES (?, ?, ?)');
      const drop = db.prepare('DELETE FROM campaign_phones WHERE company = ? AND campaign = ?');
      return {
        write(changes) {
          for (const d of changes.dropped) drop.run(d.companyId, d.campaignId);
          for (const a of changes.added) put.run(a.companyId, a.campaignId, phonesBlob(a.phones));
        },
        load() {
          const rows = db
            .prepare('SELECT company, campaign, phones FROM campaign_phones ORDER BY n')
            .all()
            .map((r) => ({ companyId: Number(r['company']), campaignId: Number(r['campaign']), phones: phonesOf(r['phones']) }));
          return { rows, found: rows.length > 0 };
        },
      };
    },
  },
  component: ({ parts }) => ({
    takeChanges(full) {
      const changes = parts().campaignPhones.takeChanges(full);
      return changes.added.length + changes.dropped.length > 0 ? changes : undefined;
    },
    restore: (rows) => parts().campaignPhones.load(rows),
  }),
};
