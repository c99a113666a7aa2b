/** Runs instance-worker.ts processes and reads back what they sent. */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerConfig } from './instance-worker.js';

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

export function startInstances(base: Omit<WorkerConfig, 'instance' | 'logFile' | 'firstContact' | 'contacts'>, perInstance: number): RunningInstance[] {
  const dir = mkdtempSync(join(tmpdir(), 'sendpool-fleet-'));
  return Array.from({ length: base.instances }, (_, i) => {
    const logFile = join(dir, `instance-${i}.log`);
    const config: WorkerConfig = { ...base, instance: i, logFile, firstContact: i * perInstance, contacts: perInstance };
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
