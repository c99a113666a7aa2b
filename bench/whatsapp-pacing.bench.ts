/**
 * Pacing of one upgraded WhatsApp number against a platform 200 ms away (not a test):
 * `npx tsx bench/whatsapp-pacing.bench.ts`.
 *
 * The fake Graph API (bench/whatsapp-fake.ts, in a child process) answers every send 200 ms after
 * it came (FAKE_DELAY_MS). The fleet has one number of 1,000 messages a second. Modes, in turn,
 * BENCH_REPEATS times, all against the same fake in the same run:
 *
 * - `adaptive`: one instance, the reference server in memory (engine, dispatch worker, WhatsApp
 *   channel with its defaults): the engine hands out at 1,000/s and the number's in-flight window
 *   follows rate × answer time;
 * - `fixed-64`: the same with `maxInFlightPerNumber: 64`, the window the channel had before it
 *   adapted (at most 64 / 0.2 s = 320 a second);
 * - `undici`: a plain undici Pool to the same fake, no sendpool: requests issued at 1,000 a second
 *   (one every millisecond, in 10 ms steps) with no bound on those at the fake: the reference.
 *
 * Each run sends for BENCH_WARMUP_S (3) seconds, then counts the sends the fake accepted over
 * BENCH_SECONDS (10): accepted sends a second. 512 keep-alive connections each (BENCH_CONNECTIONS).
 * Figures: docs/benchmarks.md, "Pacing of one WhatsApp number".
 */
import { fork } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { createEngine } from '../src/engine.js';
import { createWhatsAppChannel } from '../src/server/channels/whatsapp/index.js';
import { buildServer } from '../src/server/index.js';

const DELAY_MS = Number(process.env.FAKE_DELAY_MS ?? 200);
const RATE = 1_000;
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 512);
const KEY = 'bench-key-0123456789abcdef';
const SECRETS = { accessToken: 'EAAbench-access-token-000000', appSecret: 'bench-app-secret-0000000', verifyToken: 'bench-verify' };
const PHONE_NUMBER_ID = '200000000000001';

const fleet = {
  businesses: [
    {
      id: 1,
      name: 'Bench',
      companyId: 1,
      whatsapp: { wabaId: '100000000000001' },
      numbers: [
        {
          phone: '5511990000001',
          throughputPerHour: 1_000_000_000,
          messagingLimit24h: 1_000_000_000_000,
          messagesPerSecond: RATE,
          whatsapp: { phoneNumberId: PHONE_NUMBER_ID },
        },
      ],
      templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
    },
  ],
  templates: [{ id: 100, name: 'billing_a', text: 'Hi {{1}}, your bill is due.', businessIds: [1], whatsapp: { language: 'pt_BR' } }],
};

const MODES = ['adaptive', 'fixed-64', 'undici'] as const;
type Mode = (typeof MODES)[number];

