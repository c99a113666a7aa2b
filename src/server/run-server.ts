/**
 * `runServer`: what `sendpool serve` and `npm start` call. Reads the fleet, the keys and the
 * snapshot file (if any), builds the engine and the server, listens, and closes gracefully on
 * SIGINT/SIGTERM (stop intake, drain, snapshot).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createEngine } from '../engine.js';
import { loadPeer, peerError } from '../runtime/peers.js';
import { optionConflict, ServerOptionsError } from './ports/errors.js';
import { snapshotFromRows } from '../core/rows.js';
import { openSqliteStorage } from './backends/sqlite/open-storage.js';
import type { StoreRecovery } from '../storage/store-open.js';
import { buildServer } from './build-server.js';
import { resolveConnections } from './connections.js';
import { EARLY_METRICS, openEarlyMetrics, openStartingApi, resolveMetrics, type EarlyMetrics, type StartingApi } from './metrics-access.js';
import { startingMetrics } from './metrics.js';
import type { SendpoolServer } from './server-control.js';
import type { Channel } from './ports/channel.js';
import type { SmppChannelOptions } from './channels/smpp-options.js';
import { smppServerChannel } from './channels/smpp-server.js';
import type { WhatsAppChannelOptions } from './channels/whatsapp/options.js';
import type { BuildServerOptions, RedisServerOptions } from './options.js';
import type { Problem } from '../core/problems.js';
import { readSnapshotFile } from './snapshot-file.js';
import { loadApiKeys, type ApiKeyEntry } from './tenants.js';
import { REFUSAL_RETRY_AFTER_S } from './intake-refusal.js';

/** Options of {@link runServer}. */
export interface RunServerOptions extends Omit<BuildServerOptions, 'engine' | 'apiKeys' | 'restore' | 'snapshotFile' | 'storage' | 'stored' | 'storeEverything' | 'redis'> {
  /** Path of the fleet description (JSON). */
  readonly fleetFile: string;
  /** @default 3000 */
  readonly port?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** Keys file (`{ "keys": [{ "key", "companyId", "label"? }] }`). Keys from `SENDPOOL_API_KEYS` are added. */
  readonly keysFile?: string;
  /** Keys given directly (added to the file's and the environment's). @default [] */
  readonly apiKeys?: readonly ApiKeyEntry[];
  /** Snapshot file: read at start when it exists, written on shutdown. @default none */
  readonly snapshotFile?: string;
  /**
   * Directory of the durable store (SQLite): accepted contacts and hand-outs are written before they
   * are answered or sent, and a restart (even after kill -9) resumes from it. When it holds nothing
   * yet and a snapshot file exists, the snapshot is imported once. @default none: state in memory
   */
  readonly dataDir?: string;
  /**
   * With `dataDir`: start even when the store is damaged or holds less than its seal says, from
   * what is intact, and report what was lost (the log, /metrics `sendpool_store_recovery_lost`, a
   * report file in `dataDir`; `RunningServer.recovery`), and each contact the intake journal names
   * that was lost and not sent gets a FAILED HSM notification (`Sendpool, 0, lost in a damaged
   * store`). Without it such a store is refused
   * (StoreDamagedError: docs/server.md, "A damaged store"). @default false
   */
  readonly recover?: boolean;
  /**
   * Run as one of many instances on Redis (the optional package `ioredis`): the contact queue, the
   * numbers' capacity (`RedisStore`) and their statuses (`FleetSync`) are shared. Exclusive with
   * `dataDir` and `snapshotFile`. @default none: one process
   */
  readonly redis?: {
    readonly url: string;
    /**
     * A directory of this instance's own, outside Redis, where it keeps the epochs of Redis it saw
     * last (the numbers' capacity: `capacity-epoch`; the queue: `redis-state.json`, with the webhook
     * configurations and secrets, readable by its owner only; `redis-state.accepted.jsonl`, the
     * chunks it accepted and has not seen done). With it a Redis that came back empty while every
     * instance restarted is noticed: the numbers fail closed (no limit is exceeded), the
     * configurations are written back and the contacts each instance accepted and had not seen done
     * are written again (docs/scaling.md, "Redis comes back empty").
     * @default none: a reset is noticed only by instances that lived through it
     */
    readonly stateDir?: string;
  } & Omit<RedisServerOptions, 'client'>;
  /** Environment to read `SENDPOOL_API_KEYS` from. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Close on SIGINT and SIGTERM. @default true */
  readonly handleSignals?: boolean;
  /**
   * Send through the WhatsApp Cloud API with these credentials and settings (the fleet is the
   * fleet file's); its webhook endpoint is served too. Ignored when `channel` is given.
   * @default none: the simulated channel
   */
  readonly whatsapp?: Omit<WhatsAppChannelOptions, 'fleet'>;
  /**
   * Send SMS over SMPP with these options (the optional package `smpp` must be installed); template
   * messages stay on `channel`. Connection events go to the log, never a credential. @default none:
   * SMS go to `channel` (the simulated one by default)
   */
  readonly smpp?: SmppChannelOptions;
}

