/**
 * The everyday noise of healthy controllers never raises a finding: transient errors that succeed on the
 * retry, a dependency that failed and recovered, RequeueAfter pollers (with and without reconcile metrics), a
 * controller that records an Event on every sync (writes track its adds, under one a second),
 * an initial list, periodic batches and a bulk change landing at once that drain, and the background every simulated process carries
 * (409 conflicts, 404 GETs of optional objects, polling keys, resyncs, pauses, sibling traffic, scrape
 * jitter), and a startup whose initial list drains while real changes flow. Ten seeds, each on one queue (controller-runtime's
 * priority and classic queues, component-base's; `seedsForQueue`), judged at every 30-second step after the first `for` and at the end.
 */
import { describe, expect, it } from 'vitest';
import { EVERY_QUEUE, expectAllPass, judgeEveryStep, NEAR_MISSES, seedsForQueue, variantName } from './support.js';

describe('near misses stay silent at every step', () => {
  it.each(
    (Object.keys(NEAR_MISSES) as (keyof typeof NEAR_MISSES)[]).flatMap((scenario) =>
      EVERY_QUEUE.map(
        (variant, queueIndex) => [scenario, variantName(variant), variant, seedsForQueue(queueIndex)] as const,
      ),
    ),
  )('%s (%s)', { timeout: 300_000 }, async (scenario, name, variant, seeds) => {
    for (const seed of seeds) {
      const verdicts = await judgeEveryStep({ scenario, seed, ...variant });
      // Silence is only a result where the look-alike findings were forbidden: by the end of the run, at least.
      const end = Math.max(...verdicts.map((v) => v.elapsedMs));
      for (const v of verdicts.filter((x) => x.elapsedMs === end)) {
        for (const lookAlike of NEAR_MISSES[scenario]) {
          expect(
            [...v.expected, ...v.allowed],
            `${scenario} ${name} seed ${seed}: ${lookAlike} forbidden`,
          ).not.toContain(lookAlike);
        }
      }
      expectAllPass(verdicts, `${scenario} ${name} seed ${seed}`);
    }
  });
});
