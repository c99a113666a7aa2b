/**
 * The report service (report-service.ts) of the server: the company's businesses it may report
 * on, the `report.ready` events it sends through the notifier, the activity log it reads, its
 * bounds, and the reports a snapshot or the store kept.
 */
import type { ActivityLog } from './activity-log.js';
import type { Notifier } from './notifier.js';
import { ReportService } from './report-service.js';
import type { BuildKit } from './server-env.js';
import type { Tenants } from './tenants.js';

export interface ReportsParts {
  readonly tenants: Tenants;
  readonly notifier: Notifier;
  readonly activity: ActivityLog;
  /** The origin download links start with. */
  readonly baseUrl: () => string;
}

export function createReports(kit: BuildKit, parts: ReportsParts): ReportService {
  const { env, options, backend } = kit;
  const { engine } = env;
  const { tenants, notifier } = parts;
  return new ReportService(
    {
      engine,
      clock: env.clock,
      random: env.random,
      tokenKey: env.reportTokenKey,
      baseUrl: parts.baseUrl,
      generators: options.reportGenerators ?? {},
      businessesOf: (companyId) =>
        engine
          .businesses()
          .map((b) => b.id)
          .filter((b) => tenants.owns(companyId, b)),
      onEvent: (event) => notifier.report(event),
      ...(backend.reportsChanged ? { onChange: backend.reportsChanged } : {}),
      maxReports: options.maxReports ?? 1000,
      activity: parts.activity,
      maxRows: options.maxReportRows ?? 100_000,
      retentionMs: env.reportRetentionMs,
    },
    options.restore?.reports ?? (options.stored?.values.get('reports') as ConstructorParameters<typeof ReportService>[1]),
  );
}
