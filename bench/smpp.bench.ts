/**
 * SMS per second one sendpool instance pushes through SMPP (not a test):
 *
 *     npx tsup --silent && npx tsx bench/smpp.bench.ts
 *
 * A local SMSC (the smpp package's server side, test/server/smpp-smsc.ts) runs in a child process,
 * so it does not share this process's event loop (on a 2-core machine they still share the CPUs).
 * This process loads sendpool from dist/ (the build a host runs), binds one SMPP channel and calls
 * `sendSms` for BENCH_SMS single-part SMS, keeping BENCH_CONCURRENCY of them unanswered at once
 * (the server's SMS worker does the same with `sms.maxInFlight`). Measured: SMS answered `sent`
 * per second, and the CPU time of each process over the run (is it our side or the fake that
 * limits?). Two runs per window: submits only, and with a delivery receipt for each SMS (the
 * channel reads the receipt and reports the DLR to its sink).
 *
 * Then one whole instance (BENCH_PARTS "instance"): the reference server with the SMPP channel
 * (composed with the simulated template channel), the SMS posted to POST /sms/messages/ 1,000 per
 * request, the SMS worker handing BENCH_CONCURRENCY to the channel at once, a DELIVRD receipt for
 * each, from the first POST to the last DLR reported: with state in memory and on the durable
 * server (SQLite in a temporary directory: the accepted SMS, their answers, the SMSC's message ids
 * in the channel memory and every receipt written before its deliver_sm is answered), side by side.
 *
 * Two SMSCs, each run in turn (BENCH_SMSC, "lean,package"): the tests' (the package's server side)
 * and a lean one that reads only headers and writes prebuilt octets (bench/lean-smsc.ts), so the
 * instance, not the fake, is what is measured.
 *
 * Options (environment): BENCH_SMS (200000), BENCH_PARTS ("channel,instance"), BENCH_SMSC
 * ("lean,package"), BENCH_WINDOWS ("50,200"), BENCH_CONCURRENCY (2000), BENCH_REPEATS (3), BENCH_JSON (a file to write the figures to).
 * Method and latest figures: docs/benchmarks.md, "SMS over SMPP".
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

interface Run {
  readonly smsc: SmscKind;
  readonly window: number;
  readonly receipts: boolean;
  readonly smsPerSecond: number;
  readonly seconds: number;
  /** CPU time of this process (the channel) and of the SMSC child, as a share of the run's wall time. */
  readonly channelCpu: number;
  readonly smscCpu: number;
  readonly dlrs: number;
}

async function once(smsc: SmscKind, window: number, receipts: boolean, count: number, concurrency: number): Promise<Run> {
  const { createSmppChannel } = (await import(`${root}dist/server.js`)) as typeof import('../src/server/index.js');
  const child = fork(here, [], { env: { ...process.env, SENDPOOL_BENCH_SMSC: smsc, BENCH_RECEIPTS: receipts ? '1' : '0' }, stdio: 'inherit' });
  try {
    const { port } = await ask<SmscReady>(child);
    let dlrs = 0;
    const channel = createSmppChannel({
      host: '127.0.0.1',
      port,
      systemId: 'sendpool',
      password: 'secret1',
      sourceAddr: 'SENDPOOL',
      window,
      deliveryReceipts: receipts,
      maxTrackedReceipts: count + 1,
    });
    channel.attach({ messageStatus: () => undefined, attendanceClosed: () => undefined, smsReply: () => undefined, smsStatus: () => void dlrs++ });
    await channel.whenBound();
    const sms = (i: number) => ({
      smsId: `bench:${i}`,
      requestId: 'bench',
      companyId: 1,
      index: i,
      phone: `55119${String(i % 100_000_000).padStart(8, '0')}`,
      message: `Your code is ${100000 + (i % 900000)}`,
      encoding: 'GSM-7' as const,
      parts: 1,
      callbacks: {},
    });
    // Warm-up: the JIT and the connection.
    await Promise.all(Array.from({ length: 5_000 }, (_, i) => channel.sendSms(sms(count + i))));
    await ask<{ started: true }>(child, 'start');
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let next = 0;
    let sent = 0;
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
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const usage = await ask<SmscUsage>(child, 'usage');
    if (receipts) {
      while (dlrs < count) await new Promise((r) => setTimeout(r, 10));
    }
    await channel.close();
    return { smsc, window, receipts, smsPerSecond: Math.round(count / seconds), seconds, channelCpu: (cpu.user + cpu.system) / 1e6 / seconds, smscCpu: usage.cpuMs / 1000 / seconds, dlrs };
  } finally {
    child.kill('SIGKILL');
  }
}

interface InstanceRun {
  readonly smsc: SmscKind;
  readonly durable: boolean;
  readonly load1: number;
  readonly smsPerSecond: number;
  readonly cpuMicrosPerSms: number;
  readonly serverCpu: number;
  readonly smscCpu: number;
}

/** One whole instance: POST /sms/messages/ to the last DLR, a receipt per SMS. */
async function instanceOnce(smsc: SmscKind, durable: boolean, count: number, concurrency: number): Promise<InstanceRun> {
  const server = (await import(`${root}dist/server.js`)) as typeof import('../src/server/index.js');
  const core = (await import(`${root}dist/index.js`)) as typeof import('../src/index.js');
  const child = fork(here, [], { env: { ...process.env, SENDPOOL_BENCH_SMSC: smsc, BENCH_RECEIPTS: '1' }, stdio: 'inherit' });
  const dir = durable ? mkdtempSync(join(tmpdir(), 'sendpool-smpp-bench-')) : undefined;
  const load1 = loadavg()[0]!;
  try {
    const { port } = await ask<SmscReady>(child);
    const window = process.env.BENCH_INSTANCE_WINDOW === undefined ? {} : { window: Number(process.env.BENCH_INSTANCE_WINDOW) };
    const smpp = server.createSmppChannel({ host: '127.0.0.1', port, systemId: 'sendpool', password: 'secret1', sourceAddr: 'SENDPOOL', maxTrackedReceipts: 2 * count, ...window });
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
    const body = (offset: number) =>
      JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ message: `Your code is ${100000 + ((offset + i) % 900000)}`, phone: `55119${String((offset + i) % 100_000_000).padStart(8, '0')}` })));
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

