/**
 * GET /messenger/businesses/ while 50 clients post 5,000-contact requests continuously, against
 * the real server process (`sendpool serve`), beside its ceilings measured in the same run (not a
 * test):
 *
 *     npx tsup --silent && npx tsx bench/intake-flood.bench.ts
 *
 * Processes on the same machine:
 *
 * - the server: `node dist/cli.js serve examples/fleet.json` as an operator starts it, with its
 *   defaults (logger at info, /metrics on the API port), in memory (`--memory`) or durable
 *   (`--data-dir` in a fresh temporary directory); a fresh process per scenario;
 * - the ceiling: a bare Fastify 5 answering the same JSON (the body the server answered at rest) on
 *   the same route, with Fastify's defaults (no logger);
 * - the flood (a child process): 50 clients over node:http keep-alive, each posting a
 *   5,000-contact request (a phone, a CPF, a contract, two variables, two data keys: 1.1 MB) and
 *   the next one as soon as it is answered, every request with phones of its own and its own
 *   campaign. The server answers 202 until its intake bound (1,000,000 contacts waiting) is
 *   reached, 429 after: both are full requests, decoded and checked;
 * - the reader (this process): autocannon, GET /messenger/businesses/ at a fixed 200 requests/s
 *   over 10 connections, BENCH_SECONDS (15) after 2 s of its own warm-up; under flood it starts
 *   once the flood has run 3 s.
 *
 * Scenarios (BENCH_SCENARIOS, default all): `fastify` (the bare ceiling), `fastify-flood` (the bare
 * ceiling under the same flood, its POSTs decoded by Fastify's own JSON parser and answered 202,
 * nothing kept: what the machine gives a GET beside the flood), `rest` (the server in memory, no
 * flood), `flood` (the server in memory under the flood), `durable-rest`, `durable-flood`. BENCH_RUNS (1) rounds of every scenario; the table shows each figure as median
 * [min..max] over the runs. The server measures its own event loop during the reader's run
 * (bench/loop-probe.mjs, loaded with `--import`): the most CPU it used within one gap of a 1 ms timer
 * (work, told from waiting for a CPU, which this shared machine does a lot), how many gaps held
 * more than 20 ms of CPU, and its longest garbage-collection pause.
 *
 * BENCH_BUILDS compares builds of the server in the same runs (`before=/path/to/a/checkout,after=.`:
 * each server scenario runs on each build in turn, so both see the same machine); default: this
 * checkout's dist/. A build `label=dir@flags` runs with those `node` flags (spaces, or `none`), so
 * flags compare in the same runs too (`s4=.@--max-semi-space-size=4,s64=.@--max-semi-space-size=64`).
 *
 * The server's `node` gets the flags `npm start` gives it (package.json's start script, e.g.
 * `--max-semi-space-size=…`); BENCH_NODE_FLAGS replaces them (`none` for V8's defaults), e.g.
 * `--trace-gc` or `--cpu-prof --cpu-prof-dir=DIR` with BENCH_SERVER_OUT=FILE (the servers' output,
 * appended to FILE; otherwise it is dropped).
 *
 * The intake's throughput under the flood is the contacts of the POSTs answered (202 and 429, each
 * decoded and checked whole) and of those accepted (202), per second of the flood.
 *
 * Options (environment): BENCH_SECONDS, BENCH_RUNS, BENCH_SCENARIOS, BENCH_BUILDS, BENCH_CLIENTS
 * (50), BENCH_CONTACTS (5000), BENCH_NODE_FLAGS, BENCH_SERVER_OUT, BENCH_JSON (a file for the figures). Method and figures:
 * docs/benchmarks.md, "A flood of large requests".
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { next, stop } from './child-ipc.js';
import { checkBuild } from './dist-check.js';

const KEY = 'flood-bench-key-0123456789abcdef';
const here = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FLEET = join(ROOT, 'examples/fleet.json');
const env = process.env;
const SECONDS = Number(env['BENCH_SECONDS'] ?? 15);
const RUNS = Number(env['BENCH_RUNS'] ?? 1);
const CLIENTS = Number(env['BENCH_CLIENTS'] ?? 50);
const CONTACTS = Number(env['BENCH_CONTACTS'] ?? 5000);
const SCENARIOS = (env['BENCH_SCENARIOS'] ?? 'fastify,fastify-flood,rest,flood,durable-rest,durable-flood').split(',');
/** `none` for no flags, else flags separated by spaces. */
const flagList = (given: string): string[] => (given === 'none' ? [] : given.split(/\s+/).filter(Boolean));
/** The flags `npm start` gives `node` (its script's words between `node` and the script), unless BENCH_NODE_FLAGS says otherwise. */
const NODE_FLAGS = ((): string[] => {
  const given = env['BENCH_NODE_FLAGS'];
  if (given !== undefined) return flagList(given);
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts?.['start'] ?? '';
  const words = start.split(/\s+/);
  return words[0] === 'node' ? words.slice(1).filter((w) => w.startsWith('--')) : [];
})();
/** Builds to compare, `label=dir` (a package root with its dist/), or `label=dir@flags` to run that one with other `node` flags. */
const BUILDS = (env['BENCH_BUILDS'] ?? `current=${ROOT}`).split(',').map((b) => {
  const at = b.indexOf('=');
  const [label, rest] = at < 0 ? [b, b] : [b.slice(0, at), b.slice(at + 1)];
  const flagsAt = rest.indexOf('@');
  return flagsAt < 0 ? { label, dir: rest, flags: NODE_FLAGS } : { label, dir: rest.slice(0, flagsAt), flags: flagList(rest.slice(flagsAt + 1)) };
});
const GET_RATE = 200;
const FLOOD_LEAD_MS = 3000;
const headers = { 'x-api-key-id': KEY, 'content-type': 'application/json' };

