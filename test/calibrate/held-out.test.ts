/**
 * The committed held-out grid (`calibration/held-out.json`): fresh seeds never used while choosing the
 * thresholds, controller-runtime at one and two workers, both flavors, background noise on and off, 30 to
 * 60 minutes, judged at every 30-second step after the first `for` and at the end. controller-runtime cases
 * run its default queue, the priority queue; component-base's run the classic queue. Precision and recall are
 * 1.0 for every rule the grid exercises.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { failability, type QueueVerdict, scoreRules } from '../../src/calibrate/compare.js';
import { parseCalibrationGrid } from '../../src/calibrate/grid.js';
import { describeCase } from '../../src/calibrate/run.js';
import { RULE_IDS } from '../../src/diagnosis/rule.js';
import { resolveParams } from '../../src/simulate/run.js';
import { expectAllPass, judgeEveryStep } from './support.js';

const cases = parseCalibrationGrid(readFileSync('calibration/held-out.json', 'utf8'), 'calibration/held-out.json');
const verdicts: QueueVerdict[] = [];

describe('calibration on the held-out grid', () => {
  it('covers what docs/calibration.md describes', () => {
    const runtimeWorkers = cases.filter((c) => c.flavor === 'controller-runtime').map((c) => c.workers);
    expect(runtimeWorkers).toContain(1);
    expect(runtimeWorkers).toContain(2);
    expect(new Set(cases.map((c) => (c.durationMs ?? 0) / 60_000))).toEqual(new Set([30, 45, 60]));
    expect(new Set(cases.map((c) => c.flavor))).toEqual(new Set(['controller-runtime', 'component-base']));
    expect(cases.some((c) => c.background === 'off')).toBe(true);
    // No case names a queue: each flavor runs its default (`resolveParams`), the priority queue for controller-runtime.
    expect(cases.filter((c) => c.queue !== undefined)).toEqual([]);
    expect(resolveParams({ flavor: 'controller-runtime' }).queue).toBe('priority');
    expect(Math.min(...cases.map((c) => c.seed ?? 0))).toBeGreaterThan(3000);
  });

  it.each(cases.map((c) => [describeCase(c), c] as const))('%s', { timeout: 300_000 }, async (name, c) => {
    const these = await judgeEveryStep(c);
    verdicts.push(...these);
    expectAllPass(these, name);
  });

  it('scores precision and recall 1.0 on every rule it exercises, with verdicts that could fail', () => {
    expect(verdicts.length).toBeGreaterThan(0);
    for (const score of scoreRules(verdicts)) {
      if (score.precision !== null) expect(score.precision, score.rule).toBe(1);
      if (score.recall !== null) expect(score.recall, score.rule).toBe(1);
    }
    const exercised = scoreRules(verdicts)
      .filter((s) => s.truePositives > 0)
      .map((s) => s.rule);
    expect(exercised).toEqual([...RULE_IDS]);
    const could = failability(verdicts);
    expect(could.canMiss).toBeGreaterThan(could.total / 5);
    expect(could.canFalseAlarm).toBe(could.total);
  });
});
