/**
 * The queue's metrics hooks, as client-go's `MetricsProvider`: the queue never imports a metrics
 * library, it asks a provider for one small metric object per queue name and feeds it.
 *
 * What is counted, and when (identical to client-go):
 * - adds: every add that marks an item dirty (a duplicate of a waiting item is not counted; an item
 *   re-added while it is being processed is counted, once).
 * - depth: +1 on each counted add, -1 when the item is handed out; so an item re-added while being
 *   processed is in depth at once, although `len()` only includes it after `done`.
 * - queue duration: observed when an item is handed out, from the first counted add since it was
 *   last handed out.
 * - work duration: observed at `done`, from the hand-out.
 * - unfinished work / longest running processor: sum and maximum of the ages of the items being
 *   processed, set by a refresher every 500 ms of the queue's clock until shutdown.
 * - retries: by the delaying queue, on `addAfter` (see `RetriesCountingMode`).
 * Durations are seconds, rounded to whole nanoseconds as Go's `time.Duration` is.
 *
 * controller-runtime's priority queue counts differently (see `priority-queue-metrics.ts`) and asks
 * for depth per priority through the optional `newDepthMetricWithPriority`: controller-runtime's
 * `MetricsProviderWithPriority`. A provider without it gets `newDepthMetric` asked instead, as in Go.
 */
import type { Clock, Timer } from './clock.js';

/** A value that goes up and down. */
export interface GaugeMetric {
  inc(): void;
  dec(): void;
}

/** A value that is set. */
export interface SettableGaugeMetric {
  set(value: number): void;
}

/** A value that only goes up. */
export interface CounterMetric {
  inc(): void;
}

/**
 * Depth per item priority (controller-runtime's `DepthMetricWithPriority`): the priority queue calls
 * `inc(p)` / `dec(p)` with the priority of the item entering / leaving its ready set.
 */
export interface DepthMetricWithPriority {
  inc(priority: number): void;
  dec(priority: number): void;
}

/** Individual observations (seconds). */
export interface HistogramMetric {
  observe(value: number): void;
}

/**
 * Makes the metrics of one queue. Called once per metric when a named queue is created; a provider
 * asked twice for the same name should return the same underlying series (two queues of one name
 * then add up, as in client-go).
 */
export interface MetricsProvider {
  newDepthMetric(name: string): GaugeMetric;
  newAddsMetric(name: string): CounterMetric;
  /** Queue duration: `workqueue_queue_duration_seconds`. */
  newLatencyMetric(name: string): HistogramMetric;
  newWorkDurationMetric(name: string): HistogramMetric;
  newUnfinishedWorkSecondsMetric(name: string): SettableGaugeMetric;
  newLongestRunningProcessorSecondsMetric(name: string): SettableGaugeMetric;
  newRetriesMetric(name: string): CounterMetric;
  /**
   * Optional (controller-runtime's `MetricsProviderWithPriority`): the depth of the priority queue
   * named `name`, per priority. Only the priority queue asks for it, instead of `newDepthMetric`;
   * the classic queues never call it. Missing: the priority queue uses `newDepthMetric`, priorities
   * folded together.
   */
  newDepthMetricWithPriority?(name: string): DepthMetricWithPriority;
}

const noopMetric: GaugeMetric & SettableGaugeMetric & CounterMetric & HistogramMetric & DepthMetricWithPriority = {
  inc() {},
  dec() {},
  set() {},
  observe() {},
};

/** Records nothing. A queue given this provider skips metrics work entirely (no clock reads, no refresher). */
export const noopMetricsProvider: MetricsProvider = Object.freeze({
  newDepthMetric: () => noopMetric,
  newAddsMetric: () => noopMetric,
  newLatencyMetric: () => noopMetric,
  newWorkDurationMetric: () => noopMetric,
  newUnfinishedWorkSecondsMetric: () => noopMetric,
  newLongestRunningProcessorSecondsMetric: () => noopMetric,
  newRetriesMetric: () => noopMetric,
  newDepthMetricWithPriority: () => noopMetric,
});

/** How often the unfinished-work gauges are refreshed, in ms of the queue's clock (client-go: 500 ms). */
export const UNFINISHED_WORK_UPDATE_PERIOD_MS = 500;

/** The running refresh of a queue's unfinished-work gauges; `stop` ends it for good. */
export interface UnfinishedWorkRefresh {
  stop(): void;
}

/**
 * Calls `update` every `UNFINISHED_WORK_UPDATE_PERIOD_MS` of `clock` (client-go's and controller-runtime's
 * ticker), each period armed one period after the last firing (on the FakeClock, "now" in a firing timer is
 * its due time, so refreshes land exactly every period from the start). Its timers never hold a real-clock
 * process open.
 */
export function startUnfinishedWorkRefresh(clock: Clock, update: () => void): UnfinishedWorkRefresh {
  let stopped = false;
  let timer: Timer | undefined;
  const refresh = (): void => {
    timer = undefined;
    if (stopped) return;
    update();
    timer = clock.after(UNFINISHED_WORK_UPDATE_PERIOD_MS, refresh, { background: true });
  };
  timer = clock.after(UNFINISHED_WORK_UPDATE_PERIOD_MS, refresh, { background: true });
  return {
    stop() {
      stopped = true;
      timer?.cancel();
      timer = undefined;
    },
  };
}

