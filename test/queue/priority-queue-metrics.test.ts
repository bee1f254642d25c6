/**
 * The priority queue's metrics, from controller-runtime's `priorityqueue/metrics.go` and
 * `internal/metrics/workqueue.go` (commit 86a0d40e) and its `workqueue_test.go` cardinality cases;
 * plus the metric page a scripted run prints, written by hand from the Go code's behaviour.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LABEL, WORKQUEUE } from '../../src/metrics/names.js';
import {
  createPriorityQueue,
  createPrometheusMetricsProvider,
  createQueue,
  FakeClock,
  MAX_RECOMMENDED_UNIQUE_PRIORITIES,
  noopMetricsProvider,
  PRIORITY_CARDINALITY_EXCEEDED,
  type PrometheusFlavor,
  UNFINISHED_WORK_UPDATE_PERIOD_MS,
} from '../../src/queue/index.js';
import { parseExposition, promtoolCheckMetrics } from './support/exposition.js';
import { RecordingMetricsProvider, RecordingPriorityMetricsProvider } from './support/recording-metrics.js';

describe('priority queue metrics: what is counted, and when', () => {
  it('asks the provider for its metrics in Go’s order, depth per priority last', () => {
    const provider = new RecordingPriorityMetricsProvider();
    createPriorityQueue<string>({ name: 'pq', clock: new FakeClock(), metricsProvider: provider });
    expect(provider.calls).toEqual([
      'adds(pq)',
      'latency(pq)',
      'workDuration(pq)',
      'unfinished(pq)',
      'longest(pq)',
      'retries(pq)',
      'depthWithPriority(pq)',
    ]);
  });

  it('falls back to the plain depth metric for a provider without depth per priority', () => {
    const provider = new RecordingMetricsProvider();
    const q = createPriorityQueue<string>({ name: 'pq', clock: new FakeClock(), metricsProvider: provider });
    expect(provider.calls.at(-1)).toBe('depth(pq)');
    const m = provider.of('pq');
    q.addWithOpts({ priority: 1 }, 'a');
    q.addWithOpts({ priority: 2 }, 'a');
    q.add('b');
    expect(m.depth.value).toBe(2);
    q.tryGet();
    expect(m.depth.value).toBe(1);
  });

  it('counts an add when the item becomes ready, and measures queue duration from then', () => {
    const clock = new FakeClock(0);
    const provider = new RecordingPriorityMetricsProvider();
    const q = createPriorityQueue<string>({ name: 'pq', clock, metricsProvider: provider });
    const m = provider.of('pq');
    q.addAfter('a', 100);
    expect(m.adds.value).toBe(0);
    expect(m.retries.value).toBe(1);
    clock.step(100);
    expect(m.adds.value).toBe(1);
    clock.step(50);
    expect(q.tryGet()?.item).toBe('a');
    expect(m.latency.observations).toEqual([0.05]);
    q.add('a');
    clock.step(30);
    q.done('a');
    expect(m.workDuration.observations).toEqual([0.03]);
    clock.step(20);
    q.tryGet();
    expect(m.latency.observations).toEqual([0.05, 0.05]);
    expect(m.adds.value).toBe(2);
  });

  it('counts a retry per item of an add with a positive delay only', () => {
    const provider = new RecordingPriorityMetricsProvider();
    const q = createPriorityQueue<string>({ name: 'pq', clock: new FakeClock(), metricsProvider: provider });
    q.addWithOpts({ after: 10 }, 'a', 'b', 'a');
    q.addAfter('c', 0);
    q.addAfter('d', -1);
    q.add('e');
    expect(provider.of('pq').retries.value).toBe(3);
  });

  it('refreshes unfinished work and longest running processor every 500 ms until shutdown', () => {
    const clock = new FakeClock(0);
    const provider = new RecordingPriorityMetricsProvider();
    const q = createPriorityQueue<string>({ name: 'pq', clock, metricsProvider: provider });
    const m = provider.of('pq');
    q.add('a');
    q.add('b');
    clock.step(100);
    q.tryGet();
    clock.step(200);
    q.tryGet();
    expect(clock.nextTimerAt()).toBe(UNFINISHED_WORK_UPDATE_PERIOD_MS);
    clock.step(199);
    expect(m.unfinished.value).toBe(0);
    clock.step(1);
    expect(m.unfinished.value).toBe(0.6000000000000001);
    expect(m.longest.value).toBe(0.4);
    q.done('a');
    clock.step(500);
    expect(m.unfinished.value).toBe(0.7);
    expect(m.longest.value).toBe(0.7);
    q.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    clock.step(3_600_000);
    expect(m.unfinished.value).toBe(0.7);
    q.done('b');
    expect(m.workDuration.observations).toEqual([0.4, 3600.7]);
  });

  it('does no metrics work and arms no refresher for an unnamed queue or the no-op provider', () => {
    const clock = new FakeClock(0);
    const provider = new RecordingPriorityMetricsProvider();
    const unnamed = createPriorityQueue<string>({ clock, metricsProvider: provider });
    unnamed.addWithOpts({ priority: 3, after: 5 }, 'a');
    unnamed.add('b');
    unnamed.tryGet();
    expect(provider.calls).toEqual([]);
    const noop = createPriorityQueue<string>({ name: 'q', clock, metricsProvider: noopMetricsProvider });
    noop.add('a');
    createPriorityQueue<string>({ name: 'q', clock }).add('a');
    expect(clock.pendingTimers()).toBe(1); // unnamed's readiness timer only
  });
});

describe('priority queue metrics: depth per priority in the prom-client provider', () => {
  async function depthSeries(registry: Registry): Promise<Map<string, number>> {
    const family = parseExposition(await registry.metrics()).get(WORKQUEUE.depth);
    return new Map((family?.samples ?? []).map((s) => [s.labels[LABEL.priority]!, s.value]));
  }

  it.each([
    { unique: 10, keys: 10, exceeded: undefined },
    { unique: 25, keys: 25, exceeded: undefined },
    { unique: 26, keys: 26, exceeded: 1 },
    { unique: 30, keys: 26, exceeded: 5 },
  ])(
    'respects the cardinality limit: $unique distinct priorities give $keys series',
    async ({ unique, keys, exceeded }) => {
      const registry = new Registry();
      const depth = createPrometheusMetricsProvider({ registry }).newDepthMetricWithPriority!('test');
      for (let i = 1; i <= unique; i++) depth.inc(i);
      const series = await depthSeries(registry);
      expect(series.size).toBe(keys);
      expect(series.get(PRIORITY_CARDINALITY_EXCEEDED)).toBe(exceeded);
      expect(MAX_RECOMMENDED_UNIQUE_PRIORITIES).toBe(25);
    },
  );

  it('many adds at one priority do not trigger the limit', async () => {
    const registry = new Registry();
    const depth = createPrometheusMetricsProvider({ registry }).newDepthMetricWithPriority!('test');
    for (let i = 0; i < 200; i++) depth.inc(1);
    expect(await depthSeries(registry)).toEqual(new Map([['1', 200]]));
  });

  it('past the limit, every priority of that queue goes to the placeholder, leaving the old series as they were', async () => {
    const registry = new Registry();
    const q = createPriorityQueue<string>({
      name: 'test',
      clock: new FakeClock(),
      metricsProvider: createPrometheusMetricsProvider({ registry }),
    });
    for (let p = 1; p <= 30; p++) q.addWithOpts({ priority: p }, `item-${p}`);
    while (q.tryGet() !== undefined);
    const series = await depthSeries(registry);
    expect(series.size).toBe(26);
    for (let p = 1; p <= 25; p++) expect(series.get(String(p))).toBe(1);
    expect(series.get(PRIORITY_CARDINALITY_EXCEEDED)).toBe(5 - 30);
    // The limit is per queue: another queue of another name starts afresh.
    const other = createPriorityQueue<string>({
      name: 'other',
      clock: new FakeClock(),
      metricsProvider: createPrometheusMetricsProvider({ registry }),
    });
    other.addWithOpts({ priority: -7 }, 'x');
    expect(await registry.metrics()).toContain('workqueue_depth{controller="other",name="other",priority="-7"} 1\n');
  });

  it('creates no depth series for a fresh priority queue; the classic queue keeps priority=""', async () => {
    const registry = new Registry();
    const metricsProvider = createPrometheusMetricsProvider({ registry });
    createPriorityQueue<string>({ name: 'fresh', clock: new FakeClock(), metricsProvider });
    let families = parseExposition(await registry.metrics());
    expect(families.has(WORKQUEUE.depth)).toBe(false);
    for (const name of Object.values(WORKQUEUE).filter((n) => n !== WORKQUEUE.depth)) {
      expect(families.get(name)!.samples.every((s) => s.value === 0 && s.labels[LABEL.name] === 'fresh')).toBe(true);
    }
    createQueue<string>({ name: 'classic', clock: new FakeClock(), metricsProvider }).add('a');
    families = parseExposition(await registry.metrics());
    expect(families.get(WORKQUEUE.depth)!.samples).toEqual([
      { name: WORKQUEUE.depth, labels: { controller: 'classic', name: 'classic', priority: '' }, value: 1 },
    ]);
  });
});

/**
 * A scripted run of a priority queue named `demo` on a FakeClock from t = 0 (default limiter).
 * Expected, by hand, from the Go code:
 * - t=0     add a (priority 10), b (0), c (-5)                  adds 3, depth {10:1, 0:1, -5:1}
 *           add c at 5: raised while ready                      depth {-5:0, 5:1}
 *           addAfter d 1 s; add d after 2 s at priority 20      retries 2; d waits until 1 s, priority 20
 * - t=250   get → a (queued 0.25 s); add a while processing      adds 4, depth {10:0, 0:2}
 *           get → c (priority 5 beats b; queued 0.25 s)          depth {5:0}
 * - t=500   refresh: a, c for 0.25 s each → unfinished 0.5, longest 0.25
 * - t=1000  d ready (counted now)                               adds 5, depth {20:1}
 *           refresh → 1.5, 0.75; get → d (queued 0 s)            depth {20:0}
 * - t=1250  done a (worked 1 s; its re-add is now ready), done c (worked 1 s)
 *           get → b (added before a's re-add; queued 1.25 s)     depth {0:1}
 *           addRateLimited e: 5 ms                              retries 3
 * - t=1255  e ready                                             adds 6, depth {0:2}
 *           get → a (queued since its re-add at 250: 1.005 s)    depth {0:1}
 * - t=1500  refresh: d 0.5, b 0.25, a 0.245 → 0.995, longest 0.5; done d (worked 0.5 s)
 * Queue durations 0.25, 0.25, 0, 1.25, 1.005 (sum 2.755); work durations 1, 1, 0.5 (sum 2.5).
 * The depth series appear in the order of their first use; Go would sort them (and its families)
 * by name and write `le` last: the values are Go's, the layout is prom-client's, as for the classic page.
 */
