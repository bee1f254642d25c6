/**
 * The work-queue families keep their numbers outside prom-client (`tally-metrics.ts`) yet must expose
 * exactly what prom-client's own Counter, Gauge and Histogram expose for the same operations. Here
 * one workload drives the provider and a reference built the way the provider used to be (prom-client
 * metrics updated on every call), and the two registries' pages are compared byte for byte after
 * every phase: Prometheus text, OpenMetrics text and `getMetricsAsJSON()`.
 */
import { Counter, Gauge, Histogram, Registry, type RegistryContentType } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  createPrometheusMetricsProvider,
  type DepthMetricWithPriority,
  type GaugeMetric,
  HistogramFamily,
  type HistogramMetric,
  MAX_RECOMMENDED_UNIQUE_PRIORITIES,
  type MetricsProvider,
  PRIORITY_CARDINALITY_EXCEEDED,
  type PrometheusFlavor,
  type SettableGaugeMetric,
  WORKQUEUE_BUCKETS,
  WORKQUEUE_HELP,
} from '../../src/queue/index.js';
import { WORKQUEUE_LABEL as LABEL, WORKQUEUE } from '../../src/queue/metric-names.js';

type Family = keyof typeof WORKQUEUE;
type Labels = Record<string, string>;

/** The provider as it was: prom-client metrics updated on every call, with the same families, labels and cap. */
function referenceProvider(registry: Registry<RegistryContentType>, flavor: PrometheusFlavor): MetricsProvider {
  const registers = [registry];
  const labelsOf = (family: Family, name: string): Labels =>
    flavor === 'component-base'
      ? { [LABEL.name]: name }
      : family === 'depth'
        ? { [LABEL.controller]: name, [LABEL.name]: name, [LABEL.priority]: '' }
        : { [LABEL.controller]: name, [LABEL.name]: name };
  const metrics = new Map<Family, Counter | Gauge | Histogram>();
  const metricOf = <M extends Counter | Gauge | Histogram>(
    family: Family,
    create: (config: { name: string; help: string; labelNames: string[]; registers: typeof registers }) => M,
  ): M => {
    let metric = metrics.get(family);
    if (metric === undefined) {
      const labelNames = Object.keys(labelsOf(family, ''));
      metric = create({ name: WORKQUEUE[family], help: WORKQUEUE_HELP[flavor][family], labelNames, registers });
      metrics.set(family, metric);
    }
    return metric as M;
  };
  const gaugeOf = (family: Family): Gauge => metricOf(family, (config) => new Gauge(config));
  const gauge = (family: Family, name: string): GaugeMetric & SettableGaugeMetric => {
    const metric = gaugeOf(family);
    const labels = labelsOf(family, name);
    metric.inc(labels, 0);
    return { inc: () => metric.inc(labels, 1), dec: () => metric.dec(labels, 1), set: (v) => metric.set(labels, v) };
  };
  const counter = (family: Family, name: string): { inc(): void } => {
    const metric = metricOf(family, (config) => new Counter(config));
    const labels = labelsOf(family, name);
    metric.inc(labels, 0);
    return { inc: () => metric.inc(labels, 1) };
  };
  const zeroed = new Set<string>();
  const histogram = (family: Family, name: string): HistogramMetric => {
    const metric = metricOf(family, (config) => new Histogram({ ...config, buckets: [...WORKQUEUE_BUCKETS[flavor]] }));
    const labels = labelsOf(family, name);
    if (!zeroed.has(`${family}/${name}`)) {
      metric.zero(labels);
      zeroed.add(`${family}/${name}`);
    }
    return { observe: (v) => metric.observe(labels, v) };
  };
  const depthWithPriority = (name: string): DepthMetricWithPriority => {
    let observed: Set<number> | undefined = new Set();
    const labels = (priority: number): Labels => {
      let value = PRIORITY_CARDINALITY_EXCEEDED;
      if (observed !== undefined) {
        observed.add(priority);
        if (observed.size > MAX_RECOMMENDED_UNIQUE_PRIORITIES) observed = undefined;
        else value = String(priority);
      }
      return { ...labelsOf('depth', name), [LABEL.priority]: value };
    };
    return {
      inc: (priority) => gaugeOf('depth').inc(labels(priority), 1),
      dec: (priority) => gaugeOf('depth').dec(labels(priority), 1),
    };
  };
  return {
    newDepthMetric: (name) => gauge('depth', name),
    newAddsMetric: (name) => counter('adds', name),
    newLatencyMetric: (name) => histogram('queueDuration', name),
    newWorkDurationMetric: (name) => histogram('workDuration', name),
    newUnfinishedWorkSecondsMetric: (name) => gauge('unfinishedWork', name),
    newLongestRunningProcessorSecondsMetric: (name) => gauge('longestRunningProcessor', name),
    newRetriesMetric: (name) => counter('retries', name),
    ...(flavor === 'controller-runtime' ? { newDepthMetricWithPriority: depthWithPriority } : {}),
  };
}