/** Seconds from `startMs` to `endMs`, rounded to whole nanoseconds. */
export function secondsBetween(startMs: number, endMs: number): number {
  return Math.round((endMs - startMs) * 1e6) / 1e9;
}

/** No slot: the end of the in-flight list. */
const NO_SLOT = -1;

/**
 * The per-queue bookkeeping behind the metrics. The queue calls it under its own invariants: `add`
 * only for counted adds, `get` once per hand-out, `done` once per finished hand-out.
 *
 * Items are identified by the queue's slot numbers. Per slot it keeps client-go's `addTimes` and
 * `processingStartTimes` (NaN: none), in typed arrays, so no operation allocates, plus the links of
 * an intrusive list of the slots in flight. A slot the queue frees has neither time set.
 */
export class QueueMetrics {
  /** Time of the first counted add since the slot's item was last handed out; NaN when none is pending. */
  private addedAt = new Float64Array(0);
  /** Time the slot's item was handed out; NaN when it is not being processed. */
  private startedAt = new Float64Array(0);
  private prevInFlight = new Int32Array(0);
  private nextInFlight = new Int32Array(0);
  /** Most recently handed out of the slots in flight, or NO_SLOT. */
  private inFlight = NO_SLOT;

  constructor(
    private readonly clock: Clock,
    private readonly depth: GaugeMetric,
    private readonly adds: CounterMetric,
    private readonly latency: HistogramMetric,
    private readonly workDuration: HistogramMetric,
    private readonly unfinishedWorkSeconds: SettableGaugeMetric,
    private readonly longestRunningProcessor: SettableGaugeMetric,
  ) {}

  /** Makes room for slots below `capacity` (which only grows); new slots have no times set. */
  grow(capacity: number): void {
    const old = this.addedAt.length;
    this.addedAt = grown(this.addedAt, new Float64Array(capacity));
    this.startedAt = grown(this.startedAt, new Float64Array(capacity));
    this.prevInFlight = grown(this.prevInFlight, new Int32Array(capacity));
    this.nextInFlight = grown(this.nextInFlight, new Int32Array(capacity));
    this.addedAt.fill(Number.NaN, old);
    this.startedAt.fill(Number.NaN, old);
  }

  add(slot: number): void {
    this.adds.inc();
    this.depth.inc();
    if (Number.isNaN(this.addedAt[slot]!)) this.addedAt[slot] = this.clock.now();
  }

  get(slot: number): void {
    this.depth.dec();
    const now = this.clock.now();
    this.startedAt[slot] = now;
    this.prevInFlight[slot] = NO_SLOT;
    this.nextInFlight[slot] = this.inFlight;
    if (this.inFlight !== NO_SLOT) this.prevInFlight[this.inFlight] = slot;
    this.inFlight = slot;
    const addedAt = this.addedAt[slot]!;
    if (!Number.isNaN(addedAt)) {
      this.latency.observe(secondsBetween(addedAt, now));
      this.addedAt[slot] = Number.NaN;
    }
  }

  done(slot: number): void {
    const startedAt = this.startedAt[slot]!;
    if (Number.isNaN(startedAt)) return;
    this.workDuration.observe(secondsBetween(startedAt, this.clock.now()));
    this.startedAt[slot] = Number.NaN;
    const prev = this.prevInFlight[slot]!;
    const next = this.nextInFlight[slot]!;
    if (prev === NO_SLOT) this.inFlight = next;
    else this.nextInFlight[prev] = next;
    if (next !== NO_SLOT) this.prevInFlight[next] = prev;
  }

  updateUnfinishedWork(): void {
    const now = this.clock.now();
    let total = 0;
    let oldest = 0;
    for (let slot = this.inFlight; slot !== NO_SLOT; slot = this.nextInFlight[slot]!) {
      const age = secondsBetween(this.startedAt[slot]!, now);
      total += age;
      if (age > oldest) oldest = age;
    }
    this.unfinishedWorkSeconds.set(total);
    this.longestRunningProcessor.set(oldest);
  }
}

/** `into`, a larger array, starting with a copy of `old`. */
function grown<A extends Float64Array | Int32Array>(old: A, into: A): A {
  into.set(old);
  return into;
}

/** Queue metrics for `name`, or undefined (no metrics at all) for an unnamed queue or the no-op provider. */
export function createQueueMetrics(provider: MetricsProvider, name: string, clock: Clock): QueueMetrics | undefined {
  if (name === '' || provider === noopMetricsProvider) return undefined;
  return new QueueMetrics(
    clock,
    provider.newDepthMetric(name),
    provider.newAddsMetric(name),
    provider.newLatencyMetric(name),
    provider.newWorkDurationMetric(name),
    provider.newUnfinishedWorkSecondsMetric(name),
    provider.newLongestRunningProcessorSecondsMetric(name),
  );
}

/** The retries counter for `name`, or undefined for an unnamed queue or the no-op provider. */
export function createRetriesMetric(provider: MetricsProvider, name: string): CounterMetric | undefined {
  if (name === '' || provider === noopMetricsProvider) return undefined;
  return provider.newRetriesMetric(name);
}
