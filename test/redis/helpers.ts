/**
 * Shared helpers of the Redis tests: the server from SENDPOOL_REDIS_URL (tests skip, saying so,
 * only when it is unset), a random key prefix per test file, and cleanup of that prefix.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env['SENDPOOL_REDIS_URL'];
export const SKIP_REASON = 'SENDPOOL_REDIS_URL is not set: Redis integration tests skipped (bash .ci/run sets it)';
// CI always has Redis (.ci/run starts one): there, a missing URL is a failure, never a silent skip.
if (REDIS_URL === undefined && process.env['CI']) throw new Error('CI runs the Redis tests: SENDPOOL_REDIS_URL must be set (.ci/run starts redis-server)');
if (REDIS_URL === undefined) console.warn(SKIP_REASON);

/** A random prefix for one test file's keys. */
export function testPrefix(name: string): string {
  return `sendpool-test:${name}:${randomBytes(4).toString('hex')}:`;
}

export function connect(url = REDIS_URL): Redis {
  if (url === undefined) throw new Error(SKIP_REASON);
  return new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: false, enableAutoPipelining: false });
}

/** Deletes every key under `prefix`. */
export async function cleanup(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
}
