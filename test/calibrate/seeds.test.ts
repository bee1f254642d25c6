/**
 * `calibrate --seeds 3 --every-step` at defaults: every scenario, every seed, every queue matches its ground
 * truth at every evaluation step after the first `for` and at the end. A run lasts 30 minutes, or longer where its
 * truth owes a finding later than 25 minutes in (a persistent failure's 15-minute windows and `for`), so that every
 * planted problem is owed at some judged step: a miss can fail the test.
 */
import { describe, expect, it } from 'vitest';
import { owedBy } from '../../src/calibrate/owed.js';
import { SCENARIO_NAMES } from '../../src/simulate/index.js';
import { expectAllPass, judgeEveryStep, MINUTE } from './support.js';

const SEEDS = [1, 2, 3];
const SHORTEST_MS = 30 * MINUTE;

/** 30 minutes, or five minutes past the latest time the truth owes a finding, rounded up to five minutes. */
function durationFor(scenario: string, seed: number): number {
  const shortest = owedBy({ scenario, seed, durationMs: SHORTEST_MS }).shortestRunMs;
  return Math.max(SHORTEST_MS, Math.ceil(shortest / (5 * MINUTE)) * 5 * MINUTE);
}

describe('calibration at default parameters over three seeds, at every step', () => {
  it.each(SCENARIO_NAMES.map((s) => [s]))('%s', { timeout: 360_000 }, async (scenario) => {
    for (const seed of SEEDS) {
      const durationMs = durationFor(scenario, seed);
      const verdicts = await judgeEveryStep({ scenario, seed, durationMs });
      const owes = owedBy({ scenario, seed, durationMs }).rules.length > 0;
      // A planted problem is owed at some judged step, so that missing it fails.
      if (owes)
        expect(
          verdicts.some((v) => v.canMiss),
          `${scenario} seed ${seed}: owed at some step`,
        ).toBe(true);
      expectAllPass(verdicts, `${scenario} seed ${seed}`);
    }
  });
});
