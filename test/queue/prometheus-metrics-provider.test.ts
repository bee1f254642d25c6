import { readFileSync } from 'node:fs';
import { Gauge, type OpenMetricsContentType, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LABEL, WORKQUEUE } from '../../src/metrics/names.js';
import {
  createPrometheusMetricsProvider,
  createQueue,
  createRateLimitingQueue,
  defaultControllerRateLimiter,
  FakeClock,
  type PrometheusFlavor,
} from '../../src/queue/index.js';
import { CLIENT_GO_FIXTURES } from '../support/fixtures.js';
import { type Family, parseExposition, promtoolCheckMetrics } from './support/exposition.js';

const FIXTURES = CLIENT_GO_FIXTURES;
const CONTROLLER_RUNTIME_FIXTURES = [
  'controller-runtime-hotloop.prom',
  'controller-runtime-backlog.prom',
  'controller-runtime-blocking.prom',
  'controller-runtime-failing-with-reconcile-metrics.prom',
];
const COMPONENT_BASE_FIXTURES = ['component-base-healthy.prom'];

/**
 * A scripted run of a rate-limiting queue named `demo` on a FakeClock from t = 0 (default
 * controller limiter, retries counted on every addAfter). Expected, by hand:
 * - t=0     add a, add b, add a (duplicate)                    adds 2, depth 2
 * - t=250   get → a (queued 0.25 s); add a while processing    adds 3, depth 2
 * - t=500, 1000: refresh: a in flight since 250 → 0.25, then 0.75 s
 * - t=1250  done a (worked 1 s; re-queued, was dirty); get → b (queued 1.25 s);
 *           addRateLimited c: max(5 ms exponential, 0 bucket) = 5 ms    retries 1
 * - t=1255  c ready                                            adds 4, depth 2 (a, c)
 *           get → a (queued since its add at 250: 1.005 s); addAfter d 0: retries 2, adds 5, depth 2 (c, d)
 * - t=1500  refresh: b since 1250 (0.25), a since 1255 (0.245) → unfinished 0.495, longest 0.25;
 *           done b (worked 0.25 s)
 * Queue durations 0.25, 1.25, 1.005 (sum 2.505); work durations 1, 0.25 (sum 1.25).
 */
async function scriptedPage(registry: Registry, flavor: PrometheusFlavor): Promise<string> {
  const clock = new FakeClock(0);
  const metricsProvider = createPrometheusMetricsProvider({ registry, flavor });
  const queue = createRateLimitingQueue<string>(defaultControllerRateLimiter<string>(clock), {
    name: 'demo',
    clock,
    metricsProvider,
  });
  queue.add('a');
  queue.add('b');
  queue.add('a');
  clock.step(250);
  expect(queue.tryGet()).toEqual({ item: 'a' });
  queue.add('a');
  clock.step(1000);
  queue.done('a');
  expect(queue.tryGet()).toEqual({ item: 'b' });
  queue.addRateLimited('c');
  clock.step(5);
  expect(queue.tryGet()).toEqual({ item: 'a' });
  queue.addAfter('d', 0);
  clock.step(245);
  queue.done('b');
  expect(queue.len()).toBe(2);
  return registry.metrics();
}

const CONTROLLER_RUNTIME_PAGE = `# HELP workqueue_depth Current depth of workqueue by workqueue and priority
# TYPE workqueue_depth gauge
workqueue_depth{controller="demo",name="demo",priority=""} 2

# HELP workqueue_adds_total Total number of adds handled by workqueue
# TYPE workqueue_adds_total counter
workqueue_adds_total{controller="demo",name="demo"} 5

# HELP workqueue_queue_duration_seconds How long in seconds an item stays in workqueue before being requested
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{le="1e-8",controller="demo",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="1e-7",controller="demo",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.000001",controller="demo",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.000009999999999999999",controller="demo",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.00009999999999999999",controller="demo",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.001",controller="demo",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.01",controller="demo",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.1",controller="demo",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="1",controller="demo",name="demo"} 1
workqueue_queue_duration_seconds_bucket{le="10",controller="demo",name="demo"} 3
workqueue_queue_duration_seconds_bucket{le="100",controller="demo",name="demo"} 3
workqueue_queue_duration_seconds_bucket{le="1000",controller="demo",name="demo"} 3
workqueue_queue_duration_seconds_bucket{le="+Inf",controller="demo",name="demo"} 3
workqueue_queue_duration_seconds_sum{controller="demo",name="demo"} 2.505
workqueue_queue_duration_seconds_count{controller="demo",name="demo"} 3

# HELP workqueue_work_duration_seconds How long in seconds processing an item from workqueue takes.
# TYPE workqueue_work_duration_seconds histogram
workqueue_work_duration_seconds_bucket{le="1e-8",controller="demo",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="1e-7",controller="demo",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.000001",controller="demo",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.000009999999999999999",controller="demo",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.00009999999999999999",controller="demo",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.001",controller="demo",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.01",controller="demo",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.1",controller="demo",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="1",controller="demo",name="demo"} 2
workqueue_work_duration_seconds_bucket{le="10",controller="demo",name="demo"} 2
workqueue_work_duration_seconds_bucket{le="100",controller="demo",name="demo"} 2
workqueue_work_duration_seconds_bucket{le="1000",controller="demo",name="demo"} 2
workqueue_work_duration_seconds_bucket{le="+Inf",controller="demo",name="demo"} 2
workqueue_work_duration_seconds_sum{controller="demo",name="demo"} 1.25
workqueue_work_duration_seconds_count{controller="demo",name="demo"} 2

# HELP workqueue_unfinished_work_seconds How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.
# TYPE workqueue_unfinished_work_seconds gauge
workqueue_unfinished_work_seconds{controller="demo",name="demo"} 0.495

# HELP workqueue_longest_running_processor_seconds How many seconds has the longest running processor for workqueue been running.
# TYPE workqueue_longest_running_processor_seconds gauge
workqueue_longest_running_processor_seconds{controller="demo",name="demo"} 0.25

# HELP workqueue_retries_total Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)
# TYPE workqueue_retries_total counter
workqueue_retries_total{controller="demo",name="demo"} 2
`;