async function startFake(): Promise<{ url: string; stop(): void }> {
  const child = fork(fileURLToPath(new URL('./whatsapp-fake.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, FAKE_DELAY_MS: String(DELAY_MS) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  return { url, stop: () => child.kill('SIGKILL') };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Measured {
  readonly perSecond: number;
  /** The number's in-flight window at the end (sendpool's modes). */
  readonly window?: number;
}

/** One instance of the reference server sending through the WhatsApp channel. */
async function instance(url: string, maxInFlightPerNumber: number | undefined): Promise<Measured> {
  const channel = createWhatsAppChannel({
    fleet,
    ...SECRETS,
    graphUrl: url,
    attendanceIdleMs: false,
    connections: CONNECTIONS,
    ...(maxInFlightPerNumber !== undefined ? { maxInFlightPerNumber } : {}),
  });
  const server = buildServer({
    engine: createEngine(fleet),
    channel,
    apiKeys: [{ key: KEY, companyId: 1 }],
    logger: false,
    processMetrics: false,
    metrics: false,
    maxQueuedContacts: 10_000_000,
  });
  await server.ready();
  // Enough contacts for the whole run at the number's rate (and its first full bucket).
  const total = (WARMUP_S + SECONDS + 2) * RATE;
  for (let offset = 0; offset < total; offset += 1000) {
    const payload = JSON.stringify({
      business_id: 1,
      template_type_id: 10,
      campaign_id: 1,
      contacts: Array.from({ length: 1000 }, (_, i) => ({ phone_number: `55119${String(80_000_000 + offset + i).padStart(8, '0')}`, template_variables: [`Client ${offset + i}`] })),
    });
    const answer = await server.inject({ method: 'POST', url: '/messenger/messages/', headers: { 'x-api-key-id': KEY, 'content-type': 'application/json' }, payload });
    if (answer.statusCode !== 202) throw new Error(`POST /messenger/messages/ answered ${answer.statusCode}: ${answer.body}`);
  }
  await sleep(WARMUP_S * 1000);
  const before = channel.stats().sent;
  const started = performance.now();
  await sleep(SECONDS * 1000);
  const sent = channel.stats().sent - before;
  const seconds = (performance.now() - started) / 1000;
  const window = channel.stats().maxWindow;
  await server.close();
  return { perSecond: Math.round(sent / seconds), window };
}

/** A plain undici client: requests at RATE a second, as many at the fake as it takes. */
async function plainUndici(url: string): Promise<Measured> {
  const pool = new Pool(url, { connections: CONNECTIONS, keepAliveTimeout: 30_000 });
  const headers = { authorization: `Bearer ${SECRETS.accessToken}`, 'content-type': 'application/json' };
  const path = `/v23.0/${PHONE_NUMBER_ID}/messages`;
  let accepted = 0;
  let issued = 0;
  let stop = false;
  const send = (i: number) => {
    const body = `{"messaging_product":"whatsapp","recipient_type":"individual","to":"55119${String(80_000_000 + i)}","type":"template","template":{"name":"billing_a","language":{"policy":"deterministic","code":"pt_BR"},"components":[{"type":"body","parameters":[{"type":"text","text":"Client ${i}"}]}]}}`;
    pool
      .request({ path, method: 'POST', headers, body })
      .then(async (r) => {
        await r.body.dump();
        if (r.statusCode === 200) accepted++;
      })
      .catch(() => {});
  };
  const t0 = performance.now();
  const pacer = (async () => {
    while (!stop) {
      const due = Math.floor(((performance.now() - t0) * RATE) / 1000);
      while (issued < due) send(issued++);
      await sleep(10);
    }
  })();
  await sleep(WARMUP_S * 1000);
  const before = accepted;
  const started = performance.now();
  await sleep(SECONDS * 1000);
  const count = accepted - before;
  const seconds = (performance.now() - started) / 1000;
  stop = true;
  await pacer;
  await pool.close();
  return { perSecond: Math.round(count / seconds) };
}

async function main(): Promise<void> {
  const modes = (process.env.BENCH_MODES ?? MODES.join(',')).split(',') as Mode[];
  for (const m of modes) if (!MODES.includes(m)) throw new Error(`BENCH_MODES: expected some of ${MODES.join(', ')}, got ${m}`);
  const fake = await startFake();
  const runs: { mode: Mode; load: number; result: Measured }[] = [];
  try {
    for (let r = 0; r < REPEATS; r++) {
      for (const mode of modes) {
        const load = Number(loadavg()[0]!.toFixed(2));
        const result = mode === 'undici' ? await plainUndici(fake.url) : await instance(fake.url, mode === 'fixed-64' ? 64 : undefined);
        runs.push({ mode, load, result });
        console.error(`${mode}: ${result.perSecond.toLocaleString('en')} sends/s${result.window !== undefined ? `, window ${result.window}` : ''}, load ${load}`);
      }
    }
  } finally {
    fake.stop();
  }
  const machine = `${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores, ${process.platform} ${process.arch}, Node ${process.version}`;
  console.log(`\nOne number of ${RATE.toLocaleString('en')} messages/s, the fake answering after ${DELAY_MS} ms — ${machine}; ${SECONDS} s counted after ${WARMUP_S} s, ${REPEATS} rounds\n`);
  console.log('| mode | accepted sends/s (each run, load average) | in-flight window at the end |');
  console.log('|---|---|---|');
  for (const mode of modes) {
    const mine = runs.filter((x) => x.mode === mode);
    const list = mine.map((x) => `${x.result.perSecond.toLocaleString('en')} (${x.load})`).join(', ');
    const windows = mine.map((x) => x.result.window).filter((w) => w !== undefined);
    console.log(`| ${mode} | ${list} | ${windows.length > 0 ? windows.join(', ') : '—'} |`);
  }
}

await main();
