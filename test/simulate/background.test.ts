/**
 * The background every simulated process has by default (`BackgroundSpec`): each component shows in the
 * metrics as specified, each draws from its own stream, `off` removes all of it, and runs stay reproducible.
 * Most tests switch on one component alone (`only`) on hand-made controllers so they can count exactly.
 */
import { describe, expect, it } from 'vitest';
import { CLIENT_GO, CONTROLLER_RUNTIME, WORKQUEUE } from '../../src/metrics/names.js';
import { FakeClock, realClock } from '../../src/queue/index.js';
import { ControllerBackground } from '../../src/simulate/controller-background.js';
import { startLiveSimulation } from '../../src/simulate/live.js';
import {
  BACKGROUND_OFF,
  type BackgroundMode,
  type BackgroundSpec,
  type ControllerSpec,
  DEFAULT_BACKGROUND,
  ERROR,
  type ProcessSpec,
  resolveBackground,
  type Scenario,
  SUCCESS,
  type SyncModelFactory,
} from '../../src/simulate/model.js';
import { SimProcess } from '../../src/simulate/process.js';
import {
  advanceTo,
  DEFAULT_START_MS,
  getScenario,
  groundTruth,
  resolveParams,
  runVirtual,
  scrapeTimes,
} from '../../src/simulate/run.js';

type Labels = Record<string, string>;
const MINUTE = 60_000;

/** Exactly the given background components, every other one off. */
const only = (parts: Partial<BackgroundSpec>): Partial<BackgroundSpec> => ({ ...BACKGROUND_OFF, ...parts });

function controller(overrides: Partial<ControllerSpec> = {}): ControllerSpec {
  return {
    name: 'widget',
    workers: 1,
    keys: 10,
    events: { rate: 0, keys: { kind: 'uniform' }, initialKeys: [0] },
    sync: steady(1),
    truth: { expected: [], allowed: [] },
    ...overrides,
  };
}

/** Every sync succeeds after `ms`. */
function steady(ms: number): SyncModelFactory {
  const plan = { durationMs: ms, result: SUCCESS };
  return () => () => plan;
}

interface Options {
  readonly seed?: number;
  readonly background?: BackgroundMode;
  /** Called after every step of `stepMs` (default: run straight to the end). */
  readonly onStep?: (process: SimProcess, clock: FakeClock) => void;
  readonly stepMs?: number;
}

async function simulate(spec: Partial<ProcessSpec>, ms: number, options: Options = {}) {
  const clock = new FakeClock(0);
  const process = new SimProcess(
    { leader: true, leaseName: 'test-leader-election', controllers: [], ...spec },
    { clock, seed: options.seed ?? 3, flavor: 'controller-runtime', durationMs: ms, background: options.background },
  );
  process.start();
  process.pump();
  if (options.onStep === undefined) advanceTo(clock, process, ms);
  else {
    const step = options.stepMs ?? 10;
    for (let t = step; t <= ms; t += step) {
      advanceTo(clock, process, t);
      options.onStep(process, clock);
    }
  }
  const metrics = await process.registry.getMetricsAsJSON();
  /** Sum of the samples of `sample` whose labels include `labels`; 0 when there is none. */
  const value = (sample: string, labels: Labels = {}): number => {
    let total = 0;
    for (const metric of metrics) {
      for (const v of metric.values) {
        const name = (v as { metricName?: string }).metricName ?? metric.name;
        if (name !== sample) continue;
        const own = v.labels as Record<string, string | number>;
        if (Object.entries(labels).every(([k, want]) => String(own[k]) === want)) total += v.value;
      }
    }
    return total;
  };
  const rest = (method: string, code: string): number => value(CLIENT_GO.restClientRequests, { method, code });
  return { process, clock, value, rest, stats: process.controllers[0]?.stats };
}

