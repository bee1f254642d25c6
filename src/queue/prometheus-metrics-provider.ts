/**
 * A MetricsProvider over prom-client that registers the work-queue families exactly as real
 * controllers expose them, in one of two flavors:
 *
 * - `controller-runtime` (v0.24): labels `controller` and `name` (both the queue name), plus
 *   `priority=""` on `workqueue_depth`; histograms with 12 exponential buckets from 1e-8 s by ×10
 *   (to 1000 s); controller-runtime's help texts (`WORKQUEUE_HELP`).
 * - `component-base` (kube-controller-manager and friends): label `name` only; 10 buckets
 *   (1e-8 .. 10 s); help texts with the `[BETA]` stability prefix.
 *
 * The controller-runtime flavor also implements `newDepthMetricWithPriority` for the priority queue
 * (controller-runtime's `depthWithPriorityMetric`): its series carry `priority` as Go's
 * `strconv.Itoa` writes the item priority, and are created on first use (a fresh priority queue has
 * no depth series; the family itself appears with its first series, HELP and TYPE aside). Each such
 * metric (one per queue) tracks the distinct priorities it has seen; past
 * `MAX_RECOMMENDED_UNIQUE_PRIORITIES` (25), every later inc/dec of that queue, for old priorities
 * too, goes to `priority="exceeded_cardinality_limit"`, as in Go (the series left behind keep their
 * last values). The component-base flavor has no such method (its Go provider lacks it), so a
 * priority queue falls back to the plain `workqueue_depth{name}`.
 *
 * Contract: families are created in a registry on first use and shared by every provider of the same
 * flavor over that registry; a queue name maps to one series per family, so two queues with one name
 * feed the same series (client-go's per-name metrics), and creating the second never throws. A
 * series exists, at zero, as soon as its queue is created, as with Go's `WithLabelValues`.
 * Families of the same name registered by other code, or by a provider of the other flavor, are an error.
 */
import {
  Counter,
  exponentialBuckets,
  Gauge,
  Histogram,
  type OpenMetricsContentType,
  type PrometheusContentType,
  type Registry,
} from 'prom-client';
import { WORKQUEUE_LABEL as LABEL, WORKQUEUE, WORKQUEUE_HELP } from './metric-names.js';
import type {
  CounterMetric,
  DepthMetricWithPriority,
  GaugeMetric,
  HistogramMetric,
  MetricsProvider,
  SettableGaugeMetric,
} from './metrics.js';

export type PrometheusFlavor = 'controller-runtime' | 'component-base';

/** A prom-client registry, in either exposition format. */
export type PrometheusRegistry = Registry<PrometheusContentType> | Registry<OpenMetricsContentType>;

export interface PrometheusMetricsProviderOptions {
  registry: PrometheusRegistry;
  /** Missing: `controller-runtime`. */
  flavor?: PrometheusFlavor | undefined;
}

type Family = keyof typeof WORKQUEUE;
type Labels = Record<string, string>;

interface FlavorSpec {
  readonly help: Readonly<Record<Family, string>>;
  readonly buckets: readonly number[];
  /** Labels of queue `name`'s series in `family`, keys in Go's (sorted) order. */
  labels(family: Family, name: string): Labels;
}

/**
 * Bucket bounds of the queue and work duration histograms per flavor, as Go's
 * `prometheus.ExponentialBuckets(1e-8, 10, n)` computes them: 12 (to 1000 s) in controller-runtime,
 * 10 (to 10 s) in component-base.
 */
export const WORKQUEUE_BUCKETS: Readonly<Record<PrometheusFlavor, readonly number[]>> = {
  'controller-runtime': exponentialBuckets(1e-8, 10, 12),
  'component-base': exponentialBuckets(1e-8, 10, 10),
};

