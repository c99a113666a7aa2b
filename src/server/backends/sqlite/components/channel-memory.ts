/**
 * The channel's memory of the provider's ids (channels/memory.ts): a row per step's changes (a
 * chunk, JSON [keys, values]: never looked up by key, loading replays them in order), numbered,
 * forgotten by ranges.
 */
import type { Durable } from './durable.js';

export const channelMemory: Durable<'channelMemory'> = {
  name: 'channelMemory',
  tables: {
    schema: `
    CREATE TABLE IF NOT EXISTS channel_memory (seq INTEGER PRIMARY KEY, entries TEXT NOT NULL);`,
    open(db) {
      const put = db.prepare('INSERT OR REPLACE INTO channel_memory (seq, entries) VALUES (?, ?)');
      const prune = db.prepare('DELETE FROM channel_memory WHERE seq < ?');
      return {
        write(memory) {
          if (memory.keys.length > 0) put.run(memory.firstSeq, JSON.stringify([memory.keys, memory.values]));
          if (memory.before !== undefined) prune.run(memory.before);
        },
        load() {
          const rows = db
            .prepare('SELECT seq, entries FROM channel_memory ORDER BY seq')
            .all()
            .map((r) => {
              const [keys, values] = JSON.parse(String(r['entries'])) as [string[], (string | null)[]];
              return { firstSeq: Number(r['seq']), keys, values };
            });
          return { rows, found: rows.length > 0 };
        },
      };
    },
  },
  // Every change is written as it happens: a step with `full` has nothing more to add.
  component: ({ parts }) => ({
    takeChanges: () => parts().channelMemory.takeChanges(),
    restore: (rows) => parts().channelMemory.load(rows),
  }),
};
