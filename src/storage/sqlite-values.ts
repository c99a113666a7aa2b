/**
 * The server's values by key (`meta`, prefixed `server.`: JSON values), a part the store knows
 * itself: the next contact id goes to the seal (store-seal.ts) and the webhook configurations to the
 * intake journal (intake-journal.ts) with each commit, and a damaged store is checked and repaired
 * by them (store-check.ts, store-open.ts).
 */
import type { PartTables } from './sqlite-tables.js';

export const valueTables: PartTables<Readonly<Record<string, unknown>>, ReadonlyMap<string, unknown>> = {
  schema: '',
  open(_db, meta) {
    return {
      write(values, notes) {
        for (const [key, value] of Object.entries(values)) {
          if (value === undefined) meta.delete(`server.${key}`);
          else {
            const text = JSON.stringify(value);
            if (key === 'webhooks') notes.webhooks = text;
            if (key === 'nextContactId' && typeof value === 'number') notes.nextContactId = value;
            meta.put(`server.${key}`, text);
          }
        }
      },
      load(metaRows) {
        const values = new Map<string, unknown>();
        for (const [key, text] of metaRows) if (key.startsWith('server.')) values.set(key.slice(7), JSON.parse(text));
        return { rows: values, found: values.size > 0 };
      },
    };
  },
};
