/** Runs the built `sendpool` bin (dist/cli.js, built by `npm test`'s pretest) as a user would. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'dist/cli.js');
export const FIXTURES = join(ROOT, 'test/cli/fixtures');

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function sendpool(...args: string[]): RunResult {
  // The bound is for a hang: the slowest command (1,000,000 simulated messages) takes ~2 s on a quiet
  // machine and ~20 s on a loaded one.
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function json<T = any>(...args: string[]): T {
  const r = sendpool(...args, '--json');
  if (r.code !== 0) throw new Error(`sendpool ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** A scratch directory with the given files. */
export function scratch(files: Record<string, string | object>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sendpool-cli-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return dir;
}
