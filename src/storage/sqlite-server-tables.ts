/**
 * The server's own state in its database, a part (sqlite-tables.ts) per kind: its values by key,
 * the webhook events it still owes (outbox) and those it gave up on (dead letters), the SMS not
 * answered yet and the messages remembered for their later statuses, the activity the period
 * reports read, the channel's memory of the provider's ids, and idempotency keys' first answers.
 */
import type { StoredIdempotency } from './server-storage.js';
import { type TableSet, jsonRows } from './sqlite-tables.js';

/** Server values by key (`meta`, prefixed `server.`): JSON values; the webhook configurations go to the intake journal too. */
export const valueTables: TableSet<'values'> = {
  schema: '',
  open(_db, meta) {
    return {
      write(step, notes) {
        for (const [key, value] of Object.entries(step.values ?? {})) {
          if (value === undefined) meta.delete(`server.${key}`);
          else {
            const text = JSON.stringify(value);
            if (key === 'webhooks') notes.webhooks = text;
            meta.put(`server.${key}`, text);
          }
        }
      },
      load(metaRows) {
        const values = new Map<string, unknown>();
        for (const [key, text] of metaRows) if (key.startsWith('server.')) values.set(key.slice(7), JSON.parse(text));
        return { part: { values }, found: values.size > 0 };
      },
    };
  },
};

/**
 * Webhook events: those still to deliver (the outbox, by id) and the dead letters, kept in the
 * step that deletes the event from the outbox (a crash keeps one of the two, never both or
 * neither), dropped when replayed.
 */
