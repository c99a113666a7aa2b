/**
 * The temporary token of a report download link (spec 5.3, 6.1, 8.3): valid 24 hours, for one
 * report of one company.
 *
 * Format (v1): `v1.<report_id>.<company_id>.<expires_at_ms>.<signature>`, where the signature is
 * base64url(HMAC-SHA256(key, "sendpool-report-token:v1:<report_id>:<company_id>:<expires_at_ms>")).
 * The fields are readable (nothing in them is secret); the signature makes them unforgeable with
 * the host's key. Verification answers with a reason, so the download endpoint can tell an
 * expired link (ask for a new one) from a tampered or misdirected one.
 */
import { ArgumentError } from '../core/errors.js';
import { hmacSha256, sameBytes, type SecretKey } from './hmac.js';
import { requireInteger } from './ids.js';

/** How long a download token is valid: 24 hours (spec 5.3). */
export const REPORT_TOKEN_TTL_MS = 24 * 3_600_000;

/** Options of {@link issueReportToken}. */
export interface IssueReportTokenOptions {
  readonly reportId: number;
  readonly companyId: number;
  /** Issue time, epoch milliseconds. */
  readonly now: number;
  /** Signing key (the host's secret). */
  readonly key: SecretKey;
  /** Validity. @default REPORT_TOKEN_TTL_MS (24 hours) */
  readonly ttlMs?: number;
}

function signedText(reportId: number, companyId: number, expiresAt: number): string {
  return `sendpool-report-token:v1:${reportId}:${companyId}:${expiresAt}`;
}

/** Issues a token for one report of one company, expiring `ttlMs` after `now`. */
export function issueReportToken(o: IssueReportTokenOptions): string {
  requireInteger('issueReportToken(reportId)', o.reportId);
  requireInteger('issueReportToken(companyId)', o.companyId);
  requireInteger('issueReportToken(now)', o.now);
  const ttl = o.ttlMs ?? REPORT_TOKEN_TTL_MS;
  requireInteger('issueReportToken(ttlMs)', ttl, 1);
  const expiresAt = o.now + ttl;
  const sig = hmacSha256(o.key, signedText(o.reportId, o.companyId, expiresAt)).toString('base64url');
  return `v1.${o.reportId}.${o.companyId}.${expiresAt}.${sig}`;
}

/** Why a token was refused. */
export type ReportTokenRejection =
  /** Not a token of this format at all. */
  | 'malformed'
  /** The signature does not match its fields: edited, truncated or signed with another key. */
  | 'bad-signature'
  /** Genuine, but for another report than the one requested. */
  | 'wrong-report'
  /** Genuine, but issued to another company than the one asking. */
  | 'wrong-company'
  /** Genuine, but past its expiry (at or after `expiresAt`). */
  | 'expired';

/** The answer of {@link verifyReportToken}. */
export type ReportTokenVerdict =
  { readonly ok: true; readonly reportId: number; readonly companyId: number; readonly expiresAt: number } | { readonly ok: false; readonly reason: ReportTokenRejection; readonly expiresAt?: number };

/** Options of {@link verifyReportToken}. */
export interface VerifyReportTokenOptions {
  /** The report the request is for (from the `/reports/<report_id>/download/` path). */
  readonly reportId: number;
  /** The company of the caller. */
  readonly companyId: number;
  /** Current time, epoch milliseconds. */
  readonly now: number;
  /** Accepted keys, current first: older keys keep links valid across a key rotation. */
  readonly keys: readonly SecretKey[];
}

const TOKEN = /^v1\.(-?\d{1,16})\.(-?\d{1,16})\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/;

/**
 * Checks a download token. Order of checks: shape, signature (so any edited field is
 * `bad-signature`), report, company, expiry.
 */
export function verifyReportToken(token: string, o: VerifyReportTokenOptions): ReportTokenVerdict {
  if (o.keys.length === 0) throw new ArgumentError('verifyReportToken(keys)', 'at least one key', 'none');
  const m = typeof token === 'string' ? TOKEN.exec(token) : null;
  if (!m || m[1] === undefined || m[2] === undefined || m[3] === undefined || m[4] === undefined) {
    return { ok: false, reason: 'malformed' };
  }
  const reportId = Number(m[1]);
  const companyId = Number(m[2]);
  const expiresAt = Number(m[3]);
  // Canonical numbers only: "007" and "7" must not both verify under one signature.
  if (String(reportId) !== m[1] || String(companyId) !== m[2] || String(expiresAt) !== m[3]) {
    return { ok: false, reason: 'malformed' };
  }
  const given = Buffer.from(m[4], 'base64url');
  // base64url of 32 bytes has 2 spare bits: only the canonical spelling verifies (one token, one text).
  if (given.toString('base64url') !== m[4]) return { ok: false, reason: 'malformed' };
  const text = signedText(reportId, companyId, expiresAt);
  if (!o.keys.some((k) => sameBytes(hmacSha256(k, text), given))) return { ok: false, reason: 'bad-signature' };
  if (reportId !== o.reportId) return { ok: false, reason: 'wrong-report', expiresAt };
  if (companyId !== o.companyId) return { ok: false, reason: 'wrong-company', expiresAt };
  // NaN compares false and would switch expiry off: refuse it as a host bug.
  if (!Number.isFinite(o.now)) throw new ArgumentError('verifyReportToken(now)', 'a finite clock time in milliseconds', String(o.now));
  if (o.now >= expiresAt) return { ok: false, reason: 'expired', expiresAt };
  return { ok: true, reportId, companyId, expiresAt };
}

/**
 * The download URL of a report: `<baseUrl>/reports/<report_id>/download/?token=<token>` (spec 4.5).
 * `baseUrl` is the service's public origin, e.g. `https://api.example.com` (a trailing slash is
 * dropped).
 */
export function reportDownloadUrl(baseUrl: string, reportId: number, token: string): string {
  requireInteger('reportDownloadUrl(reportId)', reportId);
  return `${baseUrl.replace(/\/+$/, '')}/reports/${reportId}/download/?token=${encodeURIComponent(token)}`;
}
