/** Runs the built `sendpool` bin (dist/cli.js, built by `npm test`'s pretest) as a user would. */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from '../temp-dirs.js';

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
  const dir = tempDir('sendpool-cli-');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return dir;
}

/** A `sendpool serve` child process, listening. */
export interface Serving {
  /** `http://127.0.0.1:PORT` of the API. */
  readonly url: string;
  /** `http://HOST:PORT` of the metrics listener, when it has one. */
  readonly metricsUrl: string | undefined;
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `sendpool serve ...args` and waits until it says where it listens (give `--port 0`).
 * Rejects with its standard error when it exits first.
 */
export async function startServe(args: readonly string[], env: Record<string, string> = {}): Promise<Serving> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = await new Promise<RegExpExecArray>((resolve, reject) => {
    const check = () => {
      const m = /listening on (http:\/\/\S+?)(?:, metrics on (http:\/\/\S+?)\/metrics)?[, (\n]/.exec(stderr);
      if (m) {
        child.stderr.off('data', check);
        resolve(m);
      }
    };
    child.stderr.on('data', check);
    void exited.then((code) => reject(new Error(`sendpool serve exited ${code} before listening: ${stderr}`)));
  });
  return {
    url: listening[1]!,
    metricsUrl: listening[2],
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
