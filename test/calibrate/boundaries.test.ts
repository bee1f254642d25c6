/**
 * The boundary grid (`calibration/boundaries.json`): causes planted at a strength where a threshold halved or doubled,
 * or a clause dropped, turns a verdict wrong (the mutations `npm run calibrate:mutations` runs). Every case matches
 * its ground truth at every step, and can fail: a planted problem owes its finding at some step (a mutation fails it
 * by a miss); a near miss names in `forbids` the rules its truth forbids (neither expects nor allows) on some queue
 * at some step (a mutation fails it by a false alarm there, whatever the other queues of the process owe).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCalibrationGrid } from '../../src/calibrate/grid.js';
import { describeCase } from '../../src/calibrate/run.js';
import type { RuleId } from '../../src/diagnosis/rule.js';
import { expectAllPass, judgeEveryStep } from './support.js';

const GRID = 'calibration/boundaries.json';
const text = readFileSync(GRID, 'utf8');
const cases = parseCalibrationGrid(text, GRID);
/** What each near miss must stay silent on, in the grid's order (the parser validates the rule ids). */
const forbidden = (JSON.parse(text) as { cases: Array<{ forbids?: RuleId[] }> }).cases.map((c) => c.forbids ?? []);

describe('calibration on the boundary grid', () => {
  it.each(cases.map((c, i) => [describeCase(c), c, forbidden[i] ?? []] as const))(
    '%s',
    { timeout: 300_000 },
    async (name, c, forbids) => {
      const verdicts = await judgeEveryStep(c);
      if (forbids.length === 0)
        expect(
          verdicts.some((v) => v.canMiss),
          `${name}: owes its finding at some step`,
        ).toBe(true);
      for (const id of forbids)
        expect(
          verdicts.some((v) => !v.expected.includes(id) && !v.allowed.includes(id)),
          `${name}: ${id} forbidden on some queue at some step`,
        ).toBe(true);
      expectAllPass(verdicts, name);
    },
  );
});
