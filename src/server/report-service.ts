/**
 * Reports (spec 2.6, 4.5, 6.1): POST /reports/ starts one; it is processed in the background and
 * ends `ready` (file kept for download) or `error`, each sending its event to the company's
 * `url_report_webhook`. `numbers` and `templates` are built from the engine; `official-messages`,
 * `attendance-history` and `attendance-statistics` from the activity log over the request's period;
 * other types (licenses, tickets: data sendpool does not hold) come from generators the host
 * registers, and a type without one ends `report.error` saying so.
 */
import type { Clock } from '../core/clock.js';
import type { Engine } from '../core/engine.js';
import type { RandomSource } from '../events/random.js';
import { ReportTracker, type ReportEvent } from '../events/reports.js';
import type { SecretKey } from '../events/hmac.js';
import type { ReportType } from '../events/schemas/report.js';
import { formatUtcMinus3 } from '../events/datetime.js';
import type { ActivityLogView } from './activity-log.js';
import { attendanceHistory, attendanceStatistics, officialMessages } from './activity-reports.js';
import { csv } from './report-csv.js';
import { ReportError } from './report-error.js';
import type { ReportFile, ReportGenerator } from './report-types.js';
import type { ReportPeriod } from './report-period.js';

/** One report as GET /reports/:id/ shows it. */
/**
 * A report file in a snapshot: text as it is, bytes (xlsx, zip…) as base64 behind a marker prefix,
 * so they survive JSON unchanged.
 */
const BASE64 = 'base64:';

function fileToSnapshot(file: ReportFile): ReportFile {
  return typeof file.body === 'string' && !file.body.startsWith(BASE64) ? file : { ...file, body: BASE64 + Buffer.from(file.body).toString('base64') };
}

function fileFromSnapshot(file: ReportFile): ReportFile {
  return typeof file.body === 'string' && file.body.startsWith(BASE64) ? { ...file, body: new Uint8Array(Buffer.from(file.body.slice(BASE64.length), 'base64')) } : file;
}

export interface ReportRecord {
  readonly reportId: number;
  readonly reportType: ReportType;
  readonly reportName: string;
  readonly companyId: number;
  readonly createdAt: number;
  /** The period asked for (types other than `numbers` and `templates`). */
  readonly period?: ReportPeriod;
  status: 'processing' | 'ready' | 'error';
  errorMessage?: string;
  file?: ReportFile;
}

interface Deps {
  readonly engine: Engine;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly tokenKey: SecretKey;
  /** Public origin for download links (read when a report finishes). */
  readonly baseUrl: () => string;
  readonly generators: Partial<Record<ReportType, ReportGenerator>>;
  readonly businessesOf: (companyId: number) => number[];
  readonly onEvent: (event: ReportEvent) => void;
  /** Called when a report is created, finished or dropped (the durable server writes them then). */
  readonly onChange?: () => void;
  /** Reports kept (oldest dropped first). */
  readonly maxReports: number;
  readonly activity: ActivityLogView;
  /** Most rows of a report file. */
  readonly maxRows: number;
  /** How long the activity log keeps entries: a period's default start is this long before the request. */
  readonly retentionMs: number;
}

/** The reports the server builds itself: two from the engine's state, three from its activity log. */
export const BUILTIN_REPORTS: Partial<Record<ReportType, ReportGenerator>> = {
  numbers: ({ engine, businessIds }) => {
    const own = new Set(businessIds);
    const rows: unknown[][] = [['phone', 'business_id', 'status', 'paused_until', 'throughput_per_hour', 'messaging_limit_24h', 'messages_per_second', 'available']];
    for (const n of engine.numbers()) {
      if (!own.has(n.businessId)) continue;
      rows.push([n.phone, n.businessId, n.status, n.pausedUntil === undefined ? '' : formatUtcMinus3(n.pausedUntil), n.throughputPerHour, n.messagingLimit24h, n.messagesPerSecond, n.available]);
    }
    return { body: csv(rows) };
  },
  templates: ({ engine, businessIds }) => {
    const own = new Set(businessIds);
    const rows: unknown[][] = [['template_id', 'name', 'status', 'paused_until', 'business_ids', 'placeholders']];
    for (const t of engine.templates()) {
      if (!t.businessIds.some((b) => own.has(b))) continue;
      rows.push([t.id, t.name, t.status, t.pausedUntil === undefined ? '' : formatUtcMinus3(t.pausedUntil), t.businessIds.filter((b) => own.has(b)).join(' '), t.placeholders]);
    }
    return { body: csv(rows) };
  },
  'official-messages': officialMessages,
  'attendance-history': attendanceHistory,
  'attendance-statistics': attendanceStatistics,
};

