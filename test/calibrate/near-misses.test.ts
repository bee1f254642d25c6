/**
 * The everyday noise of healthy controllers never raises a finding: transient errors that succeed on the
 * retry, a dependency that failed and recovered, RequeueAfter pollers (with and without reconcile metrics),
 * an initial list and periodic batches that drain, and the background every simulated process carries
 * (409 conflicts, 404 GETs of optional objects, polling keys, resyncs, pauses, sibling traffic, scrape
 * jitter). Ten seeds, both flavors, judged at every 30-second step after the first `for` and at the end.
 */
import { describe, expect, it } from 'vitest';
import { BOTH_FLAVORS, expectAllPass, judgeEveryStep, TEN_SEEDS } from './support.js';

const NEAR_MISSES = [
  'healthy',
  'transient-errors',
  'dependency-outage',
  'requeue-after',
  'initial-list',
  'sawtooth-batches',
] as const;

describe('near misses stay silent at every step', () => {
  it.each(NEAR_MISSES.flatMap((scenario) => BOTH_FLAVORS.map((flavor) => [scenario, flavor] as const)))(
    '%s (%s)',
    { timeout: 300_000 },
    async (scenario, flavor) => {
      for (const seed of TEN_SEEDS) {
        const verdicts = await judgeEveryStep({ scenario, seed, flavor });
        // Silence is only a result where something could have fired.
        expect(verdicts.every((v) => v.canFalseAlarm)).toBe(true);
        expectAllPass(verdicts, `${scenario} ${flavor} seed ${seed}`);
      }
    },
  );
});
