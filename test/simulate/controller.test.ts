/**
 * The simulated controller handles reconcile results as controller-runtime does, and its metrics
 * say so: run small hand-made controllers on the FakeClock and read the registry. These count exactly, so
 * they run without the background (`background.test.ts` covers it).
 */
import { describe, expect, it } from 'vitest';
import { CLIENT_GO, CONTROLLER_RUNTIME, WORKQUEUE } from '../../src/metrics/names.js';
import { FakeClock } from '../../src/queue/index.js';
import {
  type ControllerSpec,
  ERROR,
  type Flavor,
  REQUEUE,
  requeueAfter,
  SUCCESS,
  type SyncPlan,
  TERMINAL_ERROR,
} from '../../src/simulate/model.js';
import { SimProcess } from '../../src/simulate/process.js';
import { advanceTo } from '../../src/simulate/run.js';

type Labels = Record<string, string>;

function controller(overrides: Partial<ControllerSpec> & Pick<ControllerSpec, 'sync'>): ControllerSpec {
  return {
    name: 'widget',
    workers: 1,
    keys: 10,
    events: { rate: 0, keys: { kind: 'uniform' }, initialKeys: [0] },
    truth: { expected: [], allowed: [] },
    ...overrides,
  };
}

const always =
  (plan: SyncPlan): ControllerSpec['sync'] =>
  () =>
  () =>
    plan;

async function simulate(controllers: ControllerSpec[], ms: number, flavor: Flavor = 'controller-runtime') {
  const clock = new FakeClock(0);
  const process = new SimProcess(
    { leader: true, leaseName: 'test-leader-election', controllers },
    { clock, seed: 7, flavor, durationMs: ms, background: 'off' },
  );
  process.start();
  process.pump();
  advanceTo(clock, process, ms);
  const metrics = await process.registry.getMetricsAsJSON();
  /** Sum of the samples of `sample` (a family or a `_bucket`/`_sum`/`_count` name) whose labels include `labels`. */
  const value = (sample: string, labels: Labels = {}): number => {
    let total = 0;
    let found = false;
    for (const metric of metrics) {
      for (const v of metric.values) {
        const name = (v as { metricName?: string }).metricName ?? metric.name;
        if (name !== sample) continue;
        const own = v.labels as Record<string, string | number>;
        if (Object.entries(labels).every(([k, want]) => String(own[k]) === want)) {
          total += v.value;
          found = true;
        }
      }
    }
    if (!found) throw new Error(`no sample ${sample} ${JSON.stringify(labels)}`);
    return total;
  };
  const has = (family: string): boolean => metrics.some((m) => m.name === family);
  return { process, clock, value, has, metrics };
}

const W = { name: 'widget' };
const C = { controller: 'widget' };

