/**
 * A list drains when its truth says: changes spread over listed keys are absorbed by them (deduplicated, or lifted
 * to priority 0), so the depth falls at capacity − arrivals × (1 − depth / keys) and is gone after
 * (keys / arrivals) × ln(1 / (1 − utilization)), far sooner than keys / (capacity − arrivals) near capacity. Read
 * from the simulated queue's depth, on both queues.
 */
import { describe, expect, it } from 'vitest';
import { runVirtual, type SimulationParams } from '../../src/simulate/index.js';
import { listDrainSeconds } from '../../src/simulate/scenarios/common.js';
import { scenarioQueue } from '../support/scenario-queue.js';

const SECOND = 1000;
const KEYS = 6_000;

/** The drain time the truth of `scenario` states for `params` (read from its facts). */
async function truthDrainSeconds(params: Partial<SimulationParams>, scenario = 'startup-list'): Promise<number> {
  const run = await runVirtual(scenario, { ...params, durationMs: 60 * SECOND });
  const facts = run.truth.queues[0]?.facts as Record<string, unknown> | undefined;
  expect(typeof facts?.drainSeconds).toBe('number');
  return facts?.drainSeconds as number;
}

/** The depth of the startup list for `params` after `seconds`. */
async function depthAfter(params: Partial<SimulationParams>, seconds: number): Promise<number> {
  const queue = await scenarioQueue('startup-list', { ...params, durationMs: Math.round(seconds * SECOND) });
  const depth = queue.signals.depth?.value;
  expect(typeof depth).toBe('number');
  return depth as number;
}

describe('list drain time', () => {
  it('follows the deduplicated fall: a trickle drains at the capacity, near capacity far sooner than the net rate says', () => {
    expect(listDrainSeconds(1_000, 0, 100)).toBe(10);
    expect(listDrainSeconds(1_000, 0.001, 100)).toBeCloseTo(10, 3);
    // At 90% of capacity: (1000 / 90) × ln 10 = 25.6 s, where 1000 / (100 − 90) would be 100 s.
    expect(listDrainSeconds(1_000, 90, 100)).toBeCloseTo(25.58, 1);
    expect(listDrainSeconds(1_000, 100, 100)).toBe(Number.POSITIVE_INFINITY);
  });

  it.each([
    { queue: 'classic', rate: 50, seed: 1 },
    { queue: 'priority', rate: 50, seed: 2 },
    { queue: 'classic', rate: 80, seed: 3 },
    { queue: 'priority', rate: 80, seed: 4 },
  ] as const)(
    'the $queue queue at $rate changes a second holds the list before the truth says it is gone and not after',
    { timeout: 120_000 },
    async ({ queue, rate, seed }) => {
      const params = { seed, rate, keys: KEYS, flavor: 'controller-runtime', queue, background: 'off' } as const;
      const drain = await truthDrainSeconds(params);
      expect(await depthAfter(params, drain * 0.8)).toBeGreaterThan(KEYS * 0.02);
      expect(await depthAfter(params, drain * 1.25)).toBeLessThan(KEYS * 0.01);
    },
  );
});

describe('a relist while the list drains', () => {
  /** Enough objects that the list takes minutes, many scrapes. */
  const RELIST_KEYS = 20_000;

  /** The initial list's depth after `seconds`, relisted at `relistSeconds`. */
  async function relistedDepthAfter(relistSeconds: number, seconds: number, queue: 'classic' | 'priority') {
    const params = { seed: 5, keys: RELIST_KEYS, relistAtSeconds: relistSeconds, queue, background: 'off' } as const;
    const report = await scenarioQueue('initial-list', { ...params, durationMs: Math.round(seconds * SECOND) });
    return report.signals.depth?.value as number;
  }

  it.each(['classic', 'priority'] as const)(
    'queues again on the %s queue what was worked off, and the work ends about the relist time later',
    { timeout: 120_000 },
    async (queue) => {
      const params = { seed: 5, keys: RELIST_KEYS, queue } as const;
      const listSeconds = await truthDrainSeconds(params, 'initial-list');
      const relistAt = Math.round(listSeconds / 2);
      expect(await truthDrainSeconds({ ...params, relistAtSeconds: relistAt }, 'initial-list')).toBe(
        listSeconds + relistAt,
      );
      // Half the list worked off, then all of it queued again: nearly every object waits just after the relist.
      expect(await relistedDepthAfter(relistAt, relistAt - 10, queue)).toBeLessThan(RELIST_KEYS * 0.65);
      expect(await relistedDepthAfter(relistAt, relistAt + 20, queue)).toBeGreaterThan(RELIST_KEYS * 0.85);
      expect(await relistedDepthAfter(relistAt, (listSeconds + relistAt) * 0.8, queue)).toBeGreaterThan(
        RELIST_KEYS * 0.02,
      );
      expect(await relistedDepthAfter(relistAt, (listSeconds + relistAt) * 1.25, queue)).toBeLessThan(
        RELIST_KEYS * 0.01,
      );
    },
  );
});
