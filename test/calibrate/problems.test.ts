/**
 * Problems amid the same noise are caught, and keep being caught: persistent failures of a small share of
 * keys, "not ready" returned as an error, a backlog that builds gradually, saturation at the one and two
 * workers controller-runtime runs by default, and real changes backing up behind a startup's initial list.
 * Ten seeds, each on one queue (controller-runtime's priority and classic queues, component-base's; where the
 * metrics cannot show a problem, the scenario's truth expects nothing and the check is that nothing is
 * raised), judged at every 30-second step once the truth expects the finding, and at the end.
 */
import { describe, expect, it } from 'vitest';
import { EVERY_QUEUE, expectAllPass, judgeEveryStep, PROBLEMS, seedsForQueue, variantName } from './support.js';

describe('problems are caught at every step once expected', () => {
  it.each(
    PROBLEMS.flatMap((problem) =>
      EVERY_QUEUE.map(
        (variant, queueIndex) =>
          [
            `${problem.scenario}${'workers' in problem ? ` ×${problem.workers}` : ''}`,
            variantName(variant),
            problem,
            variant,
            seedsForQueue(queueIndex),
          ] as const,
      ),
    ),
  )('%s (%s)', { timeout: 300_000 }, async (label, name, problem, variant, seeds) => {
    let couldMiss = 0;
    for (const seed of seeds) {
      const verdicts = await judgeEveryStep({ ...problem, seed, ...variant });
      couldMiss += verdicts.filter((v) => v.canMiss).length;
      expectAllPass(verdicts, `${label} ${name} seed ${seed}`);
    }
    // With controller-runtime's metrics every problem here is diagnosable (a starved backlog only with the
    // priority queue, whose per-priority depth shows it): the truth must have expected it for real.
    const diagnosable =
      variant.flavor === 'controller-runtime' &&
      (problem.scenario !== 'starved-backlog' || variant.queue === 'priority');
    if (diagnosable) expect(couldMiss).toBeGreaterThanOrEqual(seeds.length * 5);
  });
});