async function scriptedPage(registry: Registry, flavor: PrometheusFlavor): Promise<string> {
  const clock = new FakeClock(0);
  const metricsProvider = createPrometheusMetricsProvider({ registry, flavor });
  const q = createPriorityQueue<string>({ name: 'demo', clock, metricsProvider });
  q.addWithOpts({ priority: 10 }, 'a');
  q.add('b');
  q.addWithOpts({ priority: -5 }, 'c');
  q.addWithOpts({ priority: 5 }, 'c');
  q.addAfter('d', 1000);
  q.addWithOpts({ after: 2000, priority: 20 }, 'd');
  clock.step(250);
  expect(q.tryGet()).toEqual({ item: 'a', priority: 10 });
  q.add('a');
  expect(q.tryGet()).toEqual({ item: 'c', priority: 5 });
  clock.step(750);
  expect(q.tryGet()).toEqual({ item: 'd', priority: 20 });
  clock.step(250);
  q.done('a');
  q.done('c');
  expect(q.tryGet()).toEqual({ item: 'b', priority: 0 });
  q.addRateLimited('e');
  clock.step(5);
  expect(q.tryGet()).toEqual({ item: 'a', priority: 0 });
  clock.step(245);
  q.done('d');
  expect(q.len()).toBe(1);
  return registry.metrics();
}

