import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The fixed limits, not ones derived from the machine's memory limit (test/support/pinned-memory-limit.ts).
    setupFiles: ['test/support/pinned-memory-limit.ts'],
    // Both cores of a CI machine: the calibration files (simulations judged at every step) dominate the run
    // and are independent of each other. No test asserts on wall-clock time.
    maxWorkers: 2,
  },
});