export const deliveryTables: TableSet<'outbox' | 'deadLetters'> = {
  schema: `
    CREATE TABLE IF NOT EXISTS outbox (id TEXT PRIMARY KEY, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS dead_letters (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, company INTEGER NOT NULL, at INTEGER NOT NULL, row TEXT NOT NULL);`,
  open(db) {
    const q = {
      putOutbox: db.prepare('INSERT INTO outbox (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
      deleteOutbox: db.prepare('DELETE FROM outbox WHERE id = ?'),
      // A dead letter kept again (replayed and dead-lettered again) goes to the end of the order.
      putDeadLetter: db.prepare('INSERT OR REPLACE INTO dead_letters (id, company, at, row) VALUES (?, ?, ?, ?)'),
      deleteDeadLetter: db.prepare('DELETE FROM dead_letters WHERE id = ?'),
    };
    return {
      write(step) {
        for (const [id, event] of step.outboxPut ?? []) q.putOutbox.run(id, JSON.stringify(event));
        for (const id of step.outboxDelete ?? []) q.deleteOutbox.run(id);
        for (const [id, companyId, at, row] of step.deadLetters ?? []) {
          if (row === null) q.deleteDeadLetter.run(id);
          else q.putDeadLetter.run(id, companyId, at, JSON.stringify(row));
        }
      },
      load() {
        const outbox = jsonRows(db, 'outbox');
        const deadLetters = db
          .prepare('SELECT row FROM dead_letters ORDER BY n')
          .all()
          .map((r) => JSON.parse(String(r['row'])) as unknown);
        return { part: { outbox, deadLetters }, found: outbox.length > 0 || deadLetters.length > 0 };
      },
    };
  },
};

/** Messages the server follows: SMS accepted and not answered by the gateway, and messages remembered for their later statuses, in the order written. */
export const messageTables: TableSet<'sms' | 'tracked'> = {
  schema: `
    CREATE TABLE IF NOT EXISTS sms (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS tracked (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);`,
  open(db) {
    const q = {
      putSms: db.prepare('INSERT INTO sms (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
      deleteSms: db.prepare('DELETE FROM sms WHERE id = ?'),
      putTracked: db.prepare('INSERT INTO tracked (id, row) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
      deleteTracked: db.prepare('DELETE FROM tracked WHERE id = ?'),
    };
    return {
      write(step) {
        for (const [id, sms] of step.smsPut ?? []) q.putSms.run(id, JSON.stringify(sms));
        for (const id of step.smsDelete ?? []) q.deleteSms.run(id);
        for (const [id, message] of step.trackedPut ?? []) q.putTracked.run(id, JSON.stringify(message));
        for (const id of step.trackedDelete ?? []) q.deleteTracked.run(id);
      },
      load() {
        const sms = jsonRows(db, 'sms', 'n');
        const tracked = jsonRows(db, 'tracked', 'n');
        return { part: { sms, tracked }, found: sms.length > 0 || tracked.length > 0 };
      },
    };
  },
};

/** The activity the period reports read (messages sent, attendances closed), indexed by time for the retention. */
export const activityTables: TableSet<'activity'> = {
  schema: `
    CREATE TABLE IF NOT EXISTS activity (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, at INTEGER NOT NULL, row TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS activity_at ON activity (at);`,
  open(db) {
    const q = {
      putActivity: db.prepare('INSERT INTO activity (id, at, row) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET row = excluded.row'),
      deleteActivity: db.prepare('DELETE FROM activity WHERE id = ?'),
      pruneActivity: db.prepare('DELETE FROM activity WHERE at < ?'),
    };
    return {
      write(step) {
        for (const [id, at, row] of step.activityPut ?? []) q.putActivity.run(id, at, JSON.stringify(row));
        for (const id of step.activityDelete ?? []) q.deleteActivity.run(id);
        if (step.activityBefore !== undefined) q.pruneActivity.run(step.activityBefore);
      },
      load() {
        const activity = jsonRows(db, 'activity', 'n');
        return { part: { activity }, found: activity.length > 0 };
      },
    };
  },
};

/** The channel's memory of the provider's ids: a row per step's changes, numbered, forgotten by ranges. */
export const channelMemoryTables: TableSet<'channelMemory'> = {
  schema: `
    CREATE TABLE IF NOT EXISTS channel_memory (seq INTEGER PRIMARY KEY, entries TEXT NOT NULL);`,
  open(db) {
    const q = {
      // A step's entries in one row (JSON [keys, values]): never looked up by key, loading replays them in order.
      putMemory: db.prepare('INSERT OR REPLACE INTO channel_memory (seq, entries) VALUES (?, ?)'),
      pruneMemory: db.prepare('DELETE FROM channel_memory WHERE seq < ?'),
    };
    return {
      write(step) {
        const memory = step.channelMemory;
        if (!memory) return;
        if (memory.keys.length > 0) q.putMemory.run(memory.firstSeq, JSON.stringify([memory.keys, memory.values]));
        if (memory.before !== undefined) q.pruneMemory.run(memory.before);
      },
      load() {
        const channelMemory = db
          .prepare('SELECT seq, entries FROM channel_memory ORDER BY seq')
          .all()
          .map((r) => {
            const [keys, values] = JSON.parse(String(r['entries'])) as [string[], (string | null)[]];
            return { firstSeq: Number(r['seq']), keys, values };
          });
        return { part: { channelMemory }, found: channelMemory.length > 0 };
      },
    };
  },
};

/** Idempotency keys' first answers (src/server/idempotency.ts), by company and key, dropped after their 24 h. */
export const idempotencyTables: TableSet<'idempotency'> = {
  schema: `
    CREATE TABLE IF NOT EXISTS idempotency (company INTEGER NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, at INTEGER NOT NULL, answer TEXT NOT NULL, PRIMARY KEY (company, key)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS idempotency_at ON idempotency (at);`,
  open(db) {
    const q = {
      putIdempotency: db.prepare(
        'INSERT INTO idempotency (company, key, fingerprint, at, answer) VALUES (?, ?, ?, ?, ?) ON CONFLICT(company, key) DO UPDATE SET fingerprint = excluded.fingerprint, at = excluded.at, answer = excluded.answer',
      ),
      deleteIdempotency: db.prepare('DELETE FROM idempotency WHERE company = ? AND key = ?'),
      pruneIdempotency: db.prepare('DELETE FROM idempotency WHERE at < ?'),
    };
    return {
      write(step) {
        const idem = step.idempotency;
        if (!idem) return;
        for (const d of idem.deleted) q.deleteIdempotency.run(d.companyId, d.key);
        for (const r of idem.put) q.putIdempotency.run(r.companyId, r.key, r.fingerprint, r.at, r.answer);
        if (idem.before !== undefined) q.pruneIdempotency.run(idem.before);
      },
      load() {
        const idempotency = db
          .prepare('SELECT company, key, fingerprint, at, answer FROM idempotency ORDER BY at')
          .all()
          .map((r): StoredIdempotency => ({ companyId: Number(r['company']), key: String(r['key']), fingerprint: String(r['fingerprint']), at: Number(r['at']), answer: String(r['answer']) }));
        return { part: { idempotency }, found: idempotency.length > 0 };
      },
    };
  },
};