const buckets = (name: string, labels: string, counts: readonly number[], bounds: readonly string[]): string =>
  bounds.map((le, i) => `${name}_bucket{le="${le}",${labels}} ${counts[i]}\n`).join('');

const CR_BOUNDS = [
  '1e-8',
  '1e-7',
  '0.000001',
  '0.000009999999999999999',
  '0.00009999999999999999',
  '0.001',
  '0.01',
  '0.1',
  '1',
  '10',
  '100',
  '1000',
  '+Inf',
];
const CB_BOUNDS = [...CR_BOUNDS.slice(0, 10), '+Inf'];

const CR = 'controller="demo",name="demo"';
const CONTROLLER_RUNTIME_PAGE = `# HELP workqueue_adds_total Total number of adds handled by workqueue
# TYPE workqueue_adds_total counter
workqueue_adds_total{${CR}} 6

# HELP workqueue_queue_duration_seconds How long in seconds an item stays in workqueue before being requested
# TYPE workqueue_queue_duration_seconds histogram
${buckets('workqueue_queue_duration_seconds', CR, [1, 1, 1, 1, 1, 1, 1, 1, 3, 5, 5, 5, 5], CR_BOUNDS)}workqueue_queue_duration_seconds_sum{${CR}} 2.755
workqueue_queue_duration_seconds_count{${CR}} 5

# HELP workqueue_work_duration_seconds How long in seconds processing an item from workqueue takes.
# TYPE workqueue_work_duration_seconds histogram
${buckets('workqueue_work_duration_seconds', CR, [0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 3], CR_BOUNDS)}workqueue_work_duration_seconds_sum{${CR}} 2.5
workqueue_work_duration_seconds_count{${CR}} 3

# HELP workqueue_unfinished_work_seconds How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.
# TYPE workqueue_unfinished_work_seconds gauge
workqueue_unfinished_work_seconds{${CR}} 0.995

# HELP workqueue_longest_running_processor_seconds How many seconds has the longest running processor for workqueue been running.
# TYPE workqueue_longest_running_processor_seconds gauge
workqueue_longest_running_processor_seconds{${CR}} 0.5

# HELP workqueue_retries_total Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)
# TYPE workqueue_retries_total counter
workqueue_retries_total{${CR}} 3

# HELP workqueue_depth Current depth of workqueue by workqueue and priority
# TYPE workqueue_depth gauge
workqueue_depth{${CR},priority="10"} 0
workqueue_depth{${CR},priority="0"} 1
workqueue_depth{${CR},priority="-5"} 0
workqueue_depth{${CR},priority="5"} 0
workqueue_depth{${CR},priority="20"} 0
`;

