/**
 * `buildServer`: the reference server of the service as a Fastify instance a host can embed (add
 * routes, hooks, `inject`, `listen`). It wires the parts: tenants and auth, the contract's
 * parsers, the dispatch worker over the engine and the channel, the notifier and the delivery
 * worker over the outbox, reports, metrics, and the shutdown that snapshots everything.
 *
 * Route schemas are the contract's JSON Schemas (TypeBox). Request bodies are validated by the
 * contract's own parsers, which use those same schemas but list every problem with its path and
 * know the fleet (template variables, businesses of the key's company); Fastify's Ajv would stop at
 * the first problem and answer another error shape, so its validator is replaced by a pass-through.
 * Response schemas serialise the answers (fast-json-stringify).
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { systemClock } from '../runtime/system-clock.js';
import type { Engine } from '../core/engine.js';
import type { DispatchCounts, OutgoingMessage, ReportResult, SendOutcome } from '../core/dispatch/types.js';
import { DEFAULT_MAX_BODY_BYTES } from '../contract/limits.js';
import { Outbox, type OutboxEvent } from '../events/outbox.js';
import { uuidV4 } from '../events/uuid.js';
import { ActivityLog } from './activity-log.js';
import type { Channel, OutgoingSms } from './channel.js';
import { serverContact, type ServerContact } from './contacts.js';
import type { ServerContext } from './context.js';
import { cryptoRandom } from './crypto-random.js';
import { Blocklist } from './blocklist.js';
import { CampaignPhones } from './campaign-phones.js';
import { ChannelMemoryStore, type ChannelMemoryChanges } from './channels/memory.js';
import { DispatchWorker } from './dispatch-worker.js';
import { Durability } from './durability.js';
import type { Persistence } from './persistence.js';
import { ContactIdBlocks } from './redis/contact-ids.js';
import { ContactQueue } from './redis/queue.js';
import { RedisPersistence } from './redis/redis-persistence.js';
import { SharedBlocklist } from './redis/shared-blocklist.js';
import { SharedDispatch } from './redis/shared-dispatch.js';
import { SharedPhones } from './redis/shared-phones.js';
import { SharedMemory, decodeRow, memoryPairs } from './redis/shared-memory.js';
import { SharedStatistics } from './redis/shared-statistics.js';
import { SharedWebhooks } from './redis/shared-webhooks.js';
import { installErrorHandlers } from './http-errors.js';
import { installJsonBodyParser } from './body-parser.js';
import { installAuth } from './auth.js';
import { DashboardState } from './dashboard/state.js';
import { DASHBOARD_OPEN_PATHS, dashboardRoutes } from './dashboard/routes.js';
import { createMetrics } from './metrics.js';
import { serveMetrics, type MetricsEndpoint } from './metrics-access.js';
import { fastifyConnectionOptions } from './connections.js';
import { resolveServerOptions } from './resolve-options.js';
import { type CompanyWebhooks, Notifier } from './notifier.js';
import type { BuildServerOptions, RedisServerOptions } from './options.js';
import { ReportService } from './report-service.js';
import { channelSteering } from './channel-steering.js';
import { blocklistRoutes } from './routes/blocklist.js';
import { configRoutes } from './routes/config.js';
import { inboundPaths, inboundRoutes } from './routes/inbound.js';
import { messengerRoutes } from './routes/messenger.js';
import { operatorRoutes } from './routes/operator.js';
import { reportRoutes } from './routes/reports.js';
import { smsRoutes } from './routes/sms.js';
import { createSimulatedChannel } from './simulated-channel.js';
import { SERVER_SNAPSHOT_FORMAT, SERVER_SNAPSHOT_VERSION, writeSnapshotFile, type SnapshotFile } from './snapshot-file.js';
import { SmsWorker } from './sms-worker.js';
import { Tenants } from './tenants.js';
import { DeliveryWorker } from './webhooks/delivery-worker.js';

/** Counts of the server's work, for hosts, health checks and tests. */
export interface ServerStats {
  readonly dispatch: DispatchCounts;
  /** Webhook events not delivered yet (pending or in flight). */
  readonly webhooksPending: number;
  readonly webhooksDelivered: number;
  readonly webhooksDeadLettered: number;
  readonly smsQueued: number;
  /** SMS handed to the gateway, its answer not back yet. */
  readonly smsInFlight: number;
}

