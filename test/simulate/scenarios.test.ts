/**
 * Every scenario's signature, read back from its own recording through a real Prometheus: all
 * recordings (distinct `instance` labels) are imported with promtool into one TSDB served by one
 * Prometheus for the whole file.
 *
 * Recordings carry the default background (conflicts, 404s, polling keys, resyncs, scrape jitter, pauses,
 * sibling traffic) unless a run says `background: 'off'`: a scenario whose premise the default background
 * overturns (more load than its capacity arithmetic allows for) has its signature checked on its own.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_GO, CONTROLLER_RUNTIME, WORKQUEUE } from '../../src/metrics/names.js';
import { DEFAULT_START_MS, type RunStats, runVirtual } from '../../src/simulate/index.js';
import type { BackgroundMode, Flavor, GroundTruth } from '../../src/simulate/model.js';
import { importRecordings, type PrometheusHandle, removeTempDirs, startPrometheus } from '../support/prometheus.js';
import { tempDir } from './helpers.js';

const T0 = DEFAULT_START_MS / 1000;
const at = (minutes: number): number => T0 + minutes * 60;

interface Run {
  readonly scenario: string;
  readonly minutes: number;
  readonly flavor?: Flavor;
  /** Default `<scenario>:8080`. */
  readonly instance?: string;
  /** Default: the default background. */
  readonly background?: BackgroundMode;
}

/** 30 minutes (the default) unless a scenario shows its signature from the first seconds. */
const RUNS: readonly Run[] = [
  { scenario: 'healthy', minutes: 30 },
  { scenario: 'resync-burst', minutes: 30 },
  { scenario: 'rollout-burst', minutes: 30 },
  { scenario: 'short-spike', minutes: 30 },
  { scenario: 'busy-but-fine', minutes: 30 },
  // The background's resync of 2,000 keys at 2 s per sync on 8 workers is 500 s of backlog.
  { scenario: 'slow-but-steady', minutes: 30, background: 'off' },
  { scenario: 'requeue-after', minutes: 30 },
  { scenario: 'standby', minutes: 10 },
  { scenario: 'backlog', minutes: 30 },
  { scenario: 'saturation', minutes: 30 },
  { scenario: 'hot-loop-status-write', minutes: 10 },
  { scenario: 'hot-loop-no-backoff', minutes: 10 },
  { scenario: 'blocking-call', minutes: 30 },
  { scenario: 'stuck-worker', minutes: 30 },
  { scenario: 'persistent-failure', minutes: 30 },
  { scenario: 'requeue-as-error', minutes: 30 },
  { scenario: 'not-observable', minutes: 10 },
  { scenario: 'mixed', minutes: 30 },
  { scenario: 'backlog', minutes: 30, flavor: 'component-base', instance: 'backlog-component-base:8080' },
  { scenario: 'not-observable', minutes: 10, flavor: 'component-base', instance: 'not-observable-component-base:8080' },
];

let prom: PrometheusHandle;
const truths = new Map<string, GroundTruth>();
const stats = new Map<string, RunStats>();
const work = tempDir('wqd-sim-scenarios-');

beforeAll(async () => {
  const files: string[] = [];
  for (const run of RUNS) {
    const instance = run.instance ?? `${run.scenario}:8080`;
    const result = await runVirtual(
      run.scenario,
      {
        durationMs: run.minutes * 60_000,
        ...(run.flavor === undefined ? {} : { flavor: run.flavor }),
        ...(run.background === undefined ? {} : { background: run.background }),
      },
      { instance },
    );
    const file = join(work.path, `${instance.replace(':', '_')}.om`);
    writeFileSync(file, result.recording.text());
    truths.set(instance, result.truth);
    stats.set(instance, result.stats);
    files.push(file);
  }
  prom = await startPrometheus({ storagePath: await importRecordings(files) });
}, 120_000);

afterAll(async () => {
  await prom?.stop();
  removeTempDirs();
  work.remove();
});

/** The single value of `expr` at `minutes`; fails when the result has no or several samples. */
async function scalar(expr: string, minutes: number): Promise<number> {
  const samples = await prom.query(expr, at(minutes));
  expect(samples, `${expr} @${minutes}m`).toHaveLength(1);
  return samples[0]!.value;
}