const CB = 'name="demo"';
const COMPONENT_BASE_PAGE = `# HELP workqueue_adds_total [BETA] Total number of adds handled by workqueue
# TYPE workqueue_adds_total counter
workqueue_adds_total{${CB}} 6

# HELP workqueue_queue_duration_seconds [BETA] How long in seconds an item stays in workqueue before being requested.
# TYPE workqueue_queue_duration_seconds histogram
${buckets('workqueue_queue_duration_seconds', CB, [1, 1, 1, 1, 1, 1, 1, 1, 3, 5, 5], CB_BOUNDS)}workqueue_queue_duration_seconds_sum{${CB}} 2.755
workqueue_queue_duration_seconds_count{${CB}} 5

# HELP workqueue_work_duration_seconds [BETA] How long in seconds processing an item from workqueue takes.
# TYPE workqueue_work_duration_seconds histogram
${buckets('workqueue_work_duration_seconds', CB, [0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3], CB_BOUNDS)}workqueue_work_duration_seconds_sum{${CB}} 2.5
workqueue_work_duration_seconds_count{${CB}} 3

# HELP workqueue_unfinished_work_seconds [BETA] How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.
# TYPE workqueue_unfinished_work_seconds gauge
workqueue_unfinished_work_seconds{${CB}} 0.995

# HELP workqueue_longest_running_processor_seconds [BETA] How many seconds has the longest running processor for workqueue been running.
# TYPE workqueue_longest_running_processor_seconds gauge
workqueue_longest_running_processor_seconds{${CB}} 0.5

# HELP workqueue_retries_total [BETA] Total number of retries handled by workqueue
# TYPE workqueue_retries_total counter
workqueue_retries_total{${CB}} 3

# HELP workqueue_depth [BETA] Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{${CB}} 1
`;

describe.each([
  { flavor: 'controller-runtime' as const, page: CONTROLLER_RUNTIME_PAGE },
  { flavor: 'component-base' as const, page: COMPONENT_BASE_PAGE },
])('priority queue metric page, $flavor flavor', ({ flavor, page }) => {
  it('is exactly the expected page after a scripted run on the FakeClock, line by line', async () => {
    const lines = (await scriptedPage(new Registry(), flavor)).split('\n');
    const expected = page.split('\n');
    for (let i = 0; i < Math.max(lines.length, expected.length); i++) {
      expect({ line: i + 1, text: lines[i] }).toEqual({ line: i + 1, text: expected[i] });
    }
  });

  it('passes promtool check metrics', async () => {
    const text = await scriptedPage(new Registry(), flavor);
    expect(promtoolCheckMetrics(text)).toEqual({ status: 0, output: '' });
  });
});
