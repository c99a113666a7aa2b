/**
 * The redis backend's options (`BuildServerOptions.redis`, options.ts): the connection every
 * instance of the fleet shares, and how this instance takes part.
 */
import type { CampaignStatsClient } from '../../../redis/campaign-stats-store.js';
import type { ContactIdClient } from './contact-ids.js';
import type { QueueClient } from './queue.js';
import type { RedisResetEvent } from './reset.js';
import type { SharedBlocklistClient } from './shared-blocklist.js';
import type { SharedWebhooksClient } from './shared-webhooks.js';

/** Options of the server on Redis ({@link BuildServerOptions.redis}). */
export interface RedisServerOptions {
  /** The connection (an ioredis `Redis` or `Cluster`). The server does not close it. */
  readonly client: QueueClient & ContactIdClient & SharedWebhooksClient & CampaignStatsClient & SharedBlocklistClient;
  /** This instance's name among the consumers of the queue. @default a random UUID */
  readonly consumer?: string;
  /**
   * Prefix of every key; the queue's keys continue with the hash tag `{queue}` (one Redis Cluster
   * slot), the webhook configurations' with `{config}`.
   * @default 'sendpool:'
   */
  readonly prefix?: string;
  /**
   * How long an instance may go without renewing the work it holds before another takes it over,
   * in ms: the bound on how long a dead instance's contacts wait.
   * @default 30_000
   */
  readonly leaseMs?: number;
  /**
   * Contacts an instance keeps claimed in its engine at most; the rest wait in Redis for any
   * instance. An instance holds less when an even part of the fleet's backlog among the live
   * instances is less (its fair hold, docs/scaling.md "The queue").
   * @default 2_000
   */
  readonly prefetchContacts?: number;
  /**
   * The state of the numbers' status sync (`FleetSync.state`: idle, connecting, ready, lost,
   * stopped), shown in /metrics as `sendpool_redis_sync_state`. `runServer` gives its FleetSync's.
   * @default none: the gauge is not exported
   */
  readonly syncState?: () => string;
  /**
   * Resolves once the store's view of the numbers is fresh (`RedisStore.settle`): GET
   * /messenger/businesses/ reads output after it, so every instance answers the fleet's output.
   * `runServer` gives its RedisStore's.
   * @default none: output as this instance last knew it
   */
  readonly refreshOutput?: () => Promise<void>;
  /**
   * A small JSON file of this instance's own, outside Redis (readable by its owner only: it holds
   * webhook signing secrets): the queue's epoch id it saw last and the webhook configurations it
   * knew. With it a Redis that came back empty while every instance restarted is noticed, and the
   * configurations are written back (docs/scaling.md, "Redis comes back empty"). Beside it
   * (`redis-state.json` → `redis-state.accepted.jsonl`) the instance journals the chunks it accepted
   * and has not seen done, written again at start when Redis lost them. `runServer` puts it in
   * `stateDir`.
   * @default none: a reset is noticed only by instances that lived through it
   */
  readonly stateFile?: string;
  /** Called when this instance found that Redis came back without the queue (after it handled it). @default none */
  readonly onReset?: (event: RedisResetEvent) => void;
}
