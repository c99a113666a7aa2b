/**
 * What `runServer` is given and what it gives back: the options of one process started from a
 * fleet file (`sendpool serve`, `npm start`) and the running server.
 */
import type { StoreRecovery } from '../storage/store-open.js';
import type { SmppChannelOptions } from './channels/smpp-options.js';
import type { WhatsAppChannelOptions } from './channels/whatsapp/options.js';
import type { BuildServerOptions, RedisServerOptions } from './options.js';
import type { SendpoolServer } from './server-control.js';
import type { ApiKeyEntry } from './tenants.js';

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