interface QueueMetrics {
  depth: GaugeMetric;
  adds: { inc(): void };
  latency: HistogramMetric;
  workDuration: HistogramMetric;
  unfinished: SettableGaugeMetric;
  longest: SettableGaugeMetric;
  retries: { inc(): void };
}

/** A queue's metrics, asked for in the order the queues ask. */
function queueMetrics(provider: MetricsProvider, name: string): QueueMetrics {
  return {
    depth: provider.newDepthMetric(name),
    adds: provider.newAddsMetric(name),
    latency: provider.newLatencyMetric(name),
    workDuration: provider.newWorkDurationMetric(name),
    unfinished: provider.newUnfinishedWorkSecondsMetric(name),
    longest: provider.newLongestRunningProcessorSecondsMetric(name),
    retries: provider.newRetriesMetric(name),
  };
}

/**
 * Observations on and around every bound (just above, between bounds), 0 and -0, negative, tiny,
 * past the last bound (the `+Inf` bucket only), and sums that are not exact in binary.
 */
function observations(bounds: readonly number[]): number[] {
  const values = [0, -0, -1, 1e-12, 0.1, 0.2, 0.3, 1 / 3];
  for (const [i, bound] of bounds.entries()) {
    values.push(bound, bound * (1 + Number.EPSILON), (bound + (bounds[i + 1] ?? bound * 10)) / 2);
  }
  values.push(bounds.at(-1)! * 10, 123_456.789, 1e300);
  return values;
}

/** The same workload, in phases, against `provider`; the registries are compared after each phase. */
function workload(provider: MetricsProvider, bounds: readonly number[]): (() => void)[] {
  let alpha!: QueueMetrics;
  let beta!: QueueMetrics;
  let byPriority: DepthMetricWithPriority | undefined;
  return [
    () => {
      alpha = queueMetrics(provider, 'alpha');
    },
    () => {
      alpha.depth.inc();
      alpha.depth.inc();
      alpha.adds.inc();
      alpha.latency.observe(0.25);
      beta = queueMetrics(provider, 'beta');
      beta.depth.dec();
    },
    () => {
      const alphaAgain = queueMetrics(provider, 'alpha'); // a second queue of one name: the same series
      alphaAgain.adds.inc();
      alphaAgain.depth.dec();
      alphaAgain.latency.observe(1e-8);
      for (const value of observations(bounds)) {
        alpha.latency.observe(value);
        beta.workDuration.observe(value);
      }
      alpha.workDuration.observe(Number.MAX_VALUE);
      alpha.workDuration.observe(Number.MAX_VALUE); // the sum overflows to +Inf
      alpha.unfinished.set(0.1 + 0.2);
      alpha.longest.set(3.7);
      beta.unfinished.set(1e300);
      beta.longest.set(-0.5);
      beta.retries.inc();
      beta.retries.inc();
    },
    () => {
      byPriority = provider.newDepthMetricWithPriority?.('gamma'); // no series until its first inc
    },
    () => {
      byPriority?.inc(0);
      byPriority?.inc(0);
      byPriority?.inc(-100);
      byPriority?.dec(0);
      byPriority?.dec(-0);
      byPriority?.inc(5);
    },
    () => {
      // Past the cap, every priority (old ones too) goes to the placeholder series.
      for (let priority = 1; priority <= MAX_RECOMMENDED_UNIQUE_PRIORITIES + 5; priority++) byPriority?.inc(priority);
      byPriority?.dec(0);
      byPriority?.inc(-100);
    },
    () => {
      const gammaAgain = provider.newDepthMetricWithPriority?.('gamma'); // its own cap, the same series
      gammaAgain?.inc(0);
      gammaAgain?.inc(7);
      provider.newDepthMetricWithPriority?.('alpha')?.inc(1);
      alpha.depth.inc();
    },
  ];
}

