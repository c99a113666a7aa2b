/**
 * The capacity-planning command's speed: `sendpool simulate` of 1,000,000 messages over a simulated
 * day (issue 9: under 5 s), through the built bin as a user runs it. Needs `npm run build` first.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Result } from './harness.js';
import { ROOT } from './paths.js';

const root = `${ROOT}/`;

export function cliBenchmarks(options: { readonly quick: boolean; readonly filter?: string | undefined; readonly log?: (line: string) => void }): Result[] {
  const id = options.quick ? 'cli simulate 10,000 messages' : 'cli simulate 1,000,000 messages';
  if (options.filter !== undefined && !id.includes(options.filter)) return [];
  if (!existsSync(`${root}dist/cli.js`)) return [{ id, group: 'cli', subject: 'sendpool', note: 'skipped: run `npm run build` first' }];
  const messages = options.quick ? 10_000 : 1_000_000;
  const args = ['dist/cli.js', 'simulate', 'test/cli/fixtures/fleet-day.json', '--business', '7', '--type', '70', '--messages', String(messages), '--json'];
  const runs: number[] = [];
  for (let i = 0; i < (options.quick ? 1 : 3); i++) {
    const started = performance.now();
    const child = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
    const seconds = (performance.now() - started) / 1000;
    if (child.status !== 0) throw new Error(`sendpool simulate failed (${child.status}): ${child.stderr.slice(-500)}`);
    const out = JSON.parse(child.stdout) as { sent: number; completed: boolean };
    if (out.sent !== messages || !out.completed) throw new Error(`sendpool simulate sent ${out.sent} of ${messages}`);
    runs.push(seconds);
  }
  const best = Math.min(...runs);
  options.log?.(`${id}: ${runs.map((s) => `${s.toFixed(2)} s`).join(', ')}`);
  return [
    {
      id,
      group: 'cli',
      subject: 'sendpool',
      opsPerSecond: messages / best,
      microsPerOp: (best * 1e6) / messages,
      note: `whole command, best of ${runs.length}: ${best.toFixed(2)} s (runs: ${runs.map((s) => s.toFixed(2)).join(', ')} s)`,
    },
  ];
}
