import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/fast-check-seed.ts'],
    // Bounds for a hang, not for speed: on a loaded 2-core machine (npm run test:busy) the slowest
    // tests take ten times what they take on a quiet one (the dispatch model test ~60 s).
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
  },
});