describe('reconcile results', () => {
  it('success: forget, one sync per add, no retries', async () => {
    const { value } = await simulate(
      [
        controller({
          events: { rate: 0, keys: { kind: 'uniform' }, initialKeys: [0, 1, 2] },
          sync: always({ durationMs: 10, result: SUCCESS }),
        }),
      ],
      1_000,
    );
    expect(value(WORKQUEUE.adds, W)).toBe(3);
    expect(value(`${WORKQUEUE.workDuration}_count`, W)).toBe(3);
    expect(value(`${WORKQUEUE.workDuration}_sum`, W)).toBeCloseTo(0.03, 9);
    expect(value(WORKQUEUE.retries, W)).toBe(0);
    expect(value(CONTROLLER_RUNTIME.reconcileTotal, { ...C, result: 'success' })).toBe(3);
    expect(value(CONTROLLER_RUNTIME.reconcileErrors, C)).toBe(0);
    expect(value(CONTROLLER_RUNTIME.activeWorkers, C)).toBe(0);
    expect(value(CONTROLLER_RUNTIME.maxConcurrentReconciles, C)).toBe(1);
    // One worker: the three keys ran one after another, the last waited 20 ms.
    expect(value(`${WORKQUEUE.queueDuration}_sum`, W)).toBeCloseTo(0.01 + 0.02, 9);
  });

  it('error: addRateLimited, exponential backoff from 5 ms, every retry counted', async () => {
    // Syncs take 0 ms; retries after 5, 10, 20, … ms: by 10 s, 1 + 11 syncs (5·(2^11 − 1) = 10,235 ms > 10 s).
    const { value } = await simulate([controller({ sync: always({ durationMs: 0, result: ERROR }) })], 10_000);
    const errors = value(CONTROLLER_RUNTIME.reconcileErrors, C);
    expect(errors).toBe(11);
    expect(value(CONTROLLER_RUNTIME.reconcileTotal, { ...C, result: 'error' })).toBe(errors);
    expect(value(WORKQUEUE.retries, W)).toBe(errors);
    expect(value(WORKQUEUE.adds, W)).toBe(errors);
  });

  it('error with plain add (no backoff): the key is synced back to back, nothing is a retry', async () => {
    const { value, has } = await simulate(
      [controller({ onError: 'plain-add', reconcileMetrics: false, sync: always({ durationMs: 10, result: ERROR }) })],
      1_000,
    );
    // Re-added while processing, queued again at done, picked up at once: one sync per 10 ms.
    expect(value(`${WORKQUEUE.workDuration}_count`, W)).toBe(100);
    // The initial add, then one add per failed sync (re-added while it was being processed).
    expect(value(WORKQUEUE.adds, W)).toBe(101);
    expect(value(WORKQUEUE.retries, W)).toBe(0);
    // Re-added and handed out again within the same instant: the depth gauge never shows it.
    expect(value(WORKQUEUE.depth, W)).toBe(0);
    expect(has(CONTROLLER_RUNTIME.reconcileTotal)).toBe(true);
    expect(() => value(CONTROLLER_RUNTIME.reconcileTotal, C)).toThrow(/no sample/);
  });

  it('requeue-after: forget + addAfter at a fixed cadence; each poll is a retry, none an error', async () => {
    const { value } = await simulate(
      [controller({ sync: always({ durationMs: 0, result: requeueAfter(30_000) }) })],
      5 * 60_000,
    );
    // Polls at 0, 30 s, … 300 s.
    expect(value(CONTROLLER_RUNTIME.reconcileTotal, { ...C, result: 'requeue_after' })).toBe(11);
    expect(value(WORKQUEUE.retries, W)).toBe(11);
    expect(value(CONTROLLER_RUNTIME.reconcileErrors, C)).toBe(0);
  });

  it('terminal error: an error and a terminal error, neither requeued nor forgotten (controller-runtime)', async () => {
    // First an ordinary error (rate-limited retry after 5 ms), then a terminal one.
    const { value, process } = await simulate(
      [controller({ sync: () => (ctx) => ({ durationMs: 1, result: ctx.failures === 0 ? ERROR : TERMINAL_ERROR }) })],
      10_000,
    );
    expect(process.controllers[0]!.stats.syncs).toBe(2);
    expect(value(CONTROLLER_RUNTIME.reconcileErrors, C)).toBe(2);
    expect(value(CONTROLLER_RUNTIME.reconcileTotal, { ...C, result: 'error' })).toBe(2);
    expect(value(CONTROLLER_RUNTIME.terminalReconcileErrors, C)).toBe(1);
    expect(value(WORKQUEUE.retries, W)).toBe(1);
    expect(value(WORKQUEUE.adds, W)).toBe(2);
    expect(value(WORKQUEUE.depth, W)).toBe(0);
    // Not forgotten: the rate limiter still counts the earlier failure.
    expect(process.controllers[0]!.queue.numRequeues(0)).toBe(1);
  });

  it('requeue: addRateLimited without an error', async () => {
    const { value } = await simulate([controller({ sync: always({ durationMs: 0, result: REQUEUE }) })], 10_000);
    expect(value(CONTROLLER_RUNTIME.reconcileTotal, { ...C, result: 'requeue' })).toBe(11);
    expect(value(CONTROLLER_RUNTIME.reconcileErrors, C)).toBe(0);
    expect(value(WORKQUEUE.retries, W)).toBe(11);
  });

  it('status write: a PUT, and the watch echo wakes the key again', async () => {
    const { value, process } = await simulate(
      [controller({ sync: always({ durationMs: 5, result: SUCCESS, write: 'PUT' }) })],
      1_000,
    );
    const syncs = process.controllers[0]!.stats.syncs;
    // Each cycle: 5 ms sync + 2–20 ms watch latency.
    expect(syncs).toBeGreaterThan(1_000 / 25);
    expect(syncs).toBeLessThan(1_000 / 7 + 1);
    // Leader election renews its lease with a PUT every 2 s (at 0 ms here).
    const leaseRenewals = 1;
    expect(value(CLIENT_GO.restClientRequests, { method: 'PUT', code: '200' })).toBeGreaterThanOrEqual(
      syncs - 1 + leaseRenewals,
    );
    expect(value(WORKQUEUE.adds, W)).toBe(syncs);
  });

  it('a sync that never returns keeps its worker: unfinished work and longest-running grow with time', async () => {
    const { value } = await simulate(
      [
        controller({
          workers: 2,
          events: { rate: 0, keys: { kind: 'uniform' }, initialKeys: [0, 1] },
          sync: () => (ctx) => ({ durationMs: ctx.key === 0 ? Number.POSITIVE_INFINITY : 10, result: SUCCESS }),
        }),
      ],
      60_000,
    );
    expect(value(CONTROLLER_RUNTIME.activeWorkers, C)).toBe(1);
    expect(value(WORKQUEUE.longestRunningProcessor, W)).toBeCloseTo(60, 6);
    expect(value(WORKQUEUE.unfinishedWork, W)).toBeCloseTo(60, 6);
    expect(value(`${WORKQUEUE.workDuration}_count`, W)).toBe(1);
  });

  it('never runs more syncs at once than it has workers', async () => {
    const { process, clock } = await simulate(
      [
        controller({
          workers: 3,
          keys: 1_000,
          events: { rate: 200, keys: { kind: 'uniform' } },
          sync: () => () => ({ durationMs: 50, result: SUCCESS }),
        }),
      ],
      0,
    );
    const registry = process.registry;
    let maxActive = 0;
    for (let t = 0; t < 10_000; t += 10) {
      advanceTo(clock, process, t);
      const metric = (await registry.getSingleMetric(CONTROLLER_RUNTIME.activeWorkers)?.get())?.values ?? [];
      for (const v of metric) maxActive = Math.max(maxActive, v.value);
    }
    expect(maxActive).toBe(3);
  });
});

