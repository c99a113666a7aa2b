/**
 * `sendpool serve`: the flags an operator needs (public base URL, report token key, private
 * webhook targets for development, metrics key and port, connection timeouts, version), checked
 * before anything starts, and applied by a real server process.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serveSettings } from '../../src/cli/serve-flags.js';
import { processIo } from '../../src/cli/io.js';
import { verifyReportToken } from '../../src/events/index.js';
import { api, waitFor } from '../server/helpers.js';
import { connect } from '../server/sockets.js';
import { ROOT, scratch, sendpool, startServe } from './helpers.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const API_KEY = 'cli-serve-test-key-company-1';
const REPORT_KEY = 'report-token-key-of-the-serve-test-0123456789';
const METRICS_KEY = 'metrics-key-of-the-serve-test-01';
const dir = scratch({ 'report.key': `${REPORT_KEY}\n`, 'metrics.key': `${METRICS_KEY}\n`, 'short.key': 'tiny-secret\n', 'spaced.key': 'a key with spaces in it, long enough\n' });
const fleet = 'examples/fleet.json';

describe('sendpool --version', () => {
  it.each([['--version'], ['-v'], ['serve', '--version']])('%s prints the package version', (...args) => {
    const r = sendpool(...args);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
  });

  it('--help names the documentation folder of this copy of sendpool, which holds cli.md', () => {
    const r = sendpool('--help');
    expect(r.code).toBe(0);
    const folder = /^Documentation: (\S+) \(this command line: cli\.md/m.exec(r.stdout)?.[1];
    expect(folder).toBe(join(ROOT, 'docs/'));
    expect(readFileSync(join(folder!, 'cli.md'), 'utf8')).toContain('# The `sendpool` command line');
  });

  it('serve --help lists the operator flags and says private targets are for local development only', () => {
    const r = sendpool('serve', '--help');
    expect(r.code).toBe(0);
    for (const flag of [
      '--public-base-url',
      '--report-token-key-file',
      '--allow-private-webhook-targets',
      '--metrics-port',
      '--metrics-host',
      '--metrics-key-file',
      '--headers-timeout',
      '--request-timeout',
      '--keep-alive-timeout',
      '--idle-timeout',
      '--already-sent-window',
      '--version',
      '--data-dir',
      '--snapshot',
    ]) {
      expect(r.stdout).toContain(flag);
    }
    expect(r.stdout).toMatch(/--allow-private-webhook-targets\n.*\n\s+addresses\. For local development only: never in production/);
  });
});

describe('serve flags: a bad one exits 2 naming the flag, the expectation and the value', () => {
  it.each([
    [
      ['--public-base-url', 'ftp://files.example.com'],
      '--public-base-url: expected an http or https URL without credentials, query or fragment, such as https://api.example.com, got "ftp://files.example.com" (string)',
    ],
    [['--public-base-url', 'https://api.example.com/?x=1'], '--public-base-url: expected an http or https URL', '"https://api.example.com/?x=1"'],
    [['--report-token-key-file', join(dir, 'missing.key')], `--report-token-key-file ${join(dir, 'missing.key')}: cannot read: no such file`],
    [['--report-token-key-file', join(dir, 'short.key')], `--report-token-key-file ${join(dir, 'short.key')}: expected a key of at least 32 bytes (surrounding whitespace is ignored), got 11 bytes`],
    [
      ['--metrics-key-file', join(dir, 'short.key')],
      `--metrics-key-file ${join(dir, 'short.key')}: expected a key of 16 to 512 characters without whitespace (surrounding whitespace is ignored), got 11 characters`,
    ],
    [
      ['--metrics-key-file', join(dir, 'spaced.key')],
      `--metrics-key-file ${join(dir, 'spaced.key')}: expected a key of 16 to 512 characters without whitespace`,
      'got 36 characters with whitespace inside',
    ],
    [['--metrics-port', '70000'], '--metrics-port: expected a port from 0 to 65535, got "70000"'],
    [['--metrics-host', '0.0.0.0'], '--metrics-host: needs --metrics-port (the port of the metrics listener)'],
    [['--metrics-port', '9464', '--metrics-host', 'http://x'], '--metrics-host: expected a host name or IP address, such as 127.0.0.1, 0.0.0.0 or ::1, got "http://x" (string)'],
    [['--host', 'a b'], '--host: expected a host name or IP address', '"a b"'],
    [['--port', 'abc'], '--port: expected a port from 0 to 65535, got "abc"'],
    [['--request-timeout', '0'], '--request-timeout: expected a duration from 1ms to 1d, such as 10s, 2m or 500ms, got "0"'],
    [['--keep-alive-timeout', '5 seconds'], '--keep-alive-timeout: expected a duration from 1ms to 1d, such as 10s, 2m or 500ms, got "5 seconds"'],
    [['--headers-timeout', '2m'], '--headers-timeout: expected at most the request timeout (1m, the default of --request-timeout), got "2m"'],
    [['--headers-timeout', '20s', '--request-timeout', '10s'], '--headers-timeout: expected at most the request timeout (--request-timeout 10s), got "20s"'],
    [['--allow-private-webhook-targets=yes'], 'flag --allow-private-webhook-targets takes no value'],
    [['--already-sent-window', '1 day'], '--already-sent-window: expected 0 (off) or a duration up to 366d, such as 24h, 7d or 30m, got "1 day"'],
    [['--no-metrics', '--metrics-port', '9464'], '--no-metrics: serves no /metrics, so --metrics-port has nothing to configure'],
  ])('%j', (flags, ...parts) => {
    const r = sendpool('serve', fleet, '--memory', ...flags);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    for (const part of parts) expect(r.stderr).toContain(part);
    // Key files are never echoed.
    expect(r.stderr).not.toContain('tiny-secret');
    expect(r.stderr).not.toContain('a key with spaces');
  });
});

describe('serve --already-sent-window', () => {
  it('maps to alreadySentWindowMs: a duration, or 0 to turn the check off', () => {
    const options = (values: Record<string, string | boolean>) => serveSettings({ memory: true, ...values }, processIo).options;
    expect(options({ 'already-sent-window': '7d' })).toMatchObject({ alreadySentWindowMs: 7 * 86_400_000 });
    expect(options({ 'already-sent-window': '0' })).toMatchObject({ alreadySentWindowMs: 0 });
    expect(options({})).not.toHaveProperty('alreadySentWindowMs');
  });
});

describe('serve notes', () => {
  it('an open /metrics on an address other than loopback is pointed out; loopback, a key or a metrics port are not', () => {
    const notes = (values: Record<string, string | boolean>) => serveSettings(values, processIo).notes;
    expect(notes({ host: '0.0.0.0' })).toEqual(['GET /metrics is open without a key on 0.0.0.0; give --metrics-key-file or --metrics-port (docs/server.md, "Metrics")']);
    expect(notes({})).toEqual([]);
    expect(notes({ host: '::1' })).toEqual([]);
    expect(notes({ host: '0.0.0.0', 'metrics-port': '9464' })).toEqual([]);
    expect(notes({ host: '0.0.0.0', 'metrics-key-file': join(dir, 'metrics.key') })).toEqual([]);
    expect(notes({ 'allow-private-webhook-targets': true })).toEqual([
      'webhooks and SMS callbacks may target loopback and private addresses (--allow-private-webhook-targets: for local development only)',
    ]);
  });
});

describe('sendpool serve with the operator flags', () => {
  it('applies them: report links, private webhook targets, metrics key and port, connection timeouts', async () => {
    const serving = await startServe(
      [
        fleet,
        '--port',
        '0',
        '--memory',
        '--public-base-url',
        'https://api.example.com/sendpool',
        '--report-token-key-file',
        join(dir, 'report.key'),
        '--allow-private-webhook-targets',
        '--metrics-port',
        '0',
        '--metrics-key-file',
        join(dir, 'metrics.key'),
        '--headers-timeout',
        '200ms',
        '--request-timeout',
        '400ms',
        '--keep-alive-timeout',
        '200ms',
      ],
      { SENDPOOL_API_KEYS: `1:${API_KEY}` },
    );
    try {
      expect(serving.stderr()).toContain('note: webhooks and SMS callbacks may target loopback and private addresses (--allow-private-webhook-targets: for local development only)');
      expect(serving.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      // A loopback webhook target is accepted (it is refused without the flag: next test).
      const config = await api(serving.url, '/messenger/config/', { key: API_KEY, body: { url_hsm_callback: 'http://127.0.0.1:9/hsm' } });
      expect(config.status).toBe(200);

      // Report links: the public base URL, signed with the key of the file.
      const created = await api(serving.url, '/reports/', { key: API_KEY, body: { report_type: 'numbers' } });
      expect(created.status).toBe(202);
      const id = created.json.report_id as number;
      let report: any;
      await waitFor(async () => {
        report = (await api(serving.url, `/reports/${id}/`, { key: API_KEY })).json;
        return report.status === 'ready';
      }, 'the report to be ready');
      const link = new URL(report.file_url as string);
      expect(`${link.origin}${link.pathname}`).toBe(`https://api.example.com/sendpool/reports/${id}/download/`);
      const token = link.searchParams.get('token')!;
      const verify = (key: string) => verifyReportToken(token, { reportId: id, companyId: 1, now: Date.now(), keys: [key] });
      expect(verify(REPORT_KEY).ok).toBe(true);
      expect(verify('another-key-of-at-least-32-bytes-long!')).toMatchObject({ ok: false, reason: 'bad-signature' });

      // Metrics: not on the API port; on the metrics port with the key only.
      expect((await api(serving.url, '/metrics', { key: null })).status).toBe(404);
      expect((await api(serving.metricsUrl!, '/metrics', { key: null })).status).toBe(401);
      const scrape = await api(serving.metricsUrl!, '/metrics', { key: null, headers: { authorization: `Bearer ${METRICS_KEY}` } });
      expect(scrape.status).toBe(200);
      expect(scrape.text).toContain('sendpool_queue_depth');

      // Connection timeouts: a half-sent request is answered 408 and closed.
      const half = await connect(serving.url, 'GET /messenger/businesses/ HTTP/1.1\r\nHost: a\r\n');
      expect((await half.closed()).statuses).toEqual([408]);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
  });

  it('without --allow-private-webhook-targets a loopback webhook target is refused; /metrics is open on the API port', async () => {
    const serving = await startServe([fleet, '--port', '0', '--memory'], { SENDPOOL_API_KEYS: `1:${API_KEY}` });
    try {
      expect(serving.stderr()).not.toContain('note:');
      expect(serving.metricsUrl).toBeUndefined();
      const config = await api(serving.url, '/messenger/config/', { key: API_KEY, body: { url_hsm_callback: 'http://127.0.0.1:9/hsm' } });
      expect(config.status).toBe(422);
      expect(config.json.error.problems[0].path).toBe('$.url_hsm_callback');
      expect((await api(serving.url, '/metrics', { key: null })).status).toBe(200);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
  });

  it('--no-dashboard serves no /dashboard/', async () => {
    const serving = await startServe([fleet, '--port', '0', '--memory', '--no-dashboard'], { SENDPOOL_API_KEYS: `1:${API_KEY}` });
    try {
      // Not an open path any more: without a key it is refused like any unknown path, with one it is not found.
      expect((await fetch(`${serving.url}/dashboard/`)).status).toBe(401);
      expect((await api(serving.url, '/dashboard/', { key: API_KEY })).status).toBe(404);
      expect((await api(serving.url, '/messenger/businesses/', { key: API_KEY })).status).toBe(200);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
  });

  it('--no-metrics serves no /metrics', async () => {
    const serving = await startServe([fleet, '--port', '0', '--memory', '--no-metrics'], { SENDPOOL_API_KEYS: `1:${API_KEY}` });
    try {
      expect((await api(serving.url, '/metrics', { key: null })).status).toBe(404);
      expect((await api(serving.url, '/messenger/businesses/', { key: API_KEY })).status).toBe(200);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
  });
});