const COMPONENT_BASE_PAGE = `# HELP workqueue_depth [BETA] Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="demo"} 2

# HELP workqueue_adds_total [BETA] Total number of adds handled by workqueue
# TYPE workqueue_adds_total counter
workqueue_adds_total{name="demo"} 5

# HELP workqueue_queue_duration_seconds [BETA] How long in seconds an item stays in workqueue before being requested.
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{le="1e-8",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="1e-7",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.000001",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.000009999999999999999",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.00009999999999999999",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.001",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.01",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="0.1",name="demo"} 0
workqueue_queue_duration_seconds_bucket{le="1",name="demo"} 1
workqueue_queue_duration_seconds_bucket{le="10",name="demo"} 3
workqueue_queue_duration_seconds_bucket{le="+Inf",name="demo"} 3
workqueue_queue_duration_seconds_sum{name="demo"} 2.505
workqueue_queue_duration_seconds_count{name="demo"} 3

# HELP workqueue_work_duration_seconds [BETA] How long in seconds processing an item from workqueue takes.
# TYPE workqueue_work_duration_seconds histogram
workqueue_work_duration_seconds_bucket{le="1e-8",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="1e-7",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.000001",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.000009999999999999999",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.00009999999999999999",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.001",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.01",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="0.1",name="demo"} 0
workqueue_work_duration_seconds_bucket{le="1",name="demo"} 2
workqueue_work_duration_seconds_bucket{le="10",name="demo"} 2
workqueue_work_duration_seconds_bucket{le="+Inf",name="demo"} 2
workqueue_work_duration_seconds_sum{name="demo"} 1.25
workqueue_work_duration_seconds_count{name="demo"} 2

# HELP workqueue_unfinished_work_seconds [BETA] How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.
# TYPE workqueue_unfinished_work_seconds gauge
workqueue_unfinished_work_seconds{name="demo"} 0.495

# HELP workqueue_longest_running_processor_seconds [BETA] How many seconds has the longest running processor for workqueue been running.
# TYPE workqueue_longest_running_processor_seconds gauge
workqueue_longest_running_processor_seconds{name="demo"} 0.25

# HELP workqueue_retries_total [BETA] Total number of retries handled by workqueue
# TYPE workqueue_retries_total counter
workqueue_retries_total{name="demo"} 2
`;

/** The work-queue families of a page, reduced to what must match a real controller's page. */
function shapeOf(families: Map<string, Family>): Map<string, unknown> {
  const shape = new Map<string, unknown>();
  for (const family of [...families.values()].filter((f) => f.name.startsWith('workqueue_'))) {
    const labelSets = new Set(
      family.samples.map(
        (s) =>
          `${s.name.slice(family.name.length) || '(value)'}:${Object.keys(s.labels)
            .filter((l) => l !== LABEL.le)
            .sort()
            .join(',')}`,
      ),
    );
    const firstSeries = family.samples.filter((s) => s.name.endsWith('_bucket')).map((s) => s.labels[LABEL.le]);
    const bounds = firstSeries.slice(0, firstSeries.indexOf('+Inf') + 1).map(Number);
    const priority = family.samples.map((s) => s.labels[LABEL.priority]).filter((p) => p !== undefined);
    shape.set(family.name, {
      help: family.help,
      type: family.type,
      labelSets: [...labelSets].sort(),
      bounds,
      priority: [...new Set(priority)],
    });
  }
  return shape;
}

const FLAVOR_CASES = [
  { flavor: 'controller-runtime' as const, page: CONTROLLER_RUNTIME_PAGE, fixtures: CONTROLLER_RUNTIME_FIXTURES },
  { flavor: 'component-base' as const, page: COMPONENT_BASE_PAGE, fixtures: COMPONENT_BASE_FIXTURES },
];

