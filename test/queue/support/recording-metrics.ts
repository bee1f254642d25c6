/** A MetricsProvider that records what the queue reports, per queue name, for exact assertions. */
import type {
  CounterMetric,
  DepthMetricWithPriority,
  GaugeMetric,
  HistogramMetric,
  MetricsProvider,
  SettableGaugeMetric,
} from '../../../src/queue/index.js';

export class RecordedMetric implements GaugeMetric, SettableGaugeMetric, CounterMetric, HistogramMetric {
  value = 0;
  readonly observations: number[] = [];
  inc(): void {
    this.value++;
  }
  dec(): void {
    this.value--;
  }
  set(value: number): void {
    this.value = value;
  }
  observe(value: number): void {
    this.observations.push(value);
  }
}

export interface RecordedQueueMetrics {
  depth: RecordedMetric;
  adds: RecordedMetric;
  latency: RecordedMetric;
  workDuration: RecordedMetric;
  unfinished: RecordedMetric;
  longest: RecordedMetric;
  retries: RecordedMetric;
}

export class RecordingMetricsProvider implements MetricsProvider {
  private readonly queues = new Map<string, RecordedQueueMetrics>();
  /** Every `new*Metric` call, as `method(name)`. */
  readonly calls: string[] = [];

  of(name: string): RecordedQueueMetrics {
    let metrics = this.queues.get(name);
    if (metrics === undefined) {
      metrics = {
        depth: new RecordedMetric(),
        adds: new RecordedMetric(),
        latency: new RecordedMetric(),
        workDuration: new RecordedMetric(),
        unfinished: new RecordedMetric(),
        longest: new RecordedMetric(),
        retries: new RecordedMetric(),
      };
      this.queues.set(name, metrics);
    }
    return metrics;
  }

  newDepthMetric(name: string): GaugeMetric {
    this.calls.push(`depth(${name})`);
    return this.of(name).depth;
  }
  newAddsMetric(name: string): CounterMetric {
    this.calls.push(`adds(${name})`);
    return this.of(name).adds;
  }
  newLatencyMetric(name: string): HistogramMetric {
    this.calls.push(`latency(${name})`);
    return this.of(name).latency;
  }
  newWorkDurationMetric(name: string): HistogramMetric {
    this.calls.push(`workDuration(${name})`);
    return this.of(name).workDuration;
  }
  newUnfinishedWorkSecondsMetric(name: string): SettableGaugeMetric {
    this.calls.push(`unfinished(${name})`);
    return this.of(name).unfinished;
  }
  newLongestRunningProcessorSecondsMetric(name: string): SettableGaugeMetric {
    this.calls.push(`longest(${name})`);
    return this.of(name).longest;
  }
  newRetriesMetric(name: string): CounterMetric {
    this.calls.push(`retries(${name})`);
    return this.of(name).retries;
  }
}

/**
 * A recording provider with depth per priority, as controller-runtime's test `fakeMetricsProvider`:
 * `newDepthMetric` must not be called (the priority queue asks for depth per priority instead).
 */
export class RecordingPriorityMetricsProvider extends RecordingMetricsProvider implements MetricsProvider {
  private readonly depths = new Map<string, Map<number, number>>();

  /** Depth per priority of queue `name`, as Go's `map[int]int` (every priority ever touched, zeros included). */
  depthOf(name: string): Record<number, number> {
    return Object.fromEntries(this.depths.get(name) ?? new Map<number, number>());
  }

  override newDepthMetric(name: string): GaugeMetric {
    throw new Error(`newDepthMetric(${name}) should never be called: newDepthMetricWithPriority is`);
  }

  newDepthMetricWithPriority(name: string): DepthMetricWithPriority {
    this.calls.push(`depthWithPriority(${name})`);
    const depth = new Map<number, number>();
    this.depths.set(name, depth);
    return {
      inc: (priority) => depth.set(priority, (depth.get(priority) ?? 0) + 1),
      dec: (priority) => depth.set(priority, (depth.get(priority) ?? 0) - 1),
    };
  }
}
