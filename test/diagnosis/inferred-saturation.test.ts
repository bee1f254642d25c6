/**
 * Saturation without a max-workers metric (component-base controllers): a free worker takes a waiting key at
 * once, so a depth that never reaches zero over the long window, with the busy workers flat, means every worker
 * is busy and the busy count is the worker count. The finding says the count was inferred; a queue that still
 * drains now and then is not called saturated without the metric, and one that exposes it is never inferred.
 * Workers that never started (caches that never synced) hold a depth off zero too, finishing nothing: a backlog.
 */
import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../src/diagnosis/report.js';
import type { SimulationParams } from '../../src/simulate/index.js';
import { saturationRate, scenarioQueue } from '../support/scenario-queue.js';

const MINUTE = 60_000;

/** The saturation scenario's one queue at the end of a 40-minute run, offered `load` × what `workers` complete. */
async function saturationQueue(
  params: Partial<SimulationParams> & { workers: number; load: number },
): Promise<QueueReport> {
  const { load, ...rest } = params;
  const rate = saturationRate(params.workers, load);
  return scenarioQueue('saturation', { durationMs: 40 * MINUTE, keys: 20_000, ...rest, rate });
}

const saturatedOf = (q: QueueReport) => q.findings.find((f) => f.rule === 'WorkqueueSaturated');

describe('saturation without a max-workers metric', () => {
  it.each([1, 2, 8].flatMap((workers) => [1, 2, 3].map((seed) => [workers, seed] as const)))(
    'a full pool of %i workers is saturated, its count inferred (seed %i)',
    { timeout: 120_000 },
    async (workers, seed) => {
      const queue = await saturationQueue({ workers, seed, load: 1, flavor: 'component-base' });
      expect(queue.signals['maxWorkers']?.value).toBeNull();
      expect(queue.signals['sustainedDepthMin']?.value).toBeGreaterThanOrEqual(1);
      const finding = saturatedOf(queue);
      expect(finding?.state).toBe('firing');
      expect(finding?.evidence['inferredWorkers']?.value).toBe(workers);
      expect(finding?.evidence['utilization']?.value).toBeCloseTo(1, 1);
      expect(finding?.summary).toContain('inferred');
      expect(finding?.summary).toContain('no max-workers metric');
    },
  );

  it('a new series proves nothing: the floor waits for samples spanning the long window', {
    timeout: 120_000,
  }, async () => {
    // A full pool of one worker, 12 minutes after its process (or its scraper) started: over a few minutes any busy
    // queue may not have drained, which proves nothing; from about 13.5 minutes the samples span the window.
    const young = await saturationQueue({
      workers: 1,
      seed: 1,
      load: 1,
      flavor: 'component-base',
      durationMs: 12 * MINUTE,
    });
    expect(young.signals['sustainedDepthMin']?.value).toBeNull();
    expect(saturatedOf(young)).toBeUndefined();
    const spanned = await saturationQueue({
      workers: 1,
      seed: 1,
      load: 1,
      flavor: 'component-base',
      durationMs: 14 * MINUTE,
    });
    expect(spanned.signals['sustainedDepthMin']?.value).not.toBeNull();
  });

  it('the same pool with the metric: saturated from it, nothing inferred', { timeout: 120_000 }, async () => {
    const queue = await saturationQueue({
      workers: 2,
      seed: 1,
      load: 1,
      flavor: 'controller-runtime',
      queue: 'classic',
    });
    const finding = saturatedOf(queue);
    expect(finding?.state).toBe('firing');
    expect(queue.signals['maxWorkers']?.value).toBe(2);
    expect(finding?.evidence['inferredWorkers']?.value).toBeNull();
    expect(finding?.summary).not.toContain('inferred');
  });

  it.each([1, 2, 3])(
    '8 workers at four fifths of capacity drain now and then: not saturated (seed %i)',
    { timeout: 120_000 },
    async (seed) => {
      const queue = await saturationQueue({ workers: 8, seed, load: 0.8, flavor: 'component-base' });
      expect(queue.signals['sustainedDepthMin']?.value).toBe(0);
      expect(saturatedOf(queue)).toBeUndefined();
    },
  );

  it('the end of a long list under changes at 82% of capacity: a pool full of the list, not saturated', {
    timeout: 120_000,
  }, async () => {
    // A restart over 200,000 objects: in its last stretch the list falls at under a fifth of the completions and the
    // depth never reaches zero with every worker busy, while the arrivals alone keep about 82% of them busy.
    const queue = await scenarioQueue('startup-list', {
      durationMs: 76 * MINUTE,
      seed: 8728,
      rate: 72,
      keys: 200_000,
      flavor: 'component-base',
    });
    const busy = queue.signals['sustainedBusyWorkers']?.value as number;
    const offered = queue.signals['sustainedOfferedWorkers']?.value as number;
    expect(queue.signals['sustainedDepthMin']?.value).toBeGreaterThan(1_000);
    expect(busy).toBeGreaterThan(3.5);
    expect(offered / busy).toBeGreaterThan(0.75);
    expect(offered / busy).toBeLessThan(0.86);
    expect(saturatedOf(queue)).toBeUndefined();
  });

  it.each(['component-base', 'controller-runtime'] as const)(
    'workers that never started (%s): the depth never reaches zero, nothing finishes; a backlog, not saturation',
    { timeout: 120_000 },
    async (flavor) => {
      const queue = await scenarioQueue('caches-never-sync', { durationMs: 30 * MINUTE, seed: 1, flavor });
      expect(queue.signals['maxWorkers']?.value).toBeNull();
      expect(queue.signals['sustainedDepthMin']?.value).toBeGreaterThan(100);
      expect(queue.signals['sustainedBusyWorkers']?.value).toBe(0);
      expect(saturatedOf(queue)).toBeUndefined();
      const backlog = queue.findings.find((f) => f.rule === 'WorkqueueBacklog');
      expect(backlog?.state).toBe('firing');
      expect(backlog?.cause).toContain('no sync finished');
      expect(backlog?.cause).toContain('Waiting for caches to sync');
      expect(backlog?.fix).toContain('RBAC');
    },
  );
});
