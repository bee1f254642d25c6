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
 *
 * Cost: a series is a plain number (a histogram's: bucket counts, sum and count), updated without
 * prom-client on every queue operation; the registry reads the numbers when it is scraped
 * (`tally-metrics.ts`), exposing exactly what prom-client's own metrics would.
 */
import { exponentialBuckets } from 'prom-client';
import { WORKQUEUE_LABEL as LABEL, WORKQUEUE, WORKQUEUE_HELP } from './metric-names.js';
import type {
  CounterMetric,
  DepthMetricWithPriority,
  GaugeMetric,
  HistogramMetric,
  MetricsProvider,
  SettableGaugeMetric,
} from './metrics.js';
import {
  type FamilyDefinition,
  HistogramFamily,
  type Labels,
  type PrometheusRegistry,
  type Tally,
  TallyFamily,
} from './tally-metrics.js';

export type { PrometheusRegistry } from './tally-metrics.js';

export type PrometheusFlavor = 'controller-runtime' | 'component-base';

export interface PrometheusMetricsProviderOptions {
  registry: PrometheusRegistry;
  /** Missing: `controller-runtime`. */
  flavor?: PrometheusFlavor | undefined;
}

type Family = keyof typeof WORKQUEUE;

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
    buckets: WORKQUEUE_BUCKETS['controller-runtime'],
    labels: (family, name) =>
      family === 'depth'
        ? { [LABEL.controller]: name, [LABEL.name]: name, [LABEL.priority]: '' }
        : { [LABEL.controller]: name, [LABEL.name]: name },
  },
  'component-base': {
    help: WORKQUEUE_HELP['component-base'],
    buckets: WORKQUEUE_BUCKETS['component-base'],
    labels: (_family, name) => ({ [LABEL.name]: name }),
  },
};

type AnyFamily = TallyFamily | HistogramFamily;

/** The work-queue families one flavor owns in one registry. */
interface RegistryFamilies {
  readonly flavor: PrometheusFlavor;
  readonly registered: Map<Family, AnyFamily>;
}

const familiesByRegistry = new WeakMap<PrometheusRegistry, RegistryFamilies>();

function familiesOf(registry: PrometheusRegistry, flavor: PrometheusFlavor): RegistryFamilies {
  let families = familiesByRegistry.get(registry);
  if (families === undefined) {
    families = { flavor, registered: new Map() };
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
  if (!families.registered.has(family) && registry.getSingleMetric(WORKQUEUE[family]) !== undefined) {
    throw new Error(`metric ${WORKQUEUE[family]} is already registered in this registry by other code`);
  }
}

/** `family` in `registry`, registered by `create` on first use. */
function familyOf<F extends AnyFamily>(
  registry: PrometheusRegistry,
  families: RegistryFamilies,
  family: Family,
  create: (definition: FamilyDefinition) => F,
): F {
  const existing = families.registered.get(family);
  if (existing !== undefined) return existing as F;
  assertAvailable(registry, families, family);
  const spec = FLAVORS[families.flavor];
  const created = create({
    name: WORKQUEUE[family],
    help: spec.help[family],
    labelNames: Object.keys(spec.labels(family, '')),
  });
  families.registered.set(family, created);
  return created;
}

class PrometheusGauge implements GaugeMetric, SettableGaugeMetric {
  constructor(private readonly tally: Tally) {}
  inc(): void {
    this.tally.value++;
  }
  dec(): void {
    this.tally.value--;
  }
  set(value: number): void {
    this.tally.value = value;
  }
}

/** controller-runtime's cap on the distinct priorities one queue's depth metric labels (`maxRecommendedUniquePriorities`). */
export const MAX_RECOMMENDED_UNIQUE_PRIORITIES = 25;
/** The `priority` label value past the cap (`priorityCardinalityExceededPlaceholder`). */
export const PRIORITY_CARDINALITY_EXCEEDED = 'exceeded_cardinality_limit';

/** controller-runtime's `depthWithPriorityMetric`: one per priority queue; see the module comment. */
class PrometheusDepthWithPriority implements DepthMetricWithPriority {
  /** The series of each distinct priority seen, while at most the cap. */
  private readonly byPriority = new Map<number, Tally>();
  /** The `exceeded_cardinality_limit` series, once the cap was passed: every later inc/dec goes there. */
  private exceeded: Tally | undefined;

  constructor(
    private readonly family: () => TallyFamily,
    private readonly baseLabels: Labels,
  ) {}

  inc(priority: number): void {
    this.tallyOf(priority).value++;
  }

  dec(priority: number): void {
    this.tallyOf(priority).value--;
  }

  /** The series of Go's `priorityLabel(priority)`. */
  private tallyOf(priority: number): Tally {
    if (this.exceeded !== undefined) return this.exceeded;
    let tally = this.byPriority.get(priority);
    if (tally === undefined) {
      if (this.byPriority.size === MAX_RECOMMENDED_UNIQUE_PRIORITIES) {
        this.exceeded = this.seriesOf(PRIORITY_CARDINALITY_EXCEEDED);
        return this.exceeded;
      }
      tally = this.seriesOf(String(priority));
      this.byPriority.set(priority, tally);
    }
    return tally;
  }

  private seriesOf(priorityLabel: string): Tally {
    return this.family().series({ ...this.baseLabels, [LABEL.priority]: priorityLabel });
  }
}

class PrometheusCounter implements CounterMetric {
  constructor(private readonly tally: Tally) {}
  inc(): void {
    this.tally.value++;
  }
}

/** A MetricsProvider registering into `registry`; see the module comment. */
export function createPrometheusMetricsProvider(options: PrometheusMetricsProviderOptions): MetricsProvider {
  const { registry } = options;
  const flavor = options.flavor ?? 'controller-runtime';
  const spec = FLAVORS[flavor];
  const families = familiesOf(registry, flavor);

  const tallyFamily = (family: Family, type: 'counter' | 'gauge'): TallyFamily =>
    familyOf(registry, families, family, (definition) => new TallyFamily(registry, type, definition));
  const histogramFamily = (family: Family): HistogramFamily =>
    familyOf(registry, families, family, (definition) => new HistogramFamily(registry, definition, spec.buckets));
  const gauge = (family: Family, name: string): PrometheusGauge =>
    new PrometheusGauge(tallyFamily(family, 'gauge').series(spec.labels(family, name)));
  const counter = (family: Family, name: string): PrometheusCounter =>
    new PrometheusCounter(tallyFamily(family, 'counter').series(spec.labels(family, name)));
  const histogram = (family: Family, name: string): HistogramMetric =>
    histogramFamily(family).series(spec.labels(family, name));

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
      return new PrometheusDepthWithPriority(() => tallyFamily('depth', 'gauge'), spec.labels('depth', name));
    };
  }
  return provider;
}
