/**
 * An instance of a fleet on Redis, started (`runServer`'s `redis`). Before the wait for Redis, a
 * metrics listener of its own and the API's port open: a scrape sees `sendpool_redis_ready 0` while
 * the instance waits (Redis down at start), and the server's metrics once it is built; the API's
 * port answers 503 until the server takes it. Then the shared engine (`RedisStore`, `FleetSync`,
 * `RedisPortfolios`), with the capacity's epoch kept outside Redis when a `stateDir` is given.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Problem } from '../core/problems.js';
import { createEngine } from '../engine.js';
import { loadPeer } from '../runtime/peers.js';
import { resolveConnections } from './connections.js';
import type { InstanceState } from './instance-state.js';
import { REFUSAL_RETRY_AFTER_S } from './intake-refusal.js';
import { EARLY_METRICS, openEarlyMetrics, openStartingApi, resolveMetrics, type EarlyMetrics, type StartingApi } from './metrics-access.js';
import { startingMetrics } from './metrics.js';
import type { RedisServerOptions } from './options.js';
import type { RunServerOptions } from './run-options.js';
import type { SendpoolServer } from './server-control.js';

/** `runServer`'s Redis options. */
export type RedisRunOptions = NonNullable<RunServerOptions['redis']>;

/**
 * Starts the instance's side of Redis: the early listeners on `host`/`port`, then the shared engine
 * (waiting for Redis). Its events go to the server's log once `server()` answers one, to stderr in
 * the log's shape before (unless `logger` is false).
 */
export async function startOnRedis(
  redis: RedisRunOptions,
  options: Pick<RunServerOptions, 'metrics' | 'connections' | 'logger' | 'reportTokenKey'>,
  listen: { readonly host: string; readonly port: number },
  fleet: unknown,
  server: () => SendpoolServer | undefined,
): Promise<InstanceState> {
  const stateDir = redis.stateDir;
  let syncState: (() => string) | undefined;
  const early = await openEarlyMetricsOf(options, () => syncState?.());
  // The API's port opens now too (503 until the server takes it; /metrics there when it is served there).
  const starting = await openStartingApiOf(options, listen.host, listen.port, () => syncState?.());
  const closeEarly = async () => {
    await early?.close();
    await starting?.close();
  };
  let shared: Awaited<ReturnType<typeof redisFleet>>;
  try {
    shared = await redisFleet(
      redis.url,
      redis.prefix ?? 'sendpool:',
      stateDir === undefined ? undefined : join(stateDir, 'capacity-epoch'),
      fleet,
      () => server()?.sendpool.wake(),
      (level, details, message) => {
        const running = server();
        if (running) return running.log[level](details, message);
        // Before the server exists (Redis down at start: it waits here): a log line of the same shape.
        if (options.logger !== false) process.stderr.write(`${JSON.stringify({ level: level === 'info' ? 30 : 40, time: Date.now(), ...details, msg: message })}\n`);
      },
      (state) => (syncState = state),
    );
  } catch (e) {
    await closeEarly();
    throw e;
  }
  const parts = shared;
  return {
    engine: parts.engine,
    serverOptions: {
      ...(early ? { [EARLY_METRICS]: early } : {}),
      redis: {
        ...redisOptions(redis),
        client: parts.client,
        syncState: () => parts.sync.state,
        refreshOutput: () => parts.store.settle(),
        ...(redis.stateFile === undefined && stateDir !== undefined ? { stateFile: join(stateDir, 'redis-state.json') } : {}),
      },
      ...(options.reportTokenKey === undefined ? { reportTokenKey: parts.reportTokenKey } : {}),
    },
    restored: false,
    // The port the starting listener held (the one it picked for 0): the server takes it over.
    async takePort(port) {
      await starting?.close();
      return starting?.port ?? port;
    },
    async abandon() {
      await parts.close();
      await closeEarly();
    },
    close: () => parts.close(),
  };
}

/**
 * The separate metrics listener of `options.metrics`, opened now with the starting metrics
 * (`sendpool_redis_ready`, `sendpool_redis_sync_state`); undefined when /metrics has no listener of
 * its own (it is then a route of the API's port, which opens once Redis is there) or the options are
 * wrong (buildServer says what is wrong).
 */
async function openEarlyMetricsOf(options: Pick<RunServerOptions, 'metrics' | 'connections'>, syncState: () => string | undefined): Promise<EarlyMetrics | undefined> {
  const problems: Problem[] = [];
  const access = resolveMetrics(options.metrics, problems);
  const connections = resolveConnections(options.connections, problems);
  if (problems.length > 0 || access?.listen === undefined) return undefined;
  return openEarlyMetrics({ ...access, listen: access.listen }, connections, startingMetrics(syncState));
}

/**
 * The API's port opened before the wait for Redis ({@link openStartingApi}); /metrics is answered
 * there with the starting metrics when it is served on the API's port. Undefined when the options
 * are wrong (buildServer says what is wrong).
 */
