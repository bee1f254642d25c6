/**
 * The calibration's deadlines are the product's detection budgets, stated in the calibration: a rule whose `for`
 * grew past its budget is judged late, not excused by a deadline that grew with it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compareWithTruth, expectedFrom } from '../../src/calibrate/compare.js';
import { DETECTION_BUDGETS } from '../../src/calibrate/detection-budget.js';
import { RULES } from '../../src/diagnosis/catalog.js';
import type { QueueReport, Report } from '../../src/diagnosis/report.js';
import { RULE_IDS } from '../../src/diagnosis/rule.js';
import type { GroundTruth, QueueTruth } from '../../src/simulate/index.js';
import { MINUTE } from './support.js';

const queueTruth = (over: Partial<QueueTruth>): QueueTruth =>
  ({ name: 'pod', controller: 'pod', expected: [], allowed: [], ...over }) as QueueTruth;

describe('detection budgets', () => {
  it('owe a finding from the later of its budget past the onset and past the cause, then a minute', () => {
    // Backlog: fifteen minutes past its cause (the onset where none is given), ten past an onset after the cause.
    expect(expectedFrom(queueTruth({ expected: ['WorkqueueBacklog'], onsetMs: 20 * MINUTE }))).toBe(36 * MINUTE);
    expect(
      expectedFrom(queueTruth({ expected: ['WorkqueueBacklog'], onsetMs: 20 * MINUTE, causeMs: 18 * MINUTE })),
    ).toBe(34 * MINUTE);
    expect(
      expectedFrom(queueTruth({ expected: ['WorkqueueBacklog'], onsetMs: 20 * MINUTE, causeMs: 10 * MINUTE })),
    ).toBe(31 * MINUTE);
    // Persistent failures from the start: half an hour for errors backing off to show over their window and hold.
    expect(expectedFrom(queueTruth({ expected: ['WorkqueuePersistentFailures'] }))).toBe(31 * MINUTE);
    // Several expected: the latest.
    expect(expectedFrom(queueTruth({ expected: ['WorkqueueStuckWorker', 'WorkqueueSaturated'], onsetMs: 0 }))).toBe(
      21 * MINUTE,
    );
  });

  it('name every rule, each with its reason, and each rule can keep its promise', () => {
    expect(Object.keys(DETECTION_BUDGETS).sort()).toEqual([...RULE_IDS].sort());
    for (const r of RULES) {
      const budget = DETECTION_BUDGETS[r.id];
      expect(budget.why.length, r.id).toBeGreaterThan(40);
      expect(budget.afterCauseMs, r.id).toBeGreaterThanOrEqual(budget.afterOnsetMs);
      // A finding cannot come before its condition has held for its `for`.
      expect(r.forMs, `${r.id}: its for exceeds the budget past the onset`).toBeLessThanOrEqual(budget.afterOnsetMs);
    }
  });

  it('judge a finding that comes after its budget as a miss, whatever the rule', () => {
    const truth = {
      scenario: 'backlog',
      parameters: { seed: 1 },
      queues: [queueTruth({ expected: ['WorkqueueBacklog'], onsetMs: 0 })],
    } as unknown as GroundTruth;
    const report = (firing: boolean): Report =>
      ({
        queues: [
          {
            queue: { name: 'pod', controller: 'pod' },
            status: 'active',
            findings: firing ? [{ rule: 'WorkqueueBacklog', state: 'firing' }] : [],
          } as unknown as QueueReport,
        ],
      }) as unknown as Report;
    // Before its budget a missing finding is allowed to be building; from sixteen minutes it is owed.
    expect(compareWithTruth(report(false), truth, 15 * MINUTE)[0]?.pass).toBe(true);
    expect(compareWithTruth(report(false), truth, 16 * MINUTE)[0]?.missed).toEqual(['WorkqueueBacklog']);
    expect(compareWithTruth(report(true), truth, 16 * MINUTE)[0]?.pass).toBe(true);
  });

  it('are the ones docs/calibration.md tabulates', () => {
    const doc = readFileSync('docs/calibration.md', 'utf8').split('## Detection budgets')[1] ?? '';
    for (const id of RULE_IDS) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${id}\` |`));
      const [afterCause, afterOnset] = (row ?? '')
        .split('|')
        .slice(2, 4)
        .map((cell) => Number.parseFloat(cell));
      expect({ afterCause, afterOnset }, id).toEqual({
        afterCause: DETECTION_BUDGETS[id].afterCauseMs / MINUTE,
        afterOnset: DETECTION_BUDGETS[id].afterOnsetMs / MINUTE,
      });
    }
  });
});