const depth = (instance: string, name?: string): string =>
  `sum without (priority) (${WORKQUEUE.depth}{instance="${instance}"${name === undefined ? '' : `,name="${name}"`}})`;
const sel = (metric: string, instance: string, extra = ''): string =>
  `${metric}{instance="${instance}"${extra === '' ? '' : `,${extra}`}}`;
const maxDepth = (instance: string, minutes: number, name?: string): string =>
  `max_over_time(${depth(instance, name)}[${minutes}m:15s])`;

/** Errors over reconciles in the `minutes` before `minutes`. */
const errorShare = (instance: string, minutes: number): Promise<number> =>
  scalar(
    `sum(increase(${sel(CONTROLLER_RUNTIME.reconcileErrors, instance)}[${minutes}m])) / sum(increase(${sel(CONTROLLER_RUNTIME.reconcileTotal, instance)}[${minutes}m]))`,
    minutes,
  );

describe('near misses stay inside their bounds', () => {
  it('healthy: depth stays small, no errors, syncs are fast', async () => {
    const i = 'healthy:8080';
    expect(await scalar(maxDepth(i, 30), 30)).toBeLessThanOrEqual(10);
    const adds = await scalar(`rate(${sel(WORKQUEUE.adds, i)}[5m])`, 15);
    expect(adds).toBeGreaterThan(2);
    expect(adds).toBeLessThan(20);
    // The background's conflicts: ~1.5% of syncs fail once and succeed on the retry.
    expect(await errorShare(i, 30)).toBeGreaterThan(0);
    expect(await errorShare(i, 30)).toBeLessThan(0.03);
    expect(await scalar(`max_over_time(${sel(WORKQUEUE.longestRunningProcessor, i)}[30m])`, 30)).toBeLessThan(1);
  });

  it('resync-burst: every resync builds thousands of items and drains within a minute', async () => {
    const i = 'resync-burst:8080';
    expect(await scalar(maxDepth(i, 30), 30)).toBeGreaterThan(5_000);
    for (const minutes of [10, 15, 20, 25, 30]) {
      expect(await scalar(`min_over_time(${depth(i)}[5m:15s])`, minutes)).toBe(0);
    }
    // Six resyncs (2m7s, 7m7s, … 27m7s), each above 100 items for at most four 15-second scrapes.
    const scrapesBusy = await scalar(`sum_over_time((${depth(i)} > bool 100)[30m:15s])`, 30);
    expect(scrapesBusy).toBeGreaterThanOrEqual(6);
    expect(scrapesBusy).toBeLessThanOrEqual(24);
    expect(await scalar(depth(i), 30)).toBeLessThanOrEqual(5);
  });

  it('rollout-burst: bursts collapse in deduplication, depth stays tiny', async () => {
    const i = 'rollout-burst:8080';
    expect(await scalar(maxDepth(i, 30), 30)).toBeLessThanOrEqual(10);
    const adds = await scalar(`increase(${sel(WORKQUEUE.adds, i)}[30m])`, 30);
    expect(adds).toBeLessThan(0.5 * stats.get(i)!.events);
  });

  it('short-spike: real depth during the spike, back to ~0 at the end', async () => {
    const i = 'short-spike:8080';
    expect(await scalar(depth(i), 9)).toBeLessThanOrEqual(5);
    expect(await scalar(depth(i), 12)).toBeGreaterThan(1_000);
    expect(await scalar(maxDepth(i, 30), 30)).toBeGreaterThan(3_000);
    expect(await scalar(depth(i), 30)).toBeLessThanOrEqual(5);
    expect(await scalar(maxDepth(i, 10), 30)).toBeLessThanOrEqual(10);
  });

  it('busy-but-fine: workers ~80% busy, depth bounded without a trend', async () => {
    const i = 'busy-but-fine:8080';
    for (const minutes of [10, 20, 30]) {
      const busy = await scalar(
        `rate(${sel(WORKQUEUE.workDuration + '_sum', i)}[5m]) / ignoring(name) ${sel(CONTROLLER_RUNTIME.maxConcurrentReconciles, i)}`,
        minutes,
      );
      expect(busy).toBeGreaterThan(0.7);
      expect(busy).toBeLessThan(0.9);
    }
    expect(await scalar(maxDepth(i, 30), 30)).toBeLessThan(100);
    expect(Math.abs(await scalar(`deriv(${depth(i)}[20m:15s])`, 30))).toBeLessThan(0.05);
  });

  it('slow-but-steady: ~2 s syncs, depth ~0', async () => {
    const i = 'slow-but-steady:8080';
    const mean = await scalar(
      `rate(${sel(WORKQUEUE.workDuration + '_sum', i)}[30m]) / rate(${sel(WORKQUEUE.workDuration + '_count', i)}[30m])`,
      30,
    );
    expect(mean).toBeGreaterThan(1.8);
    expect(mean).toBeLessThan(2.4);
    expect(await scalar(maxDepth(i, 30), 30)).toBeLessThanOrEqual(3);
    expect(await scalar(`max_over_time(${sel(WORKQUEUE.longestRunningProcessor, i)}[30m])`, 30)).toBeLessThan(6);
  });

  it('requeue-after: retries at a steady poll cadence (waiting keys / 30 s) with no errors', async () => {
    const i = 'requeue-after:8080';
    const facts = truths.get(i)!.queues[0]!.facts!;
    const expected = Number(facts.waitingKeys) / Number(facts.pollIntervalSeconds);
    const rates: number[] = [];
    for (const minutes of [10, 20, 30]) {
      const retries = await scalar(`rate(${sel(WORKQUEUE.retries, i)}[5m])`, minutes);
      rates.push(retries);
      expect(retries).toBeGreaterThan(0.95 * expected);
      // Plus the background: its own polling keys, conflict retries, and a resync's extra poll of each waiting key.
      expect(retries).toBeLessThan(1.4 * expected);
      const requeueAfter = await scalar(
        `rate(${sel(CONTROLLER_RUNTIME.reconcileTotal, i, 'result="requeue_after"')}[5m])`,
        minutes,
      );
      expect(requeueAfter / retries).toBeGreaterThan(0.95);
      expect(requeueAfter / retries).toBeLessThan(1.05);
    }
    expect(Math.max(...rates) / Math.min(...rates)).toBeLessThan(1.3);
    expect(await errorShare(i, 30)).toBeLessThan(0.03); // the background's conflicts only
  });

  it('standby: lease not held, no work-queue series, controller series at zero', async () => {
    const i = 'standby:8080';
    expect(await scalar(sel(CLIENT_GO.leaderElectionMasterStatus, i), 10)).toBe(0);
    expect(await prom.query(`{__name__=~"workqueue_.+",instance="${i}"}`, at(10))).toHaveLength(0);
    const controllers = await prom.query(sel(CONTROLLER_RUNTIME.maxConcurrentReconciles, i), at(10));
    expect(controllers.map((s) => s.labels.controller).sort()).toEqual(['certificate', 'issuer']);
    expect(await scalar(`sum(${sel(CONTROLLER_RUNTIME.reconcileTotal, i)})`, 10)).toBe(0);
    expect(truths.get(i)!.standby).toBe(true);
  });
});

