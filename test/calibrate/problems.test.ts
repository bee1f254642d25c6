/**
 * Problems amid the same noise are caught, and keep being caught: persistent failures of a small share of
 * keys, "not ready" returned as an error, a backlog that builds gradually, and saturation at the one and
 * two workers controller-runtime runs by default. Ten seeds, both flavors (where a flavor lacks the metric a
 * diagnosis needs, the scenario's truth expects nothing and the check is that nothing is raised), judged at
 * every 30-second step once the truth expects the finding, and at the end.
 */
import { describe, expect, it } from 'vitest';
import { BOTH_FLAVORS, expectAllPass, judgeEveryStep, MINUTE, TEN_SEEDS } from './support.js';

const PROBLEMS = [
  { scenario: 'persistent-failure', durationMs: 45 * MINUTE },
  { scenario: 'requeue-as-error', durationMs: 45 * MINUTE },
  { scenario: 'gradual-backlog', durationMs: 45 * MINUTE },
  { scenario: 'saturation', workers: 1 },
  { scenario: 'saturation', workers: 2 },
] as const;

describe('problems are caught at every step once expected', () => {
  it.each(
    PROBLEMS.flatMap((problem) =>
      BOTH_FLAVORS.map(
        (flavor) =>
          [`${problem.scenario}${'workers' in problem ? ` ×${problem.workers}` : ''}`, flavor, problem] as const,
      ),
    ),
  )('%s (%s)', { timeout: 300_000 }, async (label, flavor, problem) => {
    let couldMiss = 0;
    for (const seed of TEN_SEEDS) {
      const verdicts = await judgeEveryStep({ ...problem, seed, flavor });
      couldMiss += verdicts.filter((v) => v.canMiss).length;
      expectAllPass(verdicts, `${label} ${flavor} seed ${seed}`);
    }
    // In controller-runtime every problem here is diagnosable: the truth must have expected it for real.
    if (flavor === 'controller-runtime') expect(couldMiss).toBeGreaterThanOrEqual(TEN_SEEDS.length * 5);
  });
});
