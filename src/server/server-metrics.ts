/**
 * The server's metrics (metrics.ts) over its parts, and how /metrics is served (the metrics
 * feature's options: the registry, who may scrape, the listener of its own if any).
 *
 * Made last, once the backend is attached: its gauges read the parts and the backend's own
 * sources (on Redis, its shared state, which exists only once attached). The parts made before
 * count into it through `MetricsOf` (server-env.ts), read when they count: what happens while
 * buildServer builds (restored events put in the outbox again) is not counted, as it never was.
 */
import type { Outbox } from '../events/outbox.js';
import type { MetricsFeatureOptions } from './features/metrics.js';
import { EARLY_METRICS, metricsListener, type EarlyMetrics } from './metrics-access.js';
import { createMetrics, type ServerMetrics } from './metrics.js';
import type { Notifier } from './notifier.js';
import type { NumberIncidents } from './number-incidents.js';
import type { ServerSettings } from './resolve-options.js';
import type { BuildKit } from './server-env.js';
import type { SmsWorker } from './sms-worker.js';

export interface MetricsParts {
  readonly outbox: Outbox;
  readonly notifier: Notifier;
  readonly sms: SmsWorker;
  readonly incidents: NumberIncidents;
}

export interface MeteredServer {
  readonly metrics: ServerMetrics;
  /** The metrics feature's options. */
  readonly feature: MetricsFeatureOptions;
}

/** The metrics `settings.metrics` asks for (undefined: /metrics is off). */
export function createServerMetrics(kit: BuildKit, settings: ServerSettings, parts: MetricsParts): MeteredServer | undefined {
  const access = settings.metrics;
  if (access === undefined) return undefined;
  const { options, backend } = kit;
  const { outbox, notifier, sms, incidents } = parts;
  const metrics = createMetrics(
    kit.env.engine,
    {
      outboxSize: () => outbox.size + notifier.unbuilt,
      smsQueued: () => sms.queued,
      blocked: () => incidents.list(),
      deadLetters: () => backend.deadLetters.counts(),
      ...backend.metricsSources(),
    },
    options.processMetrics ?? true,
  );
  // A listener `runServer` opened before the server (a symbol no host spells: metrics-access.ts).
  const early = (options as { [EARLY_METRICS]?: EarlyMetrics })[EARLY_METRICS];
  const { listen } = access;
  const listener = listen === undefined ? undefined : metricsListener({ ...access, listen }, metrics.registry, settings.connections, early);
  return { metrics, feature: { registry: metrics.registry, access, listener } };
}
