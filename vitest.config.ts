import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Test files that share worker processes and modules (`isolate: false`): importing the sources
 * again in a fresh process took most of the time of a short file (27 files of test/core: 149 s
 * isolated, 46 s shared, the same 269 tests passing). The engine, the HTTP contract and the
 * webhook events only call code in this process; the server's tests start servers (in process, or
 * children on the built package), each closed by its own test, and restore what they patch; so do
 * the Redis stores' tests (each file its own clients and key prefix), the command line's (child
 * processes) and the storage's. Kept apart: the tests on vitest's fake timers or spies (the send
 * pacer's, two of the Redis waker's), the dashboard's (Chromium) and the package's (a packed
 * install).
 */
const SHARED = [
  'test/core/**/*.test.ts',
  'test/contract/**/*.test.ts',
  'test/events/**/*.test.ts',
  'test/server/!(send-pacer).test.ts',
  'test/redis/!(capacity-waker|fleet-sync).test.ts',
  'test/cli/**/*.test.ts',
  'test/storage/**/*.test.ts',
  'test/store/**/*.test.ts',
];

/**
 * The slowest files of a CI run, slowest first: started first, so that the two workers end
 * together rather than one running a long file alone at the end. A clean clone has no timings of
 * its own (vitest's cache orders by them when it has them); the rest follow vitest's order.
 */
const SLOW_FIRST = [
  'test/server/durable.test.ts',
  'test/server/redis-instances.test.ts',
  'test/server/whatsapp-bad-day.test.ts',
  'test/server/store-check.test.ts',
  'test/server/webhook-chaos.test.ts',
  'test/core/dispatch.model.test.ts',
];

class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.indexOf(relative(f.project.config.root, f.moduleId).replaceAll('\\', '/'));
      return i < 0 ? SLOW_FIRST.length : i;
    };
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map((x) => x.spec);
  }
}

/** What both projects share (each lists its own files: `extends` would add the root's `include` to theirs). */
const common = {
  setupFiles: ['test/setup/fast-check-seed.ts', 'test/setup/temp-dirs.ts'],
  // Bounds for a hang, not for speed: on a loaded 2-core machine (npm run test:busy) the slowest
  // tests take ten times what they take on a quiet one (the dispatch model test ~60 s).
  testTimeout: 600_000,
  hookTimeout: 600_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    // Two files at a time: most of the slow files wait on child processes, Redis or a socket, and
    // vitest's default on a 2-core machine (cores − 1) ran them one by one. Three were slower on the
    // clean-clone CI run (npm test 672 s against 640 s, 2026-11-28): the CPU is the bound then.
    maxWorkers: 2,
    sequence: { sequencer: SlowFirst },
    projects: [
      { test: { ...common, name: 'shared', include: SHARED, isolate: false } },
      { test: { ...common, name: 'isolated', include: ['test/**/*.test.ts'], exclude: ['**/node_modules/**', ...SHARED] } },
    ],
  },
});
