/**
 * The priority queue's metrics: a port of controller-runtime's `pkg/controller/priorityqueue/metrics.go`
 * (v0.24.1; unchanged at commit 86a0d40e), itself client-go's queue metrics with retries folded in and
 * depth per priority.
 *
 * What is counted, and when (the queue calls these under the rules of `priority-queue.ts`):
 * - adds (`add`): when an item becomes ready: added without a delay, readied by an add without a
 *   delay while waiting, or its ready time passed. An add of an item already ready (or waiting, with a
 *   delay) is not counted; an add while the item is being processed is (a new queue entry).
 * - depth (`add`, `get`, `updateDepthWithPriority`): +1 at the item's priority when it becomes ready,
 *   -1 at its priority when it is handed out; a priority raised while the item is ready moves its unit
 *   from the old to the new priority. Through the provider's `newDepthMetricWithPriority` when it has
 *   one, else through `newDepthMetric` (priorities folded; a raise then changes nothing).
 * - queue duration (`get`): at hand-out, from the first `add` since the item was last handed out, so
 *   the time an item spent waiting for its ready time is not in it.
 * - work duration (`done`): from the hand-out.
 * - unfinished work / longest running processor (`updateUnfinishedWork`): sum and maximum of the ages
 *   of the items being processed, refreshed by the queue every 500 ms of its clock until shutdown.
 * - retries (`retry`): once per item of an add whose delay (after the rate limiter) is > 0.
 * The provider is asked, in Go's order, for adds, latency, work duration, unfinished work, longest
 * running processor, retries, then depth. Durations are seconds rounded to whole nanoseconds.
 */
import type { Clock } from './clock.js';
import {
  type CounterMetric,
  type DepthMetricWithPriority,
  type GaugeMetric,
  type HistogramMetric,
  type MetricsProvider,
  noopMetricsProvider,
  type SettableGaugeMetric,
  secondsBetween,
} from './metrics.js';

/**
 * The per-item times the metrics keep (Go's `addTimes` and `processingStartTimes` maps), stored on
 * the queue's own item records so no operation allocates. NaN: none.
 */
export interface PriorityQueueMetricsRecord {
  /** Time of the first counted add since the item was last handed out; NaN when none is pending. */
  addedAt: number;
  /** Time the item was handed out; NaN when it is not being processed. */
  startedAt: number;
  /** Links of the list of records in flight (owned by the metrics). */
  prevInFlight: PriorityQueueMetricsRecord | undefined;
  nextInFlight: PriorityQueueMetricsRecord | undefined;
}

export class PriorityQueueMetrics {
  /** Most recently handed out of the records in flight. */
  private inFlight: PriorityQueueMetricsRecord | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly adds: CounterMetric,
    private readonly latency: HistogramMetric,
    private readonly workDuration: HistogramMetric,
    private readonly unfinishedWorkSeconds: SettableGaugeMetric,
    private readonly longestRunningProcessor: SettableGaugeMetric,
    private readonly retries: CounterMetric,
    /** Exactly one of the two depth metrics is set. */
    private readonly depthWithPriority: DepthMetricWithPriority | undefined,
    private readonly depth: GaugeMetric | undefined,
  ) {}

  /** The item became ready at `priority`. */
  add(record: PriorityQueueMetricsRecord, priority: number): void {
    this.adds.inc();
    if (this.depthWithPriority !== undefined) this.depthWithPriority.inc(priority);
    else this.depth!.inc();
    if (Number.isNaN(record.addedAt)) record.addedAt = this.clock.now();
  }

  /** The item was handed out at `priority`. */
  get(record: PriorityQueueMetricsRecord, priority: number): void {
    if (this.depthWithPriority !== undefined) this.depthWithPriority.dec(priority);
    else this.depth!.dec();
    const now = this.clock.now();
    if (Number.isNaN(record.startedAt)) {
      record.prevInFlight = undefined;
      record.nextInFlight = this.inFlight;
      if (this.inFlight !== undefined) this.inFlight.prevInFlight = record;
      this.inFlight = record;
    }
    record.startedAt = now;
    if (!Number.isNaN(record.addedAt)) {
      this.latency.observe(secondsBetween(record.addedAt, now));
      record.addedAt = Number.NaN;
    }
  }

  /** A ready item's priority was raised. Nothing to do without depth per priority, as in Go. */
  updateDepthWithPriority(oldPriority: number, newPriority: number): void {
    if (this.depthWithPriority === undefined) return;
    this.depthWithPriority.dec(oldPriority);
    this.depthWithPriority.inc(newPriority);
  }

  done(record: PriorityQueueMetricsRecord): void {
    const startedAt = record.startedAt;
    if (Number.isNaN(startedAt)) return;
    this.workDuration.observe(secondsBetween(startedAt, this.clock.now()));
    record.startedAt = Number.NaN;
    const prev = record.prevInFlight;
    const next = record.nextInFlight;
    if (prev === undefined) this.inFlight = next;
    else prev.nextInFlight = next;
    if (next !== undefined) next.prevInFlight = prev;
    record.prevInFlight = undefined;
    record.nextInFlight = undefined;
  }

  updateUnfinishedWork(): void {
    const now = this.clock.now();
    let total = 0;
    let oldest = 0;
    for (let record = this.inFlight; record !== undefined; record = record.nextInFlight) {
      const age = secondsBetween(record.startedAt, now);
      total += age;
      if (age > oldest) oldest = age;
    }
    this.unfinishedWorkSeconds.set(total);
    this.longestRunningProcessor.set(oldest);
  }

  retry(): void {
    this.retries.inc();
  }
}

/**
 * The metrics of the priority queue `name` (Go's `newQueueMetrics`), or undefined (no metrics work
 * at all, no refresher) for an unnamed queue or the no-op provider.
 */
export function createPriorityQueueMetrics(
  provider: MetricsProvider,
  name: string,
  clock: Clock,
): PriorityQueueMetrics | undefined {
  if (name === '' || provider === noopMetricsProvider) return undefined;
  const adds = provider.newAddsMetric(name);
  const latency = provider.newLatencyMetric(name);
  const workDuration = provider.newWorkDurationMetric(name);
  const unfinished = provider.newUnfinishedWorkSecondsMetric(name);
  const longest = provider.newLongestRunningProcessorSecondsMetric(name);
  const retries = provider.newRetriesMetric(name);
  const depthWithPriority = provider.newDepthMetricWithPriority?.(name);
  const depth = depthWithPriority === undefined ? provider.newDepthMetric(name) : undefined;
  return new PriorityQueueMetrics(
    clock,
    adds,
    latency,
    workDuration,
    unfinished,
    longest,
    retries,
    depthWithPriority,
    depth,
  );
}