/** Why a type without a generator fails: its data is outside sendpool, and how to plug it in. */
export function noGeneratorMessage(type: ReportType): string {
  return (
    `No generator is registered for report type "${type}" on this server: sendpool does not hold ${type === 'licenses' ? 'licenses' : 'tickets'}. ` +
    `Register one with the buildServer option reportGenerators, e.g. reportGenerators: { "${type}": (context) => ({ body: csvText }) } (docs/server.md, "Reports").`
  );
}

export class ReportService {
  readonly #deps: Deps;
  readonly #tracker: ReportTracker;
  readonly #reports = new Map<number, ReportRecord>();
  #nextId: number;

  constructor(deps: Deps, restored?: { readonly nextId: number; readonly reports: readonly ReportRecord[] }) {
    this.#deps = deps;
    // The base URL is read at finish time: the server's address is known only once it listens.
    this.#tracker = new ReportTracker({ tokenKey: deps.tokenKey, random: deps.random, baseUrl: deps.baseUrl });
    this.#nextId = restored?.nextId ?? 1;
    for (const saved of restored?.reports ?? []) {
      const r: ReportRecord = { ...saved, ...(saved.file ? { file: fileFromSnapshot(saved.file) } : {}) };
      // A report still processing at shutdown is started again: its event was never sent.
      this.#reports.set(r.reportId, r);
      if (r.status === 'processing') this.#start(r);
    }
  }

  /** Starts a report and returns it (status `processing`). */
  create(companyId: number, reportType: ReportType, reportName?: string, period?: ReportPeriod): ReportRecord {
    const reportId = this.#nextId++;
    const record: ReportRecord = {
      reportId,
      reportType,
      reportName: reportName ?? `${reportType}-${reportId}.csv`,
      companyId,
      createdAt: this.#deps.clock.now(),
      ...(period === undefined ? {} : { period }),
      status: 'processing',
    };
    this.#reports.set(reportId, record);
    // The limit is per company: one tenant making many reports must not push out another's links.
    const own = [...this.#reports.values()].filter((r) => r.companyId === companyId);
    for (let k = 0; k < own.length - this.#deps.maxReports; k++) this.#reports.delete(own[k]!.reportId);
    this.#deps.onChange?.();
    this.#start(record);
    return record;
  }

  #start(record: ReportRecord): void {
    this.#tracker.begin({ reportId: record.reportId, reportType: record.reportType, reportName: record.reportName, companyId: record.companyId, createdAt: record.createdAt });
    const generator = this.#deps.generators[record.reportType] ?? BUILTIN_REPORTS[record.reportType];
    setImmediate(() => void this.#generate(record, generator));
  }

  async #generate(record: ReportRecord, generator: ReportGenerator | undefined): Promise<void> {
    {
      let result: { ok: true } | { ok: false; errorMessage: string };
      try {
        if (!generator) throw new ReportError(record.reportType, 'no-generator', noGeneratorMessage(record.reportType));
        record.file = await generator({
          reportId: record.reportId,
          reportType: record.reportType,
          companyId: record.companyId,
          businessIds: this.#deps.businessesOf(record.companyId),
          engine: this.#deps.engine,
          period: record.period,
          activity: this.#deps.activity,
          maxRows: this.#deps.maxRows,
        });
        result = { ok: true };
      } catch (e) {
        const message = e instanceof Error && e.message ? e.message : 'Report generation failed.';
        result = { ok: false, errorMessage: message.slice(0, 500) };
      }
      const finished = this.#tracker.finish(record.reportId, result, this.#deps.clock.now());
      if (!finished.ok) return;
      record.status = finished.event.status;
      if (!result.ok) record.errorMessage = result.errorMessage;
      this.#deps.onChange?.();
      this.#deps.onEvent(finished.event);
    }
  }

  /** How far back the activity log reaches (the default start of a period). */
  get retentionMs(): number {
    return this.#deps.retentionMs;
  }

  /** A report of a company (undefined for another company's: tenants never see each other's). */
  get(companyId: number, reportId: number): ReportRecord | undefined {
    const r = this.#reports.get(reportId);
    return r && r.companyId === companyId ? r : undefined;
  }

  snapshot(): { nextId: number; reports: ReportRecord[] } {
    return {
      nextId: this.#nextId,
      reports: [...this.#reports.values()].map((r) => ({
        ...r,
        ...(r.file ? { file: fileToSnapshot(r.file) } : {}),
      })),
    };
  }
}
