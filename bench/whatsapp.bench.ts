/**
 * Throughput of the WhatsApp Cloud API channel (not a test): `npx tsx bench/whatsapp.bench.ts`.
 *
 * The fake Graph API runs in a child process (bench/whatsapp-fake.ts) and answers every send with
 * an acceptance. Each measurement runs in a fresh process of its own (one instance of sendpool),
 * the modes in turn, BENCH_REPEATS times, so peers are measured side by side on a shared machine:
 *
 * - `channel`: the channel alone, `channel.send` for BENCH_MESSAGES template messages over 40
 *   numbers, BENCH_CONCURRENCY at a time;
 * - `instance`: one whole instance, the reference server (engine, dispatch worker, channel,
 *   notifier, campaign statistics, metrics) with state in memory; the contacts are posted to
 *   POST /messenger/messages/, 1,000 per request, and the clock runs from the first request to the
 *   last message the platform accepted (goal: at least 20,000 messages/s);
 * - `durable`: the same on the durable server (SQLite in a temporary directory): every hand-out
 *   written before it is sent, the results, notifications and the channel's memory of the
 *   platform's ids written in the steps after;
 * - `durable-no-memory`: the durable server with the channel attached without the server's memory
 *   (it keeps the platform's ids in memory of its own, as before they were durable): the cost of
 *   keeping them;
 * - `instance-v8-default`: `instance` with V8's default young generation. Every other mode runs as
 *   docs/server.md says an instance that only sends can take, `node --max-semi-space-size=64` (BENCH_SEMI_SPACE: another
 *   size in MB, or `default`): a send allocates about 15 KB that dies young, and a larger young
 *   generation scavenges less often.
 *
 * Each prints messages/s, this process's CPU time per message and share of a core, the fake's share
 * (which side is the bound), and the load average when the run started. Options (environment):
 * BENCH_MESSAGES (200000), BENCH_MODES ("channel,instance,durable,durable-no-memory,instance-v8-default"),
 * BENCH_REPEATS (3), BENCH_CONCURRENCY, BENCH_CONNECTIONS, BENCH_IN_FLIGHT, BENCH_METRICS=0,
 * BENCH_PROFILE (a directory: each run under node --cpu-prof there), BENCH_JSON (a file for the
 * figures). Figures: docs/benchmarks.md, "The WhatsApp channel".
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../src/engine.js';
import type { OutgoingMessage } from '../src/core/dispatch/types.js';
import { buildServer, openSqliteStorage, type Channel, type ServerStorage } from '../src/server/index.js';
import { createWhatsAppChannel } from '../src/server/channels/whatsapp/index.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200_000);
const NUMBERS = 40;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 512);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 128);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 512);
const KEY = 'bench-key-0123456789abcdef';
const SECRETS = { accessToken: 'EAAbench-access-token-000000', appSecret: 'bench-app-secret-0000000', verifyToken: 'bench-verify' };

const fleet = {
  businesses: [
    {
      id: 1,
      name: 'Bench',
      companyId: 1,
      whatsapp: { wabaId: '100000000000001' },
      numbers: Array.from({ length: NUMBERS }, (_, i) => ({
        phone: `55119900${String(i + 1).padStart(5, '0')}`,
        throughputPerHour: 1_000_000_000,
        messagingLimit24h: 1_000_000_000_000,
        // Far above the run: without a rate the server would pace each at the platform's default 80/s.
        messagesPerSecond: 1_000_000,
        whatsapp: { phoneNumberId: `2000000000${String(i + 1).padStart(5, '0')}` },
      })),
      templateTypes: [{ id: 10, name: 'billing', templateIds: [100, 101] }],
    },
  ],
  templates: [
    { id: 100, name: 'billing_a', text: 'Hi {{1}}, your bill is due.', businessIds: [1], whatsapp: { language: 'pt_BR' } },
    { id: 101, name: 'billing_b', text: '{{1}}, your bill is due tomorrow.', businessIds: [1], whatsapp: { language: 'pt_BR' } },
  ],
};

const MODES = ['channel', 'instance', 'durable', 'durable-no-memory', 'instance-v8-default'] as const;
/** The young generation every mode but `instance-v8-default` runs with (docs/server.md, "Running it"). */
const SEMI_SPACE = process.env.BENCH_SEMI_SPACE ?? '64';
type Mode = (typeof MODES)[number];
const here = fileURLToPath(import.meta.url);

