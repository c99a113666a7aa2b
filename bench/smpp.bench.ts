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
 * Options (environment): BENCH_SMS (200000), BENCH_WINDOWS ("50,200"), BENCH_CONCURRENCY (2000),
 * BENCH_REPEATS (3), BENCH_JSON (a file to write the figures to).
 * Method and latest figures: docs/benchmarks.md, "SMS over SMPP".
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
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

/** The child: a local SMSC that answers every submit_sm (and sends a DELIVRD receipt with BENCH_RECEIPTS=1). */
async function smscChild(): Promise<void> {
  const { startFakeSmsc } = await import('../test/server/smpp-smsc.js');
  const receipts = process.env.BENCH_RECEIPTS === '1';
  const smsc = await startFakeSmsc({ record: false, ...(receipts ? { autoReceipt: () => 'DELIVRD' } : {}) });
  let start = process.cpuUsage();
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'start') {
      start = process.cpuUsage();
      process.send?.({ started: true });
    }
    if (m.cmd === 'usage') {
      const u = process.cpuUsage(start);
      process.send?.({ cpuMs: (u.user + u.system) / 1000, accepted: smsc.acceptedCount } satisfies SmscUsage);
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
  readonly window: number;
  readonly receipts: boolean;
  readonly smsPerSecond: number;
  readonly seconds: number;
  /** CPU time of this process (the channel) and of the SMSC child, as a share of the run's wall time. */
  readonly channelCpu: number;
  readonly smscCpu: number;
  readonly dlrs: number;
}

async function once(window: number, receipts: boolean, count: number, concurrency: number): Promise<Run> {
  const { createSmppChannel } = (await import(`${root}dist/server.js`)) as typeof import('../src/server/index.js');
  const child = fork(here, [], { env: { ...process.env, SENDPOOL_BENCH_SMSC: '1', BENCH_RECEIPTS: receipts ? '1' : '0' }, stdio: 'inherit' });
  try {
    const { port } = await ask<SmscReady>(child);
    let dlrs = 0;
    const channel = createSmppChannel({ host: '127.0.0.1', port, systemId: 'sendpool', password: 'secret1', sourceAddr: 'SENDPOOL', window, deliveryReceipts: receipts, maxTrackedReceipts: count + 1 });
    channel.attach({ messageStatus: () => undefined, attendanceClosed: () => undefined, smsReply: () => undefined, smsStatus: () => void dlrs++ });
    await channel.whenBound();
    const sms = (i: number) => ({ smsId: `bench:${i}`, requestId: 'bench', companyId: 1, index: i, phone: `55119${String(i % 100_000_000).padStart(8, '0')}`, message: `Your code is ${100000 + (i % 900000)}`, encoding: 'GSM-7' as const, parts: 1, callbacks: {} });
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
    return { window, receipts, smsPerSecond: Math.round(count / seconds), seconds, channelCpu: (cpu.user + cpu.system) / 1e6 / seconds, smscCpu: usage.cpuMs / 1000 / seconds, dlrs };
  } finally {
    child.kill('SIGKILL');
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
  const rows: { window: number; receipts: boolean; runs: Run[] }[] = [];
  for (const window of windows) {
    for (const receipts of [false, true]) {
      const runs: Run[] = [];
      for (let r = 0; r < repeats; r++) runs.push(await once(window, receipts, count, concurrency));
      rows.push({ window, receipts, runs });
      const m = median(runs.map((x) => x.smsPerSecond));
      console.error(`window ${window}${receipts ? ' + receipts' : ''}: ${m.toLocaleString('en')} SMS/s [${runs.map((x) => x.smsPerSecond.toLocaleString('en')).join(', ')}]`);
    }
  }
  const machine = `${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores, Node ${process.version}, load ${loadavg()[0]!.toFixed(2)}`;
  console.log(`\nSMS over SMPP to a local SMSC — ${machine}; ${count.toLocaleString('en')} single-part SMS per run, ${concurrency} unanswered sendSms at most, median of ${repeats}\n`);
  console.log('| window | receipts | SMS/s (median) | runs | channel CPU | SMSC CPU |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) {
    const mid = row.runs.find((x) => x.smsPerSecond === median(row.runs.map((y) => y.smsPerSecond)))!;
    console.log(`| ${row.window} | ${row.receipts ? 'yes' : 'no'} | ${mid.smsPerSecond.toLocaleString('en')} | ${row.runs.map((x) => x.smsPerSecond.toLocaleString('en')).join(', ')} | ${pct(mid.channelCpu)} | ${pct(mid.smscCpu)} |`);
  }
  const best = Math.max(...rows.map((r) => median(r.runs.map((x) => x.smsPerSecond))));
  console.log(`\ntarget >= 20,000 SMS/s per instance: ${best >= 20_000 ? 'met' : 'MISSED'} (best median ${best.toLocaleString('en')})`);
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, `${JSON.stringify({ date: new Date().toISOString(), machine, count, concurrency, repeats, rows }, null, 2)}\n`);
}

if (process.env.SENDPOOL_BENCH_SMSC === '1') await smscChild();
else await main();
