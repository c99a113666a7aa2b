/**
 * The server on Redis, measured (not a test):
 *
 *     npx tsup --silent && npx tsx bench/redis-server.bench.ts
 *
 * Starts its own redis-server (AOF, `appendfsync always`: the setting docs/scaling.md asks for) on
 * a free loopback port, then for 1 and for 3 instances (child processes running `runServer({ redis })`
 * from dist/, a channel that answers "sent" at once) posts 1,000-contact requests from this process
 * (4 at a time per instance) for BENCH_SECONDS and reports:
 * - contacts accepted per second (202s), per instance and in all;
 * - contacts dispatched per second (the channels' sends), per instance and in all, over intake and
 *   drain, and during the drain alone (after intake stopped: dispatch has the CPUs);
 * - Redis commands per 1,000 sends (`total_commands_processed`; a script is one command).
 * Two fleets: "ample" (10 numbers of 1,000,000/h: the CPUs bind) and "realistic" (100 numbers at
 * 80 messages/s: the numbers bind, 8,000/s in all).
 *
 * Options (environment): BENCH_SECONDS (10), BENCH_FLEETS ("ample,realistic"), BENCH_INSTANCES
 * ("1,3"), BENCH_TRACE (print the drain rate every second), BENCH_STATE_DIR (set: each instance
 * with a state directory, so its accepted journal is written at intake). The machine's load is printed beside the figures; docs/benchmarks.md has the latest.
 */
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/server/send-log.js';
import { checkBuild } from './dist-check.js';

const KEY = 'bench-key-0123456789abcdef';
const here = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);

function fleet(kind: 'ample' | 'realistic') {
  const count = kind === 'ample' ? 10 : 100;
  const numbers = Array.from({ length: count }, (_, i) => ({
    phone: `55119900${String(i).padStart(5, '0')}`,
    status: 'active',
    ...(kind === 'ample' ? { throughputPerHour: 1_000_000, messagingLimit24h: 10_000_000 } : { throughputPerHour: 288_000, messagingLimit24h: 1_000_000, messagesPerSecond: 80 }),
  }));
  return {
    businesses: [{ id: 1, name: 'Bench', companyId: 1, numbers, templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }] }],
    templates: [{ id: 100, name: 'bill', text: 'Hi {{1}}, your bill of {{2}} is due.', businessIds: [1], status: 'active' }],
  };
}

// ---------------------------------------------------------------------------------------------
// Child: one instance.

async function child(): Promise<void> {
  const cfg = JSON.parse(process.env['BENCH_CHILD']!) as { fleetFile: string; url: string; name: string; stateDir?: string };
  const { runServer } = (await import(join(ROOT, 'dist/server.js'))) as typeof import('../src/server/index.js');
  // Round trips: every command this instance's client sends (a script is one; what it runs inside
  // Redis is not a round trip). Counted where the client sends them.
  const { Redis } = await import('ioredis');
  let roundTrips = 0;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called back with its `this` below
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: InstanceType<typeof Redis>, ...args: Parameters<typeof send>) {
    roundTrips++;
    return send.apply(this, args);
  };
  let sent = 0;
  const running = await runServer({
    fleetFile: cfg.fleetFile,
    port: 0,
    redis: {
      url: cfg.url,
      consumer: cfg.name,
      ...(process.env['BENCH_PREFETCH'] ? { prefetchContacts: Number(process.env['BENCH_PREFETCH']) } : {}),
      ...(cfg.stateDir === undefined ? {} : { stateDir: cfg.stateDir }),
    },
    apiKeys: [{ key: KEY, companyId: 1 }],
    channel: {
      async send() {
        sent++;
        return { status: 'sent' };
      },
      async sendSms() {
        return { status: 'sent' };
      },
      attach() {},
    },
    logger: false,
    handleSignals: false,
    metrics: false,
    ...(process.env['BENCH_TRACKED'] ? { maxTrackedMessages: Number(process.env['BENCH_TRACKED']), maxReportMessages: Number(process.env['BENCH_TRACKED']) } : {}),
  });
  process.send!({ op: 'ready', url: running.address });
  const timer = setInterval(() => process.send!({ op: 'sent', sent, roundTrips }), 250);
  if (process.env['BENCH_TRACE']) {
    // Where a drain waits: the engine's queue and in-flight, the dispatch worker's state.
    let last = 0;
    setInterval(() => {
      const s = running.server.sendpool.engine.stats();
      process.stderr.write(`${cfg.name}: sent ${sent - last}/s queued ${s.queued} inFlight ${s.inFlight} waitingRetry ${s.waitingRetry}\n`);
      last = sent;
    }, 1000).unref();
  }
  process.on('message', (m: { op: string }) => {
    if (m.op !== 'exit') return;
    clearInterval(timer);
    void running.close().then(() => process.exit(0));
  });
}

// ---------------------------------------------------------------------------------------------
// Parent.

const cli = (port: number, ...args: string[]) => execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

function commandsProcessed(port: number): number {
  const m = /total_commands_processed:(\d+)/.exec(cli(port, 'info', 'stats'));
  return m ? Number(m[1]) : 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Instance {
  readonly child: ChildProcess;
  readonly url: string;
  sent: number;
  roundTrips: number;
}

async function startInstance(cfg: object): Promise<Instance> {
  const c = fork(here, ['child'], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_CHILD: JSON.stringify(cfg) }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    c.on('message', (m: { op: string; url?: string }) => m.op === 'ready' && resolve(m.url!));
    c.once('exit', (code) => reject(new Error(`instance exited (${code})`)));
  });
  const instance: Instance = { child: c, url, sent: 0, roundTrips: 0 };
  c.on('message', (m: { op: string; sent?: number; roundTrips?: number }) => {
    if (m.op !== 'sent') return;
    instance.sent = m.sent!;
    instance.roundTrips = m.roundTrips!;
  });
  return instance;
}