describe.each(FLAVOR_CASES)('prometheus provider, $flavor flavor', ({ flavor, page, fixtures }) => {
  it('exposes exactly the expected page after a scripted run on the FakeClock', async () => {
    expect(await scriptedPage(new Registry(), flavor)).toBe(page);
  });

  it('passes promtool check metrics', async () => {
    const text = await scriptedPage(new Registry(), flavor);
    expect(promtoolCheckMetrics(text)).toEqual({ status: 0, output: '' });
  });

  it.each(fixtures)('has the families, HELP, TYPE, labels and buckets of the real page %s', async (fixture) => {
    const ours = shapeOf(parseExposition(await scriptedPage(new Registry(), flavor)));
    const real = shapeOf(parseExposition(readFileSync(`${FIXTURES}/${fixture}`, 'utf8')));
    expect([...ours.keys()].sort()).toEqual(Object.values(WORKQUEUE).sort());
    expect([...ours.keys()].sort()).toEqual([...real.keys()].sort());
    for (const [name, shape] of real)
      expect({ name, ...(ours.get(name) as object) }).toEqual({ name, ...(shape as object) });
  });

  it('creates every series at zero with the queue, as Go’s WithLabelValues', async () => {
    const registry = new Registry();
    createRateLimitingQueue<string>(defaultControllerRateLimiter<string>(new FakeClock()), {
      name: 'fresh',
      clock: new FakeClock(),
      metricsProvider: createPrometheusMetricsProvider({ registry, flavor }),
    });
    const families = parseExposition(await registry.metrics());
    expect([...families.keys()].sort()).toEqual(Object.values(WORKQUEUE).sort());
    for (const family of families.values()) {
      expect(family.samples.length).toBeGreaterThan(0);
      for (const sample of family.samples) {
        expect(sample.labels[LABEL.name]).toBe('fresh');
        expect(sample.value).toBe(0);
      }
    }
  });
});

describe('prometheus provider: registries', () => {
  it('shares series between two queues of one name, without throwing or resetting them', async () => {
    const registry = new Registry();
    const clock = new FakeClock();
    const first = createQueue<string>({
      name: 'shared',
      clock,
      metricsProvider: createPrometheusMetricsProvider({ registry }),
    });
    first.add('a');
    clock.step(1000);
    first.tryGet();
    const second = createQueue<string>({
      name: 'shared',
      clock,
      metricsProvider: createPrometheusMetricsProvider({ registry }),
    });
    const third = createQueue<string>({
      name: 'other',
      clock,
      metricsProvider: createPrometheusMetricsProvider({ registry, flavor: 'controller-runtime' }),
    });
    second.add('a');
    third.add('x');
    const families = parseExposition(await registry.metrics());
    const value = (family: string, sample: string, name: string): number | undefined =>
      families.get(family)?.samples.find((s) => s.name === sample && s.labels[LABEL.name] === name)?.value;
    expect(value(WORKQUEUE.adds, WORKQUEUE.adds, 'shared')).toBe(2);
    expect(value(WORKQUEUE.depth, WORKQUEUE.depth, 'shared')).toBe(1);
    expect(value(WORKQUEUE.queueDuration, `${WORKQUEUE.queueDuration}_count`, 'shared')).toBe(1);
    expect(value(WORKQUEUE.queueDuration, `${WORKQUEUE.queueDuration}_sum`, 'shared')).toBe(1);
    expect(value(WORKQUEUE.adds, WORKQUEUE.adds, 'other')).toBe(1);
  });

  it('refuses to mix flavors in one registry', () => {
    const registry = new Registry();
    createPrometheusMetricsProvider({ registry, flavor: 'controller-runtime' });
    expect(() => createPrometheusMetricsProvider({ registry, flavor: 'component-base' })).toThrow(
      /controller-runtime flavor/,
    );
  });

  it('refuses to take over a family registered by other code', () => {
    const registry = new Registry();
    new Gauge({ name: WORKQUEUE.depth, help: 'someone else', registers: [registry] });
    const metricsProvider = createPrometheusMetricsProvider({ registry });
    expect(() => createQueue<string>({ name: 'q', metricsProvider })).toThrow(/already registered/);
  });

  it('works on an OpenMetrics registry', async () => {
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const queue = createQueue<string>({
      name: 'om',
      clock: new FakeClock(),
      metricsProvider: createPrometheusMetricsProvider({ registry }),
    });
    queue.add('a');
    const text = await registry.metrics();
    expect(text).toContain('# TYPE workqueue_adds counter\n');
    expect(text).toContain('workqueue_adds_total{controller="om",name="om"} 1\n');
    expect(text.endsWith('# EOF\n')).toBe(true);
    queue.shutDown();
  });
});
