/**
 * The server's values by key (the store's own part: src/storage/sqlite-values.ts): the next contact
 * id and the companies' webhook configurations with every step, the reports in the step after they
 * change (or with `full`), and the report token key the server made.
 *
 * Restored here: the webhook configurations, into the notifier. The other values are read as the
 * server is made, before the parts that need them exist: the next contact id (backends/choose.ts),
 * the report token key (server-env.ts) and the reports (server-reports.ts).
 */
import { valueTables } from '../../../../storage/sqlite-values.js';
import type { CompanyWebhooks } from '../../../notifier.js';
import type { Durable } from './durable.js';

export const values: Durable<'values'> = {
  name: 'values',
  tables: valueTables,
  component: ({ parts, contactIds, takeReportsChanged, reportTokenKey }) => ({
    takeChanges(full) {
      const { notifier, reports } = parts();
      const reportRows = takeReportsChanged() || full ? { reports: reports.snapshot() } : {};
      const token = reportTokenKey !== undefined ? { reportTokenKey } : {};
      return { nextContactId: contactIds.next, webhooks: notifier.webhooks(), ...reportRows, ...token };
    },
    restore(rows) {
      const webhooks = rows.get('webhooks');
      if (Array.isArray(webhooks)) parts().notifier.loadWebhooks(webhooks as CompanyWebhooks[]);
    },
  }),
};
