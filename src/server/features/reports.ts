/**
 * The reports feature, under /reports/ (spec 4.5): POST /reports/ `{ report_type, report_name?,
 * start_date?, end_date? }` starts one (202); GET /reports/:id/ shows it; GET
 * /reports/:id/download/?token=… serves the file with the 24 h token of the `report.ready` event.
 * A report of another company is "not found". A Fastify plugin (encapsulated: it adds routes).
 */
import type { FastifyPluginAsync } from 'fastify';
import { problem } from '../../core/problems.js';
import { errorResponse } from '../../contract/responses.js';
import { formatUtcMinus3 } from '../../events/datetime.js';
import { issueReportToken, reportDownloadUrl, verifyReportToken } from '../../events/report-token.js';
import { parseReportType } from '../../events/reports.js';
import type { ServerContext } from '../context.js';
import { answer, fail } from '../http-errors.js';
import { parseReportPeriod } from '../report-period.js';
import type { ReportRecord } from '../report-service.js';

const REPORT_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** What the reports' routes read and write of the server. */
type ReportsContext = Pick<ServerContext, 'backend' | 'clock' | 'reports' | 'reportTokenKey'>;

export interface ReportsFeatureOptions {
  readonly ctx: ReportsContext;
  /** The origin download links start with (`publicBaseUrl`, or the listening address). */
  readonly baseUrl: () => string;
}

function view(ctx: ReportsContext, r: ReportRecord, baseUrl: string) {
  const fileUrl =
    r.status === 'ready' ? reportDownloadUrl(baseUrl, r.reportId, issueReportToken({ reportId: r.reportId, companyId: r.companyId, now: ctx.clock.now(), key: ctx.reportTokenKey })) : null;
  return {
    report_id: r.reportId,
    report_type: r.reportType,
    report_name: r.reportName,
    status: r.status,
    company_id: r.companyId,
    created_at: formatUtcMinus3(r.createdAt),
    file_url: fileUrl,
    error_message: r.errorMessage ?? null,
    start_date: r.period === undefined ? null : formatUtcMinus3(r.period.start),
    end_date: r.period === undefined ? null : formatUtcMinus3(r.period.end),
  };
}

function reportId(text: string): number | undefined {
  return /^[1-9]\d{0,15}$/.test(text) ? Number(text) : undefined;
}

export const reportsFeature: FastifyPluginAsync<ReportsFeatureOptions> = async (app, { ctx, baseUrl }) => {
  app.post('/reports/', async (request, reply) => {
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return answer(reply, errorResponse('invalid_body', [problem('$', 'a JSON object with report_type', body)]));
    }
    const problems = [];
    const { report_type: type, report_name: name, start_date, end_date, ...rest } = body as Record<string, unknown>;
    const parsedType = parseReportType(type);
    if (!parsedType.ok) problems.push(...parsedType.problems);
    const period = parseReportPeriod({ start_date, end_date }, parsedType.ok ? parsedType.value : undefined, ctx.clock.now(), ctx.reports.retentionMs);
    if (!period.ok) problems.push(...period.problems);
    if (name !== undefined && (typeof name !== 'string' || !REPORT_NAME.test(name))) {
      problems.push(problem('$.report_name', 'a file name of 1 to 128 letters, digits, dots, dashes or underscores', name));
    }
    for (const key of Object.keys(rest)) problems.push(problem(`$.${key}`, 'no such field (known: report_type, report_name, start_date, end_date)', rest[key]));
    if (problems.length > 0 || !parsedType.ok || !period.ok) return answer(reply, errorResponse('invalid_body', problems));
    const record = ctx.reports.create(request.companyId, parsedType.value, name as string | undefined, period.period);
    // The report's id is a promise too: it is written before it is given.
    if (!(await ctx.backend.written())) return fail(reply, 'unavailable', [], 'The server could not write the report durably; ask for it again later.');
    return reply.code(202).send(view(ctx, record, baseUrl()));
  });

  app.get<{ Params: { id: string } }>('/reports/:id/', async (request, reply) => {
    const id = reportId(request.params.id);
    const record = id === undefined ? undefined : ctx.reports.get(request.companyId, id);
    if (!record) return fail(reply, 'not_found', [], `No report ${request.params.id}.`);
    return view(ctx, record, baseUrl());
  });

  app.get<{ Params: { id: string }; Querystring: { token?: string } }>('/reports/:id/download/', async (request, reply) => {
    const id = reportId(request.params.id);
    const record = id === undefined ? undefined : ctx.reports.get(request.companyId, id);
    if (id === undefined || !record) return fail(reply, 'not_found', [], `No report ${request.params.id}.`);
    const token = typeof request.query.token === 'string' ? request.query.token : '';
    const verdict = verifyReportToken(token, { reportId: id, companyId: request.companyId, now: ctx.clock.now(), keys: [ctx.reportTokenKey] });
    if (!verdict.ok) {
      if (verdict.reason === 'wrong-company' || verdict.reason === 'wrong-report') return fail(reply, 'not_found', [], `No report ${id}.`);
      return answer(reply, errorResponse('invalid_body', [problem('$.query.token', 'a download token of this report that has not expired', verdict.reason)]));
    }
    if (record.status !== 'ready' || !record.file) return fail(reply, 'not_found', [], `Report ${id} has no file (status ${record.status}).`);
    reply.header('content-type', record.file.contentType ?? 'text/csv; charset=utf-8');
    reply.header('content-disposition', `attachment; filename="${record.reportName}"`);
    return reply.send(typeof record.file.body === 'string' ? record.file.body : Buffer.from(record.file.body));
  });
};
