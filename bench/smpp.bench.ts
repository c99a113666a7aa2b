/**
 * SMS per second one sendpool instance pushes through SMPP, beside the ceiling (not a test):
 *
 *     npx tsup --silent && npx tsx bench/smpp.bench.ts
 *
 * Three paths to the same local SMSC, each case with an SMSC of its own in a child process (so it
 * does not share this process's event loop; on a 2-core machine they still share the CPUs):
 *
 * - plain: the ceiling, a plain SMPP client (bench/smpp-plain.ts) that sends the same submit_sm
 *   (same fields and texts, built up front with the channel's encoder), the same window, answers
 *   each receipt, over a plain socket: the least work any SMPP client must do for this traffic.
 * - channel: sendpool's SMPP channel, loaded from dist/ (the build a host runs): `sendSms` for each
 *   SMS, BENCH_CONCURRENCY of them unanswered at once (the server's SMS worker does the same with
 *   `sms.maxInFlight`), its window on the wire.
 * - instance: one whole instance, the reference server with the SMPP channel (composed with the
 *   simulated template channel), the SMS posted to POST /sms/messages/ 1,000 per request, a
 *   DELIVRD receipt for each, from the first POST to the last DLR reported: with state in memory
 *   and on the durable server (SQLite in a temporary directory: the accepted SMS, their answers,
 *   the SMSC's message ids in the channel memory and every receipt written before its deliver_sm
 *   is answered).
 *
 * The plain client and the channel run without receipts and with a DELIVRD receipt per SMS (the
 * channel reads it, matches it and reports the DLR to its sink), each timed from its first
 * submit_sm to the last answer and, with receipts, the last receipt, after 5,000 SMS to warm up.
 * Every case runs once a round, the rounds in alternating order; a figure is a case's median over
 * the rounds, and a ratio (channel / plain, instance / plain) the median over rounds of the ratio
 * within the round. CPU is each process's CPU time over the run.
 *
 * Two SMSCs (BENCH_SMSC, "lean,package"): the tests' (test/server/smpp-smsc.ts, the `smpp`
 * package's server side) and a lean one that reads only headers and writes prebuilt octets
 * (bench/lean-smsc.ts), so the client, not the fake, is what is measured.
 *
 * Options (environment): BENCH_SMS (50000, plain and channel runs), BENCH_INSTANCE_SMS (20000),
 * BENCH_PARTS ("plain,channel,instance"), BENCH_SMSC ("lean,package"), BENCH_WINDOWS ("50"),
 * BENCH_INSTANCE_WINDOW (50), BENCH_CONCURRENCY (2000), BENCH_REPEATS (3 rounds), BENCH_JSON (a
 * file to write the figures to). Method and latest figures: docs/benchmarks.md, "SMS over SMPP".
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchPhone, benchText, buildSubmits, connectPlainClient } from './smpp-plain.js';

const here = fileURLToPath(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));

interface SmscReady {
  readonly port: number;
}
interface SmscUsage {
  readonly cpuMs: number;
  readonly accepted: number;
}

/** Which SMSC answers: the tests' (the `smpp` package's server side) or the lean one (bench/lean-smsc.ts). */
type SmscKind = 'package' | 'lean';

/** The child: a local SMSC that answers every submit_sm (and sends a DELIVRD receipt with BENCH_RECEIPTS=1). */
async function smscChild(kind: SmscKind): Promise<void> {
  const receipts = process.env.BENCH_RECEIPTS === '1';
  const smsc: { readonly port: number; readonly accepted: number } =
    kind === 'lean'
      ? await (await import('./lean-smsc.js')).startLeanSmsc({ receipts })
      : await (async () => {
          const { startFakeSmsc } = await import('../test/server/smpp-smsc.js');
          const fake = await startFakeSmsc({ record: false, ...(receipts ? { autoReceipt: () => 'DELIVRD' } : {}) });
          return {
            port: fake.port,
            get accepted() {
              return fake.acceptedCount;
            },
          };
        })();
  let start = process.cpuUsage();
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'start') {
      start = process.cpuUsage();
      process.send?.({ started: true });
    }
    if (m.cmd === 'usage') {
      const u = process.cpuUsage(start);
      process.send?.({ cpuMs: (u.user + u.system) / 1000, accepted: smsc.accepted } satisfies SmscUsage);
    }
  });
  process.send?.({ port: smsc.port } satisfies SmscReady);
}

