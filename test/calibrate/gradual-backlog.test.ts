/**
 * A queue that falls behind gradually is reported within 16 minutes of ceasing to drain: from the last time its depth
 * was zero (a queue that keeps up drains to zero between bursts), the finding is there at every step. The promise is
 * the product's (src/calibrate/gradual-backlog-promise.ts, docs/calibration.md), not read from the rule: a rule whose
 * thresholds or `for` delayed it would fail here. Both diagnoses that size workers give one answer.
 */
import { describe, expect, it } from 'vitest';
import {
  GRADUAL_BACKLOG_FLAVORS,
  GRADUAL_BACKLOG_PROMISE_MS,
  GRADUAL_BACKLOG_SEEDS,
  gradualBacklogRun,
  lateSteps,
} from '../../src/calibrate/gradual-backlog-promise.js';
import { diagnose } from '../../src/diagnosis/engine.js';
import { runVirtual } from '../../src/simulate/index.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { MINUTE } from './support.js';

describe('gradual backlog', () => {
  it('promises 16 minutes, stated apart from the rule', () => {
    expect(GRADUAL_BACKLOG_PROMISE_MS).toBe(16 * MINUTE);
    expect(GRADUAL_BACKLOG_SEEDS).toHaveLength(10);
    expect([...GRADUAL_BACKLOG_FLAVORS].sort()).toEqual(['component-base', 'controller-runtime']);
  });

  it.each(GRADUAL_BACKLOG_FLAVORS)(
    'is found within 16 minutes of the queue last draining (%s)',
    { timeout: 300_000 },
    async (flavor) => {
      for (const seed of GRADUAL_BACKLOG_SEEDS) {
        const run = await gradualBacklogRun(flavor, seed);
        try {
          expect(run.dueMs, `seed ${seed}: the queue must stop draining well before the end`).toBeLessThan(
            run.endMs - 5 * MINUTE,
          );
          expect(await lateSteps(run), `${run.name}: seconds after ceasing to drain without a Backlog finding`).toEqual(
            [],
          );
        } finally {
          await run.close();
        }
      }
    },
  );

  it('is broken by a rule that finds the backlog later', { timeout: 120_000 }, async () => {
    // Backlog's depth floor at 2,000 keys: a gradual backlog of a few hundred keys is found late, or not at all.
    const run = await gradualBacklogRun('controller-runtime', 1);
    try {
      const late = await lateSteps(run, { rules: { WorkqueueBacklog: { thresholds: { minDepth: 2_000 } } } });
      expect(late.length).toBeGreaterThan(0);
      expect(Math.min(...late)).toBeGreaterThanOrEqual(GRADUAL_BACKLOG_PROMISE_MS / 1000);
    } finally {
      await run.close();
    }
  });

  it('gives one worker count when Backlog and Saturated both fire', { timeout: 120_000 }, async () => {
    const run = await runVirtual('gradual-backlog', { seed: 1, durationMs: 45 * MINUTE });
    const source = recordingSourceFromText(run.recording.text(), 'gradual.om');
    const range = source.dataRange();
    if (range === undefined) throw new Error('empty recording');
    const report = await diagnose(source.backend, {
      atMs: range.endMs,
      runbookBaseUrl: 'https://example.test/runbooks',
    });
    const findings = report.queues.find((q) => q.queue.name === 'pod')?.findings ?? [];
    const backlog = findings.find((f) => f.rule === 'WorkqueueBacklog');
    const saturated = findings.find((f) => f.rule === 'WorkqueueSaturated');
    expect(backlog?.evidence.workersNeeded?.value).toBeGreaterThan(0);
    expect(saturated?.evidence.recommendedWorkers).toEqual(backlog?.evidence.workersNeeded);
    expect(backlog?.fix).toContain(`about ${backlog?.evidence.workersNeeded?.value} workers`);
    expect(saturated?.fix).toContain(`about ${backlog?.evidence.workersNeeded?.value} workers`);
    await source.close();
  });
});
