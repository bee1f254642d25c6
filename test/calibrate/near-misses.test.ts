/**
 * The everyday noise of healthy controllers never raises a finding: transient errors that succeed on the
 * retry, a dependency that failed and recovered, RequeueAfter pollers (with and without reconcile metrics),
 * an initial list and periodic batches that drain, and the background every simulated process carries
 * (409 conflicts, 404 GETs of optional objects, polling keys, resyncs, pauses, sibling traffic, scrape
 * jitter), and a startup whose initial list drains while real changes flow. Ten seeds, every queue (controller-runtime's
 * priority and classic queues, component-base's), judged at every 30-second step after the first `for` and at the end.
 */
import { describe, expect, it } from 'vitest';
import { EVERY_QUEUE, expectAllPass, judgeEveryStep, TEN_SEEDS, variantName } from './support.js';

const NEAR_MISSES = [
  'healthy',
  'transient-errors',
  'dependency-outage',
  'requeue-after',
  'initial-list',
  'startup-list',
  'sawtooth-batches',
] as const;

describe('near misses stay silent at every step', () => {
  it.each(
    NEAR_MISSES.flatMap((scenario) => EVERY_QUEUE.map((variant) => [scenario, variantName(variant), variant] as const)),
  )('%s (%s)', { timeout: 300_000 }, async (scenario, name, variant) => {
    for (const seed of TEN_SEEDS) {
      const verdicts = await judgeEveryStep({ scenario, seed, ...variant });
      // Silence is only a result where something could have fired.
      expect(verdicts.every((v) => v.canFalseAlarm)).toBe(true);
      expectAllPass(verdicts, `${scenario} ${name} seed ${seed}`);
    }
  });
});
