// Usage:
//   node bench.mjs write <config>            phases 1a,1b,2,3 in fresh dirs (deleted afterwards)
//   node bench.mjs restart-prep <config> <dir>  insert 1,000,000 queued contacts (not timed), checkpoint, sizes
//   node bench.mjs restart-read <config> <dir>  time open + read all queued rows (run in a fresh process)
// configs: libsql-full libsql-normal lmdb-async lmdb-puts lmdb-sync lmdb-commit
import { performance } from 'node:perf_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { openCfg, CONFIGS } from './adapters.mjs';
import { freshDir, rmDir, dirBytes, makeContact, makeOutbox, makeLimit, rnd, stats, now } from './common.mjs';

const [cmd, cfgName, dirArg] = process.argv.slice(2);
const N = 200_000;

async function timedCommits(db, batches, body) {
  const lat = [];
  const elu0 = performance.eventLoopUtilization();
  const t0 = now();
  for (let i = 0; i < batches; i++) {
    const s = now();
    await db.commit(() => body(i));
    lat.push(now() - s);
  }
  const total = now() - t0;
  const elu = performance.eventLoopUtilization(elu0).utilization;
  return { total, lat, elu };
}

async function write() {
  const contacts = Array.from({ length: N }, (_, id) => [id, makeContact(id)]);
  const res = { config: cfgName };
  // 1a: one commit per request (1000 contacts)
  {
    const dir = freshDir(cfgName + '-1a');
    const db = await openCfg(cfgName, dir);
    const r = await timedCommits(db, 200, (i) => db.insertContacts(contacts.slice(i * 1000, i * 1000 + 1000), i));
    res.intake_per_request = { contacts_per_s: Math.round(N / (r.total / 1000)), commit_ms: stats(r.lat), elu: +r.elu.toFixed(2) };
    await db.close();
    rmDir(dir);
  }
  // 1b: group commit: 10 requests (10,000 contacts) per commit
  const dir = freshDir(cfgName + '-1b');
  const db = await openCfg(cfgName, dir);
  if (db.settings) res.settings = db.settings;
  {
    const r = await timedCommits(db, 20, (i) => {
      for (let j = 0; j < 10; j++) {
        const k = i * 10 + j;
        db.insertContacts(contacts.slice(k * 1000, k * 1000 + 1000), k);
      }
    });
    res.intake_group10 = { contacts_per_s: Math.round(N / (r.total / 1000)), commit_ms: stats(r.lat), elu: +r.elu.toFixed(2) };
  }
  // 2: hand-out: 1000 contact updates + ~100 limit upserts per commit
  {
    const ids = Array.from({ length: 200 }, (_, i) => Array.from({ length: 1000 }, (_, j) => i * 1000 + j));
    const lims = Array.from({ length: 200 }, () =>
      Array.from({ length: 100 }, () => {
        const n = (rnd() * 5000) | 0;
        return ['num' + n, makeLimit(n)];
      }),
    );
    const r = await timedCommits(db, 200, (i) => db.handout(ids[i], lims[i]));
    res.handout = { contacts_per_s: Math.round(N / (r.total / 1000)), commit_ms: stats(r.lat), elu: +r.elu.toFixed(2) };
  }
  // 3: final outcomes: 1000 updates + 1000 outbox rows (~400B) per commit; then outbox deletes
  //    of the previous batch in their own durable commit (1000 deletes)
  {
    const ids = Array.from({ length: 200 }, (_, i) => Array.from({ length: 1000 }, (_, j) => i * 1000 + j));
    const obs = ids.map((b) => b.map((id) => [id, makeOutbox(id)]));
    const latOut = [],
      latDel = [];
    const elu0 = performance.eventLoopUtilization();
    const t0 = now();
    for (let i = 0; i <= 200; i++) {
      if (i < 200) {
        const s = now();
        await db.commit(() => db.outcome(ids[i], obs[i]));
        latOut.push(now() - s);
      }
      if (i > 0) {
        const s = now();
        await db.commit(() => db.deleteOutbox(ids[i - 1]));
        latDel.push(now() - s);
      }
    }
    const total = now() - t0;
    res.outcome = {
      contacts_per_s: Math.round(N / (total / 1000)),
      outcome_commit_ms: stats(latOut),
      delete_commit_ms: stats(latDel),
      elu: +performance.eventLoopUtilization(elu0).utilization.toFixed(2),
    };
  }
  if (db.checkpoint) db.checkpoint();
  res.bytes_after_phase3 = dirBytes(dir).total;
  await db.close();
  rmDir(dir);
  console.log(JSON.stringify(res));
}

async function restartPrep() {
  const dir = dirArg;
  fs.mkdirSync(dir, { recursive: true });
  const db = await openCfg(cfgName, dir);
  const M = 1_000_000,
    B = 50_000;
  for (let i = 0; i < M / B; i++) {
    const rows = Array.from({ length: B }, (_, j) => {
      const id = i * B + j;
      return [id, makeContact(id)];
    });
    await db.commit(() => db.insertContacts(rows, 0));
  }
  const out = { config: cfgName };
  if (CONFIGS[cfgName].db === 'libsql') {
    db.checkpoint();
    await db.close();
    const f = dirBytes(dir);
    out.bytes = f.total;
    out.files = f.files;
    out.bytes_per_contact = +(f.total / M).toFixed(1);
  } else {
    const ldir = path.join(dir, 'lmdb');
    const bk = path.join(dir, 'compact');
    fs.mkdirSync(bk, { recursive: true });
    await db.backup(bk); // env opened with a subdir: mdb_env_copy wants an existing directory
    await db.close();
    const f = dirBytes(ldir);
    out.bytes = f.total;
    out.files = f.files;
    out.bytes_per_contact = +(f.files['data.mdb'] / M).toFixed(1);
    const c = dirBytes(bk);
    out.compact_bytes_per_contact = +(c.total / M).toFixed(1);
    rmDir(bk);
  }
  console.log(JSON.stringify(out));
}

async function restartRead() {
  const t0 = now();
  const db = await openCfg(cfgName, dirArg);
  const t1 = now();
  const rows = db.readQueued();
  const t2 = now();
  if (rows.length !== 1_000_000 || typeof rows[999].phone !== 'string') throw new Error('bad read ' + rows.length);
  await db.close();
  console.log(
    JSON.stringify({ config: cfgName, open_ms: +(t1 - t0).toFixed(1), read_ms: +(t2 - t1).toFixed(1), total_ms: +(t2 - t0).toFixed(1), rss_mb: Math.round(process.memoryUsage().rss / 1e6) }),
  );
}

if (cmd === 'write') await write();
else if (cmd === 'restart-prep') await restartPrep();
else if (cmd === 'restart-read') await restartRead();
else {
  console.error('usage: see header');
  process.exit(2);
}
