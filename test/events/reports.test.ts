import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ReportTracker, buildReportError, buildReportReady, isReportType, parseReportType } from '../../src/events/reports.js';
import { REPORT_TOKEN_TTL_MS, issueReportToken, reportDownloadUrl, verifyReportToken } from '../../src/events/report-token.js';
import { REPORT_TYPES, ReportErrorSchema, ReportReadySchema, ReportEventSchema } from '../../src/events/schemas/report.js';
import { validatePayload } from '../../src/events/validate.js';
import { ArgumentError, isArgumentError } from '../../src/core/errors.js';
import { T0, expectRefusedOrValid, seededRandom } from './helpers.js';

const KEY = 'host-report-key';

describe('report events', () => {
  for (const reportType of REPORT_TYPES) {
    it(`builds valid report.ready and report.error for ${reportType}`, () => {
      const report = { reportId: 12, reportType, reportName: `${reportType}.csv`, companyId: 3, createdAt: T0 };
      const ready = buildReportReady(report, { now: T0 + 5_000, baseUrl: 'https://api.example.com/', tokenKey: KEY, random: seededRandom(1) });
      const error = buildReportError(report, 'Timeout querying the history', seededRandom(2));
      expect(validatePayload(ReportReadySchema, ready)).toEqual([]);
      expect(validatePayload(ReportErrorSchema, error)).toEqual([]);
      expect(validatePayload(ReportEventSchema, error)).toEqual([]);
      expect(ready.file_url).toMatch(/^https:\/\/api\.example\.com\/reports\/12\/download\/\?token=v1\.12\.3\./);
      expect(ready.created_at).toBe('2025-01-01T09:00:00.000-03:00');
    });
  }

  it('validates report types from input', () => {
    expect(isReportType('tickets-summary')).toBe(true);
    expect(parseReportType('tickets')).toMatchObject({ ok: false, problems: [{ path: '$.report_type' }] });
    expect(validatePayload(ReportReadySchema, { report_type: 'x' }).some((p) => p.path === '$.report_type')).toBe(true);
  });

  it('a report is processed once and ends ready or error with its event', () => {
    const t = new ReportTracker({ baseUrl: 'https://api.example.com', tokenKey: KEY, random: seededRandom(1) });
    const report = { reportId: 1, reportType: 'numbers' as const, reportName: 'numbers.xlsx', companyId: 9, createdAt: T0 };
    expect(t.finish(1, { ok: true }, T0)).toEqual({ ok: false, reason: 'unknown-report' });
    expect(t.begin(report)).toBe(true);
    expect(t.begin(report)).toBe(false);
    expect(t.status(1)).toBe('processing');
    const done = t.finish(1, { ok: true }, T0 + 1000);
    expect(done.ok && done.event.event).toBe('report.ready');
    expect(t.finish(1, { ok: false, errorMessage: 'late' }, T0 + 2000)).toEqual({ ok: false, reason: 'already-finished', status: 'ready' });
    expect(t.begin(report)).toBe(false);
    t.begin({ ...report, reportId: 2 });
    const failed = t.finish(2, { ok: false, errorMessage: 'Query failed' }, T0);
    expect(failed.ok && failed.event).toMatchObject({ event: 'report.error', status: 'error', error_message: 'Query failed' });
    expect(t.status(2)).toBe('error');
    expect(() => t.begin({ ...report, reportId: 3, reportType: 'nope' as never })).toThrow(/reportType/);
  });
});