async function main(): Promise<void> {
  const dist = `${root}dist/server.js`;
  if (!existsSync(dist) || statSync(dist).mtimeMs < statSync(`${root}src/server/channels/smpp-channel.ts`).mtimeMs) {
    throw new Error('dist/ is older than src/: run npx tsup --silent first');
  }
  const count = Number(process.env.BENCH_SMS ?? 200_000);
  const windows = (process.env.BENCH_WINDOWS ?? '50,200').split(',').map(Number);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 2_000);
  const repeats = Number(process.env.BENCH_REPEATS ?? 3);
  const parts = (process.env.BENCH_PARTS ?? 'channel,instance').split(',');
  const smscs = (process.env.BENCH_SMSC ?? 'lean,package').split(',') as SmscKind[];
  const rows: { smsc: SmscKind; window: number; receipts: boolean; runs: Run[] }[] = [];
  for (const smsc of parts.includes('channel') ? smscs : []) {
    for (const window of windows) {
      for (const receipts of [false, true]) {
        const runs: Run[] = [];
        for (let r = 0; r < repeats; r++) runs.push(await once(smsc, window, receipts, count, concurrency));
        rows.push({ smsc, window, receipts, runs });
        const m = median(runs.map((x) => x.smsPerSecond));
        console.error(`${smsc} SMSC, window ${window}${receipts ? ' + receipts' : ''}: ${m.toLocaleString('en')} SMS/s [${runs.map((x) => x.smsPerSecond.toLocaleString('en')).join(', ')}]`);
      }
    }
  }
  const machine = `${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores, Node ${process.version}, load ${loadavg()[0]!.toFixed(2)}`;
  console.log(`\nSMS over SMPP to a local SMSC — ${machine}; ${count.toLocaleString('en')} single-part SMS per run, ${concurrency} unanswered sendSms at most, median of ${repeats}\n`);
  console.log('| SMSC | window | receipts | SMS/s (median) | runs | channel CPU | SMSC CPU |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const mid = row.runs.find((x) => x.smsPerSecond === median(row.runs.map((y) => y.smsPerSecond)))!;
    console.log(
      `| ${row.smsc} | ${row.window} | ${row.receipts ? 'yes' : 'no'} | ${mid.smsPerSecond.toLocaleString('en')} | ${row.runs.map((x) => x.smsPerSecond.toLocaleString('en')).join(', ')} | ${pct(mid.channelCpu)} | ${pct(mid.smscCpu)} |`,
    );
  }
  if (rows.length > 0) {
    const best = Math.max(...rows.map((r) => median(r.runs.map((x) => x.smsPerSecond))));
    console.log(`\nthe channel alone, target >= 20,000 SMS/s per instance: ${best >= 20_000 ? 'met' : 'MISSED'} (best median ${best.toLocaleString('en')})`);
  }
  const instances: InstanceRun[] = [];
  if (parts.includes('instance')) {
    // Side by side: each SMSC, memory and durable, in turn.
    for (let r = 0; r < repeats; r++) {
      for (const smsc of smscs) {
        for (const durable of [false, true]) {
          const run = await instanceOnce(smsc, durable, count, concurrency);
          instances.push(run);
          console.error(
            `instance${durable ? ', durable' : ''}, ${smsc} SMSC: ${run.smsPerSecond.toLocaleString('en')} SMS/s, ${run.cpuMicrosPerSms} µs CPU an SMS, server ${pct(run.serverCpu)}, SMSC ${pct(run.smscCpu)}, load ${run.load1}`,
          );
        }
      }
    }
    console.log(`\nOne whole instance (POST /sms/messages/ to the last DLR, a receipt per SMS, ${concurrency} SMS at the channel at most, window ${process.env.BENCH_INSTANCE_WINDOW ?? 'default'})\n`);
    console.log('| SMSC | server | SMS/s (median) | runs (load average, 1 min) | CPU per SMS | server CPU | SMSC CPU |');
    console.log('|---|---|---|---|---|---|---|');
    for (const smsc of smscs)
      for (const durable of [false, true]) {
        const mine = instances.filter((x) => x.durable === durable && x.smsc === smsc);
        const mid = mine.find((x) => x.smsPerSecond === median(mine.map((y) => y.smsPerSecond)))!;
        console.log(
          `| ${smsc} | ${durable ? 'durable' : 'in memory'} | ${mid.smsPerSecond.toLocaleString('en')} | ${mine.map((x) => `${x.smsPerSecond.toLocaleString('en')} (${x.load1})`).join(', ')} | ${mid.cpuMicrosPerSms} µs | ${pct(mid.serverCpu)} | ${pct(mid.smscCpu)} |`,
        );
      }
  }
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, `${JSON.stringify({ date: new Date().toISOString(), machine, count, concurrency, repeats, rows, instances }, null, 2)}\n`);
}

const smscKind = process.env.SENDPOOL_BENCH_SMSC;
if (smscKind === 'lean' || smscKind === 'package') await smscChild(smscKind);
else await main();
