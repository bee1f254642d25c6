/**
 * A hot loop on controller-runtime's priority queue starves the initial list: the loop's keys are served first
 * (priority 0), the listed keys wait at low priority and their depth stands high. The loop's own keys do not pile
 * up, so it is still a hot loop: the depth that counts is the served-first one. On the classic queue the listed
 * keys are served in turn and the whole depth stays low.
 */
import { describe, expect, it } from 'vitest';
import { scenarioQueue } from '../support/scenario-queue.js';

describe('a hot loop that starves the initial list', () => {
  it.each([1, 2, 3])(
    'priority queue, 5 keys failing without backoff on 4 workers (seed %i): a hot loop',
    { timeout: 120_000 },
    async (seed) => {
      const q = await scenarioQueue('hot-loop-no-backoff', {
        seed,
        loopKeys: 5,
        workers: 4,
        flavor: 'controller-runtime',
        queue: 'priority',
      });
      // The starved list stands far above any depth a loop keeps, the keys served first do not.
      expect(q.signals['depthAvg']?.value).toBeGreaterThan(20);
      expect(q.signals['servedFirstDepthAvg']?.value).toBeLessThan(5);
      const finding = q.findings.find((f) => f.rule === 'WorkqueueHotLoop');
      expect(finding).toBeDefined();
      expect(finding?.summary).toMatch(/at priority 0 and above \([\d.]+ items in all\)/);
    },
  );

  it('classic queue, same loop: a hot loop, the whole depth low', { timeout: 120_000 }, async () => {
    const q = await scenarioQueue('hot-loop-no-backoff', {
      seed: 1,
      loopKeys: 5,
      workers: 4,
      flavor: 'controller-runtime',
      queue: 'classic',
    });
    expect(q.findings.map((f) => f.rule)).toContain('WorkqueueHotLoop');
    expect(q.signals['servedFirstDepthAvg']?.value).toBe(q.signals['depthAvg']?.value);
  });
});