function ask<T>(child: ChildProcess, cmd?: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    if (cmd) child.send({ cmd });
  });
}

/** A measured run of one client case: the plain client (the ceiling) or sendpool's channel. */
interface Run {
  readonly kind: ClientKind;
  readonly smsc: SmscKind;
  readonly window: number;
  readonly receipts: boolean;
  readonly round: number;
  readonly smsPerSecond: number;
  readonly seconds: number;
  /** CPU time of this process (the client) and of the SMSC child, as a share of the run's wall time. */
  readonly clientCpu: number;
  readonly smscCpu: number;
  /** This process's CPU time per SMS, in microseconds. */
  readonly cpuMicrosPerSms: number;
  readonly load1: number;
}

/** Which client sends: the plain one (bench/smpp-plain.ts, the ceiling) or sendpool's SMPP channel. */
type ClientKind = 'plain' | 'channel';

/** SMS sent before each client run is measured (the JIT, the connection); their receipts too. */
const WARMUP = 5_000;

function forkSmsc(smsc: SmscKind, receipts: boolean): ChildProcess {
  return fork(here, [], { env: { ...process.env, SENDPOOL_BENCH_SMSC: smsc, BENCH_RECEIPTS: receipts ? '1' : '0' }, stdio: 'inherit' });
}

/** Checks the SMSC accepted every submit_sm of the run and its warm-up, no more and no fewer. */
function checkAccepted(kind: string, usage: SmscUsage, expected: number): void {
  if (usage.accepted !== expected) throw new Error(`${kind}: the SMSC accepted ${usage.accepted} submit_sm, expected ${expected}`);
}

function runOf(kind: ClientKind, smsc: SmscKind, window: number, receipts: boolean, round: number, count: number, seconds: number, cpu: NodeJS.CpuUsage, usage: SmscUsage, load1: number): Run {
  const cpuMs = (cpu.user + cpu.system) / 1000;
  return {
    kind,
    smsc,
    window,
    receipts,
    round,
    smsPerSecond: Math.round(count / seconds),
    seconds,
    clientCpu: cpuMs / 1000 / seconds,
    smscCpu: usage.cpuMs / 1000 / seconds,
    cpuMicrosPerSms: Number(((cpuMs * 1000) / count).toFixed(1)),
    load1,
  };
}

/**
 * The ceiling: the plain client sends the same submit_sm (built up front, not timed), `window`
 * unanswered at most, answers each receipt, and is timed until every answer and receipt came.
 */
async function plainOnce(smsc: SmscKind, window: number, receipts: boolean, round: number, count: number): Promise<Run> {
  const child = forkSmsc(smsc, receipts);
  const load1 = loadavg()[0]!;
  try {
    const { port } = await ask<SmscReady>(child);
    const client = await connectPlainClient(port);
    // The channel numbers the warm-up SMS after the measured ones (bench:count..): so does this.
    const warmup = buildSubmits(count, WARMUP, 2, receipts);
    const measured = buildSubmits(0, count, 2 + WARMUP, receipts);
    await client.send(warmup, window, receipts);
    await ask<{ started: true }>(child, 'start');
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await client.send(measured, window, receipts);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const usage = await ask<SmscUsage>(child, 'usage');
    client.close();
    checkAccepted('plain client', usage, count + WARMUP);
    return runOf('plain', smsc, window, receipts, round, count, seconds, cpu, usage, load1);
  } finally {
    child.kill('SIGKILL');
  }
}

