// DB adapters. Every `commit(fn)` resolves only when the transaction is durable
// according to the configuration's definition (see README.md).
import path from 'node:path';

// ---------------------------------------------------------------- libsql
export async function openLibsql(dir, cfg) {
  const { default: Database } = await import('libsql');
  const db = new Database(path.join(dir, 'sendpool.db'));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${cfg.sync || 'FULL'}`);
  db.exec(`
    CREATE TABLE IF NOT EXISTS contacts(
      id INTEGER PRIMARY KEY, state INTEGER NOT NULL, payload TEXT NOT NULL,
      phone TEXT, template TEXT, handout INTEGER, result TEXT, batch INTEGER);
    CREATE TABLE IF NOT EXISTS limits(number TEXT PRIMARY KEY, v TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS outbox(id INTEGER PRIMARY KEY, body TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS batches(id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
  `);
  const ins = db.prepare('INSERT INTO contacts(id,state,payload,batch) VALUES (?,0,?,?)');
  const upHand = db.prepare('UPDATE contacts SET state=1, phone=?, template=?, handout=? WHERE id=?');
  const upLim = db.prepare('INSERT INTO limits(number,v) VALUES(?,?) ON CONFLICT(number) DO UPDATE SET v=excluded.v');
  const upFinal = db.prepare('UPDATE contacts SET state=2, result=? WHERE id=?');
  const insOut = db.prepare('INSERT INTO outbox(id,body) VALUES(?,?)');
  const delOut = db.prepare('DELETE FROM outbox WHERE id=?');
  const insBatch = db.prepare('INSERT INTO batches(id,n) VALUES(?,?)');
  const txn = (fn) => db.transaction(fn)();
  return {
    name: 'libsql',
    settings: { journal_mode: db.prepare('PRAGMA journal_mode').get().journal_mode, synchronous: db.prepare('PRAGMA synchronous').get().synchronous },
    // libsql's sync API: COMMIT returns after the WAL fsync (synchronous=FULL)
    async commit(fn) {
      txn(fn);
    },
    insertContacts(rows, batch = 0) {
      for (const [id, c] of rows) ins.run(id, JSON.stringify(c), batch);
    },
    handout(ids, limits) {
      for (const id of ids) upHand.run('4915112345678', 'tpl_welcome', 1718000000 + id, id);
      for (const [k, v] of limits) upLim.run(k, v);
    },
    outcome(ids, outbox) {
      for (const id of ids) upFinal.run('delivered', id);
      for (const [id, body] of outbox) insOut.run(id, body);
    },
    deleteOutbox(ids) {
      for (const id of ids) delOut.run(id);
    },
    markBatch(b, n) {
      insBatch.run(b, n);
    },
    readQueued() {
      const out = [];
      for (const r of db.prepare('SELECT id, payload FROM contacts WHERE state=0').all()) out.push({ id: r.id, ...JSON.parse(r.payload) });
      return out;
    },
    checkpoint() {
      return db.pragma('wal_checkpoint(TRUNCATE)');
    },
    integrity() {
      return db.prepare('PRAGMA integrity_check').get().integrity_check;
    }, // pragma({simple:true}) does not pluck in libsql 0.5.29
    batches() {
      const marks = db
        .prepare('SELECT id, n FROM batches ORDER BY id')
        .all()
        .map((r) => [r.id, r.n]);
      const counts = new Map(
        db
          .prepare('SELECT batch, count(*) c FROM contacts GROUP BY batch')
          .all()
          .map((r) => [r.batch, r.c]),
      );
      return { marks, counts };
    },
    async close() {
      db.close();
    },
  };
}

// ---------------------------------------------------------------- lmdb
// modes: 'async'  = db.transaction(cb) then await db.flushed   (durable on power loss)
//        'puts'   = plain db.put()/remove() in one event turn, await last promise + db.flushed
//        'sync'   = env.transactionSync(cb) (non-overlapping, fsync inside the call)
//        'commit' = db.transaction(cb), await commit promise only (visible & survives process
//                   crash, NOT yet fsynced — like SQLite WAL synchronous=NORMAL)
export async function openLmdb(dir, cfg) {
  const { open } = await import('lmdb');
  const env = open({ path: path.join(dir, 'lmdb'), ...(cfg.options || {}) });
  const contacts = env.openDB({ name: 'contacts' });
  const limits = env.openDB({ name: 'limits' });
  const outbox = env.openDB({ name: 'outbox', encoding: 'string' });
  const batches = env.openDB({ name: 'batches' });
  const mode = cfg.mode;
  let ops; // 'puts' mode collects promises
  const put = (db, k, v) => {
    if (mode === 'puts') ops = db.put(k, v);
    else db.putSync(k, v);
  };
  const del = (db, k) => {
    if (mode === 'puts') ops = db.remove(k);
    else db.removeSync(k);
  };
  const a = {
    name: 'lmdb',
    async commit(fn) {
      if (mode === 'sync') {
        env.transactionSync(fn);
        return;
      }
      if (mode === 'puts') {
        fn();
        await ops;
        await env.flushed;
        return;
      }
      await env.transaction(fn);
      if (mode !== 'commit') await env.flushed;
    },
    insertContacts(rows, batch = 0) {
      for (const [id, c] of rows) put(contacts, id, { s: 0, b: batch, c });
    },
    handout(ids, lim) {
      // read-modify-write keeps the payload, like SQLite's UPDATE of some columns
      for (const id of ids) put(contacts, id, { ...contacts.get(id), s: 1, phone: '4915112345678', template: 'tpl_welcome', handout: 1718000000 + id });
      for (const [k, v] of lim) put(limits, k, v);
    },
    outcome(ids, ob) {
      for (const id of ids) put(contacts, id, { ...contacts.get(id), s: 2, result: 'delivered' });
      for (const [id, body] of ob) put(outbox, id, body);
    },
    deleteOutbox(ids) {
      for (const id of ids) del(outbox, id);
    },
    markBatch(b, n) {
      put(batches, b, n);
    },
    readQueued() {
      const out = [];
      for (const { key, value } of contacts.getRange({})) if (value.s === 0) out.push({ id: key, ...value.c });
      return out;
    },
    checkpoint() {
      return null;
    },
    integrity() {
      // LMDB has no integrity_check pragma; walk every DB fully.
      let n = 0;
      for (const db of [contacts, limits, outbox, batches]) for (const _ of db.getRange({})) n++;
      return 'walked ' + n;
    },
    batches() {
      const marks = [...batches.getRange({})].map(({ key, value }) => [key, value]);
      const counts = new Map();
      for (const { value } of contacts.getRange({})) counts.set(value.b, (counts.get(value.b) || 0) + 1);
      return { marks, counts };
    },
    async backup(dest) {
      await env.backup(dest, true);
    },
    async close() {
      await env.close();
    },
  };
  return a;
}

export const CONFIGS = {
  'libsql-full': { db: 'libsql', sync: 'FULL' },
  'libsql-normal': { db: 'libsql', sync: 'NORMAL' },
  'lmdb-async': { db: 'lmdb', mode: 'async' },
  'lmdb-puts': { db: 'lmdb', mode: 'puts' },
  'lmdb-sync': { db: 'lmdb', mode: 'sync' },
  'lmdb-commit': { db: 'lmdb', mode: 'commit' },
};
export async function openCfg(name, dir) {
  const cfg = CONFIGS[name];
  if (!cfg) throw new Error('unknown config ' + name);
  return cfg.db === 'libsql' ? openLibsql(dir, cfg) : openLmdb(dir, cfg);
}
