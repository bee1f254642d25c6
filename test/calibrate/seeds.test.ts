/** `calibrate --seeds 5` at defaults: every scenario, every seed, every queue matches its ground truth. */
import { describe, expect, it } from 'vitest';
import { runCase } from '../../src/calibrate/run.js';
import { SCENARIO_NAMES } from '../../src/simulate/index.js';

const SEEDS = [1, 2, 3, 4, 5];

describe('calibration at default parameters over five seeds', () => {
  it.each(SCENARIO_NAMES.map((s) => [s]))('%s', { timeout: 240_000 }, async (scenario) => {
    for (const seed of SEEDS) {
      const verdicts = await runCase({ scenario, seed });
      expect(verdicts.length, `${scenario} seed ${seed}: queues`).toBeGreaterThan(0);
      for (const v of verdicts) {
        expect(
          { queue: v.name, missed: v.missed, unexpected: v.unexpected, problems: v.problems },
          `${scenario} seed ${seed}`,
        ).toEqual({ queue: v.name, missed: [], unexpected: [], problems: [] });
      }
    }
  });
});
