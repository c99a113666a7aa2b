import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/fast-check-seed.ts', 'test/setup/temp-dirs.ts'],
    // Bounds for a hang, not for speed: on a loaded 2-core machine (npm run test:busy) the slowest
    // tests take ten times what they take on a quiet one (the dispatch model test ~60 s).
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    // Two files at a time: most of the slow files wait on child processes, Redis or a socket, and
    // vitest's default on a 2-core machine (cores − 1) ran them one by one.
    maxWorkers: 2,
  },
});
