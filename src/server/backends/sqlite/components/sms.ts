/**
 * The SMS accepted and not answered by the gateway, in the order accepted: written before their 202
 * (staged-writes.ts), deleted once answered. A restart sends them again (at least once).
 */
import type { OutgoingSms } from '../../../ports/channel.js';
import type { Durable } from './durable.js';
import { keyedRowsTables } from './keyed-rows.js';

export const sms: Durable<'sms'> = {
  name: 'sms',
  tables: keyedRowsTables(
    'sms',
    `
    CREATE TABLE IF NOT EXISTS sms (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);`,
    'n',
  ),
  component: ({ staged, parts }) => ({
    takeChanges: () => staged.takeSms(),
    restore: (rows) => parts().sms.restore(rows.map(([, item]) => item as OutgoingSms)),
  }),
};