describe('problems show their signatures', () => {
  it('backlog: depth rises steadily, arrivals exceed completions', async () => {
    const i = 'backlog:8080';
    for (const minutes of [10, 20, 30]) {
      expect(await scalar(`deriv(${depth(i)}[10m:15s])`, minutes)).toBeGreaterThan(1);
    }
    const end = await scalar(depth(i), 30);
    expect(end).toBeGreaterThan(5_000);
    expect(end).toBeGreaterThan(4 * (await scalar(depth(i), 5)));
    const adds = await scalar(`rate(${sel(WORKQUEUE.adds, i)}[5m])`, 20);
    const done = await scalar(`rate(${sel(WORKQUEUE.workDuration + '_count', i)}[5m])`, 20);
    expect(adds / done).toBeGreaterThan(1.1);
    expect(adds / done).toBeLessThan(1.3);
  });

  it('saturation: workers >85% busy, items wait longer than in busy-but-fine, depth bounded', async () => {
    const i = 'saturation:8080';
    for (const minutes of [10, 20, 30]) {
      const busy = await scalar(
        `rate(${sel(WORKQUEUE.workDuration + '_sum', i)}[5m]) / ignoring(name) ${sel(CONTROLLER_RUNTIME.maxConcurrentReconciles, i)}`,
        minutes,
      );
      expect(busy).toBeGreaterThan(0.85);
      expect(busy).toBeLessThan(1);
    }
    const wait = (instance: string): string =>
      `rate(${sel(WORKQUEUE.queueDuration + '_sum', instance)}[30m]) / rate(${sel(WORKQUEUE.queueDuration + '_count', instance)}[30m])`;
    const saturatedWait = await scalar(wait(i), 30);
    expect(saturatedWait).toBeGreaterThan(0.2);
    expect(saturatedWait).toBeGreaterThan(4 * (await scalar(wait('busy-but-fine:8080'), 30)));
    expect(await scalar(maxDepth(i, 30), 30)).toBeLessThan(200);
  });

  it('hot-loop-status-write: adds far above the keys in the loop, depth tiny, one PUT per add', async () => {
    const i = 'hot-loop-status-write:8080';
    const keysInLoop = Number(truths.get(i)!.queues[0]!.facts!.keysInLoop);
    const adds = await scalar(`rate(${sel(WORKQUEUE.adds, i)}[5m])`, 10);
    expect(adds).toBeGreaterThan(10 * keysInLoop);
    expect(await scalar(maxDepth(i, 10), 10)).toBeLessThanOrEqual(3);
    const puts = await scalar(`sum(rate(${sel(CLIENT_GO.restClientRequests, i, 'method="PUT"')}[5m]))`, 10);
    expect(puts).toBeGreaterThan(0.9 * adds);
    expect(await errorShare(i, 10)).toBeLessThan(0.03); // the background's conflicts only
  });

  it('hot-loop-no-backoff: adds far above the failing keys, no retries, depth tiny', async () => {
    const i = 'hot-loop-no-backoff:8080';
    const keysInLoop = Number(truths.get(i)!.queues[0]!.facts!.keysInLoop);
    const adds = await scalar(`rate(${sel(WORKQUEUE.adds, i)}[5m])`, 10);
    expect(adds).toBeGreaterThan(10 * keysInLoop);
    // Nothing goes through the rate limiter but the background's few polling keys and conflicts.
    expect(await scalar(`increase(${sel(WORKQUEUE.retries, i)}[10m])`, 10)).toBeLessThan(
      0.01 * (await scalar(`increase(${sel(WORKQUEUE.adds, i)}[10m])`, 10)),
    );
    expect(await scalar(maxDepth(i, 10), 10)).toBeLessThanOrEqual(3);
    const notFound = await scalar(`sum(rate(${sel(CLIENT_GO.restClientRequests, i, 'code="404"')}[5m]))`, 10);
    expect(notFound).toBeGreaterThan(0.9 * adds);
    // A hand-written worker loop: no controller_runtime_* series of its own.
    expect(await prom.query(`{__name__=~"controller_runtime_.+",instance="${i}"}`, at(10))).toHaveLength(0);
  });

  it('blocking-call: the longest-running processor passes 10 s, repeatedly', async () => {
    const i = 'blocking-call:8080';
    const longest = sel(WORKQUEUE.longestRunningProcessor, i);
    expect(await scalar(`max_over_time(${longest}[30m])`, 30)).toBeGreaterThanOrEqual(10);
    expect(await scalar(`sum_over_time((${longest} >= bool 10)[30m:15s])`, 30)).toBeGreaterThan(5);
    expect(await scalar(`quantile_over_time(0.5, ${depth(i)}[30m:15s])`, 30)).toBeLessThanOrEqual(1);
  });

  it('stuck-worker: unfinished work grows ~1 s per second once the sync hangs', async () => {
    const i = 'stuck-worker:8080';
    const stuckAt = Number(truths.get(i)!.queues[0]!.facts!.stuckAtSeconds);
    expect(stuckAt).toBe(300);
    expect(await scalar(sel(WORKQUEUE.longestRunningProcessor, i), 4)).toBeLessThan(1);
    for (const minutes of [10, 15, 20, 25, 30]) {
      const slope = await scalar(`deriv(${sel(WORKQUEUE.unfinishedWork, i)}[5m])`, minutes);
      expect(slope).toBeGreaterThan(0.8);
      expect(slope).toBeLessThan(1.2);
    }
    const longest = await scalar(sel(WORKQUEUE.longestRunningProcessor, i), 30);
    expect(longest).toBeGreaterThan(1_800 - stuckAt - 10);
    expect(longest).toBeLessThanOrEqual(1_800 - stuckAt);
    expect(await scalar(sel(CONTROLLER_RUNTIME.activeWorkers, i), 30)).toBeGreaterThanOrEqual(1);
  });

  it('persistent-failure: retries fall off as backoff grows, errors never stop', async () => {
    const i = 'persistent-failure:8080';
    const early = await scalar(`rate(${sel(WORKQUEUE.retries, i)}[3m])`, 3);
    const late = await scalar(`rate(${sel(WORKQUEUE.retries, i)}[3m])`, 30);
    expect(late).toBeGreaterThan(0);
    expect(early).toBeGreaterThan(5 * late);
    for (const minutes of [10, 15, 20, 25, 30]) {
      expect(await scalar(`increase(${sel(CONTROLLER_RUNTIME.reconcileErrors, i)}[5m])`, minutes)).toBeGreaterThan(0);
    }
    const errorShare = await scalar(
      `sum(rate(${sel(CONTROLLER_RUNTIME.reconcileTotal, i, 'result="error"')}[30m])) / sum(rate(${sel(CONTROLLER_RUNTIME.reconcileTotal, i)}[30m]))`,
      30,
    );
    expect(errorShare).toBeGreaterThan(0.05);
  });

  it('requeue-as-error: errors and retries dominate adds the whole time, no RequeueAfter', async () => {
    const i = 'requeue-as-error:8080';
    for (const minutes of [10, 20, 30]) {
      expect(await scalar(`rate(${sel(CONTROLLER_RUNTIME.reconcileErrors, i)}[5m])`, minutes)).toBeGreaterThan(1);
      const ratio = await scalar(
        `rate(${sel(WORKQUEUE.retries, i)}[5m]) / rate(${sel(WORKQUEUE.adds, i)}[5m])`,
        minutes,
      );
      expect(ratio).toBeGreaterThan(0.5);
    }
    // RequeueAfter only from the background's polling keys: a few against the errors.
    expect(
      await scalar(`increase(${sel(CONTROLLER_RUNTIME.reconcileTotal, i, 'result="requeue_after"')}[30m])`, 30),
    ).toBeLessThan(0.1 * (await scalar(`increase(${sel(CONTROLLER_RUNTIME.reconcileErrors, i)}[30m])`, 30)));
  });

  it('not-observable: controller-runtime series move, no workqueue_* at all', async () => {
    const i = 'not-observable:8080';
    expect(await prom.query(`{__name__=~"workqueue_.+",instance="${i}"}`, at(10))).toHaveLength(0);
    expect(await scalar(`sum(increase(${sel(CONTROLLER_RUNTIME.reconcileTotal, i)}[10m]))`, 10)).toBeGreaterThan(100);
    expect(await scalar(sel(CLIENT_GO.leaderElectionMasterStatus, i), 10)).toBe(1);
  });

  it('mixed: each queue of the one process shows its own signature', async () => {
    const i = 'mixed:8080';
    const names = (await prom.query(sel(WORKQUEUE.adds, i), at(30))).map((s) => s.labels.name).sort();
    expect(names).toEqual(['dbuser', 'deployment', 'ingress-status', 'pod', 'volumesnapshot']);
    expect(
      truths
        .get(i)!
        .queues.map((q) => q.name)
        .sort(),
    ).toEqual(names);
    expect(await scalar(`deriv(${depth(i, 'pod')}[10m:15s])`, 30)).toBeGreaterThan(1);
    expect(await scalar(`rate(${sel(WORKQUEUE.adds, i, 'name="ingress-status"')}[5m])`, 30)).toBeGreaterThan(30);
    // Tiny, though a scrape during one of the background's pauses sees the keys it held back.
    expect(await scalar(maxDepth(i, 30, 'ingress-status'), 30)).toBeLessThanOrEqual(10);
    expect(
      await scalar(`increase(${sel(CONTROLLER_RUNTIME.reconcileErrors, i, 'controller="dbuser"')}[5m])`, 30),
    ).toBeGreaterThan(0);
    expect(
      await scalar(`max_over_time(${sel(WORKQUEUE.longestRunningProcessor, i, 'name="volumesnapshot"')}[30m])`, 30),
    ).toBeGreaterThanOrEqual(10);
    expect(await scalar(maxDepth(i, 30, 'deployment'), 30)).toBeLessThanOrEqual(10);
    // The deployment queue's only errors are the background's conflicts.
    const deployment = (extra: string): Promise<number> =>
      scalar(`sum(increase(${sel(CONTROLLER_RUNTIME.reconcileTotal, i, `controller="deployment"${extra}`)}[30m]))`, 30);
    expect((await deployment(',result="error"')) / (await deployment(''))).toBeLessThan(0.03);
  });
});

