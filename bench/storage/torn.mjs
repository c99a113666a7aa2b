// Torn-write check.
//   node torn.mjs run <config> [times=10]
// A child writes batches (100 contacts + 1 marker row per durable commit) in a loop and prints
// each batch id to stdout only after commit() resolved. The parent SIGKILLs it at a random
// moment, then a fresh process reopens the DB and checks:
//   - it opens, integrity check passes (SQLite: PRAGMA integrity_check; LMDB: full walk of all DBs)
//   - batch markers are exactly 1..M with no gaps, every batch has exactly 100 contacts (atomicity)
//   - L <= M <= L+1 where L = last id the child reported (a commit may finish just before the
//     kill without having been printed; anything reported must be there).
import { spawn } from 'node:child_process';
import { openCfg } from './adapters.mjs';
import { freshDir, rmDir, makeContact } from './common.mjs';

const [cmd, cfgName, a3, a4] = process.argv.slice(2);
const self = new URL(import.meta.url).pathname;

if (cmd === 'child') {
  const db = await openCfg(cfgName, a3);
  for (let b = 1; ; b++) {
    const rows = Array.from({ length: 100 }, (_, j) => [b * 100 + j, makeContact(b * 100 + j)]);
    await db.commit(() => {
      db.insertContacts(rows, b);
      db.markBatch(b, 100);
    });
    process.stdout.write(b + '\n'); // synchronous for pipes on Linux
  }
} else if (cmd === 'check') {
  const L = Number(a4);
  const out = { L };
  try {
    const db = await openCfg(cfgName, a3);
    out.integrity = db.integrity();
    const { marks, counts } = db.batches();
    const M = marks.length ? marks[marks.length - 1][0] : 0;
    out.M = M;
    const gaps = marks.some(([id], i) => id !== i + 1);
    const partial = marks.some(([id, n]) => counts.get(id) !== n) || [...counts.keys()].some((b) => b > M);
    out.ok = (out.integrity === 'ok' || String(out.integrity).startsWith('walked')) && !gaps && !partial && M >= L && M <= L + 1;
    if (gaps) out.gaps = true;
    if (partial) out.partial = true;
    await db.close();
  } catch (e) {
    out.ok = false;
    out.error = String(e);
  }
  console.log(JSON.stringify(out));
} else if (cmd === 'run') {
  const times = Number(a3 || 10);
  const results = [];
  for (let t = 0; t < times; t++) {
    const dir = freshDir('torn-' + cfgName);
    const child = spawn(process.execPath, [self, 'child', cfgName, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    const firstLine = new Promise((res) =>
      child.stdout.on('data', (d) => {
        buf += d;
        res();
      }),
    );
    const exited = new Promise((res) => child.on('close', (code, sig) => res(sig || code)));
    await firstLine;
    await new Promise((r) => setTimeout(r, 100 + Math.random() * 1400));
    process.kill(child.pid, 'SIGKILL');
    const sig = await exited;
    await new Promise((r) => setImmediate(r)); // drain remaining stdout data events
    const lines = buf.trim().split('\n');
    const L = Number(lines[lines.length - 1]);
    const chk = await new Promise((res) => {
      const c = spawn(process.execPath, [self, 'check', cfgName, dir, String(L)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let o = '';
      c.stdout.on('data', (d) => (o += d));
      c.on('exit', () => res(JSON.parse(o)));
    });
    results.push({ sig, ...chk });
    rmDir(dir);
  }
  const ok = results.filter((r) => r.ok).length;
  console.log(
    JSON.stringify({ config: cfgName, ok: `${ok}/${times}`, runs: results.map((r) => `${r.L}->${r.M}${r.ok ? '' : '!' + (r.error || (r.gaps ? 'gaps' : '') + (r.partial ? 'partial' : ''))}`) }),
  );
}
