/**
 * Where in a sync its status write falls decides how a loop holds the workers, and how fast a list converging on
 * its status falls. A status updated early in the sync is echoed while the sync still runs: the key is marked dirty
 * and handed out again the moment it is done, so a looping key holds its worker for good. A list whose objects each
 * take N status writes is synced N + 1 times per object, each echo at priority 0, and falls at 1 / (N + 1) of the
 * completions. Read from the simulated queues' metrics.
 */
import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../src/diagnosis/report-schema.js';
import { scenarioQueue } from '../support/scenario-queue.js';

const MINUTE = 60_000;
const value = (q: QueueReport, id: string): number => {
  const v = q.signals[id]?.value;
  expect(typeof v).toBe('number');
  return v as number;
};

describe('status writes within a sync', () => {
  it('an update early in the sync is echoed while it runs: the looping key holds its worker', async () => {
    // One looping object on one worker, nothing else: every sync of about 47 ms (5 ms, then the rest of the
    // reconcile) follows the last at once.
    const q = await scenarioQueue('loop-beside-list', {
      seed: 3,
      keys: 1,
      workers: 1,
      loopKeys: 1,
      rate: 0,
      background: 'off',
      durationMs: 12 * MINUTE,
    });
    expect(value(q, 'busyWorkers')).toBeGreaterThan(0.97);
    const syncSeconds = value(q, 'workDurationMean');
    expect(value(q, 'completionRate') * syncSeconds).toBeGreaterThan(0.97);
    // One write and one add per sync: the echo is the add.
    expect(value(q, 'writeRate') / value(q, 'addRate')).toBeCloseTo(1, 1);
  });

  it.each([1, 2, 3])(
    'a list converging in %i status writes falls at one over the syncs each object takes',
    { timeout: 120_000 },
    async (writes) => {
      const q = await scenarioQueue('initial-list', {
        seed: 10 + writes,
        listWrites: writes,
        rate: 0,
        background: 'off',
        flavor: 'controller-runtime',
        queue: 'priority',
        durationMs: 15 * MINUTE,
      });
      const share = -value(q, 'lowPriorityDepthSlope') / value(q, 'completionRate');
      expect(share).toBeGreaterThan((1 / (writes + 1)) * 0.9);
      expect(share).toBeLessThan((1 / (writes + 1)) * 1.1);
      expect(value(q, 'servedFirstDepthMedian')).toBeLessThanOrEqual(2);
    },
  );
});
