/**
 * Runs instance-worker.ts processes and reads back what they sent.
 *
 * Every wait here is for a condition (the workers connected, an instance sent so many, an event
 * came), bounded by {@link WAIT_BOUND_MS}, which only a hang reaches: the tests' outcome never
 * depends on how fast the machine runs the processes. No vitest here: bench/redis-fleet.bench.ts
 * runs the same instances.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NumberLimits } from '../../src/core/limits/store.js';
import type { ParentMessage, WorkerConfig, WorkerMessage } from './instance-worker.js';
import { windowViolation } from '../store/window-violation.js';
import { tempDir } from '../temp-dirs.js';

const WORKER = fileURLToPath(new URL('./instance-worker.ts', import.meta.url));

/** Bound of every wait of the multi-instance tests (real ms): only a hang reaches it. */
export const WAIT_BOUND_MS = 150_000;

export interface Send {
  readonly phone: string;
  readonly at: number;
  readonly contact: string;
  readonly instance: number;
}

/** What an instance reported last. */
export interface Progress {
  sent: number;
  /** Simulated time of its last send; -1 before the first. */
  lastAt: number;
  events: Readonly<Record<string, number>>;
}

export interface Result {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly summary: Record<string, unknown> | undefined;
}

export interface RunningInstance {
  readonly child: ChildProcess;
  readonly logFile: string;
  readonly contacts: number;
  readonly progress: Progress;
  /** Resolves when the process has exited and its output is read. */
  readonly done: Promise<Result>;
  /** True once `done` has resolved. */
  exited: boolean;
  /** Asks the worker to stop sending, give its tokens back and exit. */
  stop(): void;
}

export interface Fleet {
  readonly instances: readonly RunningInstance[];
  /** Wall time (ms) of simulated time 0, the same for every instance. */
  readonly startWall: number;
  /** The instances' simulated clock, read in the test process. */
  now(): number;
  /** Stops every instance still running and waits for all of them. */
  finish(): Promise<Result[]>;
  /** SIGKILLs every instance still running (cleanup after a failed test). */
  kill(): void;
}

/** Polls until `condition` holds; fails only after {@link WAIT_BOUND_MS}. */
export async function waitUntil(condition: () => boolean, what: string): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > WAIT_BOUND_MS) throw new Error(`timed out after ${WAIT_BOUND_MS} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Starts the instances and, once every one is connected and ready, starts their shared simulated
 * clock. `perInstance` is every instance's number of contacts, or each one's; `simEnd` (simulated
 * ms) is where a worker stops by itself if nobody stopped it (a bound, far beyond the test).
 */
export async function startInstances(base: Omit<WorkerConfig, 'instance' | 'logFile' | 'firstContact' | 'contacts'>, perInstance: number | readonly number[]): Promise<Fleet> {
  const dir = tempDir('sendpool-fleet-');
  const counts = Array.from({ length: base.instances }, (_, i) => (typeof perInstance === 'number' ? perInstance : perInstance[i]!));
  let ready = 0;
  const instances = counts.map((contacts, i): RunningInstance => {
    const logFile = join(dir, `instance-${i}.log`);
    const firstContact = counts.slice(0, i).reduce((a, b) => a + b, 0);
    const config: WorkerConfig = { ...base, instance: i, logFile, firstContact, contacts };
    const child = fork(WORKER, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, SENDPOOL_WORKER: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const progress: Progress = { sent: 0, lastAt: -1, events: {} };
    child.on('message', (m: WorkerMessage) => {
      if (m.type === 'ready') ready++;
      else if (m.type === 'progress') Object.assign(progress, { sent: m.sent, lastAt: m.lastAt, events: m.events });
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const instance: RunningInstance = {
      child,
      logFile,
      contacts,
      progress,
      exited: false,
      stop: () => send(child, { type: 'stop' }),
      // 'close', not 'exit': the output is read to its end only then.
      done: new Promise<Result>((resolve) => {
        child.on('close', (code, signal) => {
          instance.exited = true;
          if (code !== 0 && code !== null && err) process.stderr.write(`instance ${i}: ${err}\n`);
          const line = out.trim().split('\n').pop();
          resolve({ code, signal, summary: line ? (JSON.parse(line) as Record<string, unknown>) : undefined });
        });
      }),
    };
    return instance;
  });
  const exitedEarly = (): boolean => instances.some((x) => x.exited);
  await waitUntil(() => ready === instances.length || exitedEarly(), 'every instance to connect to Redis');
  if (exitedEarly()) {
    const results = await Promise.all(instances.map((x) => (x.exited ? x.done : Promise.resolve(undefined))));
    for (const x of instances) x.child.kill('SIGKILL');
    throw new Error(`an instance exited before starting: ${JSON.stringify(results)}`);
  }
  const startWall = Date.now();
  for (const x of instances) send(x.child, { type: 'start', startWall });
  return {
    instances,
    startWall,
    now: () => Math.max(0, Math.floor((Date.now() - startWall) * base.scale)),
    finish: async () => {
      for (const x of instances) if (!x.exited) x.stop();
      return Promise.all(instances.map((x) => x.done));
    },
    kill: () => {
      for (const x of instances) if (!x.exited) x.child.kill('SIGKILL');
    },
  };
}

function send(child: ChildProcess, m: ParentMessage): void {
  if (child.connected) child.send(m);
}

export function readSends(instances: readonly RunningInstance[]): Send[] {
  const sends: Send[] = [];
  instances.forEach((inst, i) => {
    if (!existsSync(inst.logFile)) return;
    for (const line of readFileSync(inst.logFile, 'utf8').split('\n')) {
      if (!line) continue;
      const [phone, at, contact] = line.split(',');
      sends.push({ phone: phone!, at: Number(at), contact: contact!, instance: i });
    }
  });
  return sends;
}

/** The ten numbers of the multi-instance tests: five bound by their 24 h limit in an hour, five by their hourly rate. */
export function testFleet(numbers: readonly (NumberLimits & { phone: string })[]): unknown {
  return {
    businesses: [
      {
        id: 1,
        name: 'Acme',
        numbers: numbers.map((n) => ({
          phone: n.phone,
          throughputPerHour: n.perHour,
          messagingLimit24h: n.per24h,
          ...(n.perSecond ? { messagesPerSecond: n.perSecond } : {}),
          status: 'active',
        })),
        templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
      },
    ],
    templates: [{ id: 100, name: 'billing_a', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
  };
}

export const NUMBERS = Array.from({ length: 10 }, (_, i) => ({
  phone: `55119900000${String(i).padStart(2, '0')}`,
  perHour: i < 5 ? 3600 : 1800,
  per24h: i < 5 ? 5000 : 100_000,
}));

/** Sends per phone, in time order. */
export function byPhone(sends: readonly Send[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const s of sends) {
    let list = out.get(s.phone);
    if (!list) out.set(s.phone, (list = []));
    list.push(s.at);
  }
  for (const list of out.values()) list.sort((a, b) => a - b);
  return out;
}

/** Every number's first window violation by the sends of all instances together; empty when none. */
export function windowViolations(sends: readonly Send[]): { phone: string; violation: string }[] {
  const limits = new Map(NUMBERS.map((n) => [n.phone, n]));
  const out: { phone: string; violation: string }[] = [];
  for (const [phone, times] of byPhone(sends)) {
    const violation = windowViolation(times, limits.get(phone)!);
    if (violation !== null) out.push({ phone, violation });
  }
  return out;
}
