/**
 * Redis targets of the tests and benchmarks, without vitest (child processes and benchmarks use
 * it): a target travels between processes as one string, `redis://host:port` for a single server,
 * `redis-cluster://host:port,host:port,…` for a cluster. Also: clients of either, and the keys of a
 * prefix on every master.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';

export type TestClient = Redis | Cluster;

/** The nodes of a cluster spec. */
export function clusterNodes(spec: string): { host: string; port: number }[] {
  return spec
    .slice('redis-cluster://'.length)
    .split(',')
    .map((hostPort) => {
      const [host, port] = hostPort.split(':');
      return { host: host!, port: Number(port) };
    });
}

/**
 * A client of the target: a `Redis`, or a `Cluster` for a cluster spec. `options` go to every
 * connection. An error listener is attached: a test that wants errors listens itself.
 */
export function connectSpec(spec: string, options: RedisOptions = {}): TestClient {
  const base: RedisOptions = { maxRetriesPerRequest: 1, enableAutoPipelining: false, ...options };
  const client = spec.startsWith('redis-cluster://') ? new Cluster(clusterNodes(spec), { redisOptions: base, enableOfflineQueue: base.enableOfflineQueue ?? true }) : new Redis(spec, base);
  client.on('error', () => {});
  return client;
}

/** The connections holding data: the masters of a cluster, or the client itself. */
export function masters(client: TestClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/** Resolves once the client is connected (a cluster knows its masters only then). */
export async function whenReady(client: TestClient): Promise<void> {
  if (client.status !== 'ready') await new Promise<void>((resolve) => client.once('ready', () => resolve()));
}

async function keysOn(node: Redis, pattern: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out;
}

/** Every key matching `pattern`, on every master. */
export async function keysOf(client: TestClient, pattern: string): Promise<string[]> {
  await whenReady(client);
  const out: string[] = [];
  for (const node of masters(client)) out.push(...(await keysOn(node, pattern)));
  return out;
}

/** Deletes every key under `prefix`, node by node (one DEL per key: on a cluster, keys live in many slots). */
export async function cleanup(client: TestClient, prefix: string): Promise<void> {
  await whenReady(client);
  for (const node of masters(client)) {
    const keys = await keysOn(node, `${prefix}*`);
    if (keys.length === 0) continue;
    const batch = node.pipeline();
    for (const key of keys) batch.del(key);
    await batch.exec();
  }
}
