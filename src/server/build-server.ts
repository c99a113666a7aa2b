/**
 * `buildServer`: the reference server of the service as a Fastify instance a host can embed (add
 * routes, hooks, `inject`, `listen`). It wires the parts: tenants and auth, the contract's
 * parsers, the dispatch worker over the engine and the channel, the notifier and the delivery
 * worker over the outbox, reports, metrics, and the shutdown that snapshots everything.
 *
 * This file makes the parts and hands each to the next, in the order they need each other. Where
 * the state lives is the backend's (backends/choose.ts: memory, sqlite or redis), chosen once;
 * the parts are made over its hooks and handed back to it (`attach`). What the parts do lives with
 * them: the HTTP side (http-setup.ts), the notifications of sends and outcomes
 * (dispatch-notifications.ts), the provider's later events (provider-events.ts), the shutdown
 * (shutdown.ts), and what the host controls (server-control.ts).
 */
import type { FastifyInstance } from 'fastify';
import { systemClock } from '../runtime/system-clock.js';
import { DEFAULT_MAX_BODY_BYTES } from '../contract/limits.js';
import { Outbox } from '../events/outbox.js';
import type { WrittenEvent } from './ports/persistence.js';
import { ActivityLog } from './activity-log.js';
import type { OutgoingSms } from './ports/channel.js';
import type { ServerContext } from './context.js';
import { cryptoRandom } from './crypto-random.js';
import { DeadLetterBook, deadLetterBounds, deadLetterOf, type DeadLetter } from './dead-letters.js';
import { chooseBackend } from './backends/choose.js';
import { Blocklist } from './blocklist.js';
import { CampaignPhones } from './campaign-phones.js';
import { SentPhones } from './sent-phones.js';
import type { ServerContact } from './contacts.js';
import { ChannelMemoryStore } from './channels/memory.js';
import { dispatchNotifications } from './dispatch-notifications.js';
import { createTurns } from './turns.js';
import { DispatchWorker } from './dispatch-worker.js';
import { createFastify, installHttpHooks } from './http-setup.js';
import { DashboardState } from './dashboard/state.js';
import { DASHBOARD_OPEN_PATHS, dashboardRoutes } from './dashboard/routes.js';
import { createMetrics } from './metrics.js';
import { lateFailures } from './late-failures.js';
import { NumberIncidents } from './number-incidents.js';
import { EARLY_METRICS, serveMetrics, type EarlyMetrics, type MetricsEndpoint } from './metrics-access.js';
import { resolveServerOptions } from './resolve-options.js';
import { type CompanyWebhooks, Notifier } from './notifier.js';
import { DEFAULT_ALREADY_SENT_WINDOW_MS, DEFAULT_FAILURE_WINDOW_MS, type BuildServerOptions } from './options.js';
import { ReportService } from './report-service.js';
import { channelSteering } from './channel-steering.js';
import { providerEvents } from './provider-events.js';
import { blocklistRoutes } from './routes/blocklist.js';
import { deadLetterRoutes } from './routes/dead-letters.js';
import { configRoutes } from './routes/config.js';
import { inboundPaths, inboundRoutes } from './routes/inbound.js';
import { messengerRoutes } from './routes/messenger.js';
import { operatorRoutes } from './routes/operator.js';
import { reportRoutes } from './routes/reports.js';
import { smsRoutes } from './routes/sms.js';
import { serverControl, serverSnapshot, type SendpoolServer } from './server-control.js';
import { installShutdown } from './shutdown.js';
import { createSimulatedChannel } from './channels/simulated.js';
import { SmsWorker } from './sms-worker.js';
import { Tenants } from './tenants.js';
import { DeliveryWorker } from './webhooks/delivery-worker.js';