async function stopInstance(i: Instance): Promise<void> {
  if (i.child.exitCode !== null) return;
  const exited = new Promise<void>((r) => i.child.once('exit', () => r()));
  i.child.send({ op: 'exit' });
  await exited;
}

async function run(port: number, kind: 'ample' | 'realistic', count: number, dir: string) {
  cli(port, 'flushall');
  const fleetFile = join(dir, `fleet-${kind}.json`);
  writeFileSync(fleetFile, JSON.stringify(fleet(kind)));
  const instances: Instance[] = [];
  // BENCH_STATE_DIR=1: each instance with a state directory of its own (the accepted journal written at intake).
  const stateDir = (i: number) => (process.env['BENCH_STATE_DIR'] ? { stateDir: join(dir, `state-${kind}-${count}-i${i}`) } : {});
  for (let i = 0; i < count; i++) instances.push(await startInstance({ fleetFile, url: `redis://127.0.0.1:${port}`, name: `i${i}`, ...stateDir(i) }));
  const accepted = instances.map(() => 0);
  let phone = 0;
  const body = () =>
    JSON.stringify({
      business_id: 1,
      template_type_id: 10,
      campaign_id: 1,
      contacts: Array.from({ length: 1000 }, () => ({ phone_number: `55219${String(10_000_000 + phone++)}`, template_variables: ['Ana', 'R$ 10'] })),
    });
  const commandsBefore = commandsProcessed(port);
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  let acceptedMs = 0;
  await Promise.all(
    instances.flatMap((inst, k) =>
      Array.from({ length: 4 }, async () => {
        while (performance.now() < deadline) {
          const res = await fetch(`${inst.url}/messenger/messages/`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key-id': KEY }, body: body() });
          await res.text();
          if (res.status === 202) accepted[k]! += 1000;
          else if (res.status === 429) await sleep(50);
        }
      }),
    ),
  );
  acceptedMs = performance.now() - started;
  const sentDuringIntake = instances.map((i) => i.sent);
  const total = accepted.reduce((a, b) => a + b, 0);
  // The backlog drains (the "realistic" fleet sends 8,000/s: bounded wait).
  let lastSent = 0;
  let lastAt = performance.now();
  while (instances.reduce((a, i) => a + i.sent, 0) < total && performance.now() - started < 600_000) {
    await sleep(100);
    if (process.env['BENCH_TRACE'] && performance.now() - lastAt >= 1000) {
      const s = instances.reduce((a, i) => a + i.sent, 0);
      console.log(`drain: ${Math.round((s - lastSent) / ((performance.now() - lastAt) / 1000))}/s`);
      lastSent = s;
      lastAt = performance.now();
    }
  }
  const drainedMs = performance.now() - started;
  const sent = instances.reduce((a, i) => a + i.sent, 0);
  const commands = commandsProcessed(port) - commandsBefore;
  for (const i of instances) await stopInstance(i);
  return {
    fleet: kind,
    instances: count,
    acceptedPerSecond: Math.round(total / (acceptedMs / 1000)),
    acceptedPerInstance: accepted.map((a) => Math.round(a / (acceptedMs / 1000))),
    dispatchedPerSecondDuringIntake: Math.round(sentDuringIntake.reduce((a, b) => a + b, 0) / (acceptedMs / 1000)),
    dispatchedPerSecond: Math.round(sent / (drainedMs / 1000)),
    // After intake stopped: what the instances send when dispatch has the CPUs to itself.
    drainPerSecond: Math.round((sent - sentDuringIntake.reduce((a, b) => a + b, 0)) / Math.max(0.001, (drainedMs - acceptedMs) / 1000)),
    dispatchedPerInstance: instances.map((i) => Math.round(i.sent / (drainedMs / 1000))),
    commandsPer1000Sends: Math.round((commands / Math.max(1, sent)) * 1000 * 10) / 10,
    // Intake's round trips are in it too (a request is a few); the sends dominate at these sizes.
    roundTripsPer1000Sends: Math.round((instances.reduce((a, i) => a + i.roundTrips, 0) / Math.max(1, sent)) * 1000 * 10) / 10,
    contacts: total,
    load: loadavg()
      .map((l) => l.toFixed(1))
      .join(' '),
  };
}

async function main(): Promise<void> {
  checkBuild('redis-server');
  const dir = mkdtempSync(join(tmpdir(), 'sendpool-redis-bench-'));
  const port = await freePort();
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 50; i++) {
      try {
        if (cli(port, 'ping').trim() === 'PONG') break;
      } catch {
        // not up yet
      }
      await sleep(100);
    }
    const fleets = (process.env['BENCH_FLEETS'] ?? 'ample,realistic').split(',') as ('ample' | 'realistic')[];
    const counts = (process.env['BENCH_INSTANCES'] ?? '1,3').split(',').map(Number);
    console.log(`server on Redis (AOF always), ${SECONDS} s of intake, 1,000-contact requests, 4 in flight per instance`);
    for (const kind of fleets) for (const count of counts) console.log(JSON.stringify(await run(port, kind, count, dir)));
  } finally {
    redis.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'child') void child();
else void main();
