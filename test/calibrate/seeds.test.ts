/**
 * `calibrate --seeds 3 --every-step` at defaults: every scenario, every seed, every queue matches its ground
 * truth at every evaluation step after the first `for` and at the end.
 */
import { describe, it } from 'vitest';
import { SCENARIO_NAMES } from '../../src/simulate/index.js';
import { expectAllPass, judgeEveryStep } from './support.js';

const SEEDS = [1, 2, 3];

describe('calibration at default parameters over three seeds, at every step', () => {
  it.each(SCENARIO_NAMES.map((s) => [s]))('%s', { timeout: 240_000 }, async (scenario) => {
    for (const seed of SEEDS) {
      expectAllPass(await judgeEveryStep({ scenario, seed }), `${scenario} seed ${seed}`);
    }
  });
});
