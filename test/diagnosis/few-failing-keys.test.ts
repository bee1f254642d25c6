/**
 * A few objects failing forever in a large controller (5 of 200, every sync of them an error): a small, steady
 * share of the reconciles, below the persistent-failure floor. And in a quiet controller (2 of 20, one event per
 * 100 s), whose failing keys soon all wait at the 1000 s backoff cap, so that their errors come in waves further
 * apart than five or fifteen minutes. Never silence: with the reconcile metrics the queue carries the
 * SteadyReconcileErrors observation (or the finding), with or without the REST client's conflict counts; without
 * the reconcile metrics it carries RetriesWithoutErrorMetrics. A healthy controller, whose few errors conflicts
 * explain, carries neither.
 */
import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../src/diagnosis/report.js';
import { CLIENT_GO, CONTROLLER_RUNTIME } from '../../src/metrics/names.js';
import type { SimulationParams } from '../../src/simulate/index.js';
import { withoutFamilies } from '../../src/store/recording-families.js';
import { scenarioQueue } from '../support/scenario-queue.js';

const MINUTE = 60_000;
const FEW_FAILING: Partial<SimulationParams> = { keys: 200, failingKeys: 5, durationMs: 45 * MINUTE };
const QUIET_FEW_FAILING: Partial<SimulationParams> = { keys: 20, failingKeys: 2, rate: 0.01, durationMs: 45 * MINUTE };

async function queueOf(
  scenario: string,
  params: Partial<SimulationParams>,
  drop: readonly string[] = [],
): Promise<QueueReport> {
  return scenarioQueue(scenario, params, (text) => {
    if (drop.length === 0) return text;
    const rest = withoutFamilies(text, drop);
    expect(rest.length).toBeLessThan(text.length);
    return rest;
  });
}

const said = (q: QueueReport) => [...q.findings.map((f) => f.rule), ...q.observations.map((o) => o.id)];

describe('a few objects failing forever', () => {
  const cases = (['priority', 'classic'] as const).flatMap((queue) => [1, 2, 3].map((seed) => [queue, seed] as const));

  it.each(cases)('%s queue, seed %i: the steady errors are reported', { timeout: 120_000 }, async (queue, seed) => {
    const q = await queueOf('persistent-failure', { ...FEW_FAILING, seed, queue, flavor: 'controller-runtime' });
    const reported = said(q);
    expect(reported.some((id) => id === 'WorkqueuePersistentFailures' || id === 'SteadyReconcileErrors')).toBe(true);
    const observation = q.observations.find((o) => o.id === 'SteadyReconcileErrors');
    if (observation !== undefined) {
      // It names the steady error rate and where to look.
      expect(observation.evidence['steadyUnexplainedErrorRate']?.value).toBeGreaterThan(0);
      expect(observation.summary).toMatch(/keep failing at \d/);
      expect(observation.summary).toContain('controller logs');
    }
  });

  it.each(cases)(
    '%s queue, seed %i, a quiet controller whose failing keys wait at the backoff cap: reported',
    { timeout: 120_000 },
    async (queue, seed) => {
      const q = await queueOf('persistent-failure', {
        ...QUIET_FEW_FAILING,
        seed,
        queue,
        flavor: 'controller-runtime',
      });
      const reported = said(q);
      expect(reported.some((id) => id === 'WorkqueuePersistentFailures' || id === 'SteadyReconcileErrors')).toBe(true);
    },
  );

  it.each([
    ['a large controller', FEW_FAILING, 1],
    ['a large controller', FEW_FAILING, 2],
    ['a quiet controller', QUIET_FEW_FAILING, 1],
  ] as const)(
    '%s without the REST client metrics (seed %i): still reported',
    { timeout: 120_000 },
    async (_, params, seed) => {
      const q = await queueOf('persistent-failure', { ...params, seed, flavor: 'controller-runtime' }, [
        CLIENT_GO.restClientRequests.replace(/_total$/, ''),
      ]);
      expect(q.signals['conflictRate']?.value ?? null).toBeNull();
      expect(said(q).some((id) => id === 'WorkqueuePersistentFailures' || id === 'SteadyReconcileErrors')).toBe(true);
    },
  );

  it.each([
    ['component-base', []],
    [
      'controller-runtime without its reconcile metrics',
      [CONTROLLER_RUNTIME.reconcileTotal, CONTROLLER_RUNTIME.reconcileErrors],
    ],
  ] as const)('%s: the retries are observed', { timeout: 120_000 }, async (name, drop) => {
    const flavor = name === 'component-base' ? 'component-base' : 'controller-runtime';
    const q = await queueOf(
      'persistent-failure',
      { ...FEW_FAILING, seed: 4, flavor },
      drop.map((m) => m.replace(/_total$/, '')),
    );
    expect(q.signals['reconcileErrorRate']?.value ?? null).toBeNull();
    expect(said(q)).toContain('RetriesWithoutErrorMetrics');
  });

  it.each([1, 2, 3])(
    'a healthy controller carries no steady-error observation (seed %i)',
    { timeout: 120_000 },
    async (seed) => {
      const q = await queueOf('healthy', { seed });
      expect(said(q)).toEqual([]);
    },
  );
});
