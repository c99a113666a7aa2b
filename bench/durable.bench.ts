/**
 * Load and restart bench of the durable reference server (not a test):
 *
 *     npx tsup --silent && npx tsx bench/durable.bench.ts
 *
 * sendpool is loaded from dist/ (the build a host runs, on plain Node code), the script itself
 * through tsx like bench/server.bench.ts. Servers run in child processes, so autocannon (in this
 * process) does not share their event loop; on a 2-core machine they still share the CPUs.
 * Every server uses examples/fleet.json with all its numbers paused (engine.setNumberStatus), so
 * nothing is sent and only intake and the store are measured. Three parts:
 *
 * 1. intake: POST /messenger/messages/ with 1,000 contacts per request as fast as it goes, the
 *    server durable (buildServer + openSqliteStorage on a temp dir, engine with trackChanges) and
 *    not (state in memory), in alternating order, each in a fresh process: contacts accepted per
 *    second, p50/p99 of the POST, and for the durable one the commits (group commit: requests per
 *    write, time inside storage.write and engine.takeChanges).
 * 2. restart: a store of 1,000,000 queued contacts is filled through the durable intake and left
 *    by kill -9; each repeat copies it to a fresh directory and times a fresh process: runServer
 *    ({ dataDir }) up to listening, the same by steps (open, load, snapshotFromRows, createEngine,
 *    buildServer, listen), and `node dist/cli.js serve --data-dir` from spawn to "listening".
 * 3. disk: sizes of sendpool.db and -wal as kill -9 left them and after PRAGMA
 *    wal_checkpoint(TRUNCATE), per queued contact, with what the rows hold.
 *
 * Contacts are shaped like the README/docs/server.md example: a phone, two template variables and
 * a small data object. Medians of BENCH_REPEATS processes, with [min..max].
 *
 * Options (environment): BENCH_PARTS (default "intake,restart,disk"), BENCH_SECONDS (10),
 * BENCH_CONNECTIONS (10), BENCH_REPEATS (3), BENCH_CONTACTS (store size for restart and disk,
 * 1000000), BENCH_PROFILE (a directory: server processes run with node --cpu-prof there, and
 * the top self-time functions of each profile are printed), BENCH_JSON (a file to write the
 * figures to).
 *
 * `npx tsx bench/durable.bench.ts top FILE.cpuprofile [N]` prints a profile's top self-time functions.
 * Method and latest figures: docs/benchmarks.md, "The durable server".
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { next, stop } from './child-ipc.js';
import { checkBuild } from './dist-check.js';

type EngineModule = typeof import('../src/index.js');
type ServerModule = typeof import('../src/server/index.js');
type Engine = ReturnType<EngineModule['createEngine']>;
type ServerStorage = import('../src/server/index.js').ServerStorage;

const KEY = 'bench-key-0123456789abcdef';
const here = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FLEET = join(ROOT, 'examples/fleet.json');
const DB = 'sendpool.db';
const CONTACTS_PER_REQUEST = 1000;

// ---------------------------------------------------------------------------------------------
// Shared helpers

async function loadSendpool(): Promise<{ core: EngineModule; server: ServerModule }> {
  const core = (await import(join(ROOT, 'dist/index.js'))) as EngineModule;
  const server = (await import(join(ROOT, 'dist/server.js'))) as ServerModule;
  return { core, server };
}

function pauseAll(engine: Engine): void {
  for (const n of engine.numbers()) engine.setNumberStatus(n.phone, 'paused');
}

/**
 * A request body whose phones are all new to the campaign: the server sends a phone once per
 * campaign, so the same body again would be rejected as duplicated. Phones are `55119`, the
 * request's number (5 digits) and the contact's (3 digits).
 */