/** A running server. */
export interface RunningServer {
  readonly server: SendpoolServer;
  /** `http://127.0.0.1:3000` */
  readonly address: string;
  /** `http://127.0.0.1:9464` when /metrics has a listener of its own (`metrics.listen`), else null. */
  readonly metricsAddress: string | null;
  /** Whether state was restored from the snapshot file. */
  readonly restored: boolean;
  /** What a start with `recover` found lost; undefined when the store was intact. */
  readonly recovery?: StoreRecovery;
  close(): Promise<void>;
}

export async function runServer(options: RunServerOptions): Promise<RunningServer> {
  const { fleetFile, port = 3000, host = '127.0.0.1', keysFile, snapshotFile, dataDir, recover = false, env = process.env, handleSignals = true, whatsapp, smpp, redis, ...rest } = options;
  if (redis !== undefined && (dataDir !== undefined || snapshotFile !== undefined)) {
    throw new ServerOptionsError([
      optionConflict('redis', 'no `dataDir` or `snapshotFile` beside it (`redis` keeps the state in Redis)', dataDir !== undefined ? '`dataDir` given' : '`snapshotFile` given'),
    ]);
  }
  const fleet: unknown = JSON.parse(readFileSync(fleetFile, 'utf8'));
  // The channel's warnings go to the server's log once it exists.
  let warn: ((details: Readonly<Record<string, unknown>>, message: string) => void) | undefined;
  const templates: Channel | undefined = rest.channel ?? (whatsapp ? await whatsAppChannel(fleet, whatsapp, (message, details) => warn?.(details, message)) : undefined);
  const keys = [...loadApiKeys({ ...(keysFile === undefined ? {} : { file: keysFile }), env }), ...(options.apiKeys ?? [])];
  // SMS over SMPP: composed with the template channel (its connection events go to the server's log).
  let logTo: SendpoolServer | undefined;
  const channel = smpp === undefined ? templates : (await smppServerChannel(smpp, templates, () => logTo?.log)).channel;
  // Declared before the Redis parts: their events may come while they start (Redis down).
  let server: SendpoolServer | undefined;
  const stateDir = redis?.stateDir;
  // On Redis, a separate metrics listener opens before the wait for Redis: a scrape sees
  // sendpool_redis_ready 0 while the instance waits, and the server's metrics once it is built.
  let syncState: (() => string) | undefined;
  const early = redis === undefined ? undefined : await openEarlyMetricsOf(rest, () => syncState?.());
  // The API's port opens now too (503 until the server takes it; /metrics there when it is served there).
  const starting = redis === undefined ? undefined : await openStartingApiOf(rest, host, port, () => syncState?.());
  const closeEarly = async () => {
    await early?.close();
    await starting?.close();
  };
  let shared: Awaited<ReturnType<typeof redisFleet>> | undefined;
  try {
    shared =
      redis === undefined
        ? undefined
        : await redisFleet(
            redis.url,
            redis.prefix ?? 'sendpool:',
            stateDir === undefined ? undefined : join(stateDir, 'capacity-epoch'),
            fleet,
            () => server?.sendpool.wake(),
            (level, details, message) => {
              if (server) return server.log[level](details, message);
              // Before the server exists (Redis down at start: it waits here): a log line of the same shape.
              if (rest.logger !== false) process.stderr.write(`${JSON.stringify({ level: level === 'info' ? 30 : 40, time: Date.now(), ...details, msg: message })}\n`);
            },
            (state) => (syncState = state),
          );
  } catch (e) {
    await closeEarly();
    throw e;
  }
  const storage = dataDir === undefined ? undefined : await openSqliteStorage(dataDir, { recover });
  let stored;
  try {
    stored = storage?.load();
  } catch (e) {
    storage?.close();
    throw e;
  }
  // The store wins over a snapshot file: a snapshot is imported into an empty store once, never again.
  const saved = snapshotFile === undefined || stored !== undefined ? undefined : readSnapshotFile(snapshotFile);
  const snapshot = stored !== undefined ? snapshotFromRows(stored.rows, Date.now()) : saved?.engine;
  const engine = shared?.engine ?? createEngine(fleet, { ...(snapshot !== undefined ? { snapshot } : {}), ...(storage ? { trackChanges: true } : {}) });
  const build = () =>
    buildServer({
      ...rest,
      ...(channel === undefined ? {} : { channel }),
      engine,
      apiKeys: keys,
      ...(saved ? { restore: saved.server } : {}),
      ...(snapshotFile === undefined ? {} : { snapshotFile }),
      ...(storage ? { storage, ...(stored ? { stored } : {}), storeEverything: saved !== undefined } : {}),
      ...(early ? { [EARLY_METRICS]: early } : {}),
      ...(shared && redis
        ? {
            redis: {
              ...redisOptions(redis),
              client: shared.client,
              syncState: () => shared.sync.state,
              refreshOutput: () => shared.store.settle(),
              ...(redis.stateFile === undefined && stateDir !== undefined ? { stateFile: join(stateDir, 'redis-state.json') } : {}),
            },
            ...(rest.reportTokenKey === undefined ? { reportTokenKey: shared.reportTokenKey } : {}),
          }
        : {}),
    });
  try {
    server = build();
  } catch (e) {
    // Bad options: nothing listens, and the store opened above must not stay open.
    storage?.close();
    await shared?.close();
    await channel?.close?.();
    await closeEarly();
    throw e;
  }
  const running: SendpoolServer = server;
  logTo = server;
  warn = (details, message) => running.log.warn(details, message);
  // The port the starting listener held (the one it picked for 0): the server takes it over.
  await starting?.close();
  await running.listen({ port: starting?.port ?? port, host });
  const addr = running.server.address();
  const actualPort = typeof addr === 'object' && addr !== null ? addr.port : port;
  const address = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
  let closing: Promise<void> | undefined;
  // The store closes after the server's last write (its onClose hook writes the drained results).
  const close = () =>
    (closing ??= running.close().then(async () => {
      storage?.close();
      await shared?.close();
    }));
  if (handleSignals) {
    const onSignal = (signal: NodeJS.Signals) => {
      running.log.info({ signal }, 'shutting down');
      void close().then(() => process.exit(0));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  return {
    server: running,
    address,
    metricsAddress: running.sendpool.metricsAddress(),
    restored: saved !== undefined || stored !== undefined,
    ...(storage?.recovery ? { recovery: storage.recovery } : {}),
    close,
  };
}

/** The WhatsApp channel, loaded only when asked for: its optional package (undici) stays off the default path. */
async function whatsAppChannel(fleet: unknown, options: Omit<WhatsAppChannelOptions, 'fleet'>, onWarning: NonNullable<WhatsAppChannelOptions['onWarning']>): Promise<Channel> {
  let mod: typeof import('./channels/whatsapp/index.js');
  try {
    mod = await import('./channels/whatsapp/index.js');
  } catch (e) {
    throw peerError(e, 'undici', 'The WhatsApp channel');
  }
  return mod.createWhatsAppChannel({ onWarning, ...options, fleet });
}

/**
 * The engine of an instance on Redis: its numbers' capacity leased from Redis (`RedisStore`), their
 * statuses shared (`FleetSync`); loaded only when asked for, so `ioredis` stays off the default path.
 * `url` is `redis://…` / `rediss://…` for one server, `redis-cluster://host:port,host:port,…` for a
 * Redis Cluster (the nodes to start from). Connection and capacity events go to `log`.
 */
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
function redisOptions(redis: NonNullable<RunServerOptions['redis']>): Omit<RedisServerOptions, 'client'> {
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