describe('informer events', () => {
  it('writes on change only: one write per external change, its echo syncs once more without writing', async () => {
    const { process, value } = await simulate(
      [
        controller({
          keys: 50,
          events: { rate: 2, keys: { kind: 'uniform' } },
          sync: () => (ctx) => ({ durationMs: 1, result: SUCCESS, write: ctx.changed ? 'PATCH' : undefined }),
        }),
      ],
      10 * 60_000,
    );
    const { events, writes, syncs } = process.controllers[0]!.stats;
    expect(writes).toBeGreaterThan(0.9 * events);
    expect(writes).toBeLessThanOrEqual(events);
    expect(syncs).toBeGreaterThanOrEqual(2 * writes - 1);
    expect(syncs).toBeLessThanOrEqual(2 * events);
    expect(value(CLIENT_GO.restClientRequests, { method: 'PATCH' })).toBe(writes);
  });

  it('a resync re-adds every key; bursts on a few keys are deduplicated', async () => {
    const { process, value } = await simulate(
      [
        controller({
          keys: 500,
          workers: 2,
          events: {
            rate: 0,
            keys: { kind: 'uniform' },
            resyncPeriodMs: 60_000,
            bursts: [{ firstAtMs: 10_000, durationMs: 5_000, rate: 1_000, keys: { kind: 'few', count: 2 } }],
          },
          sync: always({ durationMs: 20, result: SUCCESS }),
        }),
      ],
      150_000,
    );
    const { events } = process.controllers[0]!.stats;
    expect(events).toBeGreaterThan(4_000);
    const adds = value(WORKQUEUE.adds, W);
    // Two resyncs of 500 keys, and the burst's 5,000 events collapsed to at most one add per 20 ms sync
    // of each of its 2 keys (plus the first add of each).
    expect(adds).toBeGreaterThanOrEqual(1_000);
    expect(adds).toBeLessThanOrEqual(1_000 + (2 * 5_000) / 20 + 2);
  });
});

