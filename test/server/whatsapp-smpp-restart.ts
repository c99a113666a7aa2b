/** Starting and killing the restart tests' child server (whatsapp-smpp-child.ts). */
import { type ChildProcess, fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KEY_1, api, startReceiver, testFleet, type Receiver } from './helpers.js';
import { builtChild } from './built-child.js';
import { ACCESS_TOKEN, APP_SECRET, VERIFY_TOKEN } from './whatsapp-fake-graph.js';
import type { ChildConfig, ChildCredentials } from './whatsapp-smpp-child.js';

const credentials: ChildCredentials = { accessToken: ACCESS_TOKEN, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN };

export interface Child {
  readonly process: ChildProcess;
  /** `http://127.0.0.1:port` */
  readonly url: string;
}

/** Starts a child server on `cfg` and waits until it listens. */
export function startChild(cfg: ChildConfig): Promise<Child> {
  // On the built package with plain node (test/server/built-child.ts): tsx's hooks cost each start about a second of CPU.
  const child = fork(builtChild(join(import.meta.dirname, 'whatsapp-smpp-child.ts')), [], {
    execArgv: [],
    env: { ...process.env, SENDPOOL_CHANNEL_CHILD: JSON.stringify({ ...cfg, credentials }) },
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

/**
 * A durable child server on a data directory under `dir` sending SMS to the local SMSC at
 * `smppPort`, and a webhook receiver that checks the server's signature: what the SMPP restart
 * tests start from. The caller kills the child and closes the receiver.
 */
export async function startSmppChild(dir: string, smppPort: number, extra: Partial<ChildConfig> = {}): Promise<{ cfg: ChildConfig; receiver: Receiver; child: Child }> {
  const fleetFile = join(dir, 'fleet.json');
  writeFileSync(fleetFile, JSON.stringify(testFleet()));
  const cfg: ChildConfig = { fleetFile, dataDir: join(dir, 'data'), key: KEY_1, smppPort, ...extra };
  let secret = '';
  const receiver = await startReceiver(() => secret);
  const child = await startChild(cfg);
  try {
    secret = (await api(child.url, '/messenger/config/secret/')).json.webhook_secret;
  } catch (e) {
    await killChild(child);
    await receiver.close();
    throw e;
  }
  return { cfg, receiver, child };
}