const FLAVORS: Readonly<Record<PrometheusFlavor, FlavorSpec>> = {
  'controller-runtime': {
    help: WORKQUEUE_HELP['controller-runtime'],
    buckets: [...WORKQUEUE_BUCKETS['controller-runtime']],
    labels: (family, name) =>
      family === 'depth'
        ? { [LABEL.controller]: name, [LABEL.name]: name, [LABEL.priority]: '' }
        : { [LABEL.controller]: name, [LABEL.name]: name },
  },
  'component-base': {
    help: WORKQUEUE_HELP['component-base'],
    buckets: [...WORKQUEUE_BUCKETS['component-base']],
    labels: (_family, name) => ({ [LABEL.name]: name }),
  },
};

type AnyMetric = Counter<string> | Gauge<string> | Histogram<string>;

/** The work-queue families one flavor owns in one registry. */
interface RegistryFamilies {
  readonly flavor: PrometheusFlavor;
  readonly metrics: Map<Family, AnyMetric>;
  /** `family/name` of every histogram series already created (zeroing again would wipe it). */
  readonly histogramSeries: Set<string>;
}

const familiesByRegistry = new WeakMap<PrometheusRegistry, RegistryFamilies>();

function familiesOf(registry: PrometheusRegistry, flavor: PrometheusFlavor): RegistryFamilies {
  let families = familiesByRegistry.get(registry);
  if (families === undefined) {
    families = { flavor, metrics: new Map(), histogramSeries: new Set() };
    familiesByRegistry.set(registry, families);
  } else if (families.flavor !== flavor) {
    throw new Error(
      `this registry already holds work-queue metrics of the ${families.flavor} flavor; ` +
        `a ${flavor} provider needs its own registry`,
    );
  }
  return families;
}

/** Throws if `family` is not ours yet and other code registered its name in `registry`. */
function assertAvailable(registry: PrometheusRegistry, families: RegistryFamilies, family: Family): void {
  if (!families.metrics.has(family) && registry.getSingleMetric(WORKQUEUE[family]) !== undefined) {
    throw new Error(`metric ${WORKQUEUE[family]} is already registered in this registry by other code`);
  }
}

function metricOf<M extends AnyMetric>(
  registry: PrometheusRegistry,
  families: RegistryFamilies,
  family: Family,
  create: (name: string, help: string, labelNames: string[]) => M,
): M {
  const existing = families.metrics.get(family);
  if (existing !== undefined) return existing as M;
  const name = WORKQUEUE[family];
  if (registry.getSingleMetric(name) !== undefined) {
    throw new Error(`metric ${name} is already registered in this registry by other code`);
  }
  const spec = FLAVORS[families.flavor];
  const metric = create(name, spec.help[family], Object.keys(spec.labels(family, '')));
  families.metrics.set(family, metric);
  return metric;
}

class PrometheusGauge implements GaugeMetric, SettableGaugeMetric {
  constructor(
    private readonly gauge: Gauge<string>,
    private readonly labels: Labels,
  ) {
    gauge.inc(labels, 0);
  }
  inc(): void {
    this.gauge.inc(this.labels, 1);
  }
  dec(): void {
    this.gauge.dec(this.labels, 1);
  }
  set(value: number): void {
    this.gauge.set(this.labels, value);
  }
}

/** controller-runtime's cap on the distinct priorities one queue's depth metric labels (`maxRecommendedUniquePriorities`). */
export const MAX_RECOMMENDED_UNIQUE_PRIORITIES = 25;
/** The `priority` label value past the cap (`priorityCardinalityExceededPlaceholder`). */
export const PRIORITY_CARDINALITY_EXCEEDED = 'exceeded_cardinality_limit';

/** controller-runtime's `depthWithPriorityMetric`: one per priority queue; see the module comment. */
class PrometheusDepthWithPriority implements DepthMetricWithPriority {
  private gauge: Gauge<string> | undefined;
  /** Distinct priorities seen; undefined once the cap was passed. */
  private observed: Set<number> | undefined = new Set();
  private readonly labelsByValue = new Map<string, Labels>();

  constructor(
    private readonly family: () => Gauge<string>,
    private readonly baseLabels: Labels,
  ) {}