describe('flavors', () => {
  it('component-base: work-queue series with name only, no controller_runtime_*, [ALPHA] client-go help', async () => {
    const { metrics, has } = await simulate(
      [controller({ sync: always({ durationMs: 1, result: SUCCESS }) })],
      1_000,
      'component-base',
    );
    expect(has(CONTROLLER_RUNTIME.reconcileTotal)).toBe(false);
    const depth = metrics.find((m) => m.name === WORKQUEUE.depth)!;
    expect(Object.keys(depth.values[0]!.labels)).toEqual(['name']);
    expect(metrics.find((m) => m.name === CLIENT_GO.restClientRequests)!.help).toMatch(/^\[ALPHA\] /);
    expect(depth.help).toMatch(/^\[BETA\] /);
  });

  it('controller-runtime: reconcile series initialized at zero, reconcile time with controller-runtime buckets', async () => {
    const { metrics } = await simulate(
      [
        controller({
          events: { rate: 0, keys: { kind: 'uniform' } },
          sync: always({ durationMs: 1, result: SUCCESS }),
        }),
      ],
      1_000,
    );
    const total = metrics.find((m) => m.name === CONTROLLER_RUNTIME.reconcileTotal)!;
    expect(metrics.find((m) => m.name === CONTROLLER_RUNTIME.terminalReconcileErrors)?.values).toEqual([
      expect.objectContaining({ labels: { controller: 'widget' }, value: 0 }),
    ]);
    expect(total.values.map((v) => [v.labels.result, v.value]).sort()).toEqual([
      ['error', 0],
      ['requeue', 0],
      ['requeue_after', 0],
      ['success', 0],
    ]);
    const time = metrics.find((m) => m.name === CONTROLLER_RUNTIME.reconcileTime)!;
    const bounds = time.values.filter((v) => v.labels.le !== undefined).map((v) => v.labels.le);
    expect(bounds.slice(0, 3)).toEqual([0.005, 0.01, 0.025]);
    expect(bounds).toContain(1.25);
    expect(bounds.slice(-2)).toEqual([60, '+Inf']);
  });

  it('a standby starts no controller: no queues, lease status 0, controller series at zero', async () => {
    const clock = new FakeClock(0);
    const process = new SimProcess(
      {
        leader: false,
        leaseName: 'lease',
        controllers: [controller({ sync: always({ durationMs: 1, result: SUCCESS }) })],
      },
      { clock, seed: 1, flavor: 'controller-runtime', durationMs: 10_000, background: 'off' },
    );
    process.start();
    advanceTo(clock, process, 10_000);
    const metrics = await process.registry.getMetricsAsJSON();
    expect(metrics.some((m) => m.name.startsWith('workqueue_'))).toBe(false);
    const lease = metrics.find((m) => m.name === CLIENT_GO.leaderElectionMasterStatus)!;
    expect(lease.values).toEqual([expect.objectContaining({ labels: { name: 'lease' }, value: 0 })]);
    const rest = metrics.find((m) => m.name === CLIENT_GO.restClientRequests)!;
    expect(rest.values.map((v) => v.labels.method)).toEqual(['GET']);
  });
});

describe('workers that start once the caches have synced', () => {
  /** Three keys queued at start on one worker of 10 ms syncs that starts at `startAtMs`, run for `ms`. */
  const queuedBeforeStart = (startAtMs: number, ms: number) =>
    simulate(
      [
        controller({
          keys: 3,
          events: { rate: 0, keys: { kind: 'uniform' }, initialKeys: [0, 1, 2] },
          sync: always({ durationMs: 10, result: SUCCESS }),
          workersStartAtMs: startAtMs,
        }),
      ],
      ms,
    );

  it('keys queued before the workers start wait for them, then are worked off', async () => {
    const { value } = await queuedBeforeStart(5_000, 10_000);
    expect(value(WORKQUEUE.adds, W)).toBe(3);
    expect(value(`${WORKQUEUE.workDuration}_count`, W)).toBe(3);
    expect(value(WORKQUEUE.depth, W)).toBe(0);
    // Each waited for the start, then for the one worker: 5 s, 5.01 s, 5.02 s.
    expect(value(`${WORKQUEUE.queueDuration}_sum`, W)).toBeCloseTo(5 + 5.01 + 5.02, 6);
  });

  it('workers that never start leave every key queued and finish nothing', async () => {
    const { value } = await queuedBeforeStart(Number.POSITIVE_INFINITY, 60_000);
    expect(value(WORKQUEUE.depth, W)).toBe(3);
    expect(value(`${WORKQUEUE.workDuration}_count`, W)).toBe(0);
    expect(value(CONTROLLER_RUNTIME.activeWorkers, C)).toBe(0);
  });
});