async function openStartingApiOf(options: Pick<RunServerOptions, 'metrics' | 'connections'>, host: string, port: number, syncState: () => string | undefined): Promise<StartingApi | undefined> {
  const problems: Problem[] = [];
  const access = resolveMetrics(options.metrics, problems);
  const connections = resolveConnections(options.connections, problems);
  if (problems.length > 0) return undefined;
  const onThisPort = access !== undefined && access.listen === undefined ? { ...access, registry: startingMetrics(syncState) } : undefined;
  return openStartingApi(host, port, onThisPort, connections, REFUSAL_RETRY_AFTER_S);
}

/**
 * The engine of an instance on Redis: its numbers' capacity leased from Redis (`RedisStore`), their
 * statuses shared (`FleetSync`); loaded only when asked for, so `ioredis` stays off the default path.
 * `url` is `redis://…` / `rediss://…` for one server, `redis-cluster://host:port,host:port,…` for a
 * Redis Cluster (the nodes to start from). Connection and capacity events go to `log`.
 */
async function redisFleet(
  url: string,
  prefix: string,
  epochFile: string | undefined,
  fleet: unknown,
  onCapacity: () => void,
  log: (level: 'info' | 'warn', details: object, message: string) => void,
  onSync: (state: () => string) => void,
) {
  const ioredis = await loadPeer<typeof import('ioredis')>('ioredis', 'The server on Redis');
  const { RedisStore, FleetSync, RedisPortfolios } = await import('../redis/index.js');
  // Commands wait for a reconnection rather than fail: a step is written once Redis is back.
  const client = url.startsWith('redis-cluster://') ? new ioredis.Cluster(clusterNodes(url), { redisOptions: { maxRetriesPerRequest: null } }) : new ioredis.Redis(url, { maxRetriesPerRequest: null });
  // Errors are reported by the parts that meet them (a step not written, a lease not granted, the
  // sync's state); ioredis reconnects by itself. Without a listener they would be unhandled.
  client.on('error', () => {});
  let sync: InstanceType<typeof FleetSync> | undefined;
  // The capacity's epoch kept outside Redis: an empty Redis under restarted instances fails closed.
  const knownEpoch = epochFile === undefined ? undefined : readEpochFile(epochFile);
  const store = new RedisStore({
    client,
    prefix,
    onCapacity,
    instances: () => sync?.activeInstances() ?? 1,
    ...(knownEpoch ? { knownEpoch } : {}),
    onEvent: (e) => {
      if (e.type === 'epoch' && epochFile !== undefined) writeEpochFile(epochFile, e.epoch);
      if (e.type === 'redis-down' || e.type === 'redis-up' || e.type === 'redis-reset') log(e.type === 'redis-up' ? 'info' : 'warn', e, `capacity: ${e.type}`);
    },
  });
  // Portfolios' limits are the fleet's: slots for new recipients leased from Redis (docs/scaling.md).
  let engine: ReturnType<typeof createEngine> | undefined;
  const portfolios = new RedisPortfolios({
    client,
    prefix,
    onCapacity: (ids) => {
      for (const id of ids) engine?.portfolioCapacityChanged(id);
      onCapacity();
    },
    onError: (e) => log('warn', { err: e instanceof Error ? e.message : String(e) }, 'portfolio lease or record failed: trying again'),
  });
  engine = createEngine(fleet, { store, portfolioSource: portfolios });
  sync = new FleetSync({
    client,
    prefix,
    engine,
    onEvent: (e) => {
      if (e.type === 'sync-state' || e.type === 'redis-reset' || e.type === 'subscriber-error') log(e.type === 'sync-state' && e.state === 'ready' ? 'info' : 'warn', e, `status sync: ${e.type}`);
    },
  });
  const started = sync;
  onSync(() => started.state);
  await sync.start();
  // The key signing report download links is every instance's: a link made by one works on all.
  const keyField = `${prefix}{config}:report-token-key`;
  await client.set(keyField, randomBytes(32).toString('base64'), 'NX');
  const reportTokenKey = Buffer.from((await client.get(keyField)) ?? '', 'base64');
  return {
    client,
    engine,
    store,
    sync,
    reportTokenKey,
    async close() {
      await sync?.stop();
      await store.close();
      await portfolios.close();
      client.disconnect();
    },
  };
}

/** `runServer`'s own Redis options taken out (what `buildServer` is given). */
function redisOptions(redis: RedisRunOptions): Omit<RedisServerOptions, 'client'> {
  const { url: _url, stateDir: _stateDir, ...rest } = redis;
  return rest;
}

/** The capacity epoch kept in `file` ('' or absent: none). */
function readEpochFile(file: string): string | undefined {
  try {
    const id = readFileSync(file, 'utf8').trim();
    return id === '' ? undefined : id;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Keeps the capacity epoch (written whole: a temporary file renamed over it). */
function writeEpochFile(file: string, id: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, `${id}\n`);
  renameSync(`${file}.tmp`, file);
}

/** The nodes of `redis-cluster://host:port,host:port,…`. */
function clusterNodes(url: string): { host: string; port: number }[] {
  return url
    .slice('redis-cluster://'.length)
    .split(',')
    .map((node) => {
      const at = node.lastIndexOf(':');
      return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
    });
}
