/**
 * Where a process started by `runServer` keeps its state, opened before the server is built: in
 * this process (memory, a snapshot file, the durable store in `dataDir`) or in Redis, shared with
 * the other instances (redis-instance.ts). Either gives the engine, what `buildServer` is given of
 * it, and how it is let go: at once when the server cannot be built, after the server's last write
 * when it closes.
 */
import { snapshotFromRows } from '../core/rows.js';
import type { Engine } from '../core/engine.js';
import { createEngine } from '../engine.js';
import { openSqliteStorage } from './backends/sqlite/open-storage.js';
import type { StoreRecovery } from '../storage/store-open.js';
import type { EARLY_METRICS, EarlyMetrics } from './metrics-access.js';
import type { BuildServerOptions } from './options.js';
import { readSnapshotFile } from './snapshot-file.js';

/** The state of a starting process, opened. */
export interface InstanceState {
  readonly engine: Engine;
  /** What `buildServer` is given of it: the store or the snapshot, or the Redis parts. */
  readonly serverOptions: Partial<BuildServerOptions> & { readonly [EARLY_METRICS]?: EarlyMetrics };
  /** Whether state was restored (from the store or a snapshot file). */
  readonly restored: boolean;
  /** What a start with `recover` found lost; undefined when the store was intact. */
  readonly recovery?: StoreRecovery;
  /** The port the server listens on: the one a listener opened before it held (freed now), else `port`. */
  takePort(port: number): Promise<number>;
  /** Lets it go when the server could not be built (nothing listens). */
  abandon(): Promise<void>;
  /** Lets it go once the server closed: after its last write. */
  close(): Promise<void>;
}

/** Where the state of one process is kept: `dataDir` (the durable store) and `snapshotFile`. */
export interface LocalStateOptions {
  readonly dataDir: string | undefined;
  readonly snapshotFile: string | undefined;
  /** Start from what is intact of a damaged store. */
  readonly recover: boolean;
}

/**
 * The state of one process: the durable store when `dataDir` is given, and the snapshot file. The
 * store wins over a snapshot file: a snapshot is imported into an empty store once, never again.
 */
export async function openLocalState(fleet: unknown, options: LocalStateOptions): Promise<InstanceState> {
  const { dataDir, snapshotFile, recover } = options;
  const storage = dataDir === undefined ? undefined : await openSqliteStorage(dataDir, { recover });
  let stored;
  try {
    stored = storage?.load();
  } catch (e) {
    storage?.close();
    throw e;
  }
  const saved = snapshotFile === undefined || stored !== undefined ? undefined : readSnapshotFile(snapshotFile);
  const snapshot = stored !== undefined ? snapshotFromRows(stored.rows, Date.now()) : saved?.engine;
  const engine = createEngine(fleet, { ...(snapshot !== undefined ? { snapshot } : {}), ...(storage ? { trackChanges: true } : {}) });
  const letGo = async () => storage?.close();
  return {
    engine,
    serverOptions: {
      ...(saved ? { restore: saved.server } : {}),
      ...(snapshotFile === undefined ? {} : { snapshotFile }),
      ...(storage ? { storage, ...(stored ? { stored } : {}), storeEverything: saved !== undefined } : {}),
    },
    restored: saved !== undefined || stored !== undefined,
    ...(storage?.recovery ? { recovery: storage.recovery } : {}),
    takePort: async (port) => port,
    abandon: letGo,
    close: letGo,
  };
}