/** Both registries in both formats: text byte for byte, JSON deeply (undefined members too) and in key order. */
async function expectSamePages(
  ours: Registry<RegistryContentType>,
  reference: Registry<RegistryContentType>,
): Promise<void> {
  for (const contentType of [Registry.PROMETHEUS_CONTENT_TYPE, Registry.OPENMETRICS_CONTENT_TYPE] as const) {
    ours.setContentType(contentType);
    reference.setContentType(contentType);
    expect(await ours.metrics()).toBe(await reference.metrics());
    const [oursJson, referenceJson] = [await ours.getMetricsAsJSON(), await reference.getMetricsAsJSON()];
    expect(oursJson).toStrictEqual(referenceJson);
    expect(JSON.stringify(oursJson)).toBe(JSON.stringify(referenceJson));
  }
}

describe.each(['controller-runtime', 'component-base'] as const)('prometheus provider, %s flavor', (flavor) => {
  it('exposes exactly what prom-client metrics updated on every call expose', async () => {
    const ours = new Registry<RegistryContentType>();
    const reference = new Registry<RegistryContentType>();
    const bounds = WORKQUEUE_BUCKETS[flavor];
    const oursPhases = workload(createPrometheusMetricsProvider({ registry: ours, flavor }), bounds);
    const referencePhases = workload(referenceProvider(reference, flavor), bounds);
    for (const [i, phase] of oursPhases.entries()) {
      phase();
      referencePhases[i]!();
      await expectSamePages(ours, reference);
    }
    const page = await ours.metrics();
    expect(page).toContain('le="+Inf"');
    if (flavor === 'controller-runtime') expect(page).toContain(`priority="${PRIORITY_CARDINALITY_EXCEEDED}"`);
  });

  it('rejects a value that is not a finite number as prom-client does, changing nothing', async () => {
    const ours = new Registry<RegistryContentType>();
    const reference = new Registry<RegistryContentType>();
    const oursLatency = createPrometheusMetricsProvider({ registry: ours, flavor }).newLatencyMetric('q');
    const referenceLatency = referenceProvider(reference, flavor).newLatencyMetric('q');
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const thrown = (observe: () => void): unknown => {
        try {
          observe();
        } catch (error) {
          return error;
        }
        return undefined;
      };
      const error = thrown(() => oursLatency.observe(value));
      expect(error).toBeInstanceOf(TypeError);
      expect(error).toEqual(thrown(() => referenceLatency.observe(value)));
    }
    await expectSamePages(ours, reference);
  });
});

describe('HistogramFamily', () => {
  const bounds = [0.005, 0.01, 0.5, 1, 2.5, 60];

  it('matches prom-client’s Histogram, with the registry’s default labels and series in creation order', async () => {
    const ours = new Registry<RegistryContentType>();
    const reference = new Registry<RegistryContentType>();
    for (const registry of [ours, reference]) registry.setDefaultLabels({ job: 'j', instance: 'i:8080' });
    const definition = {
      name: 'reconcile_time_seconds',
      help: 'Length "of" time\\n per reconciliation',
      labelNames: ['controller'],
    };
    const family = new HistogramFamily(ours, definition, bounds);
    const histogram = new Histogram({
      ...definition,
      labelNames: ['controller'],
      buckets: [...bounds],
      registers: [reference],
    });
    await expectSamePages(ours, reference);
    for (const controller of ['b', 'a', 'we"ird\\name\n']) {
      family.series({ controller });
      histogram.zero({ controller });
    }
    await expectSamePages(ours, reference);
    for (const [i, value] of observations(bounds).entries()) {
      const controller = i % 2 === 0 ? 'a' : 'b';
      family.series({ controller }).observe(value);
      histogram.observe({ controller }, value);
    }
    await expectSamePages(ours, reference);
  });

  it('keeps its numbers through registry.resetMetrics(), as the tally counters and gauges do', async () => {
    const registry = new Registry();
    const family = new HistogramFamily(registry, { name: 'h', help: 'h', labelNames: ['q'] }, bounds);
    family.series({ q: 'x' }).observe(0.7);
    const before = await registry.metrics();
    registry.resetMetrics();
    expect(await registry.metrics()).toBe(before);
  });
});