describe('report builders refuse what their schemas would refuse', () => {
  const report = { reportId: 12, reportType: 'numbers' as const, reportName: 'numbers.csv', companyId: 3, createdAt: T0 };
  const ready = (r: typeof report, random = seededRandom(1)) => buildReportReady(r, { now: T0, baseUrl: 'https://api.example.com', tokenKey: KEY, random });
  const error = (r: typeof report, random = seededRandom(1)) => buildReportError(r, 'Query failed', random);

  function thrown(f: () => unknown): ArgumentError {
    try {
      f();
    } catch (e) {
      if (isArgumentError(e)) return e;
      throw e;
    }
    throw new Error('expected an ArgumentError');
  }

  it.each([
    ['reportId', 12.5, 'an integer, got 12.5 (number)'],
    ['reportId', Number.NaN, 'an integer, got NaN (number)'],
    ['reportId', 2 ** 53, 'an integer, got 9007199254740992 (number)'],
    ['companyId', 3.25, 'an integer, got 3.25 (number)'],
    ['reportType', 'tickets', 'one of "licenses", '],
    ['createdAt', Number.POSITIVE_INFINITY, 'a finite epoch time in milliseconds, got Infinity (number)'],
  ] as const)('throws ArgumentError for %s = %s, in both builders, naming the field', (field, value, message) => {
    const bad = { ...report, [field]: value };
    for (const [name, build] of [
      ['buildReportReady', ready],
      ['buildReportError', error],
    ] as const) {
      const random = seededRandom(1);
      const e = thrown(() => build(bad, random));
      expect(e).toBeInstanceOf(ArgumentError);
      expect(e.argument).toBe(`${name}(report.${field})`);
      expect(e.message).toContain(message);
      expect(random.calls).toBe(0); // refused before an event id is drawn
    }
  });

  it('the message of an unknown type lists the known ones', () => {
    const e = thrown(() => error({ ...report, reportType: 'tickets' as never }));
    expect(e.message).toBe(`Expected \`buildReportError(report.reportType)\` to be one of ${REPORT_TYPES.map((t) => JSON.stringify(t)).join(', ')}, got "tickets" (string)`);
  });

  it('any one bad field: an ArgumentError naming it, or a payload that passes the schema', () => {
    const input = { report, now: T0 + 5_000, baseUrl: 'https://api.example.com', tokenTtlMs: 60_000, errorMessage: 'Query failed' };
    const refusedReady = expectRefusedOrValid(input, ReportReadySchema, (i, random) => buildReportReady(i.report, { now: i.now, baseUrl: i.baseUrl, tokenKey: KEY, random, tokenTtlMs: i.tokenTtlMs }));
    const refusedError = expectRefusedOrValid({ report, errorMessage: 'Query failed' }, ReportErrorSchema, (i, random) => buildReportError(i.report, i.errorMessage, random));
    expect(refusedReady).toBeGreaterThan(40);
    expect(refusedError).toBeGreaterThan(30);
  });

  it('the tracker refuses such a report at begin, so finish never builds a bad event', () => {
    const t = new ReportTracker({ baseUrl: 'https://api.example.com', tokenKey: KEY, random: seededRandom(1) });
    expect(() => t.begin({ ...report, reportId: 1.5 })).toThrow(ArgumentError);
    expect(() => t.begin({ ...report, companyId: Number.NaN })).toThrow(/ReportTracker\.begin\(companyId\)/);
    expect(() => t.begin({ ...report, createdAt: Number.NaN })).toThrow(/ReportTracker\.begin\(createdAt\)/);
    expect(t.status(1.5)).toBeUndefined();
    expect(t.begin(report)).toBe(true);
    // A bad `now` at finish throws and leaves the report processing, to be finished again.
    expect(() => t.finish(12, { ok: true }, Number.NaN)).toThrow(/buildReportReady\(o\.now\)/);
    expect(t.status(12)).toBe('processing');
    const done = t.finish(12, { ok: true }, T0);
    expect(done.ok && validatePayload(ReportReadySchema, done.event)).toEqual([]);
  });
});

describe('report download tokens', () => {
  const issue = (now = T0) => issueReportToken({ reportId: 12, companyId: 3, now, key: KEY });
  const verify = (token: string, over: Partial<Parameters<typeof verifyReportToken>[1]> = {}) => verifyReportToken(token, { reportId: 12, companyId: 3, now: T0, keys: [KEY], ...over });

  it('accepts a genuine token until 24 hours after issue, exclusive', () => {
    const token = issue();
    expect(verify(token)).toEqual({ ok: true, reportId: 12, companyId: 3, expiresAt: T0 + REPORT_TOKEN_TTL_MS });
    expect(verify(token, { now: T0 + REPORT_TOKEN_TTL_MS - 1 }).ok).toBe(true);
    expect(verify(token, { now: T0 + REPORT_TOKEN_TTL_MS })).toEqual({ ok: false, reason: 'expired', expiresAt: T0 + REPORT_TOKEN_TTL_MS });
  });

  it('tells expired, tampered, other-company and other-report tokens apart', () => {
    const token = issue();
    const [v, r, c, e, sig] = token.split('.') as [string, string, string, string, string];
    expect(verify(token, { companyId: 4 })).toMatchObject({ ok: false, reason: 'wrong-company' });
    expect(verify(token, { reportId: 13 })).toMatchObject({ ok: false, reason: 'wrong-report' });
    expect(verify([v, r, '4', e, sig].join('.'), { companyId: 4 })).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verify([v, r, c, String(Number(e) + 86_400_000), sig].join('.'))).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verify(token, { keys: ['another key'] })).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verify([v, r, c, `0${e}`, sig].join('.'))).toEqual({ ok: false, reason: 'malformed' });
    expect(verify('garbage')).toEqual({ ok: false, reason: 'malformed' });
    expect(verify(issueReportToken({ reportId: 12, companyId: 3, now: T0, key: 'old' }), { keys: [KEY, 'old'] }).ok).toBe(true);
  });

  it('any change to a token is refused (property)', () => {
    const token = issue();
    fc.assert(
      fc.property(fc.nat(), fc.constantFrom(...'0123456789abcXYZ-_.'), (at, ch) => {
        const i = at % token.length;
        fc.pre(token[i] !== ch);
        const altered = token.slice(0, i) + ch + token.slice(i + 1);
        const verdict = verify(altered);
        expect(verdict.ok).toBe(false);
      }),
    );
  });

  it('builds the spec download path', () => {
    expect(reportDownloadUrl('https://x.test', 5, 'v1.a')).toBe('https://x.test/reports/5/download/?token=v1.a');
  });
});