// ---------------------------------------------------------------------------------------------
// Helpers

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
  if (xs.length === 0) return '–';
  if (xs.length === 1) return fmt(xs[0]!, digits);
  return `${fmt(median(xs), digits)} [${fmt(Math.min(...xs), digits)}..${fmt(Math.max(...xs), digits)}]`;
}

const load = (): string => loadavg()[0]!.toFixed(2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

async function waitUp(url: string, proc: ChildProcess): Promise<string> {
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`intake-flood bench: the server exited (${proc.exitCode}) before answering`);
    try {
      const r = await get(url);
      if (r.status === 200) return r.body;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
}

async function kill(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
}

// ---------------------------------------------------------------------------------------------
// The flood process: CLIENTS clients, each posting the next request as soon as one is answered

/**
 * A send body of CONTACTS contacts as text, with `#K#` where each request puts its own 4 digits (phones) and `999999999` its campaign.
 * Every phone is a valid Brazilian mobile (`55 11 9KKKK IIII`: the ninth digit, then the request's 4 digits and the contact's 4), so
 * every contact is accepted (the first version of this bench posted `5511KKKKIIIII`, which the contract refuses as
 * `invalid_phone`: its flood was 5,000 rejections a request, answered 202 with every rejection listed).
 */
function bodyTemplate(n: number): string {
  if (n > 10_000) throw new Error(`intake-flood bench: BENCH_CONTACTS is at most 10,000 (4 digits of a phone number the contact's), got ${n}`);
  const contacts = Array.from({ length: n }, (_, i) => ({
    phone_number: `55119#K#${String(i).padStart(4, '0')}`,
    document: '52998224725',
    contract: `CONTRACT-${100_000 + i}`,
    template_variables: [`Client number ${i}`, `R$ ${i},00`],
    data: { customer: String(100_000 + i), segment: 'retail' },
  }));
  return JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: 999_999_999, contacts });
}

