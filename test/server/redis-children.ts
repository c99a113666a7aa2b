/**
 * Instances of the server on Redis as child processes (test/server/redis-child.ts), started one
 * after the other, each waited for until it listens (its address file), for the multi-instance
 * tests that read the channels' shared send log. The children run on the built package with plain
 * node (test/server/built-child.ts): tsx's hooks cost each start about a second of CPU.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { builtChild } from './built-child.js';
import { waitFor } from './helpers.js';

/** What redis-child.ts reads from SENDPOOL_REDIS_CHILD. */
export interface RedisChildConfig {
  readonly fleetFile: string;
  readonly redisUrl: string;
  readonly prefix: string;
  readonly log: string;
  readonly key: string;
  readonly name: string;
  readonly secret: string;
  readonly leaseMs: number;
  readonly prefetch?: number;
}

/** Starts an instance per name and answers the processes and their addresses, in order. */
export async function startRedisChildren(names: readonly string[], configOf: (name: string) => RedisChildConfig): Promise<{ children: ChildProcess[]; urls: string[] }> {
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  for (const name of names) {
    const cfg = configOf(name);
    children.push(
      fork(builtChild(join(import.meta.dirname, 'redis-child.ts')), [], {
        execArgv: [],
        env: { ...process.env, SENDPOOL_REDIS_CHILD: JSON.stringify(cfg) },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      }),
    );
    const address = `${cfg.log}.${name}.address`;
    await waitFor(() => existsSync(address) && readFileSync(address, 'utf8').length > 0, `${name} listening`);
    urls.push(readFileSync(address, 'utf8'));
  }
  return { children, urls };
}

/** A child server process with what it printed on stdout so far (its log at warn and above). */
export interface LoggedChild {
  readonly child: ChildProcess;
  readonly url: string;
  out: string;
}

/**
 * Starts `script` (beside this file) as child `name`, its configuration in the environment
 * variable `envName`; waits until it listens (`<log>.<name>.address`, removed first so a restart
 * waits for the new one) and keeps its stdout.
 */
export async function startLoggedChild(script: string, envName: string, name: string, cfg: { readonly log: string } & Record<string, unknown>): Promise<LoggedChild> {
  const address = `${cfg.log}.${name}.address`;
  rmSync(address, { force: true });
  const child = fork(builtChild(join(import.meta.dirname, script)), [], {
    execArgv: [],
    env: { ...process.env, [envName]: JSON.stringify({ ...cfg, name }) },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const started = { child, url: '', out: '' };
  child.stdout!.on('data', (d: Buffer) => (started.out += d.toString()));
  await waitFor(() => existsSync(address) && readFileSync(address, 'utf8').length > 0, `${name} listening`);
  return Object.assign(started, { url: readFileSync(address, 'utf8') });
}

/** A line of redis-reset-child.ts's shared send log: when it was handed out, where, which contact (its ref), the message id and the instance. */
export interface ResetChildSend {
  at: number;
  phone: string;
  ref: string;
  id: string;
  by: string;
}

/** What redis-reset-child.ts reads from SENDPOOL_RESET_CHILD besides its name (`gate`: sends held until that file exists). */
export interface ResetChildConfig {
  readonly fleetFile: string;
  readonly redisUrl: string;
  readonly log: string;
  readonly stateDir: string;
  readonly key: string;
  readonly secret: string;
  readonly gate?: string;
}

/** Starts redis-reset-child.ts as instance `name`, with leases of 2 s (the reset tests take chunks over quickly). */
export function startResetChild(name: string, cfg: ResetChildConfig): Promise<LoggedChild> {
  return startLoggedChild('redis-reset-child.ts', 'SENDPOOL_RESET_CHILD', name, { ...cfg, leaseMs: 2000 });
}

/** `n` contacts with phones from `phoneBase` on and refs `<prefix>c<i>` (the send log names them by ref). */
export function refContacts(prefix: string, n: number, phoneBase: number) {
  return Array.from({ length: n }, (_, i) => ({ phone_number: `55219${String(phoneBase + i)}`, template_variables: ['x'], data: { ref: `${prefix}c${i}` } }));
}

/** A metric's value in the instance's /metrics (the first line of that name), or undefined. */
export async function metric(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}