const C = { controller: 'widget' };
const W = { name: 'widget' };
/** A busy, always-succeeding controller: 40 events/s over 2,000 keys, 5 ms syncs, 4 workers. */
const busy = (overrides: Partial<ControllerSpec> = {}): ControllerSpec =>
  controller({
    workers: 4,
    keys: 2_000,
    events: { rate: 40, keys: { kind: 'uniform' } },
    sync: steady(5),
    ...overrides,
  });

describe('transient conflicts', () => {
  it('about 1.5% of the syncs that would succeed end in a PUT 409 and an error, retried with backoff', async () => {
    const { stats, rest, value } = await simulate(
      { controllers: [busy()], background: { siblingTraffic: null } },
      60 * MINUTE,
    );
    const { conflicts, completed, polls } = stats!;
    expect(completed).toBeGreaterThan(100_000);
    expect(conflicts / completed).toBeGreaterThan(0.0125);
    expect(conflicts / completed).toBeLessThan(0.0175);
    expect(rest('PUT', '409')).toBe(conflicts);
    expect(value(CONTROLLER_RUNTIME.reconcileErrors, C)).toBe(conflicts);
    // Each conflict is retried through the rate limiter; each poll is an addAfter.
    expect(value(WORKQUEUE.retries, W)).toBe(conflicts + polls);
  });

  it('the retry of a conflict succeeds, and a sync that fails anyway is never made a conflict', async () => {
    const always = await simulate({ controllers: [controller()], background: only({ conflictShare: 1 }) }, 1_000);
    expect(always.stats).toMatchObject({ syncs: 2, conflicts: 1 });
    expect(always.value(CONTROLLER_RUNTIME.reconcileTotal, { ...C, result: 'error' })).toBe(1);
    expect(always.value(CONTROLLER_RUNTIME.reconcileTotal, { ...C, result: 'success' })).toBe(1);
    expect(always.rest('PUT', '409')).toBe(1);

    const failing = controller({ sync: () => () => ({ durationMs: 1, result: ERROR }) });
    const { stats, rest } = await simulate({ controllers: [failing], background: only({ conflictShare: 1 }) }, 5_000);
    expect(stats!.syncs).toBeGreaterThan(5);
    expect(stats!.conflicts).toBe(0);
    expect(rest('PUT', '409')).toBe(0);
  });
});

describe('optional-object GETs', () => {
  it('every sync GETs an optional object and gets 404, without an error', async () => {
    const { stats, rest, value } = await simulate(
      { controllers: [busy()], background: only({ optionalGetShare: 1 }) },
      5 * MINUTE,
    );
    expect(rest('GET', '404')).toBe(stats!.completed);
    expect(value(CONTROLLER_RUNTIME.reconcileErrors, C)).toBe(0);
    const half = await simulate({ controllers: [busy()], background: only({ optionalGetShare: 0.5 }) }, 5 * MINUTE);
    expect(half.rest('GET', '404') / half.stats!.completed).toBeGreaterThan(0.47);
    expect(half.rest('GET', '404') / half.stats!.completed).toBeLessThan(0.53);
  });
});

