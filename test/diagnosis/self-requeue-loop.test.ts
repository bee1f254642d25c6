/**
 * A self-requeue loop (keys that add themselves again during syncs of a few milliseconds, with neither writes
 * nor errors behind them) is never passed over as healthy, whatever the number of looping keys L and workers W.
 * Its served-first depth is L − W (none when L ≤ W): up to twice the workers the HighAddRateLowDepth observation
 * reads it; a longer loop holds every worker, a saturation. On the priority queue the loop runs at priority 0 and
 * starves the initial list waiting at low priority, and the observation says so; a loop long enough to be a
 * saturation says so in the saturation's summary, and its fix asks to check the adds are real changes first.
 */
import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../src/diagnosis/report.js';
import type { SimulationParams } from '../../src/simulate/index.js';
import { scenarioQueue } from '../support/scenario-queue.js';

function loopQueue(params: Partial<SimulationParams>): Promise<QueueReport> {
  return scenarioQueue('self-requeue-loop', params);
}

const MINUTE = 60_000;
/**
 * Runs as short as the verdict allows (a loop makes thousands of adds a second): the observation's window and `for`
 * (5 + 5 minutes), or the saturation's, after the initial list is out of the way (half an hour).
 */
const DURATION_MS = 12 * MINUTE;
const SATURATION_DURATION_MS = 30 * MINUTE;
const PRIORITY = { flavor: 'controller-runtime', queue: 'priority' } as const;
const CLASSIC = { flavor: 'controller-runtime', queue: 'classic' } as const;
const COMPONENT_BASE = { flavor: 'component-base', queue: 'classic' } as const;
/** [queue, workers, looping keys]: fewer loopers than workers, as many, up to twice, and more, on each queue. */
const CASES = [
  [PRIORITY, 1, 1],
  [PRIORITY, 2, 3],
  [PRIORITY, 2, 7],
  [CLASSIC, 2, 1],
  [CLASSIC, 2, 4],
  [CLASSIC, 1, 4],
  [COMPONENT_BASE, 4, 3],
  [COMPONENT_BASE, 2, 6],
] as const;

describe('a self-requeue loop', () => {
  it.each(CASES.map(([v, workers, loopKeys]) => [`${v.flavor}/${v.queue}`, workers, loopKeys, v] as const))(
    '%s, %i workers, %i looping keys: reported',
    { timeout: 120_000 },
    async (_name, workers, loopKeys, variant) => {
      const q = await loopQueue({
        ...variant,
        workers,
        loopKeys,
        seed: workers * 100 + loopKeys,
        durationMs: loopKeys <= 2 * workers ? DURATION_MS : SATURATION_DURATION_MS,
      });
      const observed = q.observations.some((o) => o.id === 'HighAddRateLowDepth');
      const saturated = q.findings.some((f) => f.rule === 'WorkqueueSaturated' && f.state === 'firing');
      expect(q.signals['addRate']?.value).toBeGreaterThan(100);
      // Up to twice the workers the depth test holds clearly; beyond two and a half, every worker is held by the loop.
      if (loopKeys <= 2 * workers) expect(observed, 'observed').toBe(true);
      else expect(saturated, 'saturated').toBe(true);
    },
  );

  it('on the priority queue, as many loopers as workers and more starve the initial list, and the observation says so', async () => {
    const q = await loopQueue({ ...PRIORITY, workers: 2, loopKeys: 3, seed: 7, durationMs: DURATION_MS });
    expect(q.signals['servedFirstDepthMin']?.value).toBe(1);
    expect(q.signals['lowPriorityDepth']?.value).toBeGreaterThan(100);
    const observation = q.observations.find((o) => o.id === 'HighAddRateLowDepth');
    expect(observation?.summary).toMatch(/keys wait at low priority .* starves the list/);
  });

  it('a loop on fewer keys than workers leaves the list draining: no starvation claimed', async () => {
    const q = await loopQueue({ ...PRIORITY, workers: 4, loopKeys: 1, seed: 8, durationMs: DURATION_MS });
    const observation = q.observations.find((o) => o.id === 'HighAddRateLowDepth');
    expect(observation).toBeDefined();
    expect(observation?.summary).not.toContain('starves');
  });

  it('a loop that holds every worker on the priority queue: saturated, the starved list named, the loop checked before adding workers', async () => {
    const q = await loopQueue({ ...PRIORITY, workers: 2, loopKeys: 7, seed: 207, durationMs: SATURATION_DURATION_MS });
    const saturated = q.findings.find((f) => f.rule === 'WorkqueueSaturated' && f.state === 'firing');
    expect(q.signals['lowPriorityDepth']?.value).toBeGreaterThan(100);
    expect(saturated?.summary).toMatch(/keys wait at low priority .* starves the list/);
    expect(saturated?.fix).toMatch(/adds are real changes .* loop faster/);
  }, 120_000);

  it('on the classic queue the saturation names no starvation: it has no low-priority depth', async () => {
    const q = await loopQueue({ ...CLASSIC, workers: 1, loopKeys: 4, seed: 104, durationMs: SATURATION_DURATION_MS });
    const saturated = q.findings.find((f) => f.rule === 'WorkqueueSaturated' && f.state === 'firing');
    expect(saturated).toBeDefined();
    expect(saturated?.summary).not.toContain('starves');
  }, 120_000);
});
