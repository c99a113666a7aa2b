/**
 * `npm run test:busy [-- <vitest arguments>]`: the test suite under CPU pressure, as on a shared CI
 * machine. Starts busy-loop processes (4, or SENDPOOL_BUSY_LOOPS), runs `npm test` with the
 * arguments given, stops the loops whatever happens, and exits with the suite's status.
 *
 * The loops also stop by themselves when this script's process goes away (they watch their parent
 * id), so even a SIGKILL of the script leaves none behind.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';

const count = Number(process.env['SENDPOOL_BUSY_LOOPS'] ?? 4);
if (!Number.isInteger(count) || count < 0) {
  console.error(`test:busy: SENDPOOL_BUSY_LOOPS must be a whole number, got ${JSON.stringify(process.env['SENDPOOL_BUSY_LOOPS'])}`);
  process.exit(2);
}

// Spin, and every ~50 M iterations check that the parent is still there.
const LOOP = `const parent = process.ppid;
for (;;) {
  for (let i = 0; i < 5e7; i++);
  if (process.ppid !== parent) process.exit(0);
}`;

const loopers = [];
for (let i = 0; i < count; i++) {
  loopers.push(spawn(process.execPath, ['-e', LOOP], { stdio: 'ignore' }));
}

/** @type {import('node:child_process').ChildProcess | undefined} */
let suite;
let stopped = false;
function stopLoopers() {
  if (stopped) return;
  stopped = true;
  for (const child of loopers) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
process.on('exit', stopLoopers);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    stopLoopers();
    suite?.kill(signal);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

const started = Date.now();
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
console.log(`test:busy: ${count} busy loops started (pids ${loopers.map((c) => c.pid).join(', ')}); load average ${load()}`);

// `npm run` sets npm_execpath to npm's own entry: run the same npm with the same node.
const npmCli = process.env['npm_execpath'];
const args = ['test', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])];
suite = npmCli && npmCli.endsWith('.js') ? spawn(process.execPath, [npmCli, ...args], { stdio: 'inherit' }) : spawn('npm', args, { stdio: 'inherit', shell: process.platform === 'win32' });

const running = suite;
const status = await new Promise((resolve) => {
  running.on('error', (error) => {
    console.error(`test:busy: could not run npm test: ${error.message}`);
    resolve(1);
  });
  running.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
});
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`test:busy: npm test exited ${status} after ${seconds} s under ${count} busy loops; load average ${load()}`);
stopLoopers();
process.exit(status);