describe('polling keys', () => {
  it('about 2% of the keys return RequeueAfter on every sync, each at its own interval of 30–60 s', async () => {
    const keys = 1_000;
    const syncTimes: number[][] = Array.from({ length: keys }, () => []);
    const polling = controller({
      keys,
      workers: 4,
      events: { rate: 0, keys: { kind: 'uniform' }, initialKeys: Array.from({ length: keys }, (_, k) => k) },
      sync: () => (ctx) => {
        syncTimes[ctx.key]!.push(ctx.nowMs);
        return { durationMs: 1, result: SUCCESS };
      },
    });
    const { process, stats, value } = await simulate(
      { controllers: [polling], background: only({ pollingKeyShare: 0.02, pollingMaxKeys: 20 }) },
      10 * MINUTE,
    );
    const roles = process.controllers[0]!.background.polling;
    const pollingKeys = syncTimes.flatMap((_, key) => (roles.isPolling(key) ? [key] : []));
    expect(pollingKeys.length).toBe(roles.count(keys));
    expect(pollingKeys.length).toBeGreaterThan(10);
    expect(pollingKeys.length).toBeLessThan(35);
    for (const key of pollingKeys) {
      const interval = roles.intervalMs(key);
      expect(interval).toBeGreaterThanOrEqual(30_000);
      expect(interval).toBeLessThanOrEqual(60_000);
      const times = syncTimes[key]!;
      expect(times.length).toBeGreaterThanOrEqual(10);
      // Each poll is queued `interval` after the previous sync ended (1 ms after it started).
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeCloseTo(interval + 1, 6);
    }
    for (const key of syncTimes.keys()) if (!roles.isPolling(key)) expect(syncTimes[key]).toHaveLength(1);
    expect(value(CONTROLLER_RUNTIME.reconcileTotal, { ...C, result: 'requeue_after' })).toBe(stats!.polls);
    expect(value(WORKQUEUE.retries, W)).toBe(stats!.polls);
    expect(value(CONTROLLER_RUNTIME.reconcileErrors, C)).toBe(0);
  });

  it("a load scenario's truth counts the polls of the run's own polling objects, not the average number", () => {
    // Seed 109011 draws 33 polling objects of 10,000 where 20 is the average; an event reaches each within the
    // 45 minutes with probability 1 − exp(−7.06 × 2,700 / 10,000) = 0.851, and each is polled every 30 to 60 s.
    const scenario = getScenario('busy-but-fine');
    const params = resolveParams({ seed: 109011, workers: 1, keys: 10_000, durationMs: 45 * MINUTE }, scenario);
    const queue = groundTruth(scenario, params).queues[0]!;
    expect(queue.background?.pollingKeys).toBe(33);
    const facts = queue.facts as { finalUtilization: number; utilization: number; capacityPerSecond: number };
    const pollsPerSecond = (facts.finalUtilization - facts.utilization) * facts.capacityPerSecond;
    expect(pollsPerSecond).toBeGreaterThan((33 * 0.851) / 60 - 0.01);
    expect(pollsPerSecond).toBeLessThan((33 * 0.851) / 30 + 0.01);
  });

  it('a polling key whose sync fails keeps failing: only would-be successes poll', async () => {
    const failing = controller({
      keys: 1_000,
      events: { rate: 20, keys: { kind: 'uniform' } },
      sync: () => () => ({ durationMs: 1, result: ERROR }),
    });
    const { stats } = await simulate(
      { controllers: [failing], background: only({ pollingKeyShare: 1, pollingMaxKeys: 1_000 }) },
      MINUTE,
    );
    expect(stats!.syncs).toBeGreaterThan(500);
    expect(stats!.polls).toBe(0);
  });
});

describe('informer resyncs', () => {
  it('a controller without a resync gets one every 10–30 minutes, the first at a random phase', async () => {
    let addsBeforeFirst = -1;
    let firstAt = -1;
    const spec = { controllers: [controller({ keys: 100, events: { rate: 0, keys: { kind: 'uniform' } } })] };
    const { resyncPeriodMs, resyncMaxKeys } = DEFAULT_BACKGROUND;
    const background = only({ resyncPeriodMs, resyncMaxKeys });
    const { process, value } = await simulate({ ...spec, background }, 70 * MINUTE, {
      stepMs: 1_000,
      onStep: (p, clock) => {
        if (firstAt < 0) firstAt = p.controllers[0]!.background.resync!.firstAtMs;
        if (clock.now() + 1_000 > firstAt && addsBeforeFirst < 0) addsBeforeFirst = p.controllers[0]!.stats.syncs;
      },
    });
    const resync = process.controllers[0]!.background.resync!;
    expect(resync.source).toBe('background');
    expect(resync.periodMs).toBeGreaterThanOrEqual(10 * MINUTE);
    expect(resync.periodMs).toBeLessThanOrEqual(30 * MINUTE);
    expect(resync.firstAtMs).toBeLessThan(resync.periodMs);
    expect(addsBeforeFirst).toBe(0);
    const resyncs = Math.floor((70 * MINUTE - resync.firstAtMs) / resync.periodMs) + 1;
    expect(value(WORKQUEUE.adds, W)).toBe(100 * resyncs);
  });

  it("a scenario's own resync is kept; each controller draws its own period", () => {
    const seed = 11;
    const own = controller({ events: { rate: 0, keys: { kind: 'uniform' }, resyncPeriodMs: MINUTE } });
    expect(new ControllerBackground(own, seed, DEFAULT_BACKGROUND).resync).toEqual({
      periodMs: MINUTE,
      firstAtMs: MINUTE,
      source: 'scenario',
    });
    const a = new ControllerBackground(controller({ name: 'a' }), seed, DEFAULT_BACKGROUND).resync!;
    const b = new ControllerBackground(controller({ name: 'b' }), seed, DEFAULT_BACKGROUND).resync!;
    expect(a.periodMs).not.toBe(b.periodMs);
    expect(new ControllerBackground(controller(), seed, BACKGROUND_OFF).resync).toBeNull();
    const large = controller({ keys: DEFAULT_BACKGROUND.resyncMaxKeys + 1 });
    expect(new ControllerBackground(large, seed, DEFAULT_BACKGROUND).resync).toBeNull();
  });
});

