/**
 * A loop of more keys than workers holds every worker and keeps the loopers less the workers waiting. Keys re-added
 * with a plain Add after a denied write (a hand-written worker, no reconcile metrics) show one failed write per add
 * and no retries: that proves the loop at any depth, however many keys loop. A status-write loop shows only one
 * write per add, which a full pool over a standing queue whose every sync writes once shows too: it is found while
 * its keys do not pile up, and past that it is at least reported (the loop holds every worker: saturated).
 */
import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../src/diagnosis/report.js';
import type { SimulationParams } from '../../src/simulate/index.js';
import { scenarioQueue } from '../support/scenario-queue.js';

const MINUTE = 60_000;
const firing = (q: QueueReport) => q.findings.filter((f) => f.state === 'firing').map((f) => f.rule);
const value = (q: QueueReport, id: string) => q.signals[id]?.value ?? Number.NaN;

describe('a loop of more keys than workers', () => {
  it.each([
    ['classic', 4, 30, 11],
    ['priority', 1, 12, 12],
    ['priority', 2, 40, 13],
  ] as const)(
    'denied writes re-added at once, %s queue, %i workers, %i loopers: a hot loop at any depth',
    { timeout: 180_000 },
    async (queue, workers, loopKeys, seed) => {
      const q = await scenarioQueue('hot-loop-no-backoff', {
        queue,
        workers,
        loopKeys,
        seed,
        durationMs: 20 * MINUTE,
      } satisfies Partial<SimulationParams>);
      // The loopers beyond the workers stand in the queue: far more than a nearly empty queue holds.
      expect(value(q, 'servedFirstDepthMedian')).toBeGreaterThan(loopKeys - workers - 6);
      expect(value(q, 'retryRate')).toBeLessThan(0.05 * value(q, 'addRate'));
      expect(firing(q)).toContain('WorkqueueHotLoop');
      expect(q.findings.find((f) => f.rule === 'WorkqueueHotLoop')?.summary).toMatch(
        /failed API writes track the adds/,
      );
    },
  );

  it('a status-write loop of 30 keys on 2 workers is not passed over: every worker is held, saturated', {
    timeout: 180_000,
  }, async () => {
    const q = await scenarioQueue('hot-loop-status-write', {
      flavor: 'controller-runtime',
      queue: 'priority',
      loopKeys: 30,
      seed: 14,
      durationMs: 30 * MINUTE,
    });
    expect(value(q, 'servedFirstDepthMedian')).toBeGreaterThan(20);
    expect(firing(q)).toContain('WorkqueueSaturated');
  });
});