describe('the default background', () => {
  it('mixed: conflicts, 404 GETs, polling and off-grid scrapes show through Prometheus', async () => {
    const i = 'mixed:8080';
    const increase = (expr: string): Promise<number> => scalar(`sum(increase(${expr}[30m]))`, 30);
    const conflicts = await increase(sel(CLIENT_GO.restClientRequests, i, 'method="PUT",code="409"'));
    const succeeded = await increase(sel(CONTROLLER_RUNTIME.reconcileTotal, i, 'result=~"success|requeue_after"'));
    // ~1.5% of the syncs that would have succeeded (and a few of the sibling controllers' writes).
    expect(conflicts / (succeeded + conflicts)).toBeGreaterThan(0.01);
    expect(conflicts / (succeeded + conflicts)).toBeLessThan(0.02);
    // Every sync GETs an optional object that is not there.
    const syncs = await increase(sel(CONTROLLER_RUNTIME.reconcileTotal, i));
    const notFound = await increase(sel(CLIENT_GO.restClientRequests, i, 'method="GET",code="404"'));
    expect(notFound / syncs).toBeGreaterThan(0.99);
    expect(notFound / syncs).toBeLessThan(1.05);
    // The deployment queue's polling keys.
    expect(
      await increase(sel(CONTROLLER_RUNTIME.reconcileTotal, i, 'controller="deployment",result="requeue_after"')),
    ).toBeGreaterThan(0);
    // Scrapes off the 15 s grid by up to a second.
    const stamps = await prom.query(`timestamp(${sel(WORKQUEUE.depth, i, 'name="pod"')})`, at(30) + 2);
    expect(stamps).toHaveLength(1);
    const offset = stamps[0]!.value - at(30);
    expect(Math.abs(offset)).toBeLessThanOrEqual(1);
  });
});

