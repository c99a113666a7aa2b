/** Starting and killing the restart tests' child server (whatsapp-smpp-child.ts). */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { ChildConfig } from './whatsapp-smpp-child.js';

export interface Child {
  readonly process: ChildProcess;
  /** `http://127.0.0.1:port` */
  readonly url: string;
}

/** Starts a child server on `cfg` and waits until it listens. */
export function startChild(cfg: ChildConfig): Promise<Child> {
  const child = fork(join(import.meta.dirname, 'whatsapp-smpp-child.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, SENDPOOL_CHANNEL_CHILD: JSON.stringify(cfg) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { address: string }) => resolve({ process: child, url: m.address }));
    child.once('exit', (code) => reject(new Error(`the child server exited (${code}) before listening`)));
  });
}

/** kill -9, and wait until it is gone. */
export function killChild(child: Child): Promise<void> {
  const p = child.process;
  return new Promise((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    p.once('exit', () => resolve());
    p.kill('SIGKILL');
  });
}
