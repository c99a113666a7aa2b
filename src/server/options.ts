/** Options of {@link buildServer}, each with its default. */
import type { FastifyServerOptions } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { Engine } from '../core/engine.js';
import type { ContractLimits } from '../contract/limits.js';
import type { DeliveryOutcome, OutboxOptions } from '../events/outbox.js';
import type { RandomSource } from '../events/random.js';
import type { ReportType } from '../events/schemas/report.js';
import type { Channel } from './ports/channel.js';
import type { ConnectionOptions } from './connections.js';
import type { DashboardOptions } from './dashboard/options.js';
import type { DeadLetterOptions } from './dead-letters.js';
import type { MetricsOptions } from './metrics-access.js';
import type { DispatchOptions } from './dispatch-worker.js';
import type { ReportGenerator } from './report-types.js';
import type { ServerStateSnapshot } from './snapshot-file.js';
import type { RedisServerOptions } from './backends/redis/options.js';
import type { ServerStorage, StoredState } from '../storage/sqlite-storage.js';
import type { SmsOptions } from './sms-worker.js';
import type { ApiKeyEntry } from './tenants.js';
import type { DeliveryOptions } from './webhooks/delivery-worker.js';

export type { RedisServerOptions } from './backends/redis/options.js';

export interface BuildServerOptions {
  /** The engine the server dispatches with (restored from a snapshot by the host when resuming). */
  readonly engine: Engine;
  /**
   * API keys and the company each acts for. A request without a listed key gets 401.
   * @default [] (every request is refused: give keys)
   */
  readonly apiKeys?: readonly ApiKeyEntry[];
  /**
   * The company of businesses whose fleet entry has no `companyId`.
   * @default 1
   */
  readonly defaultCompanyId?: number;
  /**
   * The provider. @default a simulated channel (`createSimulatedChannel()`)
   */
  readonly channel?: Channel;
  /**
   * Clock of the server's own timestamps (webhook times, outbox, statistics). Pass the engine's.
   * @default the system clock
   */
  readonly clock?: Clock;
  /** Source of event ids, secrets and jitter. @default node:crypto */
  readonly random?: RandomSource;
  /**
   * Accept webhook and SMS callback URLs on loopback and private networks (also at connect time).
   * For local development and tests only; cloud metadata addresses stay refused.
   * @default false
   */
  readonly allowPrivateWebhookTargets?: boolean;
  /**
   * Webhook signing secret per company (`whsec_…`). Companies without one get a random secret,
   * kept in the snapshot and readable with GET /messenger/config/secret/.
   * @default {}
   */
  readonly webhookSecrets?: Readonly<Record<number, string>>;
  /**
   * Public origin written in report download links, e.g. `https://api.example.com`: an http(s) URL,
   * optionally with a proxy's path prefix, without credentials, query or fragment.
   * @default the address the server listens on (`http://127.0.0.1:<port>`)
   */
  readonly publicBaseUrl?: string;
  /**
   * Key signing report download tokens, at least 32 bytes (a string counts its UTF-8 bytes).
   * @default kept in the durable store when there is one (32 random bytes made at the first start);
   * without a store, 32 random bytes per process (links die with the process)
   */
  readonly reportTokenKey?: string | Uint8Array;
  /** Generators of report types other than `numbers` and `templates` (which the server builds). @default {} */
  readonly reportGenerators?: Partial<Record<ReportType, ReportGenerator>>;
  /** Reports kept for download per company, its oldest dropped first. @default 1000 */
  readonly maxReports?: number;
  /**
   * How long the messages sent and attendances closed are kept for the period reports
   * (`official-messages`, `attendance-history`, `attendance-statistics`); older ones are dropped,
   * also from the durable store. @default 2_592_000_000 (30 days)
   */
  readonly reportRetentionMs?: number;
  /**
   * Messages kept for the period reports, the oldest dropped first: about 530 bytes of memory each
   * with a 50-character text (270 MB at the default); 0 keeps none. @default 500_000
   */
  readonly maxReportMessages?: number;
  /** Closed attendances kept for the period reports, the oldest dropped first; 0 keeps none. @default 100_000 */
  readonly maxReportAttendances?: number;
  /**
   * Most rows of a report file the server builds: a period holding more ends in `report.error`
   * asking for a shorter one (a request cannot buy an unbounded file). @default 100_000
   */
  readonly maxReportRows?: number;
  /** Request limits (body size, contacts and SMS items per request). @default the contract's: 10 MiB, 10,000, 10,000 */
  readonly limits?: ContractLimits;
  /**
   * Contacts waiting in the engine (queued and waiting for a retry) beyond which a send request is
   * answered 429 with Retry-After: the intake queue's bound.
   * @default 1_000_000
   */
  readonly maxQueuedContacts?: number;
  /**
   * Webhook events waiting in the outbox beyond which send requests are answered 429 (a receiver
   * that is down must not make memory grow without limit).
   * @default 1_000_000
   */
  readonly maxPendingWebhooks?: number;
  /** Dispatch worker: poll size and sends in flight. @default `{ pollLimit: 1000, maxInFlight: 1000 }` */
  readonly dispatch?: DispatchOptions;
  /** SMS queue bound and concurrency. @default `{ maxQueued: 100_000, maxInFlight: 64 }` */
  readonly sms?: SmsOptions;
  /** Webhook delivery: timeouts and concurrency per target. @default `{ requestTimeoutMs: 10_000, concurrencyPerTarget: 8, maxInFlight: 256 }` */
  readonly delivery?: DeliveryOptions;
  /** Outbox backoff and ages. @default the events' defaults: 5 s ×2 up to 1 h, dead letter after 24 h, attempt timeout 30 s */
  readonly outbox?: Omit<OutboxOptions, 'random'>;
  /** Period of the campaign statistics batches (spec 6.4). @default 60_000 */
  readonly campaignBatchIntervalMs?: number;
  /**
   * How long after the provider accepted a message a failure it reports later (a status webhook's
   * FAILED) still sends the contact again (a retry, a failover, a rest). Past it the failure is
   * notified and counted, and the contact is not sent again; so a campaign is `FINISHED` at most
   * this long after its last send, and its counts settle then (docs/events.md). A message
   * delivered (DEVICE or beyond) is never sent again, whatever the window.
   * @default 600_000 (10 minutes)
   */
  readonly failureWindowMs?: number;
  /**
   * How long a phone a business took for a template type (a contact accepted, in any campaign)
   * refuses a later contact of the same business and type with that phone, as `already_sent`
   * (`count_already_sent`). Kept compactly in time buckets (1/24 of the window each: a phone is
   * refused for the window and at most one bucket more), by the durable server with each step and
   * on Redis for every instance. A contact that ends FAILED or EXPIRED without reaching the recipient
   * gives its phone back. 0 turns the check off (docs/server.md, "Already sent").
   * @default 86_400_000 (24 hours)
   */
  readonly alreadySentWindowMs?: number;
  /**
   * Messages and SMS remembered for their later statuses: at least the newest half of this, at most
   * all of it (oldest forgotten first). The channel's memory of provider ids holds twice as many
   * entries (two a message). @default 1_000_000
   */
  readonly maxTrackedMessages?: number;
  /** State written by a previous server's snapshot (the `server` part of the snapshot file). @default none: a fresh start */
  readonly restore?: ServerStateSnapshot;
  /**
   * The durable store (`openSqliteStorage(dir)`): accepted contacts are written before their 202,
   * hand-outs and the numbers' charges before any send. The engine must be created with
   * `trackChanges: true` (and restored from the store's rows by the host: `runServer` does both).
   * The server writes to it but does not close it. @default none: state is kept in memory
   */
  readonly storage?: ServerStorage;
  /**
   * What the store held at start (`storage.load()`): server values, campaign statistics, messages
   * remembered for later statuses; SMS not answered are sent (again) and webhook events not known
   * delivered are delivered (again). The engine's rows are the host's to restore the engine from.
   * @default none: a first start
   */
  readonly stored?: StoredState;
  /**
   * The first write carries every live submission with its contacts (the engine was restored from a
   * snapshot file into an empty store). @default false
   */
  readonly storeEverything?: boolean;
  /**
   * Run as one of many instances on Redis: accepted contacts wait in a queue every instance shares
   * (Redis Streams), any instance dispatches them, and a dead instance's work is taken over by the
   * others after the lease (docs/scaling.md, "The server on Redis"). The engine should share its
   * numbers' capacity through `sendpool/redis` (`RedisStore`); `runServer({ redis })` does both.
   * Exclusive with `storage`. @default none: one process
   */
  readonly redis?: RedisServerOptions;
  /** Where {@link SendpoolControl.snapshot} is written on close (atomically). @default none: state is lost on exit */
  readonly snapshotFile?: string;
  /** Longest wait, on close, for sends and webhook deliveries in flight. @default 10_000 */
  readonly drainTimeoutMs?: number;
  /**
   * Limits of the HTTP connections: a request must arrive within `headersTimeoutMs` (headers) and
   * `requestTimeoutMs` (whole), else 408 and the connection closes; an idle keep-alive connection
   * closes after `keepAliveTimeoutMs`; a silent one after `idleTimeoutMs`.
   * @default `{ headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000, idleTimeoutMs: 60_000, checkIntervalMs: 1_000 }`
   */
  readonly connections?: ConnectionOptions;
  /**
   * Fastify's logger (pino). `true` logs at `info` with request ids; the API key header and query
   * strings (download tokens) are never logged.
   * @default true
   */
  readonly logger?: FastifyServerOptions['logger'];
  /**
   * GET /metrics (Prometheus text, no API key): `true` serves it open on the API's port, `false`
   * not at all; `{ key }` requires `Authorization: Bearer <key>` (401 without it), `{ listen }`
   * serves it on a listener of its own (the API's port answers 404 there). See docs/server.md, "Metrics".
   * @default true (open on the API's port: keep the port on an internal network, or give a key or a listener)
   * @example { key: process.env.METRICS_KEY, listen: { host: '10.0.0.5', port: 9464 } }
   */
  readonly metrics?: boolean | MetricsOptions;
  /**
   * The operator dashboard at /dashboard/: a page (no key needed to load it, none inside it) that
   * shows output, numbers, templates, campaigns and webhook receivers live and pauses or resumes
   * numbers and templates through the operator endpoints, with the key the user types (the API's
   * scope: a company's key sees its businesses, an operator key all). `false` serves none of it;
   * `{ sampleIntervalMs }` sets how often output is sampled for its charts. See docs/dashboard.md.
   * @default true
   */
  readonly dashboard?: boolean | DashboardOptions;
  /** Include prom-client's process metrics (CPU, memory, event loop). @default true */
  readonly processMetrics?: boolean;
  /**
   * Called with webhook events that could not be delivered within the outbox's maximum age (they
   * are also logged and kept as dead letters). @default none
   */
  readonly onDeadLetter?: (outcome: DeliveryOutcome) => void;
  /**
   * Bounds of the dead letters kept (GET /messenger/webhooks/dead-letters/, docs/server.md "Dead
   * letters"): per company the newest `maxPerCompany` (10,000), none older than `maxAgeMs` (7 days).
   * @default { maxPerCompany: 10_000, maxAgeMs: 604_800_000 }
   */
  readonly deadLetters?: DeadLetterOptions;
}

/** The default of {@link BuildServerOptions.alreadySentWindowMs}: 24 hours. */
export const DEFAULT_ALREADY_SENT_WINDOW_MS = 86_400_000;

/** The default of {@link BuildServerOptions.failureWindowMs}: 10 minutes. */
export const DEFAULT_FAILURE_WINDOW_MS = 600_000;
