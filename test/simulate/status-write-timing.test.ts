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

  it.each([
    ['early in the sync: each looping key holds its worker and is counted in the depth all along', 5, true],
    ['at its end: the key waits for the echo between syncs, and the depth touches zero', undefined, false],
  ] as const)('a status set %s', { timeout: 120_000 }, async (_, statusAtMs, held) => {
    // Two objects whose reconcile sets a condition, then waits about 2 s on a cloud API; four workers.
    const q = await scenarioQueue('hot-loop-status-write', {
      seed: 5,
      workers: 4,
      loopKeys: 2,
      syncMs: 2000,
      rate: 0,
      background: 'off',
      flavor: 'controller-runtime',
      queue: 'priority',
      durationMs: 30 * MINUTE,
      ...(statusAtMs === undefined ? {} : { statusAtMs }),
    });
    const busy = value(q, 'sustainedBusyWorkers');
    expect(busy).toBeLessThanOrEqual(2.05);
    expect(busy).toBeGreaterThan(held ? 1.995 : 1.9);
    // With the write at its end, each sync of about 2 s is followed by the echo's 2 to 20 ms.
    if (held) {
      expect(value(q, 'sustainedDepthMin')).toBe(2);
    } else {
      expect(value(q, 'sustainedDepthMin')).toBe(0);
      expect(busy).toBeLessThan(1.995);
    }
    // Half the pool idles, and the max-workers metric shows it: not saturated, however the depth stands.
    expect(value(q, 'maxWorkers')).toBe(4);
    expect(q.findings.map((f) => f.rule)).not.toContain('WorkqueueSaturated');
  });
});
