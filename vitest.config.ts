import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: a few workers, each test file in its own process so servers and watchers never leak across files.
    pool: 'forks',
    maxWorkers: 2,
  },
});