/**
 * Scrape timestamps (seconds) of `workqueue_adds_total` samples of one queue, in order (the adds counter exists
 * from the queue's creation; the priority queue's depth series only from its first item).
 */
function recordedTimes(text: string, name: string): number[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${WORKQUEUE.adds}{`) && line.includes(`name="${name}"`))
    .map((line) => Number(line.split(' ').at(-1)));
}

describe('scrape jitter', () => {
  it('recorded scrapes are off the grid by at most a second, in order, the first not before the start', async () => {
    const run = await runVirtual('healthy', { durationMs: 10 * MINUTE, seed: 5 });
    const text = run.recording.text();
    const times = recordedTimes(text, 'deployment');
    expect(times).toHaveLength(41);
    const t0 = DEFAULT_START_MS / 1000;
    const offsets = times.map((t, k) => t - (t0 + 15 * k));
    expect(offsets[0]).toBeGreaterThanOrEqual(0);
    for (const offset of offsets) expect(Math.abs(offset)).toBeLessThanOrEqual(1);
    expect(offsets.filter((o) => o !== 0).length).toBeGreaterThan(35);
    // Whole milliseconds, and every series of a scrape carries the same time.
    for (const t of times) expect(Math.round(t * 1000) / 1000).toBe(t);
    const all = new Set(
      text
        .split('\n')
        .filter((line) => !line.startsWith('#') && line !== '')
        .map((line) => Number(line.split(' ').at(-1))),
    );
    expect([...all].sort((a, b) => a - b)).toEqual(times);
  });

  it('stays within a quarter of the interval, so scrapes keep their order', () => {
    const times = scrapeTimes(0, 1_000, 200, 1_000, 1);
    for (const [k, t] of times.entries()) expect(Math.abs(t - 1_000 * k)).toBeLessThanOrEqual(250);
    expect(times.slice(1).every((t, k) => t > times[k]!)).toBe(true);
    const warm = scrapeTimes(0, 15_000, 40, 1_000, 2, true);
    expect(warm.at(-1)).toBeLessThanOrEqual(40 * 15_000);
    expect(scrapeTimes(7, 15_000, 3, 0, 1)).toEqual([7, 15_007, 30_007, 45_007]);
  });
});

describe('pauses', () => {
  it('the whole process stalls every 2–6 minutes for 0.5–3 s: no sync starts or ends meanwhile', async () => {
    const gaps = async (background: Partial<BackgroundSpec>) => {
      const found: number[] = [];
      let lastChange = 0;
      let last = '';
      const { value } = await simulate(
        { controllers: [busy({ events: { rate: 300, keys: { kind: 'uniform' } } })], background },
        15 * MINUTE,
        {
          stepMs: 10,
          onStep: (p, clock) => {
            const { syncs, completed } = p.controllers[0]!.stats;
            const now = `${syncs}/${completed}`;
            if (now !== last) {
              if (clock.now() - lastChange > 400) found.push(clock.now() - lastChange);
              lastChange = clock.now();
              last = now;
            }
          },
        },
      );
      // Syncs running when a pause starts end with it: longer than any 5 ms sync.
      const slow =
        value(`${WORKQUEUE.workDuration}_count`, W) - value(`${WORKQUEUE.workDuration}_bucket`, { ...W, le: '0.1' });
      return { found, slow };
    };
    const paused = await gaps(only({ pauses: DEFAULT_BACKGROUND.pauses }));
    // 15 minutes of 2–6 minute gaps: 2 to 7 pauses, each 0.5–3 s (seen at 10 ms steps).
    expect(paused.found.length).toBeGreaterThanOrEqual(2);
    expect(paused.found.length).toBeLessThanOrEqual(7);
    for (const gap of paused.found) {
      expect(gap).toBeGreaterThanOrEqual(490);
      expect(gap).toBeLessThanOrEqual(3_020);
    }
    expect(paused.slow).toBeGreaterThan(0);
    const steady = await gaps(BACKGROUND_OFF);
    expect(steady.found).toEqual([]);
    expect(steady.slow).toBe(0);
  }, 30_000);

  it('on the real clock, a worker holding a key waits for the pause to end', async () => {
    const process = new SimProcess(
      {
        leader: true,
        leaseName: 'lease',
        controllers: [controller({ events: { rate: 0, keys: { kind: 'uniform' }, initialKeys: [0, 1, 2] } })],
      },
      { clock: realClock, seed: 1, flavor: 'controller-runtime', durationMs: 1_000, realtime: true, background: 'off' },
    );
    // A pause that lasts until the test ends it: no timing race, however loaded the machine.
    process.pause.untilMs = realClock.now() + 60_000;
    process.start();
    const sim = process.controllers[0]!;
    void sim.runWorker();
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(sim.stats.syncs).toBe(0);
      process.pause.end();
      for (let i = 0; i < 500 && sim.stats.completed < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(sim.stats.completed).toBe(3);
    } finally {
      process.stop();
    }
  });
});

describe('sibling controllers', () => {
  it('GETs at 0.5/s (5% 404) and writes at 0.1/s (1% 409), in no queue, only on the leader', async () => {
    const hours = 2;
    const background = only({ siblingTraffic: DEFAULT_BACKGROUND.siblingTraffic });
    const { rest } = await simulate({ background }, hours * 60 * MINUTE);
    const seconds = hours * 3_600;
    // Leader election: a GET and a PUT every 2 s (the first at 0).
    const leaderElection = seconds / 2 + 1;
    const gets = rest('GET', '200') + rest('GET', '404') - leaderElection;
    expect(gets / seconds).toBeGreaterThan(0.45);
    expect(gets / seconds).toBeLessThan(0.55);
    expect(rest('GET', '404') / gets).toBeGreaterThan(0.035);
    expect(rest('GET', '404') / gets).toBeLessThan(0.065);
    const writes =
      rest('PATCH', '200') + rest('PATCH', '409') + rest('PUT', '200') + rest('PUT', '409') - leaderElection;
    expect(writes / seconds).toBeGreaterThan(0.085);
    expect(writes / seconds).toBeLessThan(0.115);
    expect(rest('PATCH', '200')).toBeGreaterThan(0.4 * writes);
    expect(rest('PATCH', '409') + rest('PUT', '409')).toBeLessThan(0.04 * writes);
    const standby = await simulate({ leader: false, background }, 10 * MINUTE);
    expect(standby.rest('GET', '404') + standby.rest('PATCH', '200')).toBe(0);
  });
});

describe('the default background and off', () => {
  it('is on by default and recorded in the truth; off removes every component and ignores overrides', async () => {
    const params = { durationMs: 10 * MINUTE, seed: 2 };
    const on = await runVirtual('healthy', params);
    expect(on.truth.background).toEqual({ mode: 'default', ...DEFAULT_BACKGROUND });
    const queue = on.truth.queues[0]!.background!;
    expect(queue.pollingKeys).toBeGreaterThan(5);
    expect(queue.pollingKeys).toBeLessThan(35);
    expect(queue.resync?.source).toBe('scenario');
    expect(JSON.parse(JSON.stringify(on.truth))).toEqual(on.truth);
    const onText = on.recording.text();
    expect(onText).toMatch(/code="404".*method="GET"/);
    expect(onText).toMatch(
      /controller_runtime_reconcile_total\{controller="deployment".*result="requeue_after"\} [1-9]/,
    );

    const loud: Scenario = {
      ...getScenario('healthy'),
      build: (p) => ({ ...getScenario('healthy').build(p), background: { conflictShare: 1 } }),
    };
    const off = await runVirtual(loud, { ...params, background: 'off' });
    expect(off.truth.background).toEqual({ mode: 'off', ...BACKGROUND_OFF });
    expect(off.truth.queues[0]!.background).toMatchObject({ pollingKeys: 0, conflictShare: 0 });
    const text = off.recording.text();
    expect(text).not.toMatch(/code="(404|409)"/);
    expect(text).not.toMatch(/result="requeue_after"\} [1-9]/);
    expect(text).not.toMatch(/controller_runtime_reconcile_errors_total\{[^}]*\} [1-9]/);
    expect(recordedTimes(text, 'deployment')).toEqual(
      Array.from({ length: 41 }, (_, k) => DEFAULT_START_MS / 1000 + 15 * k),
    );
    // Off is the same run as a background with every component switched off.
    const quiet: Scenario = {
      ...getScenario('healthy'),
      build: (p) => ({ ...getScenario('healthy').build(p), background: BACKGROUND_OFF }),
    };
    expect((await runVirtual(quiet, params)).recording.text()).toBe(text);
  });

  it('same seed, same recording; one component changed, the others draw the same', async () => {
    const params = { durationMs: 10 * MINUTE, seed: 9 };
    const a = await runVirtual('mixed', params);
    const b = await runVirtual('mixed', params);
    expect(b.recording.text()).toBe(a.recording.text());
    expect(b.truth).toEqual(a.truth);
    // Fewer optional GETs draw from their own stream: conflicts and polls stay exactly where they were.
    const run = async (background: Partial<BackgroundSpec>) => {
      const { stats } = await simulate({ controllers: [busy()], background }, 10 * MINUTE, { seed: 4 });
      return { syncs: stats!.syncs, conflicts: stats!.conflicts, polls: stats!.polls };
    };
    const full = await run({});
    expect(full.conflicts).toBeGreaterThan(0);
    expect(full.polls).toBeGreaterThan(0);
    expect(await run({ optionalGetShare: 0.3 })).toEqual(full);
    expect(await run({ siblingTraffic: null })).toEqual(full);
  });

  it('validates the mode and the overrides', async () => {
    expect(resolveParams({}).background).toBe('default');
    expect(() => resolveParams({ background: 'loud' as BackgroundMode })).toThrow(
      /background must be one of default, off/,
    );
    expect(() => resolveBackground('default', { conflictShare: 2 })).toThrow(RangeError);
    expect(() => resolveBackground('default', { pauses: { everyMs: [0, 1], durationMs: [1, 2] } })).toThrow(/pauses/);
    expect(resolveBackground('off', { conflictShare: 2 })).toBe(BACKGROUND_OFF);
    expect(resolveBackground('default', { scrapeJitterMs: 0 }, { conflictShare: 0.5 })).toMatchObject({
      scrapeJitterMs: 0,
      conflictShare: 0.5,
      optionalGetShare: 1,
    });
  });

  it('the real-time simulation has the same background', async () => {
    const live = await startLiveSimulation({ scenario: 'healthy', listen: '127.0.0.1:0' });
    try {
      expect(live.truth.background?.mode).toBe('default');
    } finally {
      await live.stop();
    }
  });
});
