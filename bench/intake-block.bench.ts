/**
 * How long one large POST /messenger/messages/ holds the server's event loop, and what that does
 * to a GET /messenger/businesses/ client (not a test):
 *
 *     npx tsup --silent && npx tsx bench/intake-block.bench.ts
 *
 * sendpool is loaded from dist/ (the build a host runs), the script itself through tsx. Three
 * processes on the same machine:
 *
 * - the server: buildServer, state in memory, the simulated channel, examples/fleet.json with every
 *   number paused (nothing is sent: intake and reads are measured), logger off, an intake bound
 *   large enough for the run; it measures its own event loop with perf_hooks
 *   `monitorEventLoopDelay` (1 ms resolution): the longest delay (max) is the longest block;
 * - a reader (this process): autocannon, GET /messenger/businesses/ at a fixed 2,000 requests/s
 *   over 10 connections: latency p50 / p99;
 * - a writer (a child process): POST /messenger/messages/ at a fixed pace of 5,000 contacts/s,
 *   open loop (a request leaves at its time whether or not the previous one was answered), each
 *   request with its own campaign id.
 *
 * Scenarios, each BENCH_SECONDS (20) after 2 s of warm-up, each in a fresh server process (warmed
 * up by five requests of its own): `get` (the reader alone: the machine's floor), `1k` (the writer
 * sends 1,000-contact requests, 5 a second), `10k` (10,000-contact requests, one every 2 s).
 * BENCH_RUNS (3) runs; the table shows medians with [min..max]. BENCH_BUILDS compares builds in
 * the same runs (`before=/path/to/a/checkout,after=.`: each scenario runs on each build in turn,
 * so both see the same machine); default: this checkout's dist/.
 *
 * The server also reports the CPU time it used during its longest event-loop gaps (a gap with
 * little CPU is the process waiting for a CPU, which happens on a shared machine) and its longest
 * garbage-collection pause (perf_hooks `gc` entries), so a block of work can be told from the
 * machine and from a collection.
 *
 * Contacts: a phone, a CPF, a contract, two template variables and a `data` object of four keys
 * (about 233 bytes each: 2.3 MB for 10,000).
 *
 * `BENCH_PARTS=stages` (default "stages,load") times, in this process, each step of the intake of
 * one 10,000-contact body on its own: JSON.parse, the contract's parse, the same two in steps
 * (startJsonBody, startSendRequest: all steps and the longest, when the build has them), the
 * mapping, engine.submit, and what a worker thread would cost to hand a parsed body back (v8
 * serialize / deserialize, the structured clone of postMessage).
 *
 * Options (environment): BENCH_PARTS, BENCH_SECONDS, BENCH_RUNS, BENCH_SCENARIOS (default
 * "get,1k,10k"), BENCH_BUILDS, BENCH_JSON (a file for the figures). Method and figures: docs/benchmarks.md, "Large
 * requests and the event loop".
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver, constants as perfConstants, monitorEventLoopDelay } from 'node:perf_hooks';
import { deserialize, serialize } from 'node:v8';
import autocannon from 'autocannon';
import { next, stop } from './child-ipc.js';
import { checkBuild } from './dist-check.js';

type EngineModule = typeof import('../src/index.js');
type ServerModule = typeof import('../src/server/index.js');
type ContractModule = Pick<typeof import('../src/contract/index.js'), 'parseSendRequest' | 'toSubmission'>;

const KEY = 'bench-key-0123456789abcdef';
const here = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FLEET = join(ROOT, 'examples/fleet.json');
const env = process.env;
const SECONDS = Number(env['BENCH_SECONDS'] ?? 20);
const RUNS = Number(env['BENCH_RUNS'] ?? 3);
const PARTS = new Set((env['BENCH_PARTS'] ?? 'stages,load').split(','));
const SCENARIOS = (env['BENCH_SCENARIOS'] ?? 'get,1k,10k').split(',');
/** Builds to compare, `label=dir` (a package root with its dist/), each run alternating between them. */
const BUILDS = (env['BENCH_BUILDS'] ?? `current=${ROOT}`).split(',').map((b) => {
  const at = b.indexOf('=');
  return at < 0 ? { label: b, dir: b } : { label: b.slice(0, at), dir: b.slice(at + 1) };
});
const GET_RATE = 2000;
const CONTACTS_PER_SECOND = 5000;
const headers = { 'x-api-key-id': KEY, 'content-type': 'application/json' };

// ---------------------------------------------------------------------------------------------
// Shared helpers

