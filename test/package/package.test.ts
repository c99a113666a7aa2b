/**
 * The package as users receive it: `npm pack`, checked by publint and are-the-types-wrong, then
 * installed into a scratch project and loaded with both `import` and `require`.
 * Needs the build (`npm test` runs it first).
 */
import { execFileSync } from 'node:child_process';
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
  for (const dep of ['mnemonist', 'obliterator', '@sinclair']) {
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
  it('ships only the build and the README', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n').sort();
    expect(files.every((f) => f === 'package/package.json' || f === 'package/README.md' || f.startsWith('package/dist/'))).toBe(true);
    expect(files).toEqual(expect.arrayContaining(['package/dist/index.js', 'package/dist/index.cjs', 'package/dist/index.d.ts', 'package/dist/index.d.cts']));
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
