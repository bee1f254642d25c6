/**
 * The reference work queue: client-go `util/workqueue` semantics in TypeScript, for the simulator
 * and as the executable statement of what the work-queue metrics mean.
 *
 * Layers, each adding one capability: `createQueue` (dedup, single flight, FIFO, shutdown),
 * `createDelayingQueue` (+ `addAfter`), `createRateLimitingQueue` (+ `addRateLimited`, `forget`,
 * `numRequeues`). Beside them, `createPriorityQueue`: controller-runtime's priority queue (the
 * default controller queue since v0.23), with its metrics (depth per priority). Clock and metrics
 * provider are injected; the defaults are the real clock and no metrics. Additions to client-go:
 * `tryGet()` and `waitingLen()` on the queues, the FakeClock's synchronous stepping, and the retries
 * counting mode.
 */
export { type Clock, FakeClock, realClock, type Timer, type TimerOptions } from './clock.js';
export {
  createDelayingQueue,
  type DelayingQueue,
  type DelayingQueueOptions,
  type RetriesCountingMode,
} from './delaying-queue.js';
export { WORKQUEUE_HELP } from './metric-names.js';
export {
  type CounterMetric,
  type DepthMetricWithPriority,
  type GaugeMetric,
  type HistogramMetric,
  type MetricsProvider,
  noopMetricsProvider,
  type SettableGaugeMetric,
  UNFINISHED_WORK_UPDATE_PERIOD_MS,
} from './metrics.js';
export {
  type AddOpts,
  createPriorityQueue,
  type GetWithPriorityResult,
  type PriorityQueue,
  type PriorityQueueOptions,
} from './priority-queue.js';
export {
  createPrometheusMetricsProvider,
  MAX_RECOMMENDED_UNIQUE_PRIORITIES,
  PRIORITY_CARDINALITY_EXCEEDED,
  type PrometheusFlavor,
  type PrometheusMetricsProviderOptions,
  type PrometheusRegistry,
  WORKQUEUE_BUCKETS,
} from './prometheus-metrics-provider.js';
export { createQueue, type GetResult, type Queue, type QueueOptions } from './queue.js';
export {
  bucketRateLimiter,
  DEFAULT_MAX_BACKOFF_MS,
  defaultControllerRateLimiter,
  itemExponentialFailureRateLimiter,
  itemFastSlowRateLimiter,
  maxOfRateLimiter,
  priorityQueueRateLimiter,
  type RateLimiter,
  withMaxWaitRateLimiter,
} from './rate-limiters.js';
export {
  createRateLimitingQueue,
  type RateLimitingQueue,
  type RateLimitingQueueOptions,
} from './rate-limiting-queue.js';
export {
  type FamilyDefinition,
  HistogramFamily,
  type HistogramSeries,
  type Labels,
  type Tally,
  TallyFamily,
} from './tally-metrics.js';