describe('component-base flavor', () => {
  it('exposes work-queue series with name only and no controller_runtime_*; the backlog still shows', async () => {
    const i = 'backlog-component-base:8080';
    const series = await prom.query(sel(WORKQUEUE.depth, i), at(30));
    expect(series).toHaveLength(1);
    expect(Object.keys(series[0]!.labels).sort()).toEqual(['__name__', 'instance', 'job', 'name']);
    expect(await prom.query(`{__name__=~"controller_runtime_.+",instance="${i}"}`, at(30))).toHaveLength(0);
    expect(await scalar(`deriv(${depth(i)}[10m:15s])`, 30)).toBeGreaterThan(1);
    expect(truths.get(i)!.queues[0]!.controller).toBeNull();
  });

  it('not-observable: only REST client and leader-election series remain', async () => {
    const i = 'not-observable-component-base:8080';
    const names = new Set((await prom.query(`{instance="${i}"}`, at(10))).map((s) => s.labels.__name__));
    expect([...names].sort()).toEqual([CLIENT_GO.leaderElectionMasterStatus, CLIENT_GO.restClientRequests]);
    expect(truths.get(i)!.queues).toEqual([
      expect.objectContaining({ name: null, controller: null, expected: ['WorkqueueNotObservable'] }),
    ]);
  });
});
