/**
 * `runServer`: what `sendpool serve` and `npm start` call. Reads the fleet, the keys and the
 * snapshot file (if any), builds the engine and the server, listens, and closes gracefully on
 * SIGINT/SIGTERM (stop intake, drain, snapshot).
 */
import { readFileSync } from 'node:fs';
import { createEngine } from '../engine.js';
import { buildServer, type SendpoolServer } from './build-server.js';
import type { BuildServerOptions } from './options.js';
import { readSnapshotFile } from './snapshot-file.js';
import { loadApiKeys, type ApiKeyEntry } from './tenants.js';

/** Options of {@link runServer}. */
export interface RunServerOptions extends Omit<BuildServerOptions, 'engine' | 'apiKeys' | 'restore' | 'snapshotFile'> {
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
  /** Environment to read `SENDPOOL_API_KEYS` from. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Close on SIGINT and SIGTERM. @default true */
  readonly handleSignals?: boolean;
}

/** A running server. */
export interface RunningServer {
  readonly server: SendpoolServer;
  /** `http://127.0.0.1:3000` */
  readonly address: string;
  /** Whether state was restored from the snapshot file. */
  readonly restored: boolean;
  close(): Promise<void>;
}

export async function runServer(options: RunServerOptions): Promise<RunningServer> {
  const { fleetFile, port = 3000, host = '127.0.0.1', keysFile, snapshotFile, env = process.env, handleSignals = true, ...rest } = options;
  const fleet: unknown = JSON.parse(readFileSync(fleetFile, 'utf8'));
  const keys = [...loadApiKeys({ ...(keysFile === undefined ? {} : { file: keysFile }), env }), ...(options.apiKeys ?? [])];
  const saved = snapshotFile === undefined ? undefined : readSnapshotFile(snapshotFile);
  const engine = createEngine(fleet, saved ? { snapshot: saved.engine } : {});
  const server = buildServer({
    ...rest,
    engine,
    apiKeys: keys,
    ...(saved ? { restore: saved.server } : {}),
    ...(snapshotFile === undefined ? {} : { snapshotFile }),
  });
  await server.listen({ port, host });
  const addr = server.server.address();
  const actualPort = typeof addr === 'object' && addr !== null ? addr.port : port;
  const address = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= server.close().then(() => undefined));
  if (handleSignals) {
    const onSignal = (signal: NodeJS.Signals) => {
      server.log.info({ signal }, 'shutting down');
      void close().then(() => process.exit(0));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  return { server, address, restored: saved !== undefined, close };
}