async function floodChild(o: { address: string; firstRequest: number }): Promise<void> {
  const template = bodyTemplate(CONTACTS);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const url = new URL('/messenger/messages/', o.address);
  const status: Record<string, number> = {};
  let stopping = false;
  let k = o.firstRequest;
  const post = (payload: string): Promise<void> =>
    new Promise((resolve) => {
      const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(payload) } }, (res) => {
        res.resume();
        res.on('end', () => {
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
  const client = async () => {
    while (!stopping) {
      const n = k++;
      // Phones of its own (4 digits of the request's number, 5 of the contact's) and a campaign of its own.
      await post(template.replaceAll('#K#', String(1000 + (n % 9000))).replace('999999999', String(n + 1)));
    }
  };
  process.on('message', (m: { op: string }) => {
    if (m.op === 'stop') stopping = true;
  });
  const started = performance.now();
  const clients = Array.from({ length: CLIENTS }, () => client());
  process.send?.({ op: 'started' });
  await Promise.all(clients);
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  process.send?.({ op: 'done', status, seconds }, () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// The bare Fastify ceiling

async function fastifyChild(o: { port: number; body: string; posts: boolean }): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify();
  app.get('/messenger/businesses/', async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(o.body));
  // Under the flood: each POST's body read and decoded by Fastify's own JSON parser (one piece),
  // its contacts counted, 202; nothing kept.
  if (o.posts) {
    app.post('/messenger/messages/', { bodyLimit: 20 * 1024 * 1024 }, async (request, reply) => reply.code(202).send({ accepted: (request.body as { contacts: unknown[] }).contacts.length }));
  }
  await app.listen({ port: o.port, host: '127.0.0.1' });
  process.on('message', (m: { op: string }) => {
    if (m.op === 'exit') process.exit(0);
  });
  process.send?.({ op: 'ready' });
}

// ---------------------------------------------------------------------------------------------
// The parent: servers, scenarios, report

function startChild(role: string, args: Record<string, unknown>): ChildProcess {
  return fork(here, [], { env: { ...env, SENDPOOL_FLOOD_CHILD: JSON.stringify({ role, ...args }) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

interface ScenarioResult {
  build: string;
  scenario: string;
  run: number;
  getP50Ms: number;
  getP99Ms: number;
  getMaxMs: number;
  getRps: number;
  getNon2xx: number;
  postStatus: Record<string, number>;
  /** Contacts of the POSTs answered 202 or 429 (decoded and checked whole), per second of the flood. */
  intakePerS: number | undefined;
  /** Contacts of the POSTs answered 202, per second of the flood. */
  acceptedPerS: number | undefined;
  probe: Probe | undefined;
  load: string;
}

/** A server process as an operator starts it: `sendpool serve` with the fleet, durable or in memory. */
function startServer(build: string, flags: readonly string[], port: number, durable: boolean): { proc: ChildProcess; cleanup: () => void } {
  const dir = durable ? mkdtempSync(join(tmpdir(), 'sendpool-flood-')) : undefined;
  const args = [...flags, join(build, 'dist/cli.js'), 'serve', FLEET, '--port', String(port), ...(dir ? ['--data-dir', dir] : ['--memory'])];
  const probe = join(tmpdir(), `sendpool-flood-probe-${port}.json`);
  const nodeOptions = `${env['NODE_OPTIONS'] ?? ''} --import=${pathToFileURL(join(ROOT, 'bench/loop-probe.mjs')).href}`.trim();
  const out = env['BENCH_SERVER_OUT'] === undefined ? 'ignore' : openSync(env['BENCH_SERVER_OUT'], 'a');
  const proc = spawn(process.execPath, args, {
    env: { ...env, SENDPOOL_API_KEYS: `1:${KEY}`, NODE_OPTIONS: nodeOptions, SENDPOOL_LOOP_PROBE: probe },
    stdio: ['ignore', out, out],
  });
  if (typeof out === 'number') closeSync(out);
  return {
    proc,
    cleanup: () => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      rmSync(probe, { force: true });
    },
  };
}

/** What bench/loop-probe.mjs measured in the server since its last SIGUSR2. */
interface Probe {
  maxGapMs: number;
  maxCpuMs: number;
  cpuOver20Ms: number;
  cpuOver50Ms: number;
  gcMaxMs: number;
  gcOver20Ms: number;
}

async function readProbe(port: number): Promise<Probe | undefined> {
  await sleep(400); // the probe writes every 250 ms
  try {
    return JSON.parse(readFileSync(join(tmpdir(), `sendpool-flood-probe-${port}.json`), 'utf8')) as Probe;
  } catch {
    return undefined;
  }
}

let businessesBody: string | undefined;
let firstRequest = 0;

async function scenario(build: { label: string; dir: string; flags: readonly string[] }, name: string, run: number): Promise<ScenarioResult> {
  const port = await freePort();
  const address = `http://127.0.0.1:${port}`;
  const url = `${address}/messenger/businesses/`;
  const loadBefore = load();
  let proc: ChildProcess;
  let cleanup = () => {};
  const bare = name.startsWith('fastify');
  if (bare) {
    if (businessesBody === undefined) throw new Error('intake-flood bench: the ceiling needs the server at rest first');
    proc = startChild('fastify', { port, body: businessesBody, posts: name === 'fastify-flood' });
    await next(proc, 'ready');
  } else {
    ({ proc, cleanup } = startServer(build.dir, build.flags, port, name.startsWith('durable')));
    businessesBody ??= await waitUp(url, proc);
    await waitUp(url, proc);
  }
  try {
    await autocannon({ url, headers, duration: 2, connections: 10, overallRate: GET_RATE });
    const flood = name.endsWith('flood') ? startChild('flood', { address, firstRequest }) : undefined;
    firstRequest += 10_000;
    if (flood) {
      await next(flood, 'started');
      await sleep(FLOOD_LEAD_MS);
    }
    if (!bare) proc.kill('SIGUSR2'); // the probe starts again with the reader
    const reading = await autocannon({ url, headers, duration: SECONDS, connections: 10, overallRate: GET_RATE });
    const probe = bare ? undefined : await readProbe(port);
    let postStatus: Record<string, number> = {};
    let intakePerS: number | undefined;
    let acceptedPerS: number | undefined;
    if (flood) {
      const done = next<{ status: Record<string, number>; seconds: number }>(flood, 'done');
      flood.send({ op: 'stop' });
      const d = await done;
      postStatus = d.status;
      intakePerS = (((postStatus['202'] ?? 0) + (postStatus['429'] ?? 0)) * CONTACTS) / d.seconds;
      acceptedPerS = ((postStatus['202'] ?? 0) * CONTACTS) / d.seconds;
    }
    return {
      build: bare ? '–' : build.label,
      scenario: name,
      run,
      getP50Ms: reading.latency.p50,
      getP99Ms: reading.latency.p99,
      getMaxMs: reading.latency.max,
      getRps: reading.requests.average,
      getNon2xx: reading.non2xx,
      postStatus,
      intakePerS,
      acceptedPerS,
      probe,
      load: `${loadBefore}→${load()}`,
    };
  } finally {
    if (bare) await stop(proc);
    else await kill(proc);
    cleanup();
  }
}

async function main(): Promise<void> {
  checkBuild('intake-flood');
  console.log(
    `intake-flood bench: ${cpus()[0]?.model ?? 'cpu'}, ${cpus().length} cores, Node ${process.version}, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}, ${new Date().toISOString()}`,
  );
  const results: ScenarioResult[] = [];
  // The ceiling needs the server's answer: the server at rest goes first in every run.
  const order = [...SCENARIOS].sort((a, b) => (a === 'rest' ? -1 : b === 'rest' ? 1 : 0));
  if (!order.includes('rest') && order.some((n) => n.startsWith('fastify'))) order.unshift('rest');
  for (let run = 1; run <= RUNS; run++) {
    for (const name of order) {
      // The bare ceiling once a run; every server scenario on each build in turn.
      for (const build of name.startsWith('fastify') ? BUILDS.slice(0, 1) : BUILDS) {
        const r = await scenario(build, name, run);
        results.push(r);
        process.stderr.write(
          `  run ${run} ${r.build} ${name}: GET p50 ${r.getP50Ms} / p99 ${r.getP99Ms} / max ${r.getMaxMs} ms at ${fmt(r.getRps)} req/s (non-2xx ${r.getNon2xx}); POST ${JSON.stringify(r.postStatus)}${r.intakePerS === undefined ? '' : `, ${fmt(r.intakePerS)} contacts/s answered, ${fmt(r.acceptedPerS ?? 0)} accepted`}; server: most CPU in one gap ${r.probe ? fmt(r.probe.maxCpuMs, 1) : '–'} ms, gaps over 20 ms of CPU ${r.probe?.cpuOver20Ms ?? '–'}, longest gap ${r.probe ? fmt(r.probe.maxGapMs, 1) : '–'} ms, longest GC ${r.probe ? fmt(r.probe.gcMaxMs, 1) : '–'} ms (${r.probe?.gcOver20Ms ?? '–'} over 20 ms); load ${r.load}\n`,
        );
      }
    }
  }
  console.log(
    `\nGET /messenger/businesses/ at ${GET_RATE} req/s over 10 connections, ${SECONDS} s; flood: ${CLIENTS} clients × ${CONTACTS} contacts, closed loop; server: ${BUILDS.map((b) => `${b.label}: node ${b.flags.join(' ') || '(V8 defaults)'}`).join(', ')}; ${RUNS} run(s) (median [min..max])\n`,
  );
  console.log(
    '| build | scenario | GET p50 (ms) | GET p99 (ms) | GET max (ms) | server: most CPU in one gap (ms) | gaps over 20 ms of CPU | longest GC pause (ms) | intake (contacts/s answered) | accepted (contacts/s) | POSTs answered (by status) | load (1 min) |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|');
  for (const name of order) {
    for (const build of name.startsWith('fastify') ? ['–'] : BUILDS.map((b) => b.label)) {
      const rs = results.filter((r) => r.scenario === name && r.build === build);
      const pick = (f: (r: ScenarioResult) => number | undefined) => rs.map(f).filter((x): x is number => x !== undefined);
      const posts = name.endsWith('flood')
        ? rs
            .map((r) =>
              Object.entries(r.postStatus)
                .map(([s, n]) => `${n} × ${s}`)
                .join(', '),
            )
            .join('; ')
        : '–';
      const loop = name.startsWith('fastify')
        ? '– | – | –'
        : `${mr(
            pick((r) => r.probe?.maxCpuMs),
            1,
          )} | ${mr(pick((r) => r.probe?.cpuOver20Ms))} | ${mr(
            pick((r) => r.probe?.gcMaxMs),
            1,
          )}`;
      const rates = name.endsWith('flood') ? `${mr(pick((r) => r.intakePerS))} | ${mr(pick((r) => r.acceptedPerS))}` : '– | –';
      console.log(
        `| ${build} | ${name} | ${mr(pick((r) => r.getP50Ms))} | ${mr(pick((r) => r.getP99Ms))} | ${mr(pick((r) => r.getMaxMs))} | ${loop} | ${rates} | ${posts} | ${rs.map((r) => r.load).join('; ')} |`,
      );
    }
  }
  if (env['BENCH_JSON'] !== undefined) writeFileSync(env['BENCH_JSON'], `${JSON.stringify(results, null, 2)}\n`);
}

const role = env['SENDPOOL_FLOOD_CHILD'];
if (role === undefined) await main();
else {
  const args = JSON.parse(role) as { role: string } & Record<string, unknown>;
  if (args.role === 'fastify') await fastifyChild(args as unknown as Parameters<typeof fastifyChild>[0]);
  else await floodChild(args as unknown as Parameters<typeof floodChild>[0]);
}
