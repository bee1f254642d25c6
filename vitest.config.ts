import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The fixed limits, not ones derived from the machine's memory limit (test/support/pinned-memory-limit.ts).
    setupFiles: ['test/support/pinned-memory-limit.ts'],
    // Three files at a time on a 2-core CI machine: the calibration files (simulations judged at every step) keep
    // both cores busy, and a third file fills the time others spend waiting on real time (Prometheus's `for`, the
    // live services, child processes). No test asserts on wall-clock time.
    maxWorkers: 3,
  },
});