/** sendpool's channel: `sendSms` for each SMS, `concurrency` unanswered at most, timed until every SMS is `sent` and (with receipts) its DLR reported. */
async function channelOnce(smsc: SmscKind, window: number, receipts: boolean, round: number, count: number, concurrency: number): Promise<Run> {
  const { createSmppChannel } = (await import(`${root}dist/server.js`)) as typeof import('../src/server/index.js');
  const child = forkSmsc(smsc, receipts);
  const load1 = loadavg()[0]!;
  try {
    const { port } = await ask<SmscReady>(child);
    let dlrs = 0;
    let dlrTarget = Infinity;
    let onTarget: () => void = () => undefined;
    const channel = createSmppChannel({
      host: '127.0.0.1',
      port,
      systemId: 'sendpool',
      password: 'secret1',
      sourceAddr: 'SENDPOOL',
      window,
      deliveryReceipts: receipts,
      maxTrackedReceipts: count + WARMUP + 1,
    });
    channel.attach({
      messageStatus: () => undefined,
      attendanceClosed: () => undefined,
      smsReply: () => undefined,
      smsStatus: () => {
        if (++dlrs === dlrTarget) onTarget();
      },
    });
    const allDlrs = (target: number) =>
      new Promise<void>((resolve) => {
        if (!receipts || dlrs >= target) return resolve();
        dlrTarget = target;
        onTarget = resolve;
      });
    await channel.whenBound();
    const sms = (i: number) => ({
      smsId: `bench:${i}`,
      requestId: 'bench',
      companyId: 1,
      index: i,
      phone: benchPhone(i),
      message: benchText(i),
      encoding: 'GSM-7' as const,
      parts: 1,
      callbacks: {},
    });
    // Warm-up: the JIT and the connection, their receipts included.
    await Promise.all(Array.from({ length: WARMUP }, (_, i) => channel.sendSms(sms(count + i))));
    await allDlrs(WARMUP);
    dlrs = 0;
    await ask<{ started: true }>(child, 'start');
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let next = 0;
    let sent = 0;
    const receiptsDone = allDlrs(count);
    await new Promise<void>((resolve, reject) => {
      const pump = () => {
        if (sent === count) return resolve();
        while (next < count && next - sent < concurrency) {
          channel.sendSms(sms(next++)).then((r) => {
            if (r.status !== 'sent') return reject(new Error(`SMS failed: ${r.reason}`));
            sent++;
            pump();
          }, reject);
        }
      };
      pump();
    });
    await receiptsDone;
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const usage = await ask<SmscUsage>(child, 'usage');
    await channel.close();
    checkAccepted('channel', usage, count + WARMUP);
    return runOf('channel', smsc, window, receipts, round, count, seconds, cpu, usage, load1);
  } finally {
    child.kill('SIGKILL');
  }
}

interface InstanceRun {
  readonly smsc: SmscKind;
  readonly durable: boolean;
  readonly round: number;
  readonly load1: number;
  readonly smsPerSecond: number;
  readonly cpuMicrosPerSms: number;
  readonly serverCpu: number;
  readonly smscCpu: number;
}

