/**
 * Objects failing forever behind a rate limiter whose every delay is zero (a custom limiter with a zero base):
 * each failing key is synced again the moment it is done. The priority queue counts a retry only for a positive
 * delay, so its reconcile errors come without retries: a hot loop, proven by the errors' own rate, however many
 * real changes come beside it and however many keys loop. The classic queue counts every requeue as a retry, as
 * under backoff: there the errors are persistent failures.
 */
import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../src/diagnosis/report.js';
import type { SimulationParams } from '../../src/simulate/index.js';
import { scenarioQueue } from '../support/scenario-queue.js';

const MINUTE = 60_000;
const AT_ONCE: Partial<SimulationParams> = {
  keys: 1000,
  backoffBaseMs: 0,
  durationMs: 45 * MINUTE,
  flavor: 'controller-runtime',
};

const findings = (q: QueueReport) => q.findings.map((f) => f.rule);
const value = (q: QueueReport, id: string) => q.signals[id]?.value ?? Number.NaN;

describe('failing keys requeued at once', () => {
  it.each([1, 2])(
    'priority queue, seed %i: two loopers among 30 real changes a second are a hot loop',
    { timeout: 120_000 },
    async (seed) => {
      const q = await scenarioQueue('persistent-failure', {
        ...AT_ONCE,
        seed,
        workers: 2,
        failingKeys: 2,
        rate: 30,
        queue: 'priority',
      });
      // The loop's errors are under half of the adds: the real changes add as many again.
      expect(value(q, 'requeuedErrorRate')).toBeLessThan(0.6 * value(q, 'addRate'));
      expect(value(q, 'retryRate')).toBeLessThan(0.1 * value(q, 'requeuedErrorRate'));
      expect(findings(q)).toContain('WorkqueueHotLoop');
      // Nothing is retried, let alone with backoff: not persistent failures.
      expect(findings(q)).not.toContain('WorkqueuePersistentFailures');
    },
  );

  it.each([5, 6])(
    'priority queue, seed %i: a slow loop (two objects failing after 0.8 s) beside the polls of 20 objects is a hot loop',
    { timeout: 120_000 },
    async (seed) => {
      const q = await scenarioQueue('persistent-failure', {
        ...AT_ONCE,
        seed,
        workers: 4,
        failingKeys: 2,
        syncMs: 800,
        queue: 'priority',
      });
      // About 2.4 errors a second; the polls' RequeueAfter counts retries beside them (a positive delay), which
      // reach a tenth of the errors and more, but backoff would count at least one retry per error.
      expect(value(q, 'requeuedErrorRate')).toBeGreaterThan(2);
      expect(value(q, 'retryRate')).toBeGreaterThan(0.1 * value(q, 'requeuedErrorRate'));
      expect(value(q, 'retryRate')).toBeLessThan(0.4 * value(q, 'requeuedErrorRate'));
      expect(findings(q)).toContain('WorkqueueHotLoop');
      expect(findings(q)).not.toContain('WorkqueuePersistentFailures');
    },
  );

  it('priority queue: thirty loopers on four workers, 26 of them always waiting, are a hot loop', {
    timeout: 120_000,
  }, async () => {
    const q = await scenarioQueue('persistent-failure', { ...AT_ONCE, seed: 3, workers: 4, failingKeys: 30 });
    expect(value(q, 'servedFirstDepthMedian')).toBeGreaterThan(20);
    expect(findings(q)).toContain('WorkqueueHotLoop');
  });

  it('classic queue: every requeue is a retry, and the failures are persistent', { timeout: 120_000 }, async () => {
    const q = await scenarioQueue('persistent-failure', {
      ...AT_ONCE,
      seed: 4,
      workers: 4,
      failingKeys: 2,
      queue: 'classic',
    });
    expect(value(q, 'retryRate')).toBeGreaterThan(0.5 * value(q, 'requeuedErrorRate'));
    expect(findings(q)).toContain('WorkqueuePersistentFailures');
  });
});
