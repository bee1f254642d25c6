/**
 * prom-client metric families whose series are plain numbers, for hot paths: updating a series is an
 * increment or an assignment of a field (a histogram observation: a scan of the bucket bounds and
 * three additions), with no label validation or hashing per call. The registry sees the numbers only
 * when it is read:
 *
 * - `TallyFamily` (counter or gauge) is a prom-client Counter or Gauge whose `collect` copies every
 *   series' value into it, so the registry holds an ordinary prom-client metric.
 * - `HistogramFamily` has no prom-client setter to copy into; it is registered itself and implements
 *   the registry's side of prom-client's metric contract (`get`, `getForPromString`, `reset`), each
 *   returning exactly what prom-client's Histogram returns for the same observations: the same values
 *   in the same order (per series: a `_bucket` sample per bound with cumulative counts and `le` the
 *   bound as a number, `le="+Inf"`, `_sum`, `_count`), the same labels and aggregator.
 *
 * Contract: a family's series are created at zero on first use of their label set and returned again
 * for an equal label set (whatever its key order); the registry lists them in creation order, as
 * prom-client lists series in the order of their first update. The numbers belong to their series, so
 * `registry.resetMetrics()` does not zero them: a counter or gauge gets them back from its `collect`,
 * a histogram ignores the reset.
 */
import {
  Counter,
  Gauge,
  type Metric,
  type OpenMetricsContentType,
  type PrometheusContentType,
  type Registry,
} from 'prom-client';
import type { HistogramMetric } from './metrics.js';

/** A prom-client registry, in either exposition format. */
export type PrometheusRegistry = Registry<PrometheusContentType> | Registry<OpenMetricsContentType>;

export type Labels = Readonly<Record<string, string>>;

export interface FamilyDefinition {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
}

/** One counter or gauge series. */
export interface Tally {
  readonly labels: Labels;
  value: number;
}

/** The same string for equal label sets, whatever the order of their keys. */
function labelSetKey(labels: Labels): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((name) => [name, labels[name]]),
  );
}

/** Series by label set, in creation order. */
class SeriesByLabels<S> {
  private readonly byKey = new Map<string, S>();

  constructor(private readonly create: (labels: Labels) => S) {}

  get(labels: Labels): S {
    const key = labelSetKey(labels);
    let series = this.byKey.get(key);
    if (series === undefined) {
      series = this.create(labels);
      this.byKey.set(key, series);
    }
    return series;
  }

  values(): IterableIterator<S> {
    return this.byKey.values();
  }
}

/** A counter or gauge family registered in `registry`; see the module comment. */
export class TallyFamily {
  private readonly tallies = new SeriesByLabels<Tally>((labels) => ({ labels, value: 0 }));

  constructor(registry: PrometheusRegistry, type: 'counter' | 'gauge', definition: FamilyDefinition) {
    const tallies = this.tallies;
    const config = {
      name: definition.name,
      help: definition.help,
      labelNames: [...definition.labelNames],
      registers: [registry],
    };
    if (type === 'counter') {
      new Counter({
        ...config,
        collect() {
          this.reset();
          for (const tally of tallies.values()) this.inc(tally.labels, tally.value);
        },
      });
    } else {
      new Gauge({
        ...config,
        collect() {
          for (const tally of tallies.values()) this.set(tally.labels, tally.value);
        },
      });
    }
  }

  /** The series of `labels`, at zero when new. */
  series(labels: Labels): Tally {
    return this.tallies.get(labels);
  }
}

/** One histogram series: what prom-client's Histogram keeps per label set, as plain numbers. */
export class HistogramSeries implements HistogramMetric {
  /** Observations per bound (not cumulative): each counts in the first bound it does not exceed, if any. */
  readonly bucketCounts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.bucketCounts = bounds.map(() => 0);
  }

  /** As prom-client's `observe`: throws on a value that is not a finite number. */
  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.bucketCounts[i]!++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

type SampleLabels = Record<string, string | number>;

/** A sample as prom-client's Histogram `getForPromString` lists it: the series' labels apart. */
interface SampleWithSharedLabels {
  labels: SampleLabels;
  sharedLabels: Labels;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

/** A sample as prom-client's Histogram `get` lists it: the series' labels after the sample's own. */
interface Sample {
  value: number;
  metricName: string;
  exemplar: null | undefined;
  labels: SampleLabels;
}

/** A family as prom-client's Histogram `get` and `getForPromString` return it. */
interface HistogramSnapshot<S> {
  name: string;
  help: string;
  type: 'histogram';
  values: S[];
  aggregator: 'sum';
}

/**
 * A histogram family registered in `registry` with the given strictly increasing bucket bounds; see
 * the module comment.
 */
export class HistogramFamily {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly bounds: readonly number[];
  private readonly histograms: SeriesByLabels<HistogramSeries>;

  constructor(registry: PrometheusRegistry, definition: FamilyDefinition, buckets: readonly number[]) {
    this.name = definition.name;
    this.help = definition.help;
    const bounds = [...buckets];
    this.bounds = bounds;
    this.histograms = new SeriesByLabels((labels) => new HistogramSeries(labels, bounds));
    // prom-client's Metric type is the union of its metric classes; the registry calls only the
    // members this class implements.
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of `labels`, at zero when new. */
  series(labels: Labels): HistogramSeries {
    return this.histograms.get(labels);
  }

  /** prom-client's contract: the family for the registry's JSON (`getMetricsAsJSON`). */
  async get(): Promise<HistogramSnapshot<Sample>> {
    return this.snapshot((labels, sharedLabels, value, metricName, exemplar) => ({
      value,
      metricName,
      exemplar,
      labels: { ...labels, ...sharedLabels },
    }));
  }

  /** prom-client's contract: the family for the registry's text exposition (`metrics`). */
  async getForPromString(): Promise<HistogramSnapshot<SampleWithSharedLabels>> {
    return this.snapshot((labels, sharedLabels, value, metricName, exemplar) => ({
      labels,
      sharedLabels,
      value,
      metricName,
      exemplar,
    }));
  }

  /** prom-client's contract; a no-op, see the module comment. */
  reset(): void {}

  private snapshot<S>(
    sample: (
      labels: SampleLabels,
      sharedLabels: Labels,
      value: number,
      metricName: string,
      exemplar: null | undefined,
    ) => S,
  ): HistogramSnapshot<S> {
    const bucket = `${this.name}_bucket`;
    const sum = `${this.name}_sum`;
    const count = `${this.name}_count`;
    const values: S[] = [];
    for (const series of this.histograms.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.bucketCounts[i]!;
        values.push(sample({ le: this.bounds[i]! }, series.labels, cumulative, bucket, null));
      }
      values.push(sample({ le: '+Inf' }, series.labels, series.count, bucket, null));
      values.push(sample({}, series.labels, series.sum, sum, undefined));
      values.push(sample({}, series.labels, series.count, count, undefined));
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
