/**
 * The mutations `npm run calibrate:mutations` runs: every threshold a condition reads, halved and doubled; every
 * clause of every condition dropped, leaving a condition that differs from the rule's own; thresholds only the
 * texts read are named, never run. And a mutation the calibration must catch is caught on a small grid, by a wrong
 * verdict or by the gradual backlog found later than promised.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gradualBacklogRun } from '../../src/calibrate/gradual-backlog-promise.js';
import {
  clausePaths,
  greenSummary,
  type Mutation,
  type MutationResult,
  mutationKey,
  mutations,
  mutationsMarkdown,
  overridesFor,
  parseGreenReasons,
  runMutations,
  THRESHOLD_FACTORS,
  thresholdsByUse,
  withoutClause,
} from '../../src/calibrate/mutations.js';
import { RULES } from '../../src/diagnosis/catalog.js';
import { thresholdNodes } from '../../src/diagnosis/rule.js';
import { renderPromQL } from '../../src/promql/render.js';

const defaultsOf = (r: (typeof RULES)[number]) =>
  Object.fromEntries(Object.entries(r.thresholds).map(([name, spec]) => [name, spec.default]));

describe('mutations', () => {
  const all = mutations();

  it('halve and double every threshold a condition reads, and name the others as text only', () => {
    for (const use of thresholdsByUse()) {
      const r = RULES.find((x) => x.id === use.rule)!;
      expect([...use.inCondition, ...use.textOnly].sort()).toEqual(Object.keys(r.thresholds).sort());
      const rendered = renderPromQL(r.condition(thresholdNodes(defaultsOf(r))));
      for (const name of use.inCondition) {
        for (const factor of THRESHOLD_FACTORS) {
          const m = all.find(
            (x) => x.kind === 'threshold' && x.rule === r.id && x.threshold === name && x.factor === factor,
          );
          expect(m, `${r.id} ${name} ×${factor}`).toBeDefined();
          // The mutated value reaches the condition.
          const mutated = { ...defaultsOf(r), [name]: r.thresholds[name]!.default * factor };
          expect(renderPromQL(r.condition(thresholdNodes(mutated)))).not.toBe(rendered);
        }
      }
      for (const name of use.textOnly) {
        const mutated = { ...defaultsOf(r), [name]: r.thresholds[name]!.default * 2 };
        expect(renderPromQL(r.condition(thresholdNodes(mutated))), `${r.id} ${name} is text only`).toBe(rendered);
      }
    }
  });

  it('drop each clause of every condition, each drop a different condition', () => {
    for (const r of RULES) {
      const condition = r.condition(thresholdNodes(defaultsOf(r)));
      const paths = clausePaths(condition);
      // A set operation has two clauses or more; one comparison (StuckWorker: the age alone) has none to drop.
      const setOperation = condition.kind === 'binary' && ['and', 'or', 'unless'].includes(condition.op);
      if (setOperation) expect(paths.length, r.id).toBeGreaterThanOrEqual(2);
      else expect(paths, r.id).toEqual([]);
      const variants = new Set(paths.map((p) => renderPromQL(withoutClause(condition, p))));
      expect(variants.size, r.id).toBe(paths.length);
      expect(variants.has(renderPromQL(condition))).toBe(false);
      expect(
        all.filter((m) => m.kind === 'clause' && m.rule === r.id).map((m) => m.kind === 'clause' && m.path),
      ).toEqual(paths);
    }
  });

  it('a chain of one operation is a list of clauses: a or b or c gives three drops, not nested pairs', () => {
    // Backlog's gate (keys late, or the depth growing now) and its readings (not draining, real changes standing, a
    // fall settling above zero over the trend window or over the half hour), unless a burst drains; or served by no
    // worker.
    const clauses = all.flatMap((m) => (m.rule === 'WorkqueueBacklog' && m.kind === 'clause' ? [m.clause] : []));
    const late = 'Queue latency (mean) ≥ 5s (minWait)';
    const growingNow = 'Depth growth (last five minutes) ≥ 0.02/s (minGrowth)';
    const notDraining = 'Depth growth > Completion rate × -0.2';
    const servedStanding =
      'Depth (floor of the last minute, priority 0 and above) ≥ 20 items (minDepth) and Depth growth (priority 0 and above) > Completion rate × -0.2';
    const settlesOverTrend =
      'Depth (average) × (Add rate − Add rate (trend window)) ≥ -150 × Depth growth × (Completion rate − Add rate)';
    const trendRiseAboveNoise =
      'max(Add rate − Add rate (trend window), 0) × max(Add rate − Add rate (trend window), 0) ≥ 2 (riseSignificance) × 2 (riseSignificance) × (Add rate / 600)';
    const settlesOverHalfHour =
      'Depth (average) × (Add rate − Add rate (half hour)) ≥ (Depth (average, half hour) − Depth (average)) × (Completion rate − Add rate)';
    const halfHourRiseAboveNoise =
      'max(Add rate − Add rate (half hour), 0) × max(Add rate − Add rate (half hour), 0) ≥ 2 (riseSignificance) × 2 (riseSignificance) × (Add rate / 360)';
    const overTrend = `${settlesOverTrend} and ${trendRiseAboveNoise}`;
    const overHalfHour = `${settlesOverHalfHour} and ${halfHourRiseAboveNoise}`;
    const gate = `${late} or ${growingNow}`;
    const readings = `${notDraining} or (${servedStanding}) or (${overTrend}) or (${overHalfHour})`;
    const each = [
      late,
      growingNow,
      gate,
      notDraining,
      servedStanding,
      overTrend,
      settlesOverTrend,
      trendRiseAboveNoise,
      overHalfHour,
      settlesOverHalfHour,
      halfHourRiseAboveNoise,
    ];
    for (const one of [...each, readings]) {
      expect(clauses.filter((c) => c === one)).toHaveLength(1);
    }
    const burst =
      'Depth growth (last five minutes) ≤ Completion rate × -0.2 and Depth (minimum, trend window) < 20 items (minDepth)';
    const unserved = 'Completion rate ≤ 0';
    for (const one of [burst, unserved]) expect(clauses.filter((c) => c === one)).toHaveLength(1);
    // The chain of readings is dropped whole or one reading at a time, never two of them together.
    expect(clauses.filter((c) => c === `${notDraining} or (${servedStanding})`)).toEqual([]);
    expect(clauses.filter((c) => c.startsWith(`${notDraining} or (`) && c !== readings)).toEqual([]);
  });

  it('the right of an `unless` inside another `unless` is one clause: it is not a chain', () => {
    // Backlog's exception for a priority queue's list draining: (low-priority depth falling unless real changes stand).
    const clauses = all.flatMap((m) => (m.rule === 'WorkqueueBacklog' && m.kind === 'clause' ? [m.path] : []));
    expect(clauses).toContain('rhs');
    expect(clauses).toContain('rhs.rhs');
  });

  it('put the mutation in force through the rule overrides', () => {
    const threshold = all.find((m) => m.kind === 'threshold')!;
    expect(overridesFor(threshold).rules?.[threshold.rule]?.thresholds).toBeDefined();
    const clause = all.find((m) => m.kind === 'clause')!;
    expect(typeof overridesFor(clause).rules?.[clause.rule]?.condition).toBe('function');
  });

  it('a backlog rule that needs a depth floor a thousand times higher is caught by a backlog case', {
    timeout: 300_000,
  }, async () => {
    const results = await runMutations(
      // Long enough for the truth to require the backlog: its for, and the half-hour trend it may read.
      [{ scenario: 'backlog', seed: 4242, durationMs: 45 * 60_000 }],
      [{ kind: 'threshold', rule: 'WorkqueueBacklog', threshold: 'minDepth', factor: 1000, value: 20_000 }],
    );
    expect(results).toHaveLength(1);
    expect(results[0]?.caught).toBe(true);
    expect(results[0]?.by?.missed).toContain('WorkqueueBacklog');
  });

  it('a mutation every case leaves right is caught when the gradual backlog is found later than promised', {
    timeout: 300_000,
  }, async () => {
    // A quiet controller cannot tell a depth floor of 2,000 keys from the rule's own; the gradual backlog, found late, can.
    const quiet = [{ scenario: 'healthy', seed: 4243, durationMs: 30 * 60_000 }];
    const floorRaised: Mutation = {
      kind: 'threshold',
      rule: 'WorkqueueBacklog',
      threshold: 'minDepth',
      factor: 100,
      value: 2_000,
    };
    const promise = [await gradualBacklogRun('controller-runtime', 1)];
    try {
      const [held] = await runMutations(quiet, [floorRaised], undefined, promise);
      expect(held).toMatchObject({
        caught: true,
        casesRun: 2,
        by: {
          case: 'gradual backlog promise, controller-runtime seed 1',
          missed: ['WorkqueueBacklog'],
          unexpected: [],
        },
      });
      const [alone] = await runMutations(quiet, [floorRaised]);
      expect(alone).toMatchObject({ caught: false, casesRun: 1 });
    } finally {
      for (const run of promise) await run.close();
    }
  });

  describe('reasons a mutation stays green', () => {
    const [first, second] = mutations(['WorkqueueBacklog']);
    const results: MutationResult[] = [
      { mutation: first!, caught: false, casesRun: 3 },
      {
        mutation: second!,
        caught: true,
        casesRun: 1,
        by: { case: 'backlog seed=1', minute: 12, missed: ['WorkqueueBacklog'], unexpected: [] },
      },
    ];
    const file = (reasons: Record<string, unknown>) => JSON.stringify({ reasons });

    it('are read for green mutations and shown in the report beside them', () => {
      const reasons = parseGreenReasons(
        file({ [mutationKey(first!)]: { kind: 'allowed', reason: 'the truth allows either | both' } }),
        'r.json',
        results,
      );
      const table = mutationsMarkdown(results, [], reasons);
      expect(table).toContain('allowed: the truth allows either \\| both');
      expect(greenSummary(results, reasons)).toBe('1 allowed');
      expect(greenSummary(results, new Map())).toBe('1 without a reason');
    });

    it('never outlive their mutation: a reason for a caught, unknown or unexplained mutation is an error', () => {
      expect(() =>
        parseGreenReasons(file({ [mutationKey(second!)]: { kind: 'implied', reason: 'x' } }), 'r.json', results),
      ).toThrow(/caught now/);
      expect(() =>
        parseGreenReasons(file({ 'WorkqueueBacklog nothing ×3': { kind: 'implied', reason: 'x' } }), 'r.json', results),
      ).toThrow(/no such mutation/);
      expect(() =>
        parseGreenReasons(file({ [mutationKey(first!)]: { kind: 'fine', reason: 'x' } }), 'r.json', results),
      ).toThrow(/needs a kind/);
      // A rule not run this time keeps its reasons for its own run.
      expect(
        parseGreenReasons(
          file({ 'WorkqueueHotLoop drainShare ×2': { kind: 'allowed', reason: 'x' } }),
          'r.json',
          results,
        ).size,
      ).toBe(0);
      // A part of a rule's mutations (`--part`) leaves the reasons of the other parts for theirs; a caught one is stale still.
      const other = file({
        'WorkqueueBacklog nothing ×3': { kind: 'implied', reason: 'x' },
        [mutationKey(first!)]: { kind: 'allowed', reason: 'y' },
      });
      expect([...parseGreenReasons(other, 'r.json', results, true).keys()]).toEqual([mutationKey(first!)]);
      expect(() =>
        parseGreenReasons(file({ [mutationKey(second!)]: { kind: 'implied', reason: 'x' } }), 'r.json', results, true),
      ).toThrow(/caught now/);
    });

    it('in the committed file, name every green mutation of the committed run and only those', () => {
      const run = JSON.parse(readFileSync('calibration/mutations.json', 'utf8')) as { results: MutationResult[] };
      const reasons = parseGreenReasons(
        readFileSync('calibration/uncaught-mutations.json', 'utf8'),
        'calibration/uncaught-mutations.json',
        run.results,
      );
      const green = run.results.filter((r) => !r.caught).map((r) => mutationKey(r.mutation));
      expect([...reasons.keys()].sort()).toEqual(green.sort());
    });
  });
});
