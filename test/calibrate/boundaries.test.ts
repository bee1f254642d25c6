/**
 * The boundary grid (`calibration/boundaries.json`): causes planted at a strength where a threshold halved or doubled,
 * or a clause dropped, turns a verdict wrong (the mutations `npm run calibrate:mutations` runs). Every case matches
 * its ground truth at every step, and owes its finding at some step, so that a mutation can fail it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCalibrationGrid } from '../../src/calibrate/grid.js';
import { describeCase } from '../../src/calibrate/run.js';
import { expectAllPass, judgeEveryStep } from './support.js';

const GRID = 'calibration/boundaries.json';
const cases = parseCalibrationGrid(readFileSync(GRID, 'utf8'), GRID);

describe('calibration on the boundary grid', () => {
  it.each(cases.map((c) => [describeCase(c), c] as const))('%s', { timeout: 300_000 }, async (name, c) => {
    const verdicts = await judgeEveryStep(c);
    expect(
      verdicts.some((v) => v.canMiss),
      `${name}: owes its finding at some step`,
    ).toBe(true);
    expectAllPass(verdicts, name);
  });
});
