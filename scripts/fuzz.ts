/**
 * `npm run fuzz [-- --runs N] [--seed S]`: the exposition parser against generated pages and mutated real
 * client-go pages, through every entry point the service reads pages with (a string, a scraped body, bytes,
 * the parse worker), then the growth of its parse time on pathological pages of 1.25 and 10 MiB.
 *
 * Inputs, entry points and the property are in test/support/exposition-fuzz.ts, shared with
 * test/exposition/fuzz.test.ts. Defaults: 100,000 inputs, a random seed. Prints a summary (inputs, accepted,
 * rejected by reason, slowest input, growth ratios, elapsed time). Exit code 1 when an input breaks the
 * property (after printing the seed and a minimized counterexample) or a parse time grows more than
 * `GROWTH_BOUND` times for 8 times the bytes; 2 for bad arguments.
 */
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { closeParseWorker } from '../src/exposition/parse-off-thread.js';
import {
  checkCase,
  checkInput,
  checkPathologicalPage,
  describeInput,
  ENTRY_POINTS,
  FuzzFailure,
  type FuzzInput,
  FuzzTally,
  fixtureSeeds,
  formatCount,
  fuzzCase,
  fuzzInput,
  GROWTH_BOUND,
  GROWTH_FACTOR,
  measureGrowth,
  minimizeFailingInput,
  PATHOLOGICAL_SHAPES,
} from '../test/support/exposition-fuzz.js';
import { scriptOptions, usageError } from './command-line.js';

const DEFAULT_RUNS = 100_000;
/** The large pathological pages are 10 MiB. */
const PATHOLOGICAL_BYTES = (10 * 1024 * 1024) / GROWTH_FACTOR;
/** Reasons listed in the summary; the rest are counted together. */
const LISTED_REASONS = 15;

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function commandLine(): { runs: number; seed: number } {
  const usage = 'npm run fuzz -- [--runs N] [--seed S]';
  const values = scriptOptions('fuzz', usage, { runs: { type: 'string' }, seed: { type: 'string' } });
  const runs = values.runs === undefined ? DEFAULT_RUNS : Number(values.runs);
  const seed = values.seed === undefined ? (Math.random() * 2 ** 31) | 0 : Number(values.seed);
  if (!Number.isInteger(runs) || runs < 1)
    usageError('fuzz', usage, `--runs must be a positive integer, got ${values.runs}`);
  if (!Number.isInteger(seed)) usageError('fuzz', usage, `--seed must be an integer, got ${values.seed}`);
  return { runs, seed };
}

async function reportFailure(
  seed: number,
  runs: number,
  path: string,
  failing: FuzzInput,
  error: unknown,
): Promise<void> {
  console.log(`\nFAILED (seed ${seed}, path ${path})`);
  console.log(error instanceof Error ? error.message : String(error));
  const minimal = await minimizeFailingInput(failing);
  const minimalError = await checkInput(minimal).then(
    () => 'passes now (the failure depends on state, such as the parse worker)',
    (err: unknown) => (err instanceof FuzzFailure ? err.message : String(err)),
  );
  console.log('\nminimal counterexample (shrunk by fast-check, then lines and bytes removed):');
  console.log(describeInput(minimal));
  console.log(`fails with: ${minimalError}`);
  console.log(`\nreplay: npm run fuzz -- --seed ${seed} --runs ${runs}`);
}

function printTally(tally: FuzzTally, fuzzMs: number): void {
  console.log(
    `inputs: ${formatCount(tally.inputs)} (${formatCount(tally.inputs - tally.fromFixtures)} generated, ${formatCount(tally.fromFixtures)} mutated client-go pages) in ${seconds(fuzzMs)}`,
  );
  console.log(
    `  by entry point: ${ENTRY_POINTS.map((e) => `${e} ${formatCount(tally.byEntry.get(e) ?? 0)}`).join(', ')}`,
  );
  console.log(
    `  holding invalid UTF-8 ${formatCount(tally.invalidUtf8)}, NUL ${formatCount(tally.withNul)}, CR ${formatCount(tally.withCarriageReturn)}, lone surrogates ${formatCount(tally.withLoneSurrogate)}`,
  );
  console.log(
    `accepted: ${formatCount(tally.accepted)}; rejected with ExpositionError: ${formatCount(tally.rejected)}`,
  );
  const reasons = tally.reasons();
  for (const [reason, n] of reasons.slice(0, LISTED_REASONS)) console.log(`  ${formatCount(n).padStart(7)}  ${reason}`);
  if (reasons.length > LISTED_REASONS) {
    const rest = reasons.slice(LISTED_REASONS).reduce((sum, [, n]) => sum + n, 0);
    console.log(`  ${formatCount(rest).padStart(7)}  (${reasons.length - LISTED_REASONS} other reasons)`);
  }
  const slowest = tally.slowest;
  if (slowest !== undefined) {
    console.log(
      `slowest inline parse: ${slowest.ms.toFixed(1)} ms for ${formatCount(slowest.bytes)} bytes (${slowest.entry})`,
    );
  }
}

/** Measures every shape; prints one line each; returns the number of shapes that failed. */
async function checkGrowth(): Promise<number> {
  console.log(
    `\nlinear time: ${formatCount(PATHOLOGICAL_BYTES)} → ${formatCount(PATHOLOGICAL_BYTES * GROWTH_FACTOR)} bytes, best of 5 runs; ratio must stay under ${GROWTH_BOUND}`,
  );
  let failures = 0;
  for (const shape of PATHOLOGICAL_SHAPES) {
    const growth = measureGrowth(shape, PATHOLOGICAL_BYTES);
    const { outcome, violation } = await checkPathologicalPage(growth.large.text);
    const ok = growth.ratio < GROWTH_BOUND && violation === undefined;
    if (!ok) failures++;
    console.log(
      `  ${ok ? 'ok    ' : 'FAILED'} ${shape.name}: ${growth.large.holds}; ${growth.smallMs.toFixed(1)} → ${growth.largeMs.toFixed(1)} ms, ratio ${growth.ratio.toFixed(1)}; ${outcome}`,
    );
    if (violation !== undefined) console.log(`         ${violation}`);
  }
  return failures;
}

async function main(): Promise<number> {
  const { runs, seed } = commandLine();
  const started = performance.now();
  console.log(`exposition parser fuzz: ${formatCount(runs)} inputs, seed ${seed}`);
  const tally = new FuzzTally();
  const progressEvery = Math.max(1, Math.floor(runs / 10));
  const property = fc.asyncProperty(fuzzCase(fixtureSeeds()), async (c) => {
    tally.record(await checkCase(c));
    if (tally.inputs % progressEvery === 0) {
      process.stderr.write(`  ${formatCount(tally.inputs)} inputs, ${seconds(performance.now() - started)}\n`);
    }
  });
  const details = await fc.check(property, { numRuns: runs, seed });
  const fuzzMs = performance.now() - started;
  if (details.failed) {
    if (details.counterexample === null) {
      console.log(`\nFAILED (seed ${seed}): the run was interrupted or skipped too many inputs`);
    } else {
      await reportFailure(
        seed,
        runs,
        details.counterexamplePath,
        fuzzInput(details.counterexample[0]),
        details.errorInstance,
      );
    }
    return 1;
  }
  printTally(tally, fuzzMs);
  const growthFailures = await checkGrowth();
  console.log(`\nelapsed: ${seconds(performance.now() - started)}`);
  return growthFailures === 0 ? 0 : 1;
}

main()
  .then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exitCode = 2;
    },
  )
  .finally(() => closeParseWorker());
