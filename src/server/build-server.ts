/**
 * `buildServer`: the reference server of the service as a Fastify instance a host can embed (add
 * routes, hooks, `inject`, `listen`). It composes the parts, each made by a module of its own, in
 * the order they need each other: the options resolved (server-env.ts), where the state lives (the
 * backend, chosen once: backends/choose.ts), the books it keeps (books.ts), the notifier
 * (server-notifier.ts), the delivery of webhooks (webhook-delivery.ts), the dispatch side
 * (dispatch-side.ts), reports (server-reports.ts), the backend given the parts (`attach`), the
 * metrics (server-metrics.ts), and the context the features are given (server-context.ts).
 *
 * Then the HTTP API, one plugin of plugins (features/api.ts: the hooks every route goes through,
 * then each feature), and the shutdown (shutdown.ts), registered last so that it runs first when
 * the instance closes. Plugins load when the instance becomes ready (`ready`, `listen`, `inject`);
 * the instance's error answers (http-setup.ts) and `server.sendpool` are there at once.
 */
import { chooseBackend } from './backends/choose.js';
import { openBooks, pendingSms } from './books.js';
import { createDispatchSide } from './dispatch-side.js';
import { sendpoolApi } from './features/api.js';
import { openDashboard } from './features/dashboard.js';
import { createFastify, listenOrigin } from './http-setup.js';
import { NumberIncidents } from './number-incidents.js';
import type { BuildServerOptions } from './options.js';
import { resolveServerOptions } from './resolve-options.js';
import { serverControl, serverSnapshot, type SendpoolServer } from './server-control.js';
import { createServerContext } from './server-context.js';
import { backendEnv, serverEnv, type BuildKit } from './server-env.js';
import { createServerMetrics, type MeteredServer } from './server-metrics.js';
import { createNotifier, type LateFailureHook } from './server-notifier.js';
import { createReports } from './server-reports.js';
import { shutdown } from './shutdown.js';
import { SmsWorker } from './sms-worker.js';
import { Tenants } from './tenants.js';
import { createDelivery, openOutbox } from './webhook-delivery.js';

/** Builds the server. Call `listen` on the answer to serve; `close` stops intake, drains, and snapshots. */
export function buildServer(options: BuildServerOptions): SendpoolServer {
  const settings = resolveServerOptions(options);
  const env = serverEnv(options);
  const { engine, channel, clock, random } = env;
  // The provider's pace for numbers the fleet gives no per-second rate (WhatsApp: 80/s).
  if (channel.numberDefaults !== undefined) engine.setNumberDefaults(channel.numberDefaults);
  const app = createFastify(options.logger, random, env.maxBodyBytes, settings.connections);
  const { log } = app;
  // Where the state lives: memory, the embedded database or Redis (backends/choose.ts), chosen once.
  const backend = chooseBackend(options, backendEnv(env, options, log));
  // What the operator dashboard keeps besides the engine's views (samples, causes, campaigns' pools), and its files.
  const dashboard = openDashboard(engine, clock, settings.dashboard);
  // The metrics are made last (server-metrics.ts says why): the parts read them when they count.
  let metered: MeteredServer | undefined;
  const kit: BuildKit = { env, options, backend, log, metrics: () => metered?.metrics, dashboard: dashboard?.state };
  const books = openBooks(kit);
  // Numbers blocked for every message (credentials refused, provider unreachable): said loudly.
  const incidents = new NumberIncidents(log, clock);
  const tenants = new Tenants(options.apiKeys ?? [], engine, options.defaultCompanyId ?? 1);
  const outbox = openOutbox(env, options);
  // The notifier wakes the delivery worker and hands the provider's late failures to the dispatch
  // side. Both call the notifier, so they are made after it, before anything is enqueued or reported.
  const onEnqueued = () => delivery.worker.kick();
  const onLateFailure: LateFailureHook = (tracked, messageId, code) => void side.late(tracked, messageId, code);
  const notifier = createNotifier(kit, { books, outbox, onEnqueued, onLateFailure });
  const delivery = createDelivery(kit, { outbox, notifier });
  const side = createDispatchSide(kit, { notifier, incidents });
  const { dispatch, provider } = side;
  // What a snapshot kept unfinished goes again: SMS (books.ts); what a store kept, once the backend is given the parts.
  const sms = new SmsWorker(channel, notifier, options.sms, pendingSms(options), backend.smsAnswered);
  const baseUrl = () => options.publicBaseUrl ?? listenOrigin(app);
  const reports = createReports(kit, { tenants, notifier, activity: books.activity, baseUrl });
  // The context holds what `attach` makes (the backend's dead letters), so it is made after; a
  // durable write fails (failClosed) only once the server runs.
  const failClosed = (because: string) => {
    ctx.closing = true;
    ctx.closedBecause = because;
  };
  const secrets = options.webhookSecrets ?? {};
  backend.attach({ engine, notifier, dispatch, sms, reports, ...books, deliver: delivery.deliver, secrets, log, failClosed });
  metered = createServerMetrics(kit, settings, { outbox, notifier, sms, incidents });
  const ctx = createServerContext(kit, { tenants, notifier, incidents, outbox, books, dispatch, sms, reports });
  // Later events from the provider.
  channel.attach(provider.sink, books.channelMemory);

  // The HTTP API: the hooks every route goes through, then the features (features/api.ts).
  void app.register(sendpoolApi, { ctx, baseUrl, maxBodyBytes: env.maxBodyBytes, dashboard, metrics: metered?.feature });
  // A broken invariant of the dispatch queue (a bug): the engine repairs it and goes on; say so loudly.
  const offAnomaly = engine.onAnomaly((a) => log.error({ at: a.at, anomaly: a.message }, 'dispatch queue anomaly'));
  const snapshot = () => serverSnapshot(ctx, books.activity, side.notifications);
  // Registered last, so that it runs first when the instance closes (shutdown.ts).
  void app.register(shutdown, { ctx, kit, delivery: delivery.worker, side, offAnomaly, snapshot });

  dashboard?.state.start();
  notifier.start(Math.max(10, Math.min(1000, env.batchIntervalMs)));
  // The backend says what it lost at start, and starts the work waiting in shared state (Redis).
  backend.start();
  // Restored work starts at once.
  if (options.restore || options.stored !== undefined) {
    dispatch.kick();
    delivery.worker.kick();
  } else if (engine.nextWakeAt() !== null) dispatch.kick();
  const metricsAddress = () => metered?.feature.listener?.address() ?? null;
  const control = serverControl(ctx, { snapshot, counters: delivery.counters, backend, metricsAddress });
  app.decorate('sendpool', control);
  // Fastify's `decorate` answers the instance's own type: assigning the same value again gives the decorated type.
  return Object.assign(app, { sendpool: control });
}
