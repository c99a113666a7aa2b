/**
 * The checked form of the options `buildServer` validates before it builds anything: connection
 * limits, access to /metrics, the dashboard, the public origin, the report token key and the bounds of report
 * data. Every problem is reported at once in a {@link ServerOptionsError}.
 */
import type { Problem } from '../core/problems.js';
import { resolveConnections, type ResolvedConnections } from './connections.js';
import { resolveDashboard } from './dashboard/options.js';
import type { DashboardOptions } from './dashboard/options.js';
import { resolveMetrics, type ResolvedMetrics } from './metrics-access.js';
import { integerProblem, publicBaseUrlProblem, reportTokenKeyProblem } from './lib/option-checks.js';
import type { BuildServerOptions } from './options.js';
import { ServerOptionsError } from './ports/errors.js';

/** Options as the server uses them. */
export interface ServerSettings {
  readonly connections: ResolvedConnections;
  /** Undefined when /metrics is off. */
  readonly metrics: ResolvedMetrics | undefined;
  /** Undefined when the dashboard is off. */
  readonly dashboard: DashboardOptions | undefined;
}

/** Checks the options; throws {@link ServerOptionsError} with every problem. */
export function resolveServerOptions(options: BuildServerOptions): ServerSettings {
  const problems: Problem[] = [];
  const connections = resolveConnections(options.connections, problems);
  const metrics = resolveMetrics(options.metrics, problems);
  const dashboard = resolveDashboard(options.dashboard, problems);
  const more = [
    options.publicBaseUrl === undefined ? undefined : publicBaseUrlProblem('publicBaseUrl', options.publicBaseUrl),
    options.reportTokenKey === undefined ? undefined : reportTokenKeyProblem('reportTokenKey', options.reportTokenKey),
    ...(['reportRetentionMs', 'maxReportMessages', 'maxReportAttendances', 'maxReportRows'] as const).map((k) =>
      options[k] === undefined ? undefined : integerProblem(k, options[k], k === 'maxReportMessages' || k === 'maxReportAttendances' ? 0 : 1, Number.MAX_SAFE_INTEGER),
    ),
    ...(['alreadySentWindowMs', 'failureWindowMs'] as const).map((k) => (options[k] === undefined ? undefined : integerProblem(k, options[k], 0, Number.MAX_SAFE_INTEGER))),
  ];
  for (const p of more) if (p) problems.push(p);
  if (problems.length > 0) throw new ServerOptionsError(problems);
  return { connections, metrics, dashboard };
}
