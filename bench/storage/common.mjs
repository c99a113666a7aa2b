// Shared helpers and data generators for the sendpool DB benchmark.
import fs from 'node:fs';
import path from 'node:path';

export const DATA_ROOT = '/work/dbbench/data';

export function freshDir(tag) {
  const dir = path.join(DATA_ROOT, `${tag}-${process.pid}-${Date.now()}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
export function rmDir(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
}

export function dirBytes(dir) {
  let total = 0;
  const files = {};
  for (const f of fs.readdirSync(dir)) {
    const st = fs.statSync(path.join(dir, f));
    if (st.isFile()) {
      total += st.size;
      files[f] = st.size;
    } else if (st.isDirectory()) {
      const sub = dirBytes(path.join(dir, f));
      total += sub.total;
      for (const [k, v] of Object.entries(sub.files)) files[f + '/' + k] = v;
    }
  }
  return { total, files };
}

// deterministic pseudo random
let seed = 12345;
export function rnd() {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
}
function digits(n) {
  let s = '';
  for (let i = 0; i < n; i++) s += (rnd() * 10) | 0;
  return s;
}

// ~120 bytes of JSON: phone (13 digits), two variables, a data object
export function makeContact(id) {
  return {
    phone: '49' + digits(11),
    vars: { name: 'Customer' + (id % 9973), code: 'C' + digits(6) },
    data: { ref: id, seg: 'a' + (id % 17), ts: 1718000000 + (id % 100000) },
  };
}
export const OUTBOX_BODY = 'x'.repeat(400 - 60); // padded below with JSON envelope → ~400 bytes
export function makeOutbox(id) {
  return JSON.stringify({ id, event: 'delivered', at: 1718000000 + id, pad: OUTBOX_BODY });
}
export function makeLimit(n) {
  // ~64 bytes
  return JSON.stringify({ n: 'num' + n, tokens: (rnd() * 100) | 0, resetAt: 1718000000 + n });
}

export function stats(arr) {
  const a = [...arr].sort((x, y) => x - y);
  const q = (p) => a[Math.min(a.length - 1, Math.floor(p * (a.length - 1) + 0.5))];
  return { n: a.length, median: +q(0.5).toFixed(3), p99: +q(0.99).toFixed(3), max: +a[a.length - 1].toFixed(3) };
}
export const now = () => performance.now();
