/**
 * The committed held-out grid (`calibration/held-out.json`, drawn by scripts/held-out-grid.ts): fresh seeds never
 * used while choosing the thresholds, every scenario in both flavors, controller-runtime on its priority and its
 * classic queue, drawn workers and objects, background noise on and off, 30 to 60 minutes, judged at every
 * 30-second step after the first `for` and at the end. Every case whose truth owes a finding requires it at some
 * judged step (so a miss fails), persistent failures for at least 45 minutes. Precision and recall are 1.0 for
 * every rule the grid exercises.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { failability, type QueueVerdict, scoreRules } from '../../src/calibrate/compare.js';
import { parseCalibrationGrid } from '../../src/calibrate/grid.js';
import { owedBy } from '../../src/calibrate/owed.js';
import { describeCase } from '../../src/calibrate/run.js';
import { RULE_IDS } from '../../src/diagnosis/rule.js';
import { SCENARIO_NAMES } from '../../src/simulate/index.js';
import { expectAllPass, judgeEveryStep, MINUTE } from './support.js';

const cases = parseCalibrationGrid(readFileSync('calibration/held-out.json', 'utf8'), 'calibration/held-out.json');
const verdicts: QueueVerdict[] = [];

describe('calibration on the held-out grid', () => {
  it('covers what docs/calibration.md describes', () => {
    const runtimeWorkers = cases.filter((c) => c.flavor === 'controller-runtime').map((c) => c.workers);
    expect(runtimeWorkers).toContain(1);
    expect(runtimeWorkers).toContain(2);
    // Durations are drawn from 30, 45 and 60 minutes; a case whose owed finding is due later runs past it, to the
    // next quarter hour at least five minutes after the finding is due (never longer than that).
    const durations = new Set(cases.map((c) => (c.durationMs ?? 0) / 60_000));
    for (const drawn of [30, 45, 60]) expect(durations).toContain(drawn);
    for (const c of cases.filter((c) => (c.durationMs ?? 0) > 60 * MINUTE)) {
      const shortest = owedBy(c).shortestRunMs;
      expect(shortest, describeCase(c)).toBeGreaterThan(60 * MINUTE);
      expect(c.durationMs, describeCase(c)).toBe(Math.ceil(shortest / (15 * MINUTE)) * 15 * MINUTE);
    }
    expect(new Set(cases.map((c) => c.flavor))).toEqual(new Set(['controller-runtime', 'component-base']));
    expect(cases.some((c) => c.background === 'off')).toBe(true);
    // controller-runtime on both its queues: the priority queue (its default, no `queue`) and the classic one.
    const runtimeQueues = cases.filter((c) => c.flavor === 'controller-runtime').map((c) => c.queue ?? 'priority');
    expect(new Set(runtimeQueues)).toEqual(new Set(['priority', 'classic']));
    // Every scenario, in both flavours: one added after the draw fails here until its cases are appended, drawn by
    // the same rules (`calibrate:held-out-grid --scenario`), or the next grid is drawn.
    for (const name of SCENARIO_NAMES)
      expect(new Set(cases.filter((c) => c.scenario === name).map((c) => c.flavor)), name).toEqual(
        new Set(['controller-runtime', 'component-base']),
      );
    expect(new Set(cases.map((c) => c.scenario))).toEqual(new Set(SCENARIO_NAMES));
    // Seeds used by nothing else: the boundary grid has 8001+, the detection curves 9001+.
    expect(Math.min(...cases.map((c) => c.seed ?? 0))).toBeGreaterThan(10_000);
  });

  it('runs persistent failures for at least 45 minutes', () => {
    const failing = cases.filter((c) => owedBy(c).rules.includes('WorkqueuePersistentFailures'));
    expect(failing.length).toBeGreaterThan(0);
    for (const c of failing) expect(c.durationMs ?? 0, describeCase(c)).toBeGreaterThanOrEqual(45 * MINUTE);
  });

  it.each(cases.map((c) => [describeCase(c), c] as const))('%s', { timeout: 300_000 }, async (name, c) => {
    const these = await judgeEveryStep(c);
    verdicts.push(...these);
    expectAllPass(these, name);
    // A planted problem the metrics can show (its truth expects a finding) is required at some judged step.
    if (owedBy(c).rules.length > 0)
      expect(
        these.some((v) => v.canMiss),
        `${name}: can fail`,
      ).toBe(true);
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
