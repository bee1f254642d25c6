/**
 * A relist over an overloaded controller (`backlog --relist-at-seconds`): every object not already waiting is
 * queued, the depth jumps towards every object and falls back to where deduplication balances it,
 * keys × (1 − capacity / arrivals), with the time constant keys / arrivals. Its truth owes the backlog through that
 * fall once the overload was sustained before the relist, and from the fall's end when the relist lands sooner; under
 * capacity the relist is a list worked off, never a backlog owed. The numbers here are worked by hand from the
 * parameters.
 */
import { describe, expect, it } from 'vitest';
import { getScenario, groundTruth, resolveParams, type SimulationParams } from '../../src/simulate/index.js';
import { scenarioQueue } from '../support/scenario-queue.js';

const MINUTE = 60_000;
/** 9,000 objects, 4 workers of 645 ms median syncs (772 ms mean: 5.18 a second), 11.9 events a second: 2.3×. */
const OVERLOAD = { workers: 4, keys: 9_000, rate: 11.9, syncMs: 645, background: 'off' } as const;

function backlogTruth(params: Partial<SimulationParams>) {
  const scenario = getScenario('backlog');
  const queue = groundTruth(scenario, resolveParams({ durationMs: 70 * MINUTE, ...params }, scenario)).queues[0];
  expect(queue).toBeDefined();
  return queue!;
}

describe('the truth of a relisted overload', () => {
  it('owes the backlog through the fall when the overload held a quarter of an hour before the relist', () => {
    const truth = backlogTruth({ ...OVERLOAD, relistAtSeconds: 35 * 60 });
    expect(truth.expected).toContain('WorkqueueBacklog');
    expect(truth.onsetMs).toBeUndefined();
    expect(truth.note).toMatch(/relisted at 35 minutes/);
  });

  it('owes it from the end of the fall when the relist lands sooner', () => {
    const truth = backlogTruth({ ...OVERLOAD, relistAtSeconds: 180 });
    expect(truth.expected).toContain('WorkqueueBacklog');
    // 180 s + (9,000 / 11.9) s × ln(1 / 0.15) = 180 + 756.3 × 1.8971 = 1,614.8 s.
    expect(truth.onsetMs).toBeCloseTo(1_614_800, -2);
  });

  it('owes no backlog under capacity: the relist is a list worked off in the time left over', () => {
    // 3.1 events a second against 5.18 completed: 60% load.
    const truth = backlogTruth({ ...OVERLOAD, rate: 3.1, relistAtSeconds: 600 });
    expect(truth.expected).toEqual([]);
    expect(truth.allowed).not.toContain('WorkqueueBacklog');
  });
});

describe('a relisted overload in the simulator', () => {
  it.each([
    { queue: 'classic', seed: 1 },
    { queue: 'priority', seed: 2 },
  ] as const)(
    'the $queue queue jumps to every object and falls back to its balance',
    { timeout: 120_000 },
    async ({ queue, seed }) => {
      const params = { ...OVERLOAD, seed, queue, flavor: 'controller-runtime', relistAtSeconds: 30 * 60 } as const;
      // A minute after the relist every object but those handed out since waits.
      const jumped = await scenarioQueue('backlog', { ...params, durationMs: 31 * MINUTE });
      expect(jumped.signals.depth?.value).toBeGreaterThan(8_000);
      // Three time constants (3 × 12.6 minutes) later the depth is back within a tenth of its balance:
      // 9,000 × (1 − 5.18 / 11.9) = 5,082.
      const settled = await scenarioQueue('backlog', { ...params, durationMs: 68 * MINUTE });
      const depth = settled.signals.depth?.value as number;
      expect(depth).toBeGreaterThan(5_082 * 0.9);
      expect(depth).toBeLessThan(5_082 * 1.1);
    },
  );
});
