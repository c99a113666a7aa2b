/**
 * The package as users receive it: `npm pack`, checked by publint and are-the-types-wrong, then
 * installed into a scratch project and loaded with both `import` and `require`. The scratch
 * project has TypeBox, fastify and fastify-plugin (the server's features are plugins) but neither
 * mnemonist (the build carries the one heap it uses) nor prom-client (the server loads it only for
 * metrics).
 * Needs the build (`npm test` runs it first).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
let scratch: string;
let tarball: string;

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) first');
  scratch = mkdtempSync(join(tmpdir(), 'sendpool-pack-'));
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [info] = JSON.parse(out) as { filename: string }[];
  tarball = join(scratch, info!.filename);
  // A user's project: the unpacked package under node_modules, its dependencies beside it.
  const project = join(scratch, 'project');
  const pkgDir = join(project, 'node_modules', 'sendpool');
  mkdirSync(pkgDir, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1']);
  for (const dep of ['@sinclair', 'fastify', 'fastify-plugin']) {
    const from = join(root, 'node_modules', dep);
    if (existsSync(from)) symlinkSync(from, join(project, 'node_modules', dep), 'dir');
  }
  cpSync(join(root, 'examples', 'fleet.json'), join(project, 'fleet.json'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true }));
}, 120_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the published package', () => {
  it('ships the build, the documentation, the README, the changelog and the license, nothing else', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n').sort();
    const top = ['package/package.json', 'package/README.md', 'package/LICENSE', 'package/CHANGELOG.md'];
    expect(files.filter((f) => !top.includes(f) && !f.startsWith('package/dist/') && !f.startsWith('package/docs/'))).toEqual([]);
    expect(files).toEqual(
      expect.arrayContaining([
        ...top,
        'package/dist/index.js',
        'package/dist/index.cjs',
        'package/dist/index.d.ts',
        'package/dist/index.d.cts',
        'package/docs/cli.md',
        'package/docs/fleet.schema.json',
      ]),
    );
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))).toMatchObject({
      license: 'MIT',
      repository: { type: 'git', url: expect.stringMatching(/^git\+https:\/\/github\.com\/[\w-]+\/[\w-]+\.git$/) },
    });
  });

  it('resolves the relative links of the README, and the documentation the CLI names, inside the installed package', () => {
    const pkg = join(scratch, 'project', 'node_modules', 'sendpool');
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^(https?:|#|mailto:)/.test(l));
    expect(links.length).toBeGreaterThan(10);
    expect(links.filter((l) => !existsSync(join(pkg, l.split('#')[0]!)))).toEqual([]);
    const help = execFileSync('node', [join(pkg, 'dist', 'cli.js'), '--help'], { encoding: 'utf8' });
    const folder = /^Documentation: (\S+) /m.exec(help)?.[1];
    expect(folder).toBe(`${join(pkg, 'docs')}/`);
    const named = [...help.matchAll(/docs\/([\w-]+\.md)/g)].map((m) => m[1]!);
    for (const command of ['forecast', 'simulate', 'serve']) {
      const text = execFileSync('node', [join(pkg, 'dist', 'cli.js'), command, '--help'], { encoding: 'utf8' });
      named.push(...[...text.matchAll(/docs\/([\w-]+\.md)/g)].map((m) => m[1]!));
    }
    expect(named.length).toBeGreaterThan(2);
    expect(named.filter((f) => !existsSync(join(folder!, f)))).toEqual([]);
    expect(execFileSync('node', [join(pkg, 'dist', 'cli.js'), '-v'], { encoding: 'utf8' })).toBe(`${JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version}\n`);
  });

  it('passes publint', () => {
    const out = execFileSync(bin('publint'), ['run', root, '--strict'], { encoding: 'utf8' });
    expect(out).toContain('All good');
  }, 60_000);

  it('passes are-the-types-wrong for every resolution mode', () => {
    // Exits non-zero on any problem. The node16 profile leaves out node10 resolution, which cannot
    // see subpath exports; sendpool needs Node 20, which always reads `exports`.
    const out = execFileSync(bin('attw'), [tarball, '--format', 'json', '--profile', 'node16'], { encoding: 'utf8' });
    const report = JSON.parse(out) as { analysis: { problems: { resolutionKind?: string }[] } };
    expect(report.analysis.problems.filter((p) => p.resolutionKind !== 'node10')).toEqual([]);
  }, 60_000);

  const script = (load: string) => `
    ${load}
    const fs = require('node:fs');
    const { createEngine, ManualClock, isFleetValidationError } = sendpool;
    const engine = createEngine(JSON.parse(fs.readFileSync('fleet.json', 'utf8')), { clock: new ManualClock(0) });
    let typed = false;
    try { createEngine({ businesses: 1 }) } catch (e) { typed = isFleetValidationError(e) }
    console.log(JSON.stringify({ output: engine.output(1, 10), n: engine.assign(1, 10, 4).assignments.length, typed }));
  `;

  it('loads with require (CommonJS)', () => {
    const out = execFileSync('node', ['-e', script("const sendpool = require('sendpool');")], { cwd: join(scratch, 'project'), encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ output: 3000, n: 4, typed: true });
  });

  it('loads with import (ES modules)', () => {
    const esm = `import * as sendpool from 'sendpool'; import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);${script('')}`;
    const out = execFileSync('node', ['--input-type=module', '-e', esm], { cwd: join(scratch, 'project'), encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ output: 3000, n: 4, typed: true });
  });

  it('loads the contract and events entries both ways', () => {
    const cjs = `
      const core = require('sendpool');
      const contract = require('sendpool/contract');
      const events = require('sendpool/events');
      console.log(JSON.stringify([typeof contract.parseSendRequest, typeof events.buildHsmNotification, typeof core.createEngine]));`;
    const esm = `
      import * as contract from 'sendpool/contract';
      import * as events from 'sendpool/events';
      import * as core from 'sendpool';
      console.log(JSON.stringify([typeof contract.parseSendRequest, typeof events.buildHsmNotification, typeof core.createEngine]));`;
    const expected = ['function', 'function', 'function'];
    expect(JSON.parse(execFileSync('node', ['-e', cjs], { cwd: join(scratch, 'project'), encoding: 'utf8' }))).toEqual(expected);
    expect(JSON.parse(execFileSync('node', ['--input-type=module', '-e', esm], { cwd: join(scratch, 'project'), encoding: 'utf8' }))).toEqual(expected);
  });

  it('exports exactly the documented runtime names from sendpool/events, none of its building blocks', () => {
    const names = JSON.parse(
      execFileSync('node', ['-e', "console.log(JSON.stringify(Object.keys(require('sendpool/events')).sort()))"], { cwd: join(scratch, 'project'), encoding: 'utf8' }),
    ) as string[];
    expect(names).toEqual([
      'ADMISSIONS',
      'ATTENDANCE_MESSAGE_TYPES',
      'AttendanceNotificationSchema',
      'CAMPAIGN_COUNT_KEYS',
      'CAMPAIGN_STATUSES',
      'CampaignBatchSchema',
      'CampaignStatistics',
      'HSM_STATUSES',
      'HsmNotificationSchema',
      'Outbox',
      'REPORT_TOKEN_TTL_MS',
      'REPORT_TYPES',
      'ReportErrorSchema',
      'ReportEventSchema',
      'ReportReadySchema',
      'ReportTracker',
      'SURVEY_STATUSES',
      'StatusMerger',
      'WEBHOOK_TOLERANCE_MS',
      'attemptKey',
      'buildAttendanceNotification',
      'buildHsmNotification',
      'buildReportError',
      'buildReportReady',
      'countProblems',
      'generateWebhookSecret',
      'httpAttemptResult',
      'isReportType',
      'issueReportToken',
      'parseFailureReason',
      'parseReportType',
      'reached',
      'reasonFor',
      'reportDownloadUrl',
      'signWebhook',
      'validatePayload',
      'verifyReportToken',
      'verifyWebhook',
    ]);
  });

  it('never loads mnemonist at run time: the build carries its heap module only', () => {
    const dist = readdirSync(join(root, 'dist')).filter((f) => /\.(c?js)$/.test(f));
    const loads = dist.filter((f) => /(?:from|require\(|import\()\s*['"]mnemonist/.test(readFileSync(join(root, 'dist', f), 'utf8')));
    expect(loads).toEqual([]);
    // The scratch project has no mnemonist: the dispatch loop (a heap of retries) runs all the same.
    const run = `
      const { createEngine, ManualClock } = require('sendpool');
      const engine = createEngine(require('./fleet.json'), { clock: new ManualClock(0) });
      engine.submit({ businessId: 1, typeId: 10, maxRetries: 1, retryInterval: 1000, contacts: [{ phone: '5511987654321', variables: ['a', 'b'] }] });
      const [m] = engine.poll();
      console.log(JSON.stringify(engine.report(m.messageId, { status: 'failed', code: 131000 })));`;
    expect(JSON.parse(execFileSync('node', ['-e', run], { cwd: join(scratch, 'project'), encoding: 'utf8' }))).toMatchObject({ ok: true, effect: 'retry-scheduled' });
  });

  it('builds the server with metrics off where prom-client cannot be resolved, and names the package when metrics are on', () => {
    const load = (metrics: boolean) => `
      import { createEngine } from 'sendpool';
      import { buildServer } from 'sendpool/server';
      import { createRequire } from 'node:module';
      const fleet = createRequire(import.meta.url)('./fleet.json');
      let server;
      try {
        server = buildServer({ engine: createEngine(fleet), apiKeys: [{ key: 'package-test-key-0123', companyId: 1 }], logger: false, metrics: ${metrics} });
      } catch (e) {
        console.log(JSON.stringify({ error: e.message }));
        process.exit(0);
      }
      const answer = await server.inject({ method: 'GET', url: '/messenger/businesses/', headers: { 'x-api-key-id': 'package-test-key-0123' } });
      const metricsAnswer = await server.inject({ method: 'GET', url: '/metrics' });
      await server.close();
      console.log(JSON.stringify({ status: answer.statusCode, metrics: metricsAnswer.statusCode }));`;
    const cwd = join(scratch, 'project');
    expect(() => execFileSync('node', ['-e', "require.resolve('prom-client')"], { cwd, stdio: 'ignore' })).toThrow();
    expect(JSON.parse(execFileSync('node', ['--input-type=module', '-e', load(false)], { cwd, encoding: 'utf8' }))).toEqual({ status: 200, metrics: 404 });
    const on = JSON.parse(execFileSync('node', ['--input-type=module', '-e', load(true)], { cwd, encoding: 'utf8' })) as { error: string };
    expect(on.error).toContain(`The server's metrics needs the optional package "prom-client": npm install prom-client@"^15.0.0", or metrics: false`);
    // The command line says what to do, and exits 2 before listening.
    const serve = spawnSync('node', [join(cwd, 'node_modules', 'sendpool', 'dist', 'cli.js'), 'serve', 'fleet.json', '--memory', '--port', '0'], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, SENDPOOL_API_KEYS: '1:package-test-key-0123' },
    });
    expect(serve.status, serve.stderr).toBe(2);
    expect(serve.stderr).toContain('sendpool serve: GET /metrics needs the optional package "prom-client": npm install prom-client@"^15.0.0", or give --no-metrics');
  });

  it('serves the operator dashboard’s files from the installed package, loaded either way', () => {
    const serve = `
      const fleet = require('./fleet.json');
      (async () => {
        const server = buildServer({ engine: createEngine(fleet), logger: false, metrics: false });
        const answers = [];
        for (const url of ['/dashboard/', '/dashboard/dashboard.js', '/dashboard/dashboard.css']) {
          const a = await server.inject({ method: 'GET', url });
          answers.push([a.statusCode, a.headers['content-security-policy'].startsWith("default-src 'none'"), a.body.length > 1000]);
        }
        await server.close();
        console.log(JSON.stringify(answers));
      })();`;
    const cwd = join(scratch, 'project');
    const expected = [
      [200, true, true],
      [200, true, true],
      [200, true, true],
    ];
    const cjs = `const { createEngine } = require('sendpool'); const { buildServer } = require('sendpool/server');${serve}`;
    const esm = `import { createEngine } from 'sendpool'; import { buildServer } from 'sendpool/server'; import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);${serve}`;
    expect(JSON.parse(execFileSync('node', ['-e', cjs], { cwd, encoding: 'utf8' }))).toEqual(expected);
    expect(JSON.parse(execFileSync('node', ['--input-type=module', '-e', esm], { cwd, encoding: 'utf8' }))).toEqual(expected);
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' });
    for (const f of ['index.html', 'dashboard.js', 'dashboard.css']) expect(files).toContain(`package/dist/dashboard/${f}`);
  });

  it('ships the fleet JSON Schema as sendpool/fleet.schema.json', () => {
    const esm = `import schema from 'sendpool/fleet.schema.json' with { type: 'json' }; console.log(schema.title);`;
    expect(execFileSync('node', ['--input-type=module', '-e', esm], { cwd: join(scratch, 'project'), encoding: 'utf8' }).trim()).toBe('sendpool fleet description');
    const path = execFileSync('node', ['-p', "require.resolve('sendpool/fleet.schema.json')"], { cwd: join(scratch, 'project'), encoding: 'utf8' }).trim();
    expect(path).toBe(join(scratch, 'project', 'node_modules', 'sendpool', 'docs', 'fleet.schema.json'));
  });

  it('builds nothing that nothing points to', () => {
    const manifest = JSON.stringify(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
    const files = readdirSync(join(root, 'dist')).filter((f) => !f.endsWith('.map'));
    const entries = files.filter((f) => manifest.includes(`./dist/${f}`));
    const texts = entries.map((f) => readFileSync(join(root, 'dist', f), 'utf8')).join('\n');
    // Everything else is a shared chunk that an entry imports.
    const orphans = files.filter((f) => !entries.includes(f) && !texts.includes(f.replace(/\.d\.c?ts$/, '').replace(/\.c?js$/, '')));
    // Every file the manifest names exists, and everything else is a shared chunk an entry imports.
    const named = [...manifest.matchAll(/\.\/dist\/([\w.-]+)/g)].map((m) => m[1]!);
    expect(named.filter((f) => !files.includes(f))).toEqual([]);
    expect(orphans).toEqual([]);
  });
});
