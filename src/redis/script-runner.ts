/**
 * Runs a Lua script by its SHA1 (`EVALSHA`) and falls back to `EVAL` when the server does not know
 * it (`NOSCRIPT`: after a restart, a failover or `SCRIPT FLUSH`). The only place scripts are sent.
 */
import { createHash } from 'node:crypto';

/**
 * What sendpool needs from a Redis client: ioredis' `Redis` (and `Cluster`) satisfy it.
 * Arguments are strings or numbers, replies are whatever the script returns.
 */
export interface RedisScriptClient {
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** A Lua script with its SHA1, ready for {@link runScript}. */
export interface Script {
  readonly source: string;
  readonly sha: string;
}

/** Prepares a script (computes its SHA1 once). */
export function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** `EVALSHA`, or `EVAL` when the server answers `NOSCRIPT` (which also caches the script there). */
export async function runScript(client: RedisScriptClient, s: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  try {
    return await client.evalsha(s.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return client.eval(s.source, keys.length, ...keys, ...args);
  }
}