function bodyTemplate(): string {
  if (CONTACTS_PER_REQUEST > 1000) throw new Error('durable bench: at most 1,000 contacts per request');
  const contacts = Array.from({ length: CONTACTS_PER_REQUEST }, (_, i) => ({
    phone_number: `55119@@@@@${String(i).padStart(3, '0')}`,
    template_variables: [`Client ${i}`, `R$ ${i},00`],
    data: { customer: String(100_000 + i) },
  }));
  return JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: 1, contacts });
}
const TEMPLATE = bodyTemplate();
let requestNumber = 0;
/** autocannon's requests, each with the next body. */
function distinctBodies(): autocannon.Request[] {
  return [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: TEMPLATE.replaceAll('@@@@@', String(requestNumber++ % 100_000).padStart(5, '0')) }) }];
}

function fileSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function fmt(x: number, digits = 0): string {
  return x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** "median [min..max]" */
function mr(xs: readonly number[], digits = 0): string {
  if (xs.length === 1) return fmt(xs[0]!, digits);
  return `${fmt(median(xs), digits)} [${fmt(Math.min(...xs), digits)}..${fmt(Math.max(...xs), digits)}]`;
}

function load(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}

// ---------------------------------------------------------------------------------------------
// Child processes

interface ServeOptions {
  readonly durable: boolean;
  readonly dir?: string;
}

interface CommitStats {
  writes: number;
  writeMs: number;
  maxWriteMs: number;
  takeChangesMs: number;
}

/** A server on buildServer, all numbers paused; durable: openSqliteStorage(dir) and trackChanges. */
async function serveChild(o: ServeOptions): Promise<void> {
  const { core, server } = await loadSendpool();
  const fleet: unknown = JSON.parse(readFileSync(FLEET, 'utf8'));
  const commits: CommitStats = { writes: 0, writeMs: 0, maxWriteMs: 0, takeChangesMs: 0 };
  let storage: ServerStorage | undefined;
  const engine = core.createEngine(fleet, o.durable ? { trackChanges: true } : {});
  if (o.durable) {
    const inner = await server.openSqliteStorage(o.dir!);
    // Counted around the calls (bench instrumentation; the server's code is unchanged).
    storage = {
      load: () => inner.load(),
      write(step) {
        const t = performance.now();
        inner.write(step);
        const d = performance.now() - t;
        commits.writes++;
        commits.writeMs += d;
        if (d > commits.maxWriteMs) commits.maxWriteMs = d;
      },
      close: () => inner.close(),
    };
    const take = engine.takeChanges.bind(engine);
    (engine as { takeChanges: Engine['takeChanges'] }).takeChanges = (options) => {
      const t = performance.now();
      const changes = take(options);
      commits.takeChangesMs += performance.now() - t;
      return changes;
    };
  }
  pauseAll(engine);
  const app = server.buildServer({
    engine,
    apiKeys: [{ key: KEY, companyId: 1 }],
    logger: false,
    maxQueuedContacts: 50_000_000,
    ...(storage ? { storage } : {}),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  process.on('message', (m: { op: string }) => {
    if (m.op === 'stats') {
      const s = engine.stats();
      process.send?.({ op: 'stats', queued: s.queued, commits: { ...commits }, rss: process.memoryUsage().rss });
    } else if (m.op === 'reset') {
      Object.assign(commits, { writes: 0, writeMs: 0, maxWriteMs: 0, takeChangesMs: 0 });
      process.send?.({ op: 'reset' });
    } else if (m.op === 'exit') process.exit(0); // --cpu-prof writes its profile on exit
  });
  process.send?.({ op: 'ready', address: `http://127.0.0.1:${port}` });
}

/** A restart: runServer({ dataDir }) whole, or the same steps one by one, timed. */
async function restartChild(dir: string, split: boolean): Promise<void> {
  const startedAt = performance.now(); // ms since this process started
  const { core, server } = await loadSendpool();
  const importedAt = performance.now();
  const times: Record<string, number> = {};
  let engine: Engine;
  if (!split) {
    const t = performance.now();
    const running = await server.runServer({ fleetFile: FLEET, dataDir: dir, port: 0, apiKeys: [{ key: KEY, companyId: 1 }], logger: false, maxQueuedContacts: 50_000_000, handleSignals: false });
    times['runServer'] = performance.now() - t;
    engine = running.server.sendpool.engine;
  } else {
    // What runServer does, step by step (src/server/run-server.ts).
    let t = performance.now();
    const lap = (name: string): void => {
      const now = performance.now();
      times[name] = now - t;
      t = now;
    };
    const fleet: unknown = JSON.parse(readFileSync(FLEET, 'utf8'));
    lap('read fleet');
    const storage = await server.openSqliteStorage(dir);
    lap('openSqliteStorage');
    const stored = storage.load();
    lap('storage.load');
    if (stored === undefined) throw new Error(`${dir}: empty store`);
    const snapshot = core.snapshotFromRows(stored.rows, Date.now());
    lap('snapshotFromRows');
    engine = core.createEngine(fleet, { snapshot, trackChanges: true });
    lap('createEngine');
    const app = server.buildServer({
      engine,
      apiKeys: [{ key: KEY, companyId: 1 }],
      logger: false,
      maxQueuedContacts: 50_000_000,
      storage,
      stored,
      storeEverything: false,
    });
    lap('buildServer');
    await app.listen({ port: 0, host: '127.0.0.1' });
    lap('listen');
  }
  const listeningAt = performance.now();
  const queued = engine.stats().queued;
  process.send?.({ op: 'restarted', times, importMs: importedAt - startedAt, sinceStartMs: listeningAt, queued, rss: process.memoryUsage().rss });
  process.on('message', (m: { op: string }) => {
    if (m.op === 'exit') process.exit(0);
  });
}

// ---------------------------------------------------------------------------------------------
// The parent: load generator and report

const env = process.env;
const SECONDS = Number(env['BENCH_SECONDS'] ?? 10);
const CONNECTIONS = Number(env['BENCH_CONNECTIONS'] ?? 10);
const REPEATS = Number(env['BENCH_REPEATS'] ?? 3);
const STORE_CONTACTS = Number(env['BENCH_CONTACTS'] ?? 1_000_000);
const PARTS = new Set((env['BENCH_PARTS'] ?? 'intake,restart,disk').split(','));
const PROFILE = env['BENCH_PROFILE'];
const headers = { 'x-api-key-id': KEY, 'content-type': 'application/json' };

function startChild(role: string, args: Record<string, unknown>, profile: string | undefined): ChildProcess {
  // Node names each thread's profile CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; the main
  // thread's (thread 0) is kept as <role>-<pid>.cpuprofile, tsx's loader thread's is dropped.
  const execArgv = [...process.execArgv, ...(profile !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [])];
  const child = fork(here, [], { env: { ...env, SENDPOOL_DURABLE_CHILD: JSON.stringify({ role, ...args }) }, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  if (profile !== undefined) {
    child.once('exit', () => {
      for (const f of readdirSync(profile)) {
        const m = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(f);
        if (m === null || Number(m[1]) !== child.pid) continue;
        if (m[2] === '0') renameSync(join(profile, f), join(profile, `${role}-${child.pid}.cpuprofile`));
        else rmSync(join(profile, f));
      }
    });
  }
  return child;
}

interface ServeStats {
  queued: number;
  commits: CommitStats;
  rss: number;
}

interface IntakeRun {
  mode: 'memory' | 'durable';
  contactsPerSecond: number;
  requests: number;
  non2xx: number;
  p50: number;
  p99: number;
  writes?: number;
  requestsPerWrite?: number;
  writeMsMean?: number;
  writeMsMax?: number;
  takeChangesMsMean?: number;
  dbBytesPerContact?: number;
  load: string;
}

async function intakeRun(mode: 'memory' | 'durable', post: string): Promise<IntakeRun> {
  const dir = mode === 'durable' ? mkdtempSync(join(tmpdir(), 'sendpool-bench-intake-')) : undefined;
  const child = startChild('serve', { durable: mode === 'durable', dir }, PROFILE);
  try {
    const { address } = await next<{ address: string }>(child, 'ready');
    const url = `${address}/messenger/messages/`;
    // Warm-up (JIT, connection pools, the first pages of the file).
    await autocannon({ url, method: 'POST', headers, body: post, requests: distinctBodies(), duration: 2, connections: 4 });
    child.send({ op: 'reset' });
    await next(child, 'reset');
    const r = await autocannon({ url, method: 'POST', headers, body: post, requests: distinctBodies(), duration: SECONDS, connections: CONNECTIONS });
    child.send({ op: 'stats' });
    const s = await next<ServeStats>(child, 'stats');
    const run: IntakeRun = {
      mode,
      contactsPerSecond: (r['2xx'] * CONTACTS_PER_REQUEST) / r.duration,
      requests: r.requests.total,
      non2xx: r.non2xx,
      p50: r.latency.p50,
      p99: r.latency.p99,
      load: load(),
    };
    if (mode === 'durable') {
      const c = s.commits;
      run.writes = c.writes;
      run.requestsPerWrite = r['2xx'] / Math.max(1, c.writes);
      run.writeMsMean = c.writeMs / Math.max(1, c.writes);
      run.writeMsMax = c.maxWriteMs;
      run.takeChangesMsMean = c.takeChangesMs / Math.max(1, c.writes);
      run.dbBytesPerContact = (fileSize(join(dir!, DB)) + fileSize(join(dir!, `${DB}-wal`))) / s.queued;
    }
    return run;
  } finally {
    await stop(child);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

async function intakePart(report: Record<string, unknown>): Promise<void> {
  const post = TEMPLATE.replaceAll('@@@@@', '00000');
  console.error(
    `\n# intake: ${SECONDS} s per run, ${CONNECTIONS} connections, ${CONTACTS_PER_REQUEST} contacts/request (${post.length.toLocaleString('en')} bytes), ${REPEATS} repeats; load ${load()}`,
  );
  const runs: IntakeRun[] = [];
  for (let i = 0; i < REPEATS; i++) {
    // Alternate the order so neither mode always runs on the machine's quieter moments.
    for (const mode of i % 2 === 0 ? (['memory', 'durable'] as const) : (['durable', 'memory'] as const)) {
      const run = await intakeRun(mode, post);
      runs.push(run);
      console.error(
        `  ${mode.padEnd(7)} ${fmt(run.contactsPerSecond)} contacts/s, p50 ${run.p50} ms, p99 ${run.p99} ms, non-2xx ${run.non2xx}` +
          (run.writes !== undefined
            ? `, ${run.writes} writes (${fmt(run.requestsPerWrite!, 2)} requests each, ${fmt(run.writeMsMean!, 1)} ms mean, ${fmt(run.writeMsMax!, 1)} ms max; takeChanges ${fmt(run.takeChangesMsMean!, 2)} ms), ${fmt(run.dbBytesPerContact!)} B/contact on disk`
            : '') +
          `; load ${run.load}`,
      );
    }
  }
  const of = (mode: string) => runs.filter((r) => r.mode === mode);
  const pick = (mode: string, f: (r: IntakeRun) => number) => of(mode).map(f);
  report['intake'] = runs;
  console.log(`\nPOST /messenger/messages/, ${CONTACTS_PER_REQUEST} contacts/request, ${CONNECTIONS} connections, ${SECONDS} s, median [min..max] of ${REPEATS}:`);
  for (const mode of ['memory', 'durable']) {
    console.log(`  ${mode.padEnd(7)} ${mr(pick(mode, (r) => r.contactsPerSecond))} contacts/s; p50 ${mr(pick(mode, (r) => r.p50))} ms; p99 ${mr(pick(mode, (r) => r.p99))} ms`);
  }
  console.log(
    `  durable commits: ${mr(
      pick('durable', (r) => r.requestsPerWrite!),
      2,
    )} requests per write; storage.write ${mr(
      pick('durable', (r) => r.writeMsMean!),
      1,
    )} ms mean, ` +
      `${mr(
        pick('durable', (r) => r.writeMsMax!),
        1,
      )} ms max; takeChanges ${mr(
        pick('durable', (r) => r.takeChangesMsMean!),
        2,
      )} ms per write`,
  );
  console.log(`  durable/memory: ${(median(pick('durable', (r) => r.contactsPerSecond)) / median(pick('memory', (r) => r.contactsPerSecond))).toFixed(2)}x (goal: durable >= 100,000 contacts/s)`);
}

/** Fills a store with `contacts` queued contacts through the durable intake, then kill -9. */
async function populate(dir: string, contacts: number): Promise<{ seconds: number; contactsPerSecond: number }> {
  const child = startChild('serve', { durable: true, dir }, undefined);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const { address } = await next<{ address: string }>(child, 'ready');
    const requests = Math.ceil(contacts / CONTACTS_PER_REQUEST);
    const connections = Math.min(CONNECTIONS, requests); // autocannon refuses more connections than requests
    const t = performance.now();
    const r = await autocannon({ url: `${address}/messenger/messages/`, method: 'POST', headers, requests: distinctBodies(), amount: requests, connections, timeout: 60 });
    const seconds = (performance.now() - t) / 1000;
    child.send({ op: 'stats' });
    const s = await next<ServeStats>(child, 'stats');
    if (r['2xx'] !== requests || s.queued !== requests * CONTACTS_PER_REQUEST) {
      throw new Error(`populate: ${r['2xx']} of ${requests} requests answered 2xx, ${s.queued} contacts queued`);
    }
    return { seconds, contactsPerSecond: s.queued / seconds };
  } finally {
    // The store as kill -9 leaves it.
    child.kill('SIGKILL');
    await exited;
  }
}

interface Restarted {
  times: Record<string, number>;
  importMs: number;
  sinceStartMs: number;
  queued: number;
  rss: number;
}

async function restartOnce(source: string, split: boolean, profile: string | undefined): Promise<Restarted & { wallMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sendpool-bench-restart-'));
  cpSync(source, dir, { recursive: true });
  try {
    const t = performance.now();
    const child = startChild(split ? 'restart-split' : 'restart', { dir }, profile);
    let r: Restarted;
    try {
      r = await next<Restarted>(child, 'restarted');
    } catch (e) {
      child.kill('SIGKILL');
      throw e;
    }
    const wallMs = performance.now() - t;
    await stop(child);
    if (r.queued !== STORE_CONTACTS) throw new Error(`restart: ${r.queued} contacts queued after restart, expected ${STORE_CONTACTS}`);
    return { ...r, wallMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `node dist/cli.js serve FLEET --port 0 --data-dir DIR`: spawn to "listening". */
async function restartCli(source: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'sendpool-bench-restart-'));
  cpSync(source, dir, { recursive: true });
  try {
    const t = performance.now();
    const child = spawn(process.execPath, [join(ROOT, 'dist/cli.js'), 'serve', FLEET, '--port', '0', '--data-dir', dir], {
      env: { ...env, SENDPOOL_API_KEYS: `1:${KEY}` },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const ms = await new Promise<number>((resolve, reject) => {
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('listening on')) resolve(performance.now() - t);
      });
      child.once('exit', (code) => reject(new Error(`sendpool serve exited (${code}): ${err}`)));
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function restartPart(report: Record<string, unknown>, source: string): Promise<void> {
  console.error(`\n# restart: ${fmt(STORE_CONTACTS)} queued contacts, ${REPEATS} repeats; load ${load()}`);
  const whole: (Restarted & { wallMs: number })[] = [];
  const split: (Restarted & { wallMs: number })[] = [];
  const cli: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const w = await restartOnce(source, false, undefined);
    whole.push(w);
    const s = await restartOnce(source, true, PROFILE);
    split.push(s);
    const c = await restartCli(source);
    cli.push(c);
    console.error(
      `  runServer ${fmt(w.times['runServer']!)} ms (process start to listening ${fmt(w.sinceStartMs)} ms, RSS ${fmt(w.rss / 2 ** 20)} MiB); ` +
        `steps ${Object.entries(s.times)
          .map(([k, v]) => `${k} ${fmt(v)}`)
          .join(', ')} ms; sendpool serve ${fmt(c)} ms; load ${load()}`,
    );
  }
  report['restart'] = { whole, split, cliMs: cli };
  console.log(`\nRestart with ${fmt(STORE_CONTACTS)} queued contacts (store left by kill -9, warm page cache), median [min..max] of ${REPEATS}:`);
  console.log(`  runServer({ dataDir }) to listening: ${mr(whole.map((w) => w.times['runServer']!))} ms (goal < 5,000 ms)`);
  console.log(`  process start to listening (node + tsx + imports + runServer): ${mr(whole.map((w) => w.sinceStartMs))} ms; imports ${mr(whole.map((w) => w.importMs))} ms`);
  console.log(`  \`node dist/cli.js serve --data-dir\`, spawn to "listening": ${mr(cli)} ms`);
  for (const k of Object.keys(split[0]!.times)) console.log(`  ${k.padEnd(18)} ${mr(split.map((s) => s.times[k]!))} ms`);
  console.log(`  RSS after restart: ${mr(whole.map((w) => w.rss / 2 ** 20))} MiB`);
}

async function diskPart(report: Record<string, unknown>, source: string): Promise<void> {
  const Libsql = ((await import('libsql')) as unknown as { default: new (path: string) => { prepare(sql: string): { get(): Record<string, unknown> }; exec(sql: string): void; close(): void } })
    .default;
  const asLeft = { db: fileSize(join(source, DB)), wal: fileSize(join(source, `${DB}-wal`)) };
  const dir = mkdtempSync(join(tmpdir(), 'sendpool-bench-disk-'));
  cpSync(source, dir, { recursive: true });
  try {
    const db = new Libsql(join(dir, DB));
    const checkpoint = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get();
    const rows = db.prepare('SELECT count(*) AS n, sum(length(contacts)) AS contacts, sum(length(row)) AS row FROM submissions').get();
    const pages = db.prepare('PRAGMA page_count').get();
    const pageSize = db.prepare('PRAGMA page_size').get();
    const free = db.prepare('PRAGMA freelist_count').get();
    const sample = db.prepare('SELECT contacts FROM submissions LIMIT 1').get();
    const after = { db: fileSize(join(dir, DB)), wal: fileSize(join(dir, `${DB}-wal`)) };
    db.close();
    const n = STORE_CONTACTS;
    const first = (JSON.parse(String(sample?.['contacts'])) as unknown[])[0];
    const d = {
      contacts: n,
      asLeftByKill: asLeft,
      afterCheckpoint: after,
      checkpoint,
      submissions: Number(rows?.['n']),
      contactsJsonBytes: Number(rows?.['contacts']),
      submissionRowJsonBytes: Number(rows?.['row']),
      pages: Number(Object.values(pages ?? {})[0]),
      pageSize: Number(Object.values(pageSize ?? {})[0]),
      freePages: Number(Object.values(free ?? {})[0]),
      storedContact: first,
    };
    report['disk'] = d;
    console.log(`\nOn disk, ${fmt(n)} queued contacts in ${fmt(d.submissions)} submissions:`);
    console.log(`  as kill -9 left it: sendpool.db ${fmt(asLeft.db)} B + -wal ${fmt(asLeft.wal)} B = ${fmt((asLeft.db + asLeft.wal) / n, 1)} B/contact`);
    console.log(`  after wal_checkpoint(TRUNCATE): sendpool.db ${fmt(after.db)} B + -wal ${fmt(after.wal)} B = ${fmt((after.db + after.wal) / n, 1)} B/contact`);
    console.log(
      `  rows: contacts JSON ${fmt(d.contactsJsonBytes / n, 1)} B/contact, submission state JSON ${fmt(d.submissionRowJsonBytes / n, 1)} B/contact; ${fmt(d.pages)} pages of ${d.pageSize} B, ${fmt(d.freePages)} free`,
    );
    console.log(`  one stored contact: ${JSON.stringify(first)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Top self-time functions of a .cpuprofile. */
export function profileTop(file: string, n = 15): string {
  interface Node {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }
  const p = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const self = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const node = byId.get(p.samples[i]!)!;
    const dt = p.timeDeltas[i] ?? 0;
    total += dt;
    const f = node.callFrame;
    const url = f.url.replace(/^file:\/\//, '').replace(ROOT, '');
    const key = `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  const idle = self.get('(idle)') ?? 0;
  self.delete('(idle)');
  const busy = total - idle;
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  return [
    `${file}: ${fmt(total / 1000)} ms sampled, ${fmt(busy / 1000)} ms busy (percentages of busy time)`,
    ...top.map(([k, us]) => `  ${fmt(us / 1000).padStart(7)} ms ${((100 * us) / busy).toFixed(1).padStart(5)} %  ${k}`),
  ].join('\n');
}

async function main(): Promise<void> {
  checkBuild('durable');
  const report: Record<string, unknown> = {
    machine: `${cpus()[0]?.model ?? 'cpu'}, ${cpus().length} cores, ${process.platform} ${process.arch}, Node ${process.version}`,
    date: new Date().toISOString(),
    settings: { seconds: SECONDS, connections: CONNECTIONS, repeats: REPEATS, storeContacts: STORE_CONTACTS },
    loadAtStart: load(),
  };
  console.error(`sendpool durable bench: ${String(report['machine'])}; load average ${load()}`);
  if (PARTS.has('intake')) await intakePart(report);
  if (PARTS.has('restart') || PARTS.has('disk')) {
    const source = mkdtempSync(join(tmpdir(), 'sendpool-bench-store-'));
    try {
      console.error(`\n# filling a store with ${fmt(STORE_CONTACTS)} queued contacts through the durable intake (${CONNECTIONS} connections), then kill -9; load ${load()}`);
      const filled = await populate(source, STORE_CONTACTS);
      report['populate'] = filled;
      console.error(`  ${fmt(filled.seconds, 1)} s (${fmt(filled.contactsPerSecond)} contacts/s)`);
      if (PARTS.has('restart')) await restartPart(report, source);
      if (PARTS.has('disk')) await diskPart(report, source);
    } finally {
      rmSync(source, { recursive: true, force: true });
    }
  }
  report['loadAtEnd'] = load();
  console.log(`\nload average at start ${String(report['loadAtStart'])}, at end ${String(report['loadAtEnd'])} (1, 5, 15 min; ${cpus().length} cores)`);
  if (env['BENCH_JSON']) writeFileSync(env['BENCH_JSON'], `${JSON.stringify(report, null, 2)}\n`);
  if (PROFILE !== undefined) {
    for (const f of readdirSync(PROFILE).filter((x) => x.endsWith('.cpuprofile'))) console.log(`\n${profileTop(join(PROFILE, f))}`);
  }
}

const role = env['SENDPOOL_DURABLE_CHILD'];
if (role !== undefined) {
  const o = JSON.parse(role) as { role: string; durable?: boolean; dir?: string };
  if (o.role === 'serve') await serveChild({ durable: o.durable === true, ...(o.dir !== undefined ? { dir: o.dir } : {}) });
  else if (o.role === 'restart') await restartChild(o.dir!, false);
  else if (o.role === 'restart-split') await restartChild(o.dir!, true);
} else if (process.argv[2] === 'top') console.log(profileTop(process.argv[3]!, Number(process.argv[4] ?? 15)));
else await main();