/** Builds the server. Call `listen` on the answer to serve; `close` stops intake, drains, and snapshots. */
export function buildServer(options: BuildServerOptions): SendpoolServer {
  const settings = resolveServerOptions(options);
  const engine = options.engine;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? cryptoRandom;
  const channel = options.channel ?? createSimulatedChannel();
  // The provider's pace for numbers the fleet gives no per-second rate (WhatsApp: 80/s).
  if (channel.numberDefaults !== undefined) engine.setNumberDefaults(channel.numberDefaults);
  const limits = options.limits ?? {};
  const maxBodyBytes = limits.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const allowPrivate = options.allowPrivateWebhookTargets ?? false;
  const drainMs = options.drainTimeoutMs ?? 10_000;
  const restore = options.restore;
  const batchIntervalMs = options.campaignBatchIntervalMs ?? 60_000;
  const failureWindowMs = options.failureWindowMs ?? DEFAULT_FAILURE_WINDOW_MS;
  const storedState = options.stored;
  const stored = storedState?.values;
  const storedKey = stored?.get('reportTokenKey');
  // The key signing download links outlives restarts when the server has a store.
  const reportTokenKey = options.reportTokenKey ?? (typeof storedKey === 'string' ? Buffer.from(storedKey, 'base64') : random.randomBytes(32));
  const maxTracked = options.maxTrackedMessages ?? 1_000_000;
  const app = createFastify(options.logger, random, maxBodyBytes, settings.connections);
  const deadLetterLimits = deadLetterBounds(options.deadLetters);
  // Where the state lives: memory, the embedded database or Redis (backends/choose.ts), chosen once.
  const backend = chooseBackend(options, {
    clock,
    random,
    log: app.log,
    maxTracked,
    batchIntervalMs,
    failureWindowMs,
    // The key the server made outlives restarts (one the host set is the host's to keep).
    madeReportTokenKey: options.reportTokenKey === undefined ? Buffer.from(reportTokenKey as Uint8Array).toString('base64') : undefined,
    deadLetters: deadLetterLimits,
  });
  /**
   * The memory the channel keeps the provider's ids in (docs/channels.md, "What survives a
   * restart"): two entries a message (its platform id, its recipient), so twice the tracked bound.
   */
  const channelMemory = new ChannelMemoryStore(2 * maxTracked, backend.channelMemory);
  channelMemory.load(options.stored?.channelMemory ?? []);
  // Numbers blocked for every message (credentials refused, provider unreachable): said loudly.
  const incidents = new NumberIncidents(app.log, clock);

  const tenants = new Tenants(options.apiKeys ?? [], engine, options.defaultCompanyId ?? 1);
  // What the operator dashboard keeps besides the engine's views (output samples, causes, campaigns' pools).
  const dashboard = settings.dashboard ? new DashboardState(engine, clock, settings.dashboard) : undefined;
  const outbox = restore ? Outbox.restore(restore.outbox, { random, ...options.outbox }) : new Outbox({ random, ...options.outbox });
  const counters = { delivered: 0, deadLettered: 0 };
  // Dead-lettered events, kept for an operator to see and replay (dead-letters.ts): in this process
  // (written with each durable step), or on Redis the fleet's.
  const deadLetterBook = new DeadLetterBook(options.deadLetters, backend.tracksChanges);
  deadLetterBook.load((restore?.deadLetters ?? storedState?.deadLetters ?? []) as readonly DeadLetter[]);
  let metrics: ReturnType<typeof createMetrics> | undefined;

  const delivery = new DeliveryWorker(
    {
      outbox,
      clock,
      secretOf: (companyId) => notifier.secretOf(companyId),
      allowPrivateTargets: allowPrivate,
      userAgent: 'sendpool-webhooks/1',
      onAttempt: (family, result) => metrics?.webhookAttempts.inc({ family, result }),
      // A request's ENQUEUED notifications are built as the receiver has room (enqueued-runs.ts).
      feed: (now) => notifier.feedRuns(now),
      onOutcomes: (outcomes) => {
        // A run's notification has no record of its own: its run's goes when the run ends (onRunDone).
        const ended = outcomes.filter((o) => !notifier.runEventEnded(o.event.id, o.kind === 'dead-lettered'));
        if (ended.length > 0) backend.persistence.delivered(ended.map((o) => o.event.id));
        dashboard?.delivered(outcomes);
        for (const o of outcomes) {
          if (o.kind === 'delivered') counters.delivered++;
          else {
            counters.deadLettered++;
            app.log.warn({ family: o.event.family, eventId: o.event.id, attempts: o.attempts, lastError: o.lastError }, 'webhook dead-lettered');
            // In the step that ends its delivery (persistence.delivered above, or its run's record).
            backend.deadLetters.deadLettered(deadLetterOf(o));
            options.onDeadLetter?.(o);
          }
          metrics?.webhookOutcomes.inc({ family: o.event.family, outcome: o.kind });
        }
      },
    },
    options.delivery,
  );
  const blocklist = new Blocklist(backend.blocklistTracksChanges);
  const campaignPhones = new CampaignPhones(backend.tracksChanges);
  blocklist.load(restore?.blocklist ?? storedState?.blocklist ?? []);
  campaignPhones.load(restore?.campaignPhones ?? storedState?.campaignPhones ?? []);
  // The phones each business took per template type (already_sent); on Redis the fleet's (shared-phones.ts).
  const sentPhones = new SentPhones({ windowMs: options.alreadySentWindowMs ?? DEFAULT_ALREADY_SENT_WINDOW_MS, trackChanges: backend.tracksChanges });
  sentPhones.load(restore?.sentPhones ?? storedState?.sentPhones ?? [], clock.now());
  /** A contact ended FAILED or EXPIRED without reaching its recipient: its phone is the business's to send again. */
  const releaseSent = (contact: ServerContact, businessId: number, typeId: number) => backend.releaseSent(contact, businessId, typeId);
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
    trackChanges: backend.tracksChanges,
    onChange: () => backend.persistence.schedule(),
  });
  activity.load([...(restore?.activity ?? []), ...(storedState?.activity ?? [])]);
  const notifier = new Notifier(
    {
      activity,
      clock,
      random,
      outbox,
      onEnqueued: () => delivery.kick(),
      batchIntervalMs,
      failureWindowMs,
      maxTracked,
      secrets: options.webhookSecrets ?? {},
      onEvent: (family, count) => metrics?.webhookEvents.inc({ family }, count),
      onRunError: (runId, index, error) => app.log.error({ err: error, runId, index }, 'an ENQUEUED notification could not be built; skipped'),
      ...backend.notifier,
      // A failure the provider reports later goes through the error table (late-failures.ts).
      onLateFailure: (t, messageId, code) => late(t, messageId, code),
      onOptOut: (companyId, phone, at) => {
        if (blocklist.add(companyId, phone, at, 'reply')) backend.blocklistChanged();
      },
      // A campaign's phones are kept for as long as its statistics keep its contacts.
      onCampaignSettled: (companyId, campaignId) => campaignPhones.drop(companyId, campaignId),
    },
    restore?.notifier,
  );
  if (storedState) notifier.loadStored(storedState);
  const notifications = dispatchNotifications({ notifier, clock, fleet: backend.fleet, ended: releaseSent });
  // The channel's answers and reports, handled in turns of the event loop (turns.ts).
  // A throw there is a bug: logged, and the provider's event it came with is not acknowledged.
  const turns = createTurns((e) => app.log.error({ err: e }, 'a channel answer or provider report was not handled'));
  const dispatch = new DispatchWorker(
    {
      later: (work) => turns.later(work),
      engine,
      channel,
      clock,
      ...backend.dispatch,
      rateOf: perSecondRates(engine, clock),
      onHandOut: (messages) => {
        // On Redis, hand-outs are written (with the step `beforeSend` waits for) before any is sent.
        backend.fleet.handedOut(messages);
        dashboard?.handedOut(messages);
        if (!metrics) return;
        for (const m of messages) metrics.assigned(m.phone);
      },
      onResult: (m, outcome, result) => {
        // The result is written in this turn's step (nobody waits for it; a crash before re-sends it).
        backend.persistence.schedule();
        metrics?.sent(m.phone, result.ok ? result.effect : 'ignored');
        incidents.result(m.phone, outcome);
        if (result.ok) notifications.result(m, outcome, result);
      },
      onOutcomes: (outcomes) => notifications.outcomes(outcomes),
    },
    options.dispatch,
  );
  const late = lateFailures({
    engine,
    clock,
    log: app.log,
    incidents,
    resubmit: (submission, contact, handout) => {
      backend.fleet.resubmit(submission, contact, handout);
      // The contact goes again: its FAILED, recorded next, keeps it remaining in the statistics.
      notifier.sendingAgain();
      backend.persistence.schedule();
      dispatch.kick();
    },
    retryPending: (contact, campaignId, retryIndex) => backend.fleet.about(contact, () => notifier.retryPending(contact, campaignId, retryIndex)),
    ...(options.failureWindowMs !== undefined ? { failureWindowMs: options.failureWindowMs } : {}),
    onOutcome: (outcome) => metrics?.lateFailures.inc({ outcome }),
    onEnded: (contact, again) => releaseSent(contact, again.businessId, again.typeId),
  });
  /** Webhook events and runs written with their step (or read back, or claimed from Redis): delivery starts. */
  const deliver = (records: readonly WrittenEvent[]) => {
    notifier.written(records);
    delivery.kick();
  };
  const storedWebhooks = stored?.get('webhooks');
  if (Array.isArray(storedWebhooks)) notifier.loadWebhooks(storedWebhooks as CompanyWebhooks[]);
  // Events written but not known delivered go out (again): at least once, deduplicable by id.
  deliver((storedState?.outbox ?? []).map(([, record]) => record as WrittenEvent));
  // SMS written and not answered by the gateway go (again): at least once.
  const storedSms = (storedState?.sms ?? []).map(([, item]) => item as OutgoingSms);
  const sms = new SmsWorker(channel, notifier, options.sms, [...(restore?.sms ?? []), ...storedSms], backend.smsAnswered);
  const baseUrl = () => options.publicBaseUrl ?? listenOrigin(app);
  const reports = new ReportService(
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
      ...(backend.reportsChanged ? { onChange: backend.reportsChanged } : {}),
      maxReports: options.maxReports ?? 1000,
      activity,
      maxRows: options.maxReportRows ?? 100_000,
      retentionMs: reportRetentionMs,
    },
    restore?.reports ?? (stored?.get('reports') as ConstructorParameters<typeof ReportService>[1]),
  );
  const ctx: ServerContext = {
    engine,
    channel,
    clock,
    random,
    tenants,
    notifier,
    outbox,
    get deadLetters() {
      return backend.deadLetters;
    },
    blocklist,
    campaignPhones,
    sentPhones,
    dispatch,
    sms,
    reports,
    get metrics() {
      return metrics;
    },
    limits,
    urlPolicy: { allowPrivateHosts: allowPrivate },
    maxQueuedContacts: options.maxQueuedContacts ?? 1_000_000,
    maxPendingWebhooks: options.maxPendingWebhooks ?? 1_000_000,
    reportTokenKey,
    backend,
    refreshOutput: options.redis?.refreshOutput,
    closing: false,
    incidents,
  };
  backend.attach({
    engine,
    notifier,
    dispatch,
    sms,
    channelMemory,
    blocklist,
    campaignPhones,
    sentPhones,
    activity,
    reports,
    deadLetterBook,
    deliver,
    secrets: options.webhookSecrets ?? {},
    log: app.log,
    failClosed: (because) => {
      ctx.closing = true;
      ctx.closedBecause = because;
    },
  });
  if (settings.metrics) {
    metrics = createMetrics(
      engine,
      {
        outboxSize: () => outbox.size + notifier.unbuilt,
        smsQueued: () => sms.queued,
        blocked: () => incidents.list(),
        deadLetters: () => backend.deadLetters.counts(),
        ...backend.metricsSources(),
      },
      options.processMetrics ?? true,
    );
  }
  // Later events from the provider.
  const steering = channelSteering(engine, () => dispatch.kick(), app.log);
  const provider = providerEvents({ notifier, steering, dashboard, turns, recall: backend.recallsSends, commit: backend.durableCommit });
  channel.attach(provider.sink, channelMemory);
  installHttpHooks(app, {
    tenants,
    maxBodyBytes,
    openPaths: new Set(['/metrics', '/metrics/', ...inboundPaths(channel.inbound ?? []), ...(dashboard ? DASHBOARD_OPEN_PATHS : [])]),
    metrics,
  });

  messengerRoutes(app, ctx);
  smsRoutes(app, ctx);
  configRoutes(app, ctx);
  reportRoutes(app, ctx, baseUrl);
  operatorRoutes(app, ctx);
  blocklistRoutes(app, ctx);
  deadLetterRoutes(app, ctx);
  inboundRoutes(app, channel.inbound ?? [], maxBodyBytes);
  if (dashboard) {
    dashboardRoutes(app, ctx, dashboard);
    dashboard.start();
  }
  const metricsEndpoint: MetricsEndpoint | undefined =
    metrics && settings.metrics ? serveMetrics(app, metrics.registry, settings.metrics, settings.connections, (options as { [EARLY_METRICS]?: EarlyMetrics })[EARLY_METRICS]) : undefined;

  notifier.start(Math.max(10, Math.min(1000, batchIntervalMs)));
  // A broken invariant of the dispatch queue (a bug): the engine repairs it and goes on; say so loudly.
  const offAnomaly = engine.onAnomaly((a) => app.log.error({ at: a.at, anomaly: a.message }, 'dispatch queue anomaly'));

  const snapshot = () => serverSnapshot(ctx, activity);
  installShutdown(app, ctx, {
    drainMs,
    delivery,
    dashboard,
    offAnomaly,
    detach: provider.detach,
    settleReports: () => turns.settled(),
    backend,
    snapshotFile: options.snapshotFile,
    snapshot,
  });
  // The backend says what it lost at start, and starts the work waiting in shared state (Redis).
  backend.start();
  // Restored work starts at once.
  if (restore || storedState !== undefined) {
    dispatch.kick();
    delivery.kick();
  } else if (engine.nextWakeAt() !== null) dispatch.kick();

  const control = serverControl(ctx, { snapshot, counters, backendIdle: () => backend.idle(), metricsAddress: () => metricsEndpoint?.address() ?? null });
  app.decorate('sendpool', control);
  // Fastify's `decorate` answers the instance's own type: assigning the same value again gives the decorated type.
  return Object.assign(app, { sendpool: control });
}

/**
 * Each number's per-second rate (0 without one), for the pace sends leave at: read from the engine
 * at most once a second, and again at once for a phone it did not know (a fleet replaced at run time).
 */
function perSecondRates(engine: BuildServerOptions['engine'], clock: { now(): number }): (phone: string) => number {
  let rates = new Map<string, number>();
  let readAt = Number.NEGATIVE_INFINITY;
  const read = (now: number) => {
    rates = new Map(engine.numbers().map((n) => [n.phone, n.messagesPerSecond ?? 0]));
    readAt = now;
  };
  return (phone) => {
    const now = clock.now();
    if (now - readAt >= 1000 || (!rates.has(phone) && now !== readAt)) read(now);
    return rates.get(phone) ?? 0;
  };
}

/** `http://host:port` of the listening socket (IPv6 in brackets), or a placeholder before listen. */
function listenOrigin(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return 'http://127.0.0.1';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
}
