/**
 * Shared helpers of the Redis tests: the targets (a single server from SENDPOOL_REDIS_URL, a Redis
 * Cluster from SENDPOOL_REDIS_CLUSTER; tests skip, saying so, only when neither is set), one
 * describe block per target, and a random key prefix per test file.
 */
import { randomBytes } from 'node:crypto';
import { describe, it } from 'vitest';
import { connectSpec, type TestClient } from './targets.js';

export { cleanup, clusterNodes, connectSpec, keysOf, masters, whenReady, type TestClient } from './targets.js';

export const REDIS_URL = process.env['SENDPOOL_REDIS_URL'];
export const REDIS_CLUSTER = process.env['SENDPOOL_REDIS_CLUSTER'];
export const SKIP_REASON = 'SENDPOOL_REDIS_URL and SENDPOOL_REDIS_CLUSTER are not set: Redis integration tests skipped (bash .ci/run sets them)';
// CI always has both (.ci/run starts them): there, a missing one is a failure, never a silent skip.
if (process.env['CI'] && (REDIS_URL === undefined || REDIS_CLUSTER === undefined)) {
  throw new Error('CI runs the Redis tests on a single server and on a cluster: SENDPOOL_REDIS_URL and SENDPOOL_REDIS_CLUSTER must be set (.ci/run starts them)');
}

/** A Redis the tests run against. */
export interface RedisTarget {
  /** 'single' or 'cluster', in test names. */
  readonly name: 'single' | 'cluster';
  /** The target as one string (test/redis/targets.ts). */
  readonly spec: string;
}

/** The configured targets: the single server first, then the cluster. */
export const TARGETS: readonly RedisTarget[] = [
  ...(REDIS_URL !== undefined ? [{ name: 'single' as const, spec: REDIS_URL }] : []),
  ...(REDIS_CLUSTER !== undefined ? [{ name: 'cluster' as const, spec: `redis-cluster://${REDIS_CLUSTER}` }] : []),
];
if (TARGETS.length === 0) console.warn(SKIP_REASON);

/**
 * Registers `body` once per target (`<title> [single]`, `<title> [cluster]`), or one skipped test
 * saying why when no Redis is configured.
 */
export function describeTargets(title: string, body: (target: RedisTarget) => void): void {
  if (TARGETS.length === 0) {
    describe(title, () => it.skipIf(true)(SKIP_REASON, () => {}));
    return;
  }
  for (const target of TARGETS) describe(`${title} [${target.name}]`, () => body(target));
}

/** A random prefix for one test file's keys. */
export function testPrefix(name: string): string {
  return `sendpool-test:${name}:${randomBytes(4).toString('hex')}:`;
}

/** A client of `target` (the first configured target by default). */
export function connect(target: RedisTarget | string | undefined = TARGETS[0]): TestClient {
  if (target === undefined) throw new Error(SKIP_REASON);
  return connectSpec(typeof target === 'string' ? target : target.spec);
}