/** What the host (and tests) can do with a running server besides HTTP. */
export interface SendpoolControl {
  readonly engine: Engine;
  readonly channel: Channel;
  /** Engine and server state as the snapshot file holds it. */
  snapshot(): SnapshotFile;
  /** The webhook signing secret of a company. */
  webhookSecret(companyId: number): string;
  stats(): ServerStats;
  /** True when nothing waits: no contact queued or in flight, no SMS queued or in flight, no webhook pending. */
  idle(): boolean;
  /** Sends the due campaign statistics batches now (they are otherwise sent on their period). */
  flushCampaignStatistics(): void;
  /** Looks at the engine now for due work (a host that moved a manual clock; timers wait in real time). */
  wake(): void;
  /** `http://host:port` of the separate metrics listener (`metrics.listen`) once ready; null otherwise. */
  metricsAddress(): string | null;
}

/** The Fastify instance with the server's controls. */
export type SendpoolServer = FastifyInstance & { readonly sendpool: SendpoolControl };

function loggerOptions(option: BuildServerOptions['logger']): FastifyServerOptions['logger'] {
  if (option === false) return false;
  const base = typeof option === 'object' && option !== null ? option : {};
  return {
    level: 'info',
    ...base,
    // Keys and download tokens never reach the log: no headers, no query strings.
    redact: { paths: ['req.headers', 'headers["x-api-key-id"]', 'req.query'], remove: true },
    serializers: {
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: req.url.split('?')[0], id: req.id }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
}

/** Builds the server. Call `listen` on the answer to serve; `close` stops intake, drains, and snapshots. */
export function buildServer(options: BuildServerOptions): SendpoolServer {
  const settings = resolveServerOptions(options);
  const engine = options.engine;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? cryptoRandom;
  const channel = options.channel ?? createSimulatedChannel();
  const limits = options.limits ?? {};
  const maxBodyBytes = limits.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const allowPrivate = options.allowPrivateWebhookTargets ?? false;
  const drainMs = options.drainTimeoutMs ?? 10_000;
  const restore = options.restore;
  const batchIntervalMs = options.campaignBatchIntervalMs ?? 60_000;
  const storedState = options.stored;
  const stored = storedState?.values;
  const storedKey = stored?.get('reportTokenKey');
  // The key signing download links outlives restarts when the server has a store.
  const reportTokenKey = options.reportTokenKey ?? (typeof storedKey === 'string' ? Buffer.from(storedKey, 'base64') : random.randomBytes(32));
  const storage = options.storage;
  if (storage && options.redis) throw new Error('buildServer: `storage` and `redis` exclude each other (one keeps state in a file, the other in Redis)');
  let durability: Persistence | undefined;
  // The server on Redis: the shared queue and this instance's side of it (docs/scaling.md).
  const onRedis = options.redis ? sharedQueueParts(options.redis, engine) : undefined;
  let redisPersistence: RedisPersistence | undefined;
  let blocklistTimer: NodeJS.Timeout | undefined;
  /** Runs the notifier for a contact: on Redis its notifications are written with its chunk. */
  const about = <T>(contact: object, fn: () => T): T => (redisPersistence ? redisPersistence.about(contact, fn) : fn());
  /**
   * The memory the channel keeps the provider's ids in (docs/channels.md, "What survives a
   * restart"): two entries a message (its platform id, its recipient), so twice the tracked bound;
   * on the durable server written with each step and loaded at start.
   */
  // On Redis what the server remembers of its sends is the fleet's: written with each step, read
  // back by an instance a provider's event reaches without it (redis/shared-memory.ts).
  const sharedMemory = onRedis ? new SharedMemory(options.redis!.client, onRedis.prefix, 2 * (options.maxTrackedMessages ?? 1_000_000)) : undefined;
  const recallChannel = sharedMemory && (async (keys: readonly string[]) => new Map([...(await sharedMemory.read(keys.map((k) => `c:${k}`)))].map(([k, v]) => [k.slice(2), v])));
  const channelMemory = new ChannelMemoryStore(
    2 * (options.maxTrackedMessages ?? 1_000_000),
    storage || onRedis ? { trackChanges: true, onChange: () => durability?.schedule(), ...(recallChannel ? { recall: recallChannel } : {}) } : {},
  );
  channelMemory.load(options.stored?.channelMemory ?? []);
  /** Reports changed since the last step: written then (with their files), not at every step. */
  let reportsChanged = false;

  const app = Fastify({
    logger: loggerOptions(options.logger ?? true),
    bodyLimit: maxBodyBytes,
    genReqId: () => uuidV4(random),
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: true,
    ...fastifyConnectionOptions(settings.connections),
  } as FastifyServerOptions);

  const tenants = new Tenants(options.apiKeys ?? [], engine, options.defaultCompanyId ?? 1);
  // What the operator dashboard keeps besides the engine's views (output samples, causes, campaigns' pools).
  const dashboard = settings.dashboard ? new DashboardState(engine, clock, settings.dashboard) : undefined;
  const outbox = restore ? Outbox.restore(restore.outbox, { random, ...options.outbox }) : new Outbox({ random, ...options.outbox });
  const counters = { delivered: 0, deadLettered: 0 };
  let metrics: ReturnType<typeof createMetrics> | undefined;

  const delivery = new DeliveryWorker(
    {
      outbox,
      clock,
      secretOf: (companyId) => notifier.secretOf(companyId),
      allowPrivateTargets: allowPrivate,
      userAgent: 'sendpool-webhooks/1',
      onAttempt: (family, result) => metrics?.webhookAttempts.inc({ family, result }),
      onOutcomes: (outcomes) => {
        durability?.delivered(outcomes.map((o) => o.event.id));
        dashboard?.delivered(outcomes);
        for (const o of outcomes) {
          if (o.kind === 'delivered') counters.delivered++;
          else {
            counters.deadLettered++;
            app.log.warn({ family: o.event.family, eventId: o.event.id, attempts: o.attempts, lastError: o.lastError }, 'webhook dead-lettered');
            options.onDeadLetter?.(o);
          }
          metrics?.webhookOutcomes.inc({ family: o.event.family, outcome: o.kind });
        }
      },
    },
    options.delivery,
  );
  const blocklist = new Blocklist(storage !== undefined || onRedis !== undefined);
  const campaignPhones = new CampaignPhones(storage !== undefined);
  blocklist.load(restore?.blocklist ?? storedState?.blocklist ?? []);
  campaignPhones.load(restore?.campaignPhones ?? storedState?.campaignPhones ?? []);
  // What the period reports read; bounded by age and count (docs/decisions.md, "Report data").
  let businessOfNumber = new Map<string, number>();
  // Read again on a miss: a fleet replaced at run time may bring numbers.
  const businessOf = (phone: string) => businessOfNumber.get(phone) ?? (businessOfNumber = new Map(engine.numbers().map((n) => [n.phone, n.businessId]))).get(phone);
  const reportRetentionMs = options.reportRetentionMs ?? 30 * 86_400_000;
  const activity = new ActivityLog({
    clock,
    retentionMs: reportRetentionMs,
    maxMessages: options.maxReportMessages ?? 500_000,
    maxAttendances: options.maxReportAttendances ?? 100_000,
    businessOf,
    trackChanges: storage !== undefined,
    onChange: () => durability?.schedule(),
  });
  activity.load([...(restore?.activity ?? []), ...(storedState?.activity ?? [])]);
  // On Redis, campaign statistics are the fleet's, written with each step (redis/shared-statistics.ts).
  const sharedStatistics = onRedis
    ? new SharedStatistics({
        client: options.redis!.client,
        prefix: onRedis.prefix,
        batchIntervalMs,
        random,
        now: () => clock.now(),
        schedule: () => durability?.schedule(),
        keep: () => durability!.commit(),
        onError: (e) => app.log.warn({ err: e }, 'campaign statistics batch not taken: the next period tries again'),
      })
    : undefined;
  const notifier = new Notifier(
    {
      activity,
      clock,
      random,
      outbox,
      onEnqueued: () => delivery.kick(),
      batchIntervalMs,
      maxTracked: options.maxTrackedMessages ?? 1_000_000,
      secrets: options.webhookSecrets ?? {},
      onEvent: (family) => metrics?.webhookEvents.inc({ family }),
      ...(storage ? { stage: (event: OutboxEvent) => durability!.stage(event), trackChanges: true } : {}),
      ...(sharedStatistics ? { stage: (event: OutboxEvent) => durability!.stage(event), statistics: sharedStatistics } : {}),
      ...(sharedMemory
        ? { trackChanges: true, forgetRows: false, recall: async (keys: readonly string[]) => new Map([...(await sharedMemory.read(keys))].map(([k, v]) => [k, decodeRow(k, v)])) }
        : {}),
      onOptOut: (companyId, phone, at) => {
        if (!blocklist.add(companyId, phone, at, 'reply')) return;
        durability?.schedule();
        // On Redis: written for every instance now (and again with the next renewal if Redis is away).
        ctx.redis?.blocklist.sync().catch(() => {});
      },
      // A campaign's phones are kept for as long as its statistics keep its contacts.
      onCampaignSettled: (companyId, campaignId) => campaignPhones.drop(companyId, campaignId),
    },
    restore?.notifier,
  );
  if (storedState) notifier.loadStored(storedState);
  const dispatch = new DispatchWorker(
    {
      engine,
      channel,
      clock,
      ...(storage || onRedis ? { beforeSend: () => durability!.commit() } : {}),
      ...(onRedis ? { messageForChannel: (m: OutgoingMessage) => onRedis.shared.forChannel(m) } : {}),
      onHandOut: (messages) => {
        // On Redis, hand-outs are written (with the step `beforeSend` waits for) before any is sent.
        onRedis?.shared.handedOut(messages);
        dashboard?.handedOut(messages);
        if (!metrics) return;
        for (const m of messages) metrics.assignments.inc({ number: m.phone });
      },
      onResult: (m, outcome, result) => {
        // The result is written in this turn's step (nobody waits for it; a crash before re-sends it).
        durability?.schedule();
        metrics?.sends.inc({ number: m.phone, outcome: result.ok ? result.effect : 'ignored' });
        if (!result.ok) return;
        const contact = serverContact(m.contact);
        if (onRedis && result.effect !== 'sent' && result.effect !== 'failed' && result.effect !== 'expired') onRedis.shared.ended(m);
        about(contact, () => resultNotifications(m, outcome, result, contact));
      },
      onOutcomes: (outcomes) => {
        onRedis?.shared.outcomes(outcomes);
        const now = clock.now();
        for (const o of outcomes) {
          const contact = serverContact(o.contact);
          if (contact.final === 1 || contact.id === undefined) continue;
          contact.final = 1;
          const campaignId = o.campaignId ?? 0;
          const retryIndex = onRedis ? onRedis.shared.retryIndexOf(o) : o.retryIndex;
          about(contact, () => {
            // The attempt that ended: a retry that expired while it waited is the retry's outcome.
            if (o.state === 'expired') notifier.hsm(contact, campaignId, retryIndex, now, { status: 'EXPIRED', from: null, message: null });
            else if (o.state === 'failed') {
              const failure = o.code !== undefined ? { code: o.code } : { reason: o.reason && o.reason.length > 0 ? o.reason : 'Channel, 0, Unknown error' };
              notifier.hsm(contact, campaignId, retryIndex, now, { status: 'FAILED', from: null, message: null, failure }, o.code === undefined ? {} : { failureCode: o.code });
            } else if (o.state === 'rejected') notifier.reject(contact.companyId, campaignId, contact.id, 'invalid-phone');
          });
        }
        // Room in the engine: more work from the shared queue.
        if (onRedis && onRedis.shared.open < onRedis.prefetch / 2) redisPersistence?.kick();
      },
    },
    options.dispatch,
  );
  /** The notifications of one send's result (the channel's message `m`). */
  function resultNotifications(m: OutgoingMessage, outcome: SendOutcome, result: Extract<ReportResult, { ok: true }>, contact: ServerContact): void {
    const campaignId = m.campaignId ?? 0;
    const now = clock.now();
    switch (result.effect) {
      case 'sent':
        contact.final = 1;
        notifier.sent(m, campaignId);
        break;
      case 'failed':
      case 'retry-scheduled': {
        if (result.effect === 'failed') contact.final = 1;
        else notifier.retryPending(contact, campaignId, m.retryIndex === null ? 0 : m.retryIndex + 1);
        const code = outcome.status === 'failed' ? outcome.code : undefined;
        const reason = outcome.status === 'failed' ? outcome.reason : undefined;
        notifier.hsm(
          contact,
          campaignId,
          m.retryIndex,
          now,
          { status: 'FAILED', from: m.phone, message: m.text, failure: code !== undefined ? { code } : { reason: `Channel, 0, ${reason ?? 'Unknown error'}` } },
          code === undefined ? {} : { failureCode: code },
        );
        break;
      }
      case 'expired':
        contact.final = 1;
        notifier.hsm(contact, campaignId, m.retryIndex, now, { status: 'EXPIRED', from: m.phone, message: m.text });
        break;
      default:
        // failover and requeued: the message goes again on another pair; not the contact's failure.
        break;
    }
  }
  const storedWebhooks = stored?.get('webhooks');
  if (Array.isArray(storedWebhooks)) notifier.loadWebhooks(storedWebhooks as CompanyWebhooks[]);
  // Events written but not known delivered go out (again): at least once, deduplicable by id.
  for (const [, event] of storedState?.outbox ?? []) outbox.enqueue(event as OutboxEvent, clock.now());
  // SMS written and not answered by the gateway go (again): at least once.
  const storedSms = (storedState?.sms ?? []).map(([, item]) => item as OutgoingSms);
  const sms = new SmsWorker(channel, notifier, options.sms, [...(restore?.sms ?? []), ...storedSms], storage || onRedis ? (id) => durability!.smsAnswered(id) : undefined);
  const ctx: ServerContext = {
    engine,
    channel,
    clock,
    random,
    tenants,
    notifier,
    outbox,
    blocklist,
    campaignPhones,
    dispatch,
    sms,
    reports: undefined as unknown as ReportService,
    metrics: undefined,
    limits,
    urlPolicy: { allowPrivateHosts: allowPrivate },
    maxQueuedContacts: options.maxQueuedContacts ?? 1_000_000,
    maxPendingWebhooks: options.maxPendingWebhooks ?? 1_000_000,
    reportTokenKey,
    durability: undefined,
    redis: undefined,
    refreshOutput: options.redis?.refreshOutput,
    nextContactId: restore?.nextContactId ?? (typeof stored?.get('nextContactId') === 'number' ? (stored.get('nextContactId') as number) : 1),
    closing: false,
  };
  if (storage) {
    const keyText = options.reportTokenKey === undefined ? Buffer.from(reportTokenKey as Uint8Array).toString('base64') : undefined;
    durability = new Durability({
      storage,
      engine,
      takeOutcomes: () => dispatch.takeOutcomes(),
      collect: (full) => {
        const reports = reportsChanged || full ? { reports: ctx.reports.snapshot() } : {};
        reportsChanged = false;
        const changes = notifier.takeChanges(full);
        return {
          values: { nextContactId: ctx.nextContactId, webhooks: notifier.webhooks(), ...reports, ...(keyText !== undefined ? { reportTokenKey: keyText } : {}) },
          ...(changes.statistics.length > 0 ? { statistics: changes.statistics } : {}),
          ...(changes.trackedPut.length > 0 ? { trackedPut: changes.trackedPut } : {}),
          ...(changes.trackedDelete.length > 0 ? { trackedDelete: changes.trackedDelete } : {}),
          campaignPhones: campaignPhones.takeChanges(full),
          blocklist: blocklist.takeChanges(full),
          ...activity.takeChanges(full),
          ...channelMemoryStep(channelMemory),
        };
      },
      onWritten: (events) => {
        const now = clock.now();
        for (const e of events) outbox.enqueue(e, now);
        delivery.kick();
      },
      onError: (e) => {
        // Fail closed: nothing more is answered 202 or sent; a restart resumes from what was written.
        ctx.closing = true;
        app.log.fatal({ err: e }, 'durable write failed: intake and sending stopped; restart once the store is fixed');
      },
      full: options.storeEverything === true,
    });
    (ctx as { durability: Persistence | undefined }).durability = durability;
  } else if (onRedis) {
    const webhooks = new SharedWebhooks(options.redis!.client, `${onRedis.root}{config}:`, notifier, options.webhookSecrets ?? {});
    const sharedBlocklist = new SharedBlocklist(options.redis!.client, `${onRedis.root}{config}:`, blocklist);
    // Every second: other instances' blocklist changes (one XREAD when there are none).
    blocklistTimer = setInterval(() => void sharedBlocklist.sync().catch((e: unknown) => app.log.warn({ err: e }, 'blocklist not synchronised with Redis: trying again')), 1000);
    blocklistTimer.unref();
    void sharedBlocklist.sync().catch(() => {});
    const persistence = new RedisPersistence({
      queue: onRedis.queue,
      shared: onRedis.shared,
      statistics: sharedStatistics!,
      memory: {
        take: () => {
          const pairs = memoryPairs(notifier.takeChanges(), channelMemory.takeChanges());
          return pairs.length > 0 ? { pairs, generation: sharedMemory!.generation } : undefined;
        },
        pending: () => notifier.changesPending || channelMemory.changed,
      },
      // Notifications for a company go to its shared configuration, signed with its shared secret.
      prepare: (companyIds) => webhooks.ensure(companyIds),
      periodic: () => webhooks.refresh(),
      takeOutcomes: () => dispatch.takeOutcomes(),
      deliver: (events) => {
        const now = clock.now();
        for (const e of events) outbox.enqueue(e, now);
        delivery.kick();
      },
      onFed: () => dispatch.kick(),
      sendSms: (items) => sms.enqueue(items),
      smsRoom: () => Math.max(0, Math.min(1000, sms.maxQueued - sms.queued - sms.inFlight)),
      onWriteError: (e) => app.log.warn({ err: e }, 'Redis step not written: trying again (intake and sending wait)'),
    });
    redisPersistence = durability = persistence;
    (ctx as { durability: Persistence | undefined }).durability = persistence;
    (ctx as { redis: ServerContext['redis'] }).redis = {
      ids: onRedis.ids,
      persistence,
      webhooks,
      blocklist: sharedBlocklist,
      phones: new SharedPhones(options.redis!.client, onRedis.prefix, onRedis.queue.consumer),
    };
  }
  const baseUrl = () => options.publicBaseUrl ?? listenOrigin(app);
  (ctx as { reports: ReportService }).reports = new ReportService(
    {
      engine,
      clock,
      random,
      tokenKey: reportTokenKey,
      baseUrl,
      generators: options.reportGenerators ?? {},
      businessesOf: (companyId) =>
        engine
          .businesses()
          .map((b) => b.id)
          .filter((b) => tenants.owns(companyId, b)),
      onEvent: (event) => notifier.report(event),
      ...(storage
        ? {
            onChange: () => {
              reportsChanged = true;
              durability?.schedule();
            },
          }
        : {}),
      maxReports: options.maxReports ?? 1000,
      activity,
      maxRows: options.maxReportRows ?? 100_000,
      retentionMs: reportRetentionMs,
    },
    restore?.reports ?? (stored?.get('reports') as ConstructorParameters<typeof ReportService>[1]),
  );
  if (settings.metrics) {
    const persistence = redisPersistence;
    const redisSource =
      onRedis && persistence
        ? {
            redis: {
              ...(options.redis?.syncState ? { syncState: options.redis.syncState } : {}),
              stepFailures: () => persistence.failures,
              backlog: () => persistence.backlog,
              heldContacts: () => onRedis.shared.open,
            },
          }
        : {};
    metrics = createMetrics(engine, { outboxSize: () => outbox.size, smsQueued: () => sms.queued, ...redisSource }, options.processMetrics ?? true);
    (ctx as { metrics: typeof metrics }).metrics = metrics;
  }

  // Later events from the provider.
  let detached = false;
  const steering = channelSteering(engine, () => dispatch.kick(), app.log);
  channel.attach(
    {
      messageStatus: (u) => void (detached || notifier.laterStatus(u)),
      attendanceClosed: (r) => void (detached || notifier.attendance(r)),
      smsStatus: (u) => void (detached || notifier.smsStatus(u.smsId, u.status, u.reason ?? null, u.at)),
      smsReply: (r) => void (detached || notifier.smsReply(r.smsId, r.text, r.at)),
      templateStatus: (u) => {
        if (detached) return;
        dashboard?.channelTemplate(u);
        steering.templateStatus(u);
      },
      numberLimits: (u) => {
        if (detached) return;
        dashboard?.channelNumber(u);
        steering.numberLimits(u);
      },
      numberQuality: (u) => {
        if (detached) return;
        dashboard?.channelNumber(u);
      },
      // Another instance may have sent what the provider reports on: read what the fleet remembers.
      ...(sharedMemory ? { recall: (ids: Parameters<typeof notifier.recall>[0]) => notifier.recall(ids) } : {}),
      // The provider's webhook or receipt is acknowledged once what it did is on disk (in Redis).
      ...(storage || onRedis
        ? {
            written: () =>
              durability!.commit().then(
                () => true,
                () => false,
              ),
          }
        : {}),
    },
    channelMemory,
  );

  // Bodies: JSON only, decoded by the contract (size limit, every problem at `$`), large ones in slices.
  installJsonBodyParser(app, maxBodyBytes);
  app.setValidatorCompiler(() => () => true);

  const knownPaths = new Map<string, string[]>();
  app.addHook('onRoute', (route) => {
    const path = route.url.endsWith('/') ? route.url : `${route.url}/`;
    const methods = knownPaths.get(path) ?? [];
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) if (!methods.includes(m) && m !== 'HEAD') methods.push(m);
    knownPaths.set(path, methods);
  });
  installErrorHandlers(app, () => knownPaths);
  installAuth(app, tenants, new Set(['/metrics', '/metrics/', ...inboundPaths(channel.inbound ?? []), ...(dashboard ? DASHBOARD_OPEN_PATHS : [])]));
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  if (metrics) {
    const m = metrics;
    app.addHook('onResponse', async (request, reply) => {
      m.requestDuration.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    });
  }

  messengerRoutes(app, ctx);
  smsRoutes(app, ctx);
  configRoutes(app, ctx);
  reportRoutes(app, ctx, baseUrl);
  operatorRoutes(app, ctx);
  blocklistRoutes(app, ctx);
  inboundRoutes(app, channel.inbound ?? [], maxBodyBytes);
  if (dashboard) {
    dashboardRoutes(app, ctx, dashboard);
    dashboard.start();
  }
  const metricsEndpoint: MetricsEndpoint | undefined = metrics && settings.metrics ? serveMetrics(app, metrics.registry, settings.metrics, settings.connections) : undefined;

  notifier.start(Math.max(10, Math.min(1000, batchIntervalMs)));
  // A broken invariant of the dispatch queue (a bug): the engine repairs it and goes on; say so loudly.
  const offAnomaly = engine.onAnomaly((a) => app.log.error({ at: a.at, anomaly: a.message }, 'dispatch queue anomaly'));

  const snapshot = (): SnapshotFile => ({
    format: SERVER_SNAPSHOT_FORMAT,
    version: SERVER_SNAPSHOT_VERSION,
    takenAt: Date.now(),
    engine: engine.snapshot(),
    server: {
      version: 1,
      nextContactId: ctx.nextContactId,
      notifier: notifier.snapshot(),
      outbox: outbox.snapshot(),
      reports: ctx.reports.snapshot(),
      sms: sms.pending(),
      blocklist: blocklist.rows(),
      campaignPhones: campaignPhones.rows(),
      activity: activity.rows(),
    },
  });

  // Shutdown, in order: refuse intake; finish sends in flight (their results are reported to the
  // engine, so none is in flight in the snapshot and none goes twice); stop the channel; give
  // deliveries in flight a moment; snapshot engine, outbox and the rest; then Fastify closes.
  app.addHook('preClose', async () => {
    ctx.closing = true;
  });
  app.addHook('onClose', async () => {
    offAnomaly();
    dashboard?.stop();
    await dispatch.stop(drainMs);
    await sms.stop(drainMs);
    await channel.close?.();
    detached = true;
    notifier.stop();
    notifier.flushCampaigns();
    await delivery.stop(Math.min(drainMs, 2000));
    // The results of the drained sends, written before the host closes the store.
    redisPersistence?.stop();
    clearInterval(blocklistTimer);
    await durability?.flush();
    await redisPersistence?.release();
    if (options.snapshotFile !== undefined) {
      writeSnapshotFile(options.snapshotFile, snapshot());
      app.log.info({ file: options.snapshotFile }, 'snapshot written');
    }
  });
  // Restored work starts at once.
  if (restore || storedState !== undefined) {
    dispatch.kick();
    delivery.kick();
  } else if (engine.nextWakeAt() !== null) dispatch.kick();
  // On Redis: work waiting in the shared queue (and any dead instance's) starts at once.
  redisPersistence?.start();

  const control: SendpoolControl = {
    engine,
    channel,
    snapshot,
    webhookSecret: (companyId) => notifier.secretOf(companyId),
    stats: () => ({
      dispatch: engine.stats(),
      webhooksPending: outbox.size,
      webhooksDelivered: counters.delivered,
      webhooksDeadLettered: counters.deadLettered,
      smsQueued: sms.queued,
      smsInFlight: sms.inFlight,
    }),
    idle: () => {
      const s = engine.stats();
      const shared = onRedis === undefined || (onRedis.shared.open === 0 && redisPersistence!.heldEvents === 0);
      return shared && s.queued + s.waitingRetry + s.inFlight === 0 && dispatch.inFlight === 0 && sms.queued === 0 && sms.inFlight === 0 && outbox.size === 0;
    },
    flushCampaignStatistics: () => notifier.flushCampaigns(),
    wake: () => dispatch.kick(),
    metricsAddress: () => metricsEndpoint?.address() ?? null,
  };
  app.decorate('sendpool', control);
  return app as unknown as SendpoolServer;
}

/** The channel memory's part of a durable step: its rows since the last one, if any. */
function channelMemoryStep(memory: ChannelMemoryStore): { channelMemory?: ChannelMemoryChanges } {
  const changes = memory.takeChanges();
  return changes ? { channelMemory: changes } : {};
}

/** `http://host:port` of the listening socket (IPv6 in brackets), or a placeholder before listen. */
function listenOrigin(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return 'http://127.0.0.1';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
}

/** The shared queue's parts of an instance of the server on Redis. */
function sharedQueueParts(options: RedisServerOptions, engine: Engine) {
  const root = options.prefix ?? 'sendpool:';
  const prefix = `${root}{queue}:`;
  const queue = new ContactQueue({
    client: options.client,
    consumer: options.consumer ?? uuidV4(cryptoRandom),
    prefix,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
  });
  const prefetch = options.prefetchContacts ?? 2_000;
  return { queue, prefetch, root, prefix, shared: new SharedDispatch(queue, engine, { prefetchContacts: prefetch }), ids: new ContactIdBlocks(options.client, `${prefix}contact-id`) };
}
