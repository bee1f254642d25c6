/**
 * Objects the controller rejects with `reconcile.TerminalError` (invalid input it cannot fix): counted as reconcile
 * errors and in `terminal_reconcile_errors_total`, never retried. That is the answer the persistent-failure rule's
 * own fix prescribes, so a tenth of the objects rejected that way, beside the background's RequeueAfter polling
 * (whose AddAfter calls count as retries), is neither a persistent failure nor steady unexplained errors. Beside
 * objects failing for a dependency, they do not hide those: the dependency's failures are retried, each of them.
 * Nor, rejecting most objects, do they make a hot loop: they track the adds without retries, but nothing requeues
 * them. Without the terminal counter (controller-runtime before v0.15) every error counts.
 */
import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../src/diagnosis/report.js';
import { CONTROLLER_RUNTIME } from '../../src/metrics/names.js';
import type { SimulationParams } from '../../src/simulate/index.js';
import { withoutFamilies } from '../../src/store/recording-families.js';
import { scenarioQueue } from '../support/scenario-queue.js';

const MINUTE = 60_000;
const REJECTED: Partial<SimulationParams> = { keys: 1000, failingKeys: 0, invalidKeys: 100, durationMs: 45 * MINUTE };
const REJECTED_AND_FAILING: Partial<SimulationParams> = { ...REJECTED, failingKeys: 120, invalidKeys: 150 };

const said = (q: QueueReport) => [...q.findings.map((f) => f.rule), ...q.observations.map((o) => o.id)];

describe('terminal errors', () => {
  const cases = (['priority', 'classic'] as const).flatMap((queue) => [1, 2].map((seed) => [queue, seed] as const));

  it.each(cases)(
    '%s queue, seed %i: a tenth of the objects rejected is no failure',
    { timeout: 120_000 },
    async (queue, seed) => {
      const q = await scenarioQueue('persistent-failure', { ...REJECTED, seed, queue, flavor: 'controller-runtime' });
      expect(q.signals['terminalErrorRate']?.value).toBeGreaterThan(0);
      expect(q.signals['sustainedErrorRatio']?.value).toBeLessThan(0.01);
      expect(said(q)).not.toContain('WorkqueuePersistentFailures');
      expect(said(q)).not.toContain('SteadyReconcileErrors');
    },
  );

  it.each(cases)(
    '%s queue, seed %i: beside objects failing for a dependency, the failures are still found',
    { timeout: 120_000 },
    async (queue, seed) => {
      const q = await scenarioQueue('persistent-failure', {
        ...REJECTED_AND_FAILING,
        seed,
        queue,
        flavor: 'controller-runtime',
        background: 'off',
      });
      expect(said(q)).toContain('WorkqueuePersistentFailures');
    },
  );

  it.each(['priority', 'classic'] as const)(
    '%s queue: most objects rejected is no hot loop (terminal errors are never requeued)',
    { timeout: 120_000 },
    async (queue) => {
      const q = await scenarioQueue('persistent-failure', {
        ...REJECTED,
        invalidKeys: 600,
        rate: 10,
        seed: 3,
        queue,
        flavor: 'controller-runtime',
      });
      // Over half of the adds end in an error and next to none is requeued (the background's conflicts are).
      const errors = q.signals['reconcileErrorRate']?.value ?? 0;
      expect(errors).toBeGreaterThan(0.5 * (q.signals['addRate']?.value ?? 0));
      expect(q.signals['requeuedErrorRate']?.value).toBeLessThan(0.1 * errors);
      expect(said(q)).not.toContain('WorkqueueHotLoop');
    },
  );

  it('without the terminal counter, every error counts', { timeout: 120_000 }, async () => {
    const q = await scenarioQueue(
      'persistent-failure',
      { ...REJECTED, seed: 1, flavor: 'controller-runtime' },
      (text) => withoutFamilies(text, [CONTROLLER_RUNTIME.terminalReconcileErrors.replace(/_total$/, '')]),
    );
    expect(q.signals['terminalErrorRate']?.value ?? null).toBeNull();
    expect(q.signals['sustainedErrorRatio']?.value).toBeGreaterThan(0.05);
  });
});