/** A send body of `n` contacts, as text around a campaign id placeholder (each request its own campaign). */
function bodyParts(n: number): { before: string; after: string } {
  const contacts = Array.from({ length: n }, (_, i) => ({
    phone_number: `55119${String(80_000_000 + i).padStart(8, '0')}`,
    document: '52998224725',
    contract: `CONTRACT-${100_000 + i}`,
    template_variables: [`Client number ${i}`, `R$ ${i},00`],
    data: { customer: String(100_000 + i), segment: 'retail', region: 'south-east', order: `ORD-${i}` },
  }));
  const text = JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: 999_999_999, contacts });
  const [before, after] = text.split('999999999') as [string, string];
  return { before, after };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function fmt(x: number, digits = 1): string {
  return x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** "median [min..max]" */
function mr(xs: readonly number[], digits = 1): string {
  if (xs.length === 0) return '–';
  if (xs.length === 1) return fmt(xs[0]!, digits);
  return `${fmt(median(xs), digits)} [${fmt(Math.min(...xs), digits)}..${fmt(Math.max(...xs), digits)}]`;
}

const load = (): string => loadavg()[0]!.toFixed(2);

// ---------------------------------------------------------------------------------------------
// The server process

async function serverChild(o: { dir: string }): Promise<void> {
  const core = (await import(join(o.dir, 'dist/index.js'))) as EngineModule;
  const server = (await import(join(o.dir, 'dist/server.js'))) as ServerModule;
  const engine = core.createEngine(JSON.parse(readFileSync(FLEET, 'utf8')));
  for (const n of engine.numbers()) engine.setNumberStatus(n.phone, 'paused');
  const app = server.buildServer({
    engine,
    channel: server.createSimulatedChannel(),
    apiKeys: [{ key: KEY, companyId: 1 }],
    logger: false,
    maxQueuedContacts: 50_000_000,
    limits: { maxContacts: 10_000 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  // Warm-up of the intake path (schema compiling, JIT) before anything is measured.
  for (const n of [1000, 1000, 1000, 10_000, 10_000]) {
    const { before, after } = bodyParts(n);
    const res = await app.inject({ method: 'POST', url: '/messenger/messages/', headers, payload: before + '1' + after });
    if (res.statusCode !== 202) throw new Error(`intake-block bench: warm-up POST answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  }
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  // The longest gap between two ticks of a 1 ms timer, and the CPU time the process used during
  // it: on a shared machine a gap can be time the process waited for a CPU, which the CPU time
  // tells apart from work (process.cpuUsage counts every thread: V8's helper threads add to it).
  const blocks = { maxGapMs: 0, maxCpuMs: 0, cpuOfMaxGapMs: 0 };
  let lastTick = performance.now();
  let lastCpu = process.cpuUsage();
  setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage();
    const gap = now - lastTick;
    const used = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
    if (gap > blocks.maxGapMs) Object.assign(blocks, { maxGapMs: gap, cpuOfMaxGapMs: used });
    if (used > blocks.maxCpuMs && gap > 2) blocks.maxCpuMs = Math.min(used, gap);
    lastTick = now;
    lastCpu = cpu;
  }, 1).unref();
  // Garbage collection pauses of the main thread, to tell them from the intake's own blocks.
  const gc = { maxMs: 0, maxKind: 0, totalMs: 0, over10: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.totalMs += e.duration;
      if (e.duration > 10) gc.over10++;
      if (e.duration > gc.maxMs) {
        gc.maxMs = e.duration;
        gc.maxKind = (e as { detail?: { kind?: number } }).detail?.kind ?? 0;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('message', (m: { op: string }) => {
    if (m.op === 'reset') {
      delay.reset();
      Object.assign(gc, { maxMs: 0, maxKind: 0, totalMs: 0, over10: 0 });
      Object.assign(blocks, { maxGapMs: 0, maxCpuMs: 0, cpuOfMaxGapMs: 0 });
      process.send?.({ op: 'reset' });
    } else if (m.op === 'stats') {
      const ms = (ns: number): number => ns / 1e6;
      process.send?.({
        op: 'stats',
        maxMs: ms(delay.max),
        p99Ms: ms(delay.percentile(99)),
        p50Ms: ms(delay.percentile(50)),
        samples: delay.count,
        queued: engine.stats().queued,
        gc: { ...gc },
        blocks: { ...blocks },
        heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20,
      });
    } else if (m.op === 'exit') process.exit(0);
  });
  process.send?.({ op: 'ready', address: `http://127.0.0.1:${port}` });
}

// ---------------------------------------------------------------------------------------------
// The writer process: POST at a fixed pace, open loop

interface WriterResult {
  op: 'done';
  sent: number;
  status: Record<string, number>;
  latencies: number[];
}

async function writerChild(o: { address: string; contacts: number; seconds: number; firstCampaign: number }): Promise<void> {
  const { before, after } = bodyParts(o.contacts);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const url = new URL('/messenger/messages/', o.address);
  const intervalMs = (o.contacts / CONTACTS_PER_SECOND) * 1000;
  const total = Math.max(1, Math.round((o.seconds * 1000) / intervalMs));
  const status: Record<string, number> = {};
  const latencies: number[] = [];
  const post = (campaign: number): Promise<void> =>
    new Promise((resolve) => {
      const payload = before + String(campaign) + after;
      const started = performance.now();
      const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(payload) } }, (res) => {
        res.resume();
        res.on('end', () => {
          latencies.push(performance.now() - started);
          status[String(res.statusCode)] = (status[String(res.statusCode)] ?? 0) + 1;
          resolve();
        });
      });
      req.on('error', () => {
        status['error'] = (status['error'] ?? 0) + 1;
        resolve();
      });
      req.end(payload);
    });
  const t0 = performance.now();
  const pending: Promise<void>[] = [];
  for (let k = 0; k < total; k++) {
    const wait = t0 + k * intervalMs - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(post(o.firstCampaign + k));
  }
  await Promise.all(pending);
  agent.destroy();
  process.send?.({ op: 'done', sent: total, status, latencies } satisfies WriterResult, () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// The parent: reader, scenarios, report

function startChild(role: string, args: Record<string, unknown> = {}): ChildProcess {
  return fork(here, [], { env: { ...env, SENDPOOL_INTAKE_BLOCK_CHILD: JSON.stringify({ role, ...args }) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

interface GcStats {
  maxMs: number;
  /** perf_hooks' constants.NODE_PERFORMANCE_GC_*: 1 minor (scavenge), 2 major (mark-compact), 4 incremental, 8 weak callbacks. */
  maxKind: number;
  totalMs: number;
  over10: number;
}

interface ServerStats {
  gc: GcStats;
  blocks: { maxGapMs: number; maxCpuMs: number; cpuOfMaxGapMs: number };
  heapUsedMb: number;
  maxMs: number;
  p99Ms: number;
  p50Ms: number;
  samples: number;
  queued: number;
}

interface ScenarioResult {
  build: string;
  scenario: string;
  run: number;
  blockMaxMs: number;
  busyMaxMs: number;
  gcMaxMs: number;
  gcMaxKind: string;
  gcOver10Ms: number;
  heapUsedMb: number;
  delayP99Ms: number;
  getP50Ms: number;
  getP99Ms: number;
  getMaxMs: number;
  getRps: number;
  getNon2xx: number;
  posts: number;
  postStatus: Record<string, number>;
  postP50Ms: number | undefined;
  postMaxMs: number | undefined;
  queuedAdded: number;
  load: string;
}

function gcKind(kind: number): string {
  if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) return 'minor';
  if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) return 'major';
  if (kind === perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL) return 'incremental';
  if (kind === perfConstants.NODE_PERFORMANCE_GC_WEAKCB) return 'weak callbacks';
  return String(kind);
}

async function scenario(build: string, name: string, run: number, address: string, serverProc: ChildProcess, firstCampaign: number): Promise<ScenarioResult> {
  const contacts = name === '1k' ? 1000 : name === '10k' ? 10_000 : 0;
  const url = `${address}/messenger/businesses/`;
  const loadBefore = load();
  // Warm-up of the reader (JIT, connections).
  await autocannon({ url, headers, duration: 2, connections: 10, overallRate: GET_RATE });
  serverProc.send({ op: 'stats' });
  const queuedBefore = (await next<ServerStats>(serverProc, 'stats')).queued;
  serverProc.send({ op: 'reset' });
  await next(serverProc, 'reset');
  const writer = contacts > 0 ? startChild('writer', { address, contacts, seconds: SECONDS, firstCampaign }) : undefined;
  const written = writer ? next<WriterResult>(writer, 'done') : Promise.resolve(undefined);
  const get = await autocannon({ url, headers, duration: SECONDS, connections: 10, overallRate: GET_RATE });
  const w = await written;
  if (writer) await new Promise<void>((resolve) => (writer.exitCode !== null ? resolve() : writer.once('exit', () => resolve())));
  serverProc.send({ op: 'stats' });
  const s = await next<ServerStats>(serverProc, 'stats');
  const sorted = w ? [...w.latencies].sort((a, b) => a - b) : [];
  return {
    build,
    scenario: name,
    run,
    blockMaxMs: s.maxMs,
    busyMaxMs: s.blocks.maxCpuMs,
    gcMaxMs: s.gc.maxMs,
    gcMaxKind: gcKind(s.gc.maxKind),
    gcOver10Ms: s.gc.over10,
    heapUsedMb: s.heapUsedMb,
    delayP99Ms: s.p99Ms,
    getP50Ms: get.latency.p50,
    getP99Ms: get.latency.p99,
    getMaxMs: get.latency.max,
    getRps: get.requests.average,
    getNon2xx: get.non2xx,
    posts: w?.sent ?? 0,
    postStatus: w?.status ?? {},
    postP50Ms: sorted.length > 0 ? median(sorted) : undefined,
    postMaxMs: sorted.length > 0 ? sorted[sorted.length - 1] : undefined,
    queuedAdded: s.queued - queuedBefore,
    load: `${loadBefore}→${load()}`,
  };
}

async function loadPart(): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  let campaign = 1;
  for (let run = 1; run <= RUNS; run++) {
    for (const name of SCENARIOS) {
      for (const build of BUILDS) {
        // A fresh server per scenario: what one scenario queued does not weigh on the next.
        const serverProc = startChild('server', { dir: build.dir });
        try {
          const { address } = await next<{ address: string }>(serverProc, 'ready');
          const r = await scenario(build.label, name, run, address, serverProc, campaign);
          campaign += 10_000;
          results.push(r);
          process.stderr.write(
            `  run ${run} ${build.label} ${name}: block max ${fmt(r.blockMaxMs)} ms, most CPU in one gap ${fmt(r.busyMaxMs)} ms (longest GC ${fmt(r.gcMaxMs)} ms ${r.gcMaxKind}, ${r.gcOver10Ms} GC over 10 ms, heap ${fmt(r.heapUsedMb, 0)} MiB), delay p99 ${fmt(r.delayP99Ms)} ms; GET p50 ${r.getP50Ms} / p99 ${r.getP99Ms} / max ${r.getMaxMs} ms at ${fmt(r.getRps, 0)} req/s (non-2xx ${r.getNon2xx}); POST ${r.posts} ${JSON.stringify(r.postStatus)} p50 ${r.postP50Ms === undefined ? '–' : fmt(r.postP50Ms)} ms; queued +${r.queuedAdded}; load ${r.load}\n`,
          );
        } finally {
          await stop(serverProc);
        }
      }
    }
  }
  console.log(`\nLoad: GET /messenger/businesses/ at ${GET_RATE} req/s, POST at ${CONTACTS_PER_SECOND} contacts/s, ${SECONDS} s per scenario, ${RUNS} runs (median [min..max])\n`);
  console.log(
    '| build | scenario | event-loop block, max (ms) | most CPU in one gap (ms) | longest GC pause (ms) | event-loop delay p99 (ms) | GET p50 (ms) | GET p99 (ms) | GET max (ms) | POST p50 (ms) | POSTs answered 202 |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const build of BUILDS) {
    for (const name of SCENARIOS) {
      const rs = results.filter((r) => r.scenario === name && r.build === build.label);
      const pick = (f: (r: ScenarioResult) => number | undefined) => rs.map(f).filter((x): x is number => x !== undefined);
      const posts = rs.map((r) => `${r.postStatus['202'] ?? 0}/${r.posts}`).join(', ');
      console.log(
        `| ${build.label} | ${name} | ${mr(pick((r) => r.blockMaxMs))} | ${mr(pick((r) => r.busyMaxMs))} | ${mr(pick((r) => r.gcMaxMs))} | ${mr(pick((r) => r.delayP99Ms))} | ${mr(
          pick((r) => r.getP50Ms),
          0,
        )} | ${mr(
          pick((r) => r.getP99Ms),
          0,
        )} | ${mr(
          pick((r) => r.getMaxMs),
          0,
        )} | ${mr(
          pick((r) => r.postP50Ms),
          0,
        )} | ${name === 'get' ? '–' : posts} |`,
      );
    }
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Stages of one 10,000-contact intake, in this process

interface StageResult {
  build: string;
  stage: string;
  medianMs: number;
  minMs: number;
  maxMs: number;
}

function time(build: string, stage: string, f: () => unknown, reps = 21): StageResult {
  for (let i = 0; i < 3; i++) f();
  const xs: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    f();
    xs.push(performance.now() - t);
  }
  return { build, stage, medianMs: median(xs), minMs: Math.min(...xs), maxMs: Math.max(...xs) };
}

/** A stepper run to the end: its total time and its longest step, median over `reps`. */
function timeSteps(build: string, stage: string, start: () => { step(n: number): boolean }, units: number, reps = 21): StageResult[] {
  const totals: number[] = [];
  const longest: number[] = [];
  for (let r = 0; r < reps + 3; r++) {
    const steps = start();
    let max = 0;
    const t0 = performance.now();
    for (;;) {
      const t = performance.now();
      const done = steps.step(units);
      max = Math.max(max, performance.now() - t);
      if (done) break;
    }
    if (r < 3) continue;
    totals.push(performance.now() - t0);
    longest.push(max);
  }
  return [
    { build, stage: `${stage}: all steps`, medianMs: median(totals), minMs: Math.min(...totals), maxMs: Math.max(...totals) },
    { build, stage: `${stage}: longest step`, medianMs: median(longest), minMs: Math.min(...longest), maxMs: Math.max(...longest) },
  ];
}

interface SlicedContract {
  startJsonBody?: (text: string) => { step(n: number): boolean };
  startSendRequest?: (body: unknown, options: unknown) => { step(n: number): boolean };
}

async function stagesPart(): Promise<StageResult[]> {
  const { before, after } = bodyParts(10_000);
  const text = before + '1' + after;
  const fleet: unknown = JSON.parse(readFileSync(FLEET, 'utf8'));
  const lookup = { templateType: () => ({ placeholders: 2 }) };
  const results: StageResult[] = [];
  for (const build of BUILDS) {
    const core = (await import(join(build.dir, 'dist/index.js'))) as EngineModule;
    const contract = (await import(join(build.dir, 'dist/contract.js'))) as ContractModule & SlicedContract;
    const parsed = JSON.parse(text) as unknown;
    const ok = contract.parseSendRequest(parsed, { templateTypes: lookup });
    if (!ok.ok) throw new Error('intake-block bench: the body was refused');
    const submission = contract.toSubmission(ok.value);
    const wire = serialize(parsed);
    const b = build.label;
    const parse = time(b, 'JSON.parse of the body', () => JSON.parse(text));
    const whole = time(b, 'parseSendRequest (schema, each contact)', () => contract.parseSendRequest(JSON.parse(text), { templateTypes: lookup }));
    results.push(parse, whole, { build: b, stage: '  checks alone (minus JSON.parse)', medianMs: whole.medianMs - parse.medianMs, minMs: NaN, maxMs: NaN });
    if (contract.startJsonBody !== undefined && contract.startSendRequest !== undefined) {
      const { startJsonBody, startSendRequest } = contract;
      // The units the server uses (src/server/body-parser.ts, src/server/intake-parse.ts).
      results.push(...timeSteps(b, 'startJsonBody, 32 Ki characters a step', () => startJsonBody(text), 32 * 1024));
      results.push(...timeSteps(b, 'startSendRequest, 250 contacts a step', () => startSendRequest(parsed, { templateTypes: lookup }), 250));
    }
    results.push(
      time(b, 'toSubmission', () => contract.toSubmission(ok.value)),
      time(b, 'engine.submit (fresh engine)', () => core.createEngine(fleet).submit(submission)),
      time(b, 'structured clone, sender side (v8.serialize of the parsed body)', () => serialize(parsed)),
      time(b, 'structured clone, receiver side (v8.deserialize)', () => deserialize(wire)),
    );
  }
  console.log(`\nStages of one 10,000-contact body (${text.length.toLocaleString('en')} bytes), median of 21 in one process [min..max]\n`);
  console.log('| build | stage | ms |');
  console.log('|---|---|---:|');
  for (const r of results) console.log(`| ${r.build} | ${r.stage} | ${fmt(r.medianMs, 2)}${Number.isNaN(r.minMs) ? '' : ` [${fmt(r.minMs, 2)}..${fmt(r.maxMs, 2)}]`} |`);
  return results;
}

async function main(): Promise<void> {
  checkBuild('intake-block');
  console.log(
    `intake-block bench: ${cpus()[0]?.model ?? 'cpu'}, ${cpus().length} cores, Node ${process.version}, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}, ${new Date().toISOString()}`,
  );
  const out: Record<string, unknown> = {};
  if (PARTS.has('stages')) out['stages'] = await stagesPart();
  if (PARTS.has('load')) out['load'] = await loadPart();
  if (env['BENCH_JSON'] !== undefined) writeFileSync(env['BENCH_JSON'], `${JSON.stringify(out, null, 2)}\n`);
}

const role = env['SENDPOOL_INTAKE_BLOCK_CHILD'];
if (role === undefined) await main();
else {
  const args = JSON.parse(role) as { role: string } & Record<string, unknown>;
  if (args.role === 'server') await serverChild(args as unknown as Parameters<typeof serverChild>[0]);
  else await writerChild(args as unknown as Parameters<typeof writerChild>[0]);
}
