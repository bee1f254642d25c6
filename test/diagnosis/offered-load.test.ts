/**
 * The offered load (adds × mean sync over the long window, `sustainedOfferedWorkers`): each add is one later sync,
 * so it equals the busy workers while the depth holds; while the queue works off keys added before the window (an
 * initial list just gone) the workers are busier than the arrivals make them, and it reads what the arrivals
 * demand. Saturated asks both, so a controller restarted below saturation is not called saturated once its list
 * is gone.
 */
import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../src/diagnosis/report.js';
import { saturationRate, scenarioQueue } from '../support/scenario-queue.js';

const MINUTE = 60_000;

const signalNumber = (q: QueueReport, id: string): number => {
  const value = q.signals[id]?.value;
  expect(typeof value, id).toBe('number');
  return value as number;
};
const saturatedOf = (q: QueueReport) => q.findings.find((f) => f.rule === 'WorkqueueSaturated');

describe('offered load', () => {
  it.each([1, 2, 3])(
    'equals the busy workers of a queue whose depth holds, and a saturated one is found (seed %i)',
    { timeout: 120_000 },
    async (seed) => {
      const workers = 2;
      const rate = saturationRate(workers, 0.96);
      const queue = await scenarioQueue('saturation', {
        seed,
        workers,
        rate,
        keys: 20_000,
        durationMs: 40 * MINUTE,
        flavor: 'controller-runtime',
        queue: 'classic',
      });
      const busy = signalNumber(queue, 'sustainedBusyWorkers');
      expect(Math.abs(signalNumber(queue, 'sustainedOfferedWorkers') - busy) / busy).toBeLessThan(0.05);
      expect(saturatedOf(queue)?.state).toBe('firing');
    },
  );

  it.each([1, 2, 3])(
    'reads the arrivals, not the list just worked off, after a restart at four fifths of capacity (seed %i)',
    { timeout: 120_000 },
    async (seed) => {
      // 4 workers (~97 syncs/s), 70 changes a second and the echoes of their status writes (~80% busy), the
      // initial list of 60,000 objects gone after about 25 minutes: five minutes later the long window still
      // holds ten minutes of the list.
      const queue = await scenarioQueue('startup-list', {
        seed,
        rate: 70,
        durationMs: 30 * MINUTE,
        flavor: 'controller-runtime',
        queue: 'classic',
      });
      const max = signalNumber(queue, 'maxWorkers');
      expect(signalNumber(queue, 'depth')).toBeLessThan(100);
      expect(signalNumber(queue, 'sustainedBusyWorkers') / max).toBeGreaterThanOrEqual(0.88);
      expect(signalNumber(queue, 'sustainedOfferedWorkers') / max).toBeLessThan(0.86);
      expect(saturatedOf(queue)).toBeUndefined();
    },
  );
});
