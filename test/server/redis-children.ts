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

/** A metric's value in the instance's /metrics (the first line of that name), or undefined. */
export async function metric(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}
