/**
 * Instances of the server on Redis as child processes (test/server/redis-child.ts), started one
 * after the other, each waited for until it listens (its address file), for the multi-instance
 * tests that read the channels' shared send log.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
      fork(join(import.meta.dirname, 'redis-child.ts'), [], {
        execArgv: ['--import', 'tsx'],
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
