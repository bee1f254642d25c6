/**
 * `calibrate --seeds 3 --every-step` at defaults: every scenario, every seed, every queue matches its ground
 * truth at every evaluation step after the first `for` and at the end. A run lasts 30 minutes, or longer where its
 * truth owes a finding later than 25 minutes in (a persistent failure's 15-minute windows and `for`), so that every
 * planted problem is owed at some judged step: a miss can fail the test. A run that near-misses.test.ts or
 * problems.test.ts already judge at every step (the same scenario, seed and parameters) is judged there only.
 */
import { describe, expect, it } from 'vitest';
import { owedBy } from '../../src/calibrate/owed.js';
import { SCENARIO_NAMES } from '../../src/simulate/index.js';
import { expectAllPass, judgeEveryStep, MINUTE, nearMissAndProblemRuns, runKey } from './support.js';

const SEEDS = [1, 2, 3];
const SHORTEST_MS = 30 * MINUTE;
const JUDGED_ELSEWHERE = new Set(nearMissAndProblemRuns().map(runKey));

/** 30 minutes, or five minutes past the latest time the truth owes a finding, rounded up to five minutes. */
function durationFor(scenario: string, seed: number): number {
  const shortest = owedBy({ scenario, seed, durationMs: SHORTEST_MS }).shortestRunMs;
  return Math.max(SHORTEST_MS, Math.ceil(shortest / (5 * MINUTE)) * 5 * MINUTE);
}

/** Each scenario's runs judged here: the seeds whose run no other calibration file judges; scenarios with none left out. */
const RUNS = SCENARIO_NAMES.map(
  (scenario) =>
    [
      scenario,
      SEEDS.map((seed) => ({ scenario, seed, durationMs: durationFor(scenario, seed) })).filter(
        (c) => !JUDGED_ELSEWHERE.has(runKey(c)),
      ),
    ] as const,
).filter(([, runs]) => runs.length > 0);

describe('calibration at default parameters over three seeds, at every step', () => {
  it.each(RUNS)('%s', { timeout: 360_000 }, async (scenario, runs) => {
    for (const c of runs) {
      const verdicts = await judgeEveryStep(c);
      // A planted problem is owed at some judged step, so that missing it fails.
      if (owedBy(c).rules.length > 0)
        expect(
          verdicts.some((v) => v.canMiss),
          `${scenario} seed ${c.seed}: owed at some step`,
        ).toBe(true);
      expectAllPass(verdicts, `${scenario} seed ${c.seed}`);
    }
  });
});