  inc(priority: number): void {
    const labels = this.labelsOf(priority);
    this.gaugeOf().inc(labels, 1);
  }

  dec(priority: number): void {
    const labels = this.labelsOf(priority);
    this.gaugeOf().dec(labels, 1);
  }

  private gaugeOf(): Gauge<string> {
    if (this.gauge === undefined) this.gauge = this.family();
    return this.gauge;
  }

  /** Go's `priorityLabel`. */
  private labelsOf(priority: number): Labels {
    let value = PRIORITY_CARDINALITY_EXCEEDED;
    if (this.observed !== undefined) {
      this.observed.add(priority);
      if (this.observed.size > MAX_RECOMMENDED_UNIQUE_PRIORITIES) this.observed = undefined;
      else value = String(priority);
    }
    let labels = this.labelsByValue.get(value);
    if (labels === undefined) {
      labels = { ...this.baseLabels, [LABEL.priority]: value };
      this.labelsByValue.set(value, labels);
    }
    return labels;
  }
}

class PrometheusCounter implements CounterMetric {
  constructor(
    private readonly counter: Counter<string>,
    private readonly labels: Labels,
  ) {
    counter.inc(labels, 0);
  }
  inc(): void {
    this.counter.inc(this.labels, 1);
  }
}

class PrometheusHistogram implements HistogramMetric {
  constructor(
    private readonly histogram: Histogram<string>,
    private readonly labels: Labels,
  ) {}
  observe(value: number): void {
    this.histogram.observe(this.labels, value);
  }
}

/** A MetricsProvider registering into `registry`; see the module comment. */
export function createPrometheusMetricsProvider(options: PrometheusMetricsProviderOptions): MetricsProvider {
  const { registry } = options;
  const flavor = options.flavor ?? 'controller-runtime';
  const spec = FLAVORS[flavor];
  const families = familiesOf(registry, flavor);
  const registers = [registry];

  const gauge = (family: Family, name: string): PrometheusGauge =>
    new PrometheusGauge(
      metricOf(
        registry,
        families,
        family,
        (n, help, labelNames) => new Gauge({ name: n, help, labelNames, registers }),
      ),
      spec.labels(family, name),
    );
  const counter = (family: Family, name: string): PrometheusCounter =>
    new PrometheusCounter(
      metricOf(
        registry,
        families,
        family,
        (n, help, labelNames) => new Counter({ name: n, help, labelNames, registers }),
      ),
      spec.labels(family, name),
    );
  const histogram = (family: Family, name: string): PrometheusHistogram => {
    const metric = metricOf(
      registry,
      families,
      family,
      (n, help, labelNames) => new Histogram({ name: n, help, labelNames, buckets: [...spec.buckets], registers }),
    );
    const labels = spec.labels(family, name);
    const key = `${family}/${name}`;
    if (!families.histogramSeries.has(key)) {
      metric.zero(labels);
      families.histogramSeries.add(key);
    }
    return new PrometheusHistogram(metric, labels);
  };

  const provider: MetricsProvider = {
    newDepthMetric: (name) => gauge('depth', name),
    newAddsMetric: (name) => counter('adds', name),
    newLatencyMetric: (name) => histogram('queueDuration', name),
    newWorkDurationMetric: (name) => histogram('workDuration', name),
    newUnfinishedWorkSecondsMetric: (name) => gauge('unfinishedWork', name),
    newLongestRunningProcessorSecondsMetric: (name) => gauge('longestRunningProcessor', name),
    newRetriesMetric: (name) => counter('retries', name),
  };
  if (flavor === 'controller-runtime') {
    provider.newDepthMetricWithPriority = (name) => {
      assertAvailable(registry, families, 'depth');
      const family = (): Gauge<string> =>
        metricOf(
          registry,
          families,
          'depth',
          (n, help, labelNames) => new Gauge({ name: n, help, labelNames, registers }),
        );
      return new PrometheusDepthWithPriority(family, spec.labels('depth', name));
    };
  }
  return provider;
}
