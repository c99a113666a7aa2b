/**
 * A structural guard of the hot path, not a timing: the store's short path (MemoryStore's #quick,
 * behind `reserve` and `reserveOne`) runs at every turn of a sparse call, and its being inlined
 * into the engine's loop is worth about a fifth of the batch throughput at 100,000 numbers
 * (docs/engine.md). V8 inlines no function whose bytecode exceeds --max-inlined-bytecode-size, so
 * this checks the built package's #quick against the limit of the Node running the tests.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function inliningLimit(): number {
  const out = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout;
  const match = /--max-inlined-bytecode-size=(\d+)/.exec(out);
  if (!match) throw new Error('node --v8-options does not show --max-inlined-bytecode-size');
  return Number(match[1]);
}

/** Bytecode lengths of the functions named `name` that a short run of the built package compiles. */
function bytecodeLengths(name: string): number[] {
  const script = `
    const { MemoryStore } = await import(${JSON.stringify(join(root, 'dist', 'index.js'))});
    const store = new MemoryStore();
    const h = store.open('5511900000001', { perHour: 100, per24h: 1000 }, 0);
    store.reserve(h, 1, 0);
    store.reserveOne(h, 0);
  `;
  const run = spawnSync(process.execPath, ['--print-bytecode', `--print-bytecode-filter=${name}`, '--input-type=module', '-e', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the probe failed: ${run.stderr}`);
  return [...run.stdout.matchAll(/Bytecode length: (\d+)/g)].map((m) => Number(m[1]));
}

describe('hot path stays inlinable', () => {
  it("MemoryStore's short path is within V8's inlining limit", () => {
    if (!existsSync(join(root, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) first');
    const limit = inliningLimit();
    const lengths = bytecodeLengths('#quick');
    expect(lengths.length).toBeGreaterThan(0);
    // Some room under the limit: transpilers differ by a few dozen bytes.
    for (const length of lengths) expect(length, `#quick is ${length} bytes of bytecode; V8 inlines up to ${limit}`).toBeLessThanOrEqual(limit - 40);
  });
});
