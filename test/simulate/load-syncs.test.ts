/**
 * The load scenarios run the syncs their capacity, and so their ground truth, is computed from: `--sync-ms`
 * moves the median of the syncs the simulated workers take, not only the arithmetic.
 */
import { describe, expect, it } from 'vitest';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { runVirtual } from '../../src/simulate/index.js';

/** The mean sync of a run's queue, from the last sample of its work-duration histogram's sum and count. */
function meanSyncSeconds(recording: string): number {
  const last = (metric: string): number => {
    const line = recording
      .split('\n')
      .filter((l) => l.startsWith(`${metric}{`))
      .at(-1);
    if (line === undefined) throw new Error(`${metric} is not in the recording`);
    return Number(line.split(' ').at(-2));
  };
  return last(`${WORKQUEUE.workDuration}_sum`) / last(`${WORKQUEUE.workDuration}_count`);
}

describe('load scenarios with --sync-ms', () => {
  for (const scenario of ['backlog', 'saturation', 'gradual-backlog', 'bulk-change', 'busy-but-fine']) {
    it(`${scenario} syncs at the median it is given`, async () => {
      // One second at the median, ten times the slowest default: log-normal means sit 3 to 20% above it.
      const run = await runVirtual(scenario, {
        workers: 4,
        syncMs: 1_000,
        durationMs: 5 * 60_000,
        background: 'off',
        seed: 5,
      });
      const mean = meanSyncSeconds(run.recording.text());
      expect(mean).toBeGreaterThan(0.9);
      expect(mean).toBeLessThan(1.4);
    });
  }
});
