/** Runs instance-worker.ts processes and reads back what they sent. */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { NumberLimits } from '../../src/core/limits/store.js';
import type { WorkerConfig } from './instance-worker.js';
import { windowViolation } from './store-contract.js';

const WORKER = fileURLToPath(new URL('./instance-worker.ts', import.meta.url));

export interface Send {
  readonly phone: string;
  readonly at: number;
  readonly contact: string;
  readonly instance: number;
}

export interface RunningInstance {
  readonly child: ChildProcess;
  readonly logFile: string;
  readonly done: Promise<{ code: number | null; summary: Record<string, unknown> | undefined }>;
}

/** Starts the instances; `perInstance` is every instance's number of contacts, or each one's. */
export function startInstances(base: Omit<WorkerConfig, 'instance' | 'logFile' | 'firstContact' | 'contacts'>, perInstance: number | readonly number[]): RunningInstance[] {
  const dir = mkdtempSync(join(tmpdir(), 'sendpool-fleet-'));
  const counts = Array.from({ length: base.instances }, (_, i) => (typeof perInstance === 'number' ? perInstance : perInstance[i]!));
  return counts.map((contacts, i) => {
    const logFile = join(dir, `instance-${i}.log`);
    const firstContact = counts.slice(0, i).reduce((a, b) => a + b, 0);
    const config: WorkerConfig = { ...base, instance: i, logFile, firstContact, contacts };
    const child = fork(WORKER, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, SENDPOOL_WORKER: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const done = new Promise<{ code: number | null; summary: Record<string, unknown> | undefined }>((resolve) => {
      child.on('exit', (code) => {
        if (code !== 0 && code !== null && err) process.stderr.write(`instance ${i}: ${err}\n`);
        const line = out.trim().split('\n').pop();
        resolve({ code, summary: line ? (JSON.parse(line) as Record<string, unknown>) : undefined });
      });
    });
    return { child, logFile, done };
  });
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

export function checkWindows(sends: readonly Send[]): void {
  const limits = new Map(NUMBERS.map((n) => [n.phone, n]));
  for (const [phone, times] of byPhone(sends)) {
    expect({ phone, violation: windowViolation(times, limits.get(phone)!) }).toEqual({ phone, violation: null });
  }
}