interface Fake {
  readonly url: string;
  cpu(): Promise<{ cpuMs: number; answered: number }>;
  stop(): void;
}

async function startFake(): Promise<Fake> {
  const child = fork(fileURLToPath(new URL('./whatsapp-fake.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  return {
    url,
    cpu: () =>
      new Promise((resolve) => {
        child.once('message', (m: { cpuMs: number; answered: number }) => resolve(m));
        child.send({ cpu: true });
      }),
    stop: () => child.kill('SIGKILL'),
  };
}

/** In a measuring child: tell the parent the measured part starts (it reads the fake's CPU) and wait for its go. */
function markStart(): Promise<void> {
  return new Promise((resolve) => {
    process.once('message', () => resolve());
    process.send?.({ op: 'start' });
  });
}

function message(i: number): OutgoingMessage {
  const number = fleet.businesses[0]!.numbers[i % NUMBERS]!;
  return {
    messageId: `s1.${i}.0`,
    contactId: `s1.${i}`,
    submissionId: 's1',
    index: i,
    businessId: 1,
    typeId: 10,
    campaignId: 1,
    queueId: undefined,
    botId: undefined,
    contact: { phone: `55119${String(80_000_000 + i).padStart(8, '0')}`, variables: [`Client ${i}`] },
    phone: number.phone,
    templateId: i % 2 === 0 ? 100 : 101,
    text: `Hi Client ${i}, your bill is due.`,
    handedOutAt: 0,
    isRetry: false,
    retryIndex: null,
    maxRetries: 0,
    retryInterval: 0,
  };
}

const cpuMs = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};

interface Measured {
  readonly messages: number;
  readonly failed: number;
  readonly seconds: number;
  readonly cpuMs: number;
  /** The durable server: steps written, and the time inside `storage.write`. */
  readonly steps?: number;
  readonly storeMs?: number;
}

async function channelAlone(url: string): Promise<Measured> {
  const channel = createWhatsAppChannel({ fleet, ...SECRETS, graphUrl: url, attendanceIdleMs: false, connections: CONNECTIONS });
  // Warm-up: connections and the JIT.
  await Promise.all(Array.from({ length: 5_000 }, (_, i) => channel.send(message(MESSAGES + i))));
  await markStart();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  let sent = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < MESSAGES) {
        const outcome = await channel.send(message(next++));
        if (outcome.status === 'sent') sent++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const ours = cpuMs(cpu);
  await channel.close?.();
  return { messages: sent, failed: MESSAGES - sent, seconds, cpuMs: ours };
}

async function wholeInstance(url: string, mode: Exclude<Mode, 'channel'>): Promise<Measured> {
  const whatsapp = createWhatsAppChannel({ fleet, ...SECRETS, graphUrl: url, attendanceIdleMs: false, connections: CONNECTIONS });
  // Without the server's memory the channel keeps the platform's ids in memory of its own.
  const channel: Channel = mode === 'durable-no-memory' ? { ...whatsapp, attach: (sink) => whatsapp.attach(sink) } : whatsapp;
  const durable = mode !== 'instance';
  const dir = durable ? mkdtempSync(join(tmpdir(), 'sendpool-whatsapp-bench-')) : undefined;
  const opened = dir === undefined ? undefined : await openSqliteStorage(dir);
  // Steps written and the time inside the store (the server's code is unchanged).
  const steps = { count: 0, ms: 0 };
  const storage: ServerStorage | undefined = opened && {
    load: () => opened.load(),
    write(step) {
      const t = performance.now();
      opened.write(step);
      steps.ms += performance.now() - t;
      steps.count++;
    },
    close: () => opened.close(),
  };
  const server = buildServer({
    engine: createEngine(fleet, durable ? { trackChanges: true } : {}),
    channel,
    apiKeys: [{ key: KEY, companyId: 1 }],
    logger: false,
    processMetrics: false,
    // BENCH_METRICS=0: without /metrics (its counters are updated on every send).
    metrics: process.env.BENCH_METRICS !== '0',
    maxQueuedContacts: 50_000_000,
    dispatch: { maxInFlight: IN_FLIGHT, pollLimit: IN_FLIGHT },
    ...(storage ? { storage } : {}),
  });
  await server.ready();
  const body = (offset: number) =>
    JSON.stringify({
      business_id: 1,
      template_type_id: 10,
      campaign_id: 1,
      contacts: Array.from({ length: 1000 }, (_, i) => ({ phone_number: `55119${String(80_000_000 + offset + i).padStart(8, '0')}`, template_variables: [`Client ${offset + i}`] })),
    });
  await markStart();
  const cpu = process.cpuUsage();
  const started = performance.now();
  steps.count = 0;
  steps.ms = 0;
  for (let offset = 0; offset < MESSAGES; offset += 1000) {
    const answer = await server.inject({ method: 'POST', url: '/messenger/messages/', headers: { 'x-api-key-id': KEY, 'content-type': 'application/json' }, payload: body(offset) });
    if (answer.statusCode !== 202) throw new Error(`POST /messenger/messages/ answered ${answer.statusCode}: ${answer.body}`);
  }
  while (server.sendpool.engine.stats().sent < MESSAGES) await new Promise((r) => setTimeout(r, 5));
  const seconds = (performance.now() - started) / 1000;
  const ours = cpuMs(cpu);
  const stats = server.sendpool.engine.stats();
  const written = { ...steps };
  await server.close();
  storage?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  return { messages: stats.sent, failed: stats.failed, seconds, cpuMs: ours, ...(durable ? { steps: written.count, storeMs: written.ms } : {}) };
}

/** One measurement in a fresh process: its figures, with the fake's CPU over the same time. */
async function measure(mode: Mode, fake: Fake): Promise<Record<string, number | string>> {
  const profile = process.env.BENCH_PROFILE;
  const child = fork(here, [], {
    execArgv: [
      '--import',
      'tsx',
      ...(mode === 'instance-v8-default' || SEMI_SPACE === 'default' ? [] : [`--max-semi-space-size=${SEMI_SPACE}`]),
      ...(profile && !process.env.BENCH_HEAP ? ['--cpu-prof', `--cpu-prof-dir=${join(profile, mode)}`] : []),
    ],
    env: { ...process.env, SENDPOOL_WHATSAPP_BENCH: JSON.stringify({ mode: mode === 'instance-v8-default' ? 'instance' : mode, url: fake.url }) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const load = loadavg()[0]!;
  let fakeBefore = 0;
  const result = await new Promise<Measured>((resolve, reject) => {
    child.on('message', (m: { op: 'start' } | { op: 'done'; result: Measured }) => {
      if (m.op === 'start') {
        void fake.cpu().then((c) => {
          fakeBefore = c.cpuMs;
          child.send({ op: 'go' });
        });
      } else resolve(m.result);
    });
    child.once('exit', (code) => reject(new Error(`the ${mode} run exited (${code}) before its figures`)));
    child.once('error', reject);
  });
  const fakeAfter = (await fake.cpu()).cpuMs;
  // It exits by itself (a profile is written at exit).
  if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  return {
    mode,
    load1: Number(load.toFixed(2)),
    messages: result.messages,
    failed: result.failed,
    messagesPerSecond: Math.round(result.messages / result.seconds),
    cpuMicrosPerMessage: Math.round((result.cpuMs * 1000) / result.messages),
    ourCpuShare: Number((result.cpuMs / (result.seconds * 1000)).toFixed(2)),
    fakeCpuShare: Number(((fakeAfter - fakeBefore) / (result.seconds * 1000)).toFixed(2)),
    ...(result.steps !== undefined ? { stepsPerSecond: Math.round(result.steps / result.seconds), storeShare: Number(((result.storeMs ?? 0) / (result.seconds * 1000)).toFixed(2)) } : {}),
  };
}

async function startHeapSampling(): Promise<(file: string) => Promise<void>> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return async (file) => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(file, JSON.stringify(profile));
  };
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const modes = (process.env.BENCH_MODES ?? MODES.join(',')).split(',') as Mode[];
  for (const m of modes) if (!MODES.includes(m)) throw new Error(`BENCH_MODES: expected some of ${MODES.join(', ')}, got ${m}`);
  const repeats = Number(process.env.BENCH_REPEATS ?? 3);
  const fake = await startFake();
  const runs: Record<string, number | string>[] = [];
  try {
    for (let r = 0; r < repeats; r++) {
      for (const mode of modes) {
        const run = await measure(mode, fake);
        runs.push(run);
        const store = run.stepsPerSecond === undefined ? '' : `, ${run.stepsPerSecond} steps/s taking ${Math.round(Number(run.storeShare) * 100)} % of the time`;
        console.error(
          `${mode}: ${Number(run.messagesPerSecond).toLocaleString('en')} messages/s, ${run.cpuMicrosPerMessage} µs CPU a message, this process ${Math.round(Number(run.ourCpuShare) * 100)} % of a core, the fake ${Math.round(Number(run.fakeCpuShare) * 100)} %${store}, load ${run.load1}`,
        );
      }
    }
  } finally {
    fake.stop();
  }
  const machine = `${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores, ${process.platform} ${process.arch}, Node ${process.version}`;
  console.log(`\nWhatsApp channel against a fake Graph API — ${machine}; ${MESSAGES.toLocaleString('en')} messages a run, 40 numbers, runs in turn (${repeats} of each)\n`);
  console.log('| mode | messages/s (median) | runs (load average, 1 min) | CPU per message | this process / the fake (share of a core) |');
  console.log('|---|---|---|---|---|');
  for (const mode of modes) {
    const mine = runs.filter((x) => x.mode === mode);
    const rate = median(mine.map((x) => Number(x.messagesPerSecond)));
    const list = mine.map((x) => `${Number(x.messagesPerSecond).toLocaleString('en')} (${x.load1})`).join(', ');
    const us = mine.map((x) => Number(x.cpuMicrosPerMessage));
    const share = (k: string) => `${Math.round(Math.min(...mine.map((x) => Number(x[k]))) * 100)}–${Math.round(Math.max(...mine.map((x) => Number(x[k]))) * 100)} %`;
    console.log(`| ${mode} | ${rate.toLocaleString('en')} | ${list} | ${Math.min(...us)}–${Math.max(...us)} µs | ${share('ourCpuShare')} / ${share('fakeCpuShare')} |`);
  }
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify({ machine, messages: MESSAGES, runs }, null, 2));
}

const child = process.env.SENDPOOL_WHATSAPP_BENCH;
if (child !== undefined) {
  const { mode, url } = JSON.parse(child) as { mode: Mode; url: string };
  // BENCH_HEAP with BENCH_PROFILE: a sampling profile of every allocation (collected ones too).
  const heap = process.env.BENCH_HEAP && process.env.BENCH_PROFILE ? await startHeapSampling() : undefined;
  const result = mode === 'channel' ? await channelAlone(url) : await wholeInstance(url, mode);
  if (heap) await heap(join(process.env.BENCH_PROFILE!, `${mode}-${process.pid}.heapprofile`));
  process.send?.({ op: 'done', result }, () => process.exit(0));
} else await main();
