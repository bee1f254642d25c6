import { readdirSync } from 'node:fs';
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (about 40 s or more on a 2-core machine, as measured in a whole run), longest first. They
 * start before the others, so that the workers finish together instead of the last of them running one long file
 * alone (the boundary grid, started last, ran alone for two minutes).
 */
const LONGEST_FIRST = [
  'test/generate/promtool-rule-tests.test.ts',
  'test/calibrate/near-misses.test.ts',
  'test/calibrate/problems.test.ts',
  'test/service/live-replay.test.ts',
  'test/calibrate/seeds.test.ts',
  'test/diagnosis/parity.test.ts',
  'test/calibrate/boundaries.test.ts',
  'test/cli/package-install.test.ts',
  'test/service/fires-after-prometheus.test.ts',
  'test/calibrate/held-out.test.ts',
  // Mostly waiting: the live hot loop's alert comes at the first whole minute after two scrapes, then its `for`.
  'test/generate/alertmanager-e2e.test.ts',
  'test/diagnosis/victoria-metrics-parity.test.ts',
  'test/diagnosis/texts-agree-with-evidence.test.ts',
  'test/calibrate/gradual-backlog.test.ts',
  'test/diagnosis/since-memory.test.ts',
  'test/cli/one-line-errors.test.ts',
  'test/simulate/recording.test.ts',
  'test/generate/promql-prometheus.test.ts',
  'test/service/state-dir.test.ts',
  'test/generate/alert-tests.test.ts',
];

/** Vitest's own order, with the files of `LONGEST_FIRST` moved to the front in its order. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const index = LONGEST_FIRST.indexOf(relative(process.cwd(), file.moduleId).split('\\').join('/'));
      return index < 0 ? LONGEST_FIRST.length : index;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

/**
 * Directories whose files share a worker process, one after another, instead of each starting its own (the modules
 * they import and the code the JIT compiled stay loaded: 18% less CPU for the diagnosis tests, 21% for the server,
 * sources, CLI, configuration, Prometheus client and deployment tests, measured): pure computation (simulation,
 * diagnosis, calibration, generated files, the queues, PromQL, the exposition parser), the stores and utilities under
 * it, and the server and page, sources and scraping, the CLI, configuration, discovery, the Prometheus client, the
 * PromQL functions against Prometheus, deployment and docs. They mock no module; every server, worker, browser or child process a file
 * starts is stopped by it, and an environment variable it sets is restored. The service's own tests (its history,
 * live scrapes beside replays, state directory, memory budget) keep a fresh process per file: sharing, live-replay
 * failed once (a planted not-observable finding missing after the live scrapes; the file passes alone).
 */
const SHARED_PROCESS_DIRS = [
  'calibrate',
  'diagnosis',
  'simulate',
  'generate',
  'queue',
  'promql',
  'exposition',
  'store',
  'util',
  'server',
  'sources',
  'scrape',
  'cli',
  'config',
  'discovery',
  'prometheus',
  'metrics',
  'deploy',
  'docs',
];
/** Every other directory of test/, and its top level. Listed, not excluded: `--exclude` on the command line still applies. */
const OWN_PROCESS = [
  'test/*.test.ts',
  ...readdirSync(new URL('test', import.meta.url), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !SHARED_PROCESS_DIRS.includes(entry.name))
    .map((entry) => `test/${entry.name}/**/*.test.ts`),
];

export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'shared-process',
          include: SHARED_PROCESS_DIRS.map((dir) => `test/${dir}/**/*.test.ts`),
          isolate: false,
        },
      },
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS } },
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The fixed limits, not ones derived from the machine's memory limit (test/support/pinned-memory-limit.ts).
    setupFiles: ['test/support/pinned-memory-limit.ts'],
    // Three files at a time on a 2-core CI machine: the calibration files (simulations judged at every step) keep
    // both cores busy, and a third file fills the time others spend waiting on real time (Prometheus's `for`, the
    // live services, child processes). No test asserts on wall-clock time.
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
  },
});