/** One whole instance: POST /sms/messages/ to the last DLR, a receipt per SMS. */
async function instanceOnce(smsc: SmscKind, durable: boolean, round: number, count: number, concurrency: number, window: number): Promise<InstanceRun> {
  const server = (await import(`${root}dist/server.js`)) as typeof import('../src/server/index.js');
  const core = (await import(`${root}dist/index.js`)) as typeof import('../src/index.js');
  const child = forkSmsc(smsc, true);
  const dir = durable ? mkdtempSync(join(tmpdir(), 'sendpool-smpp-bench-')) : undefined;
  const load1 = loadavg()[0]!;
  try {
    const { port } = await ask<SmscReady>(child);
    const smpp = server.createSmppChannel({ host: '127.0.0.1', port, systemId: 'sendpool', password: 'secret1', sourceAddr: 'SENDPOOL', maxTrackedReceipts: 2 * count, window });
    const storage = dir === undefined ? undefined : await server.openSqliteStorage(dir);
    const fleet = {
      businesses: [
        { id: 1, name: 'Bench', companyId: 1, numbers: [{ phone: '5511990000001', throughputPerHour: 1000, messagingLimit24h: 1000 }], templateTypes: [{ id: 10, name: 'b', templateIds: [100] }] },
      ],
      templates: [{ id: 100, name: 'b', text: 'Hi {{1}}', businessIds: [1] }],
    };
    const app = server.buildServer({
      engine: core.createEngine(fleet, durable ? { trackChanges: true } : {}),
      channel: server.composeChannels({ messages: server.createSimulatedChannel(), sms: smpp }),
      apiKeys: [{ key: 'bench-key-0123456789abcdef', companyId: 1 }],
      logger: false,
      processMetrics: false,
      sms: { maxInFlight: concurrency, maxQueued: count + 10_000 },
      maxTrackedMessages: count,
      ...(storage ? { storage } : {}),
    });
    await app.ready();
    await smpp.whenBound();
    const body = (offset: number) => JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ message: benchText(offset + i), phone: benchPhone(offset + i) })));
    await ask<{ started: true }>(child, 'start');
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let offset = 0; offset < count; offset += 1000) {
      const answer = await app.inject({ method: 'POST', url: '/sms/messages/', headers: { 'x-api-key-id': 'bench-key-0123456789abcdef', 'content-type': 'application/json' }, payload: body(offset) });
      if (answer.statusCode !== 202) throw new Error(`POST /sms/messages/ answered ${answer.statusCode}: ${answer.body}`);
    }
    while (smpp.stats().receipts < count) await new Promise((r) => setTimeout(r, 5));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const usage = await ask<SmscUsage>(child, 'usage');
    if (smpp.stats().smsSent < count || smpp.stats().unmatchedReceipts > 0) throw new Error(`not every SMS sent and matched: ${JSON.stringify(smpp.stats())}`);
    await app.close();
    storage?.close();
    const cpuMs = (cpu.user + cpu.system) / 1000;
    return {
      smsc,
      durable,
      round,
      load1: Number(load1.toFixed(2)),
      smsPerSecond: Math.round(count / seconds),
      cpuMicrosPerSms: Math.round((cpuMs * 1000) / count),
      serverCpu: cpuMs / 1000 / seconds,
      smscCpu: usage.cpuMs / 1000 / seconds,
    };
  } finally {
    child.kill('SIGKILL');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (x: number) => `${Math.round(x * 100)} %`;
const int = (x: number) => Math.round(x).toLocaleString('en');
const ratio = (x: number | undefined) => (x === undefined ? '—' : `${x.toFixed(2)}x`);
/** The run with the median SMS/s of a case. */
const middle = <T extends { readonly smsPerSecond: number }>(runs: readonly T[]): T => runs.find((x) => x.smsPerSecond === median(runs.map((y) => y.smsPerSecond)))!;

/** One case of a round. */
type Case =
  { readonly part: ClientKind; readonly smsc: SmscKind; readonly window: number; readonly receipts: boolean } | { readonly part: 'instance'; readonly smsc: SmscKind; readonly durable: boolean };

async function main(): Promise<void> {
  const dist = `${root}dist/server.js`;
  if (!existsSync(dist) || statSync(dist).mtimeMs < statSync(`${root}src/server/channels/smpp-channel.ts`).mtimeMs) {
    throw new Error('dist/ is older than src/: run npx tsup --silent first');
  }
  const count = Number(process.env.BENCH_SMS ?? 50_000);
  // The whole instance is 3 to 20 times slower than the plain client: fewer SMS keep the run short.
  const instanceCount = Number(process.env.BENCH_INSTANCE_SMS ?? 20_000);
  const windows = (process.env.BENCH_WINDOWS ?? '50').split(',').map(Number);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 2_000);
  const repeats = Number(process.env.BENCH_REPEATS ?? 3);
  const parts = (process.env.BENCH_PARTS ?? 'plain,channel,instance').split(',');
  const smscs = (process.env.BENCH_SMSC ?? 'lean,package').split(',') as SmscKind[];
  const instanceWindow = Number(process.env.BENCH_INSTANCE_WINDOW ?? 50);

  // Every case once a round, the plain client beside the channel; each round in the other order
  // than the one before, so no case always runs after the same one.
  const plan: Case[] = [];
  for (const smsc of smscs)
    for (const window of windows) for (const receipts of [false, true]) for (const part of ['plain', 'channel'] as const) if (parts.includes(part)) plan.push({ part, smsc, window, receipts });
  for (const smsc of parts.includes('instance') ? smscs : []) for (const durable of [false, true]) plan.push({ part: 'instance', smsc, durable });

  const runs: Run[] = [];
  const instances: InstanceRun[] = [];
  const started = performance.now();
  const loadStart = loadavg()[0]!;
  for (let round = 0; round < repeats; round++) {
    for (const c of round % 2 === 0 ? plan : [...plan].reverse()) {
      if (c.part === 'instance') {
        const run = await instanceOnce(c.smsc, c.durable, round, instanceCount, concurrency, instanceWindow);
        instances.push(run);
        console.error(
          `round ${round + 1}: instance${c.durable ? ', durable' : ''}, ${c.smsc} SMSC: ${int(run.smsPerSecond)} SMS/s, ${run.cpuMicrosPerSms} µs CPU an SMS, server ${pct(run.serverCpu)}, SMSC ${pct(run.smscCpu)}, load ${run.load1}`,
        );
      } else {
        const run = c.part === 'plain' ? await plainOnce(c.smsc, c.window, c.receipts, round, count) : await channelOnce(c.smsc, c.window, c.receipts, round, count, concurrency);
        runs.push(run);
        console.error(
          `round ${round + 1}: ${c.part}, ${c.smsc} SMSC, window ${c.window}${c.receipts ? ' + receipts' : ''}: ${int(run.smsPerSecond)} SMS/s, ${run.cpuMicrosPerSms} µs CPU an SMS, client ${pct(run.clientCpu)}, SMSC ${pct(run.smscCpu)}, load ${run.load1.toFixed(2)}`,
        );
      }
    }
  }
  const wallSeconds = (performance.now() - started) / 1000;
  const loadEnd = loadavg()[0]!;

  /** A case's plain runs, by round (the ceiling each ratio divides by). */
  const plainOf = (smsc: SmscKind, window: number, receipts: boolean) => runs.filter((x) => x.kind === 'plain' && x.smsc === smsc && x.window === window && x.receipts === receipts);
  /** Median over rounds of this round's figure over the plain client's in the same round. */
  const pairedRatio = (mine: readonly { readonly round: number; readonly smsPerSecond: number }[], plain: readonly Run[]): number | undefined => {
    const per = mine.flatMap((x) => {
      const p = plain.find((y) => y.round === x.round);
      return p ? [x.smsPerSecond / p.smsPerSecond] : [];
    });
    return per.length === 0 ? undefined : median(per);
  };

  const machine = `${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores, Node ${process.version}`;
  console.log(
    `\nSMS over SMPP to a local SMSC — ${machine}; load average (1 min) ${loadStart.toFixed(2)} -> ${loadEnd.toFixed(2)}; ${int(count)} single-part SMS per run after ${int(WARMUP)} to warm up, median of ${repeats} rounds, ${Math.round(wallSeconds)} s\n`,
  );
  const clientRows: { smsc: SmscKind; window: number; receipts: boolean; plain: Run[]; channel: Run[]; channelOverPlain: number | undefined }[] = [];
  for (const smsc of smscs)
    for (const window of windows)
      for (const receipts of [false, true]) {
        const plain = plainOf(smsc, window, receipts);
        const channel = runs.filter((x) => x.kind === 'channel' && x.smsc === smsc && x.window === window && x.receipts === receipts);
        if (plain.length + channel.length > 0) clientRows.push({ smsc, window, receipts, plain, channel, channelOverPlain: pairedRatio(channel, plain) });
      }
  if (clientRows.length > 0) {
    console.log('| SMSC | window | receipts | plain client SMS/s | sendpool channel SMS/s | channel / plain | CPU µs per SMS, plain / channel | SMSC CPU, plain / channel |');
    console.log('|---|---|---|---|---|---|---|---|');
    const fig = (rs: readonly Run[]) => (rs.length === 0 ? '—' : `${int(middle(rs).smsPerSecond)} (${rs.map((x) => int(x.smsPerSecond)).join(', ')})`);
    const cpuOf = (rs: readonly Run[]) => (rs.length === 0 ? '—' : middle(rs).cpuMicrosPerSms.toFixed(1));
    const smscOf = (rs: readonly Run[]) => (rs.length === 0 ? '—' : pct(middle(rs).smscCpu));
    for (const row of clientRows)
      console.log(
        `| ${row.smsc} | ${row.window} | ${row.receipts ? 'yes' : 'no'} | ${fig(row.plain)} | ${fig(row.channel)} | ${ratio(row.channelOverPlain)} | ${cpuOf(row.plain)} / ${cpuOf(row.channel)} | ${smscOf(row.plain)} / ${smscOf(row.channel)} |`,
      );
  }
  const instanceRows: { smsc: SmscKind; durable: boolean; runs: InstanceRun[]; instanceOverPlain: number | undefined }[] = [];
  for (const smsc of smscs)
    for (const durable of [false, true]) {
      const mine = instances.filter((x) => x.durable === durable && x.smsc === smsc);
      if (mine.length > 0) instanceRows.push({ smsc, durable, runs: mine, instanceOverPlain: pairedRatio(mine, plainOf(smsc, instanceWindow, true)) });
    }
  if (instanceRows.length > 0) {
    console.log(
      `\nOne whole instance (${int(instanceCount)} SMS per run, POST /sms/messages/ to the last DLR, a receipt per SMS, ${concurrency} SMS at the channel at most, window ${instanceWindow}); instance / plain: against the plain client with receipts, window ${instanceWindow}, same round\n`,
    );
    console.log('| SMSC | server | SMS/s (median) | runs (load average, 1 min) | instance / plain | CPU µs per SMS | server CPU | SMSC CPU |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const row of instanceRows) {
      const mid = middle(row.runs);
      console.log(
        `| ${row.smsc} | ${row.durable ? 'durable' : 'in memory'} | ${int(mid.smsPerSecond)} | ${row.runs.map((x) => `${int(x.smsPerSecond)} (${x.load1})`).join(', ')} | ${ratio(row.instanceOverPlain)} | ${mid.cpuMicrosPerSms} | ${pct(mid.serverCpu)} | ${pct(mid.smscCpu)} |`,
      );
    }
  }
  if (process.env.BENCH_JSON)
    writeFileSync(
      process.env.BENCH_JSON,
      `${JSON.stringify({ date: new Date().toISOString(), machine, loadStart, loadEnd, wallSeconds, count, instanceCount, warmup: WARMUP, concurrency, repeats, clientRows, instanceRows }, null, 2)}\n`,
    );
}

const smscKind = process.env.SENDPOOL_BENCH_SMSC;
if (smscKind === 'lean' || smscKind === 'package') await smscChild(smscKind);
else await main();
