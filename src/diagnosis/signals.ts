/**
 * The signals: every per-queue quantity the diagnoses, the report, the dashboards and Prometheus mode use,
 * each defined once as an `Expr` (so it is both computed in-process and rendered as PromQL).
 *
 * Conventions every definition follows:
 * - Work-queue series are normalised with `sum without (priority)`, which sums controller-runtime's
 *   per-priority depth and keeps every identity label, whichever label schema the target uses.
 * - Gauges go through `*_over_time` or `deriv`, never `rate`.
 * - Controller-level (`controller_runtime_*`) and process-level (`rest_client_*`, leader election) series
 *   are joined to queues by the engine (or by `group_left` in rule expressions), see `identity.ts`.
 */
import {
  CLIENT_GO,
  CONFLICT_CODE,
  CONTROLLER_RUNTIME,
  LABEL,
  NEGATIVE_PRIORITY_PATTERN,
  NON_NEGATIVE_PRIORITY_PATTERN,
  PRIORITY_NUMBER_PATTERN,
  RECONCILE_RESULT,
  SUFFIX,
  WORKQUEUE,
  WRITE_METHODS,
} from '../metrics/names.js';
import {
  aggregateWithout,
  binary,
  type Expr,
  eq,
  type LabelMatcher,
  num,
  quantileOverTime,
  rangeFn,
  regexMatch,
  selector,
  subquery,
  sumWithout,
} from '../promql/expr.js';
import {
  BACKOFF_CAP_WINDOW_MS,
  BALANCE_WINDOW_MS,
  histogramSeries,
  meanSignal,
  medianRate,
  minuteFloor,
  onceSpanned,
  perQueue,
  quantileSignal,
  rate,
  reconcileRate,
  reconcileResultRate,
  requeuedErrorRate,
  restRequestRate,
  SIGNAL_WINDOW_MS,
  type SignalDefinition,
  SUSTAINED_WINDOW_MS,
  TREND_WINDOW_MS,
  unexplainedErrorRate,
  unexplainedErrorRatio,
} from './signal-building.js';

export {
  BACKOFF_CAP_WINDOW_MS,
  BALANCE_WINDOW_MS,
  MINUTE_MS,
  perQueue,
  SIGNAL_WINDOW_MS,
  type SignalDefinition,
  type SignalScope,
  SUSTAINED_WINDOW_MS,
  TREND_WINDOW_MS,
} from './signal-building.js';

const W = SIGNAL_WINDOW_MS;

/**
 * Each queue's whole depth now (all its priorities summed), and 0 for a queue that exists but has no depth series
 * yet: controller-runtime's priority queue creates a priority's depth series at its first add, while its adds counter
 * exists from the queue's construction.
 */
const QUEUE_DEPTH_NOW = binary(
  'or',
  perQueue(selector(WORKQUEUE.depth)),
  binary('*', num(0), perQueue(selector(WORKQUEUE.adds))),
);
/**
 * The step of the depth slopes' subqueries: a third of the default scrape interval, so that each scrape's depth is
 * held over about three points and the slope is that of the depth as scraped, within a fraction of a scrape. At a
 * step equal to the scrape interval, the scrapes' jitter makes a step read one sample twice and skip the next,
 * which moves the half-hour slope of a sawtooth of 1,500 keys by a tenth of a key a second.
 */
const DEPTH_SLOPE_STEP_MS = 5_000;

/**
 * The least-squares slope of a queue's whole depth over `windowMs`: of the sum of its priorities' depths, never the
 * sum of each priority's slope. A priority level first used inside the window (the first resync's keys at -100, a
 * first change at 0 after a list) opens its series with the keys it already holds, so its own slope reads only their
 * fall, and the sum of the slopes a fall of the whole queue that did not happen; the queue's depth before it, 0 where
 * the queue had no depth series at all, is what makes its rise part of the slope.
 */
function queueDepthSlope(windowMs: number): Expr {
  return subquery('deriv', QUEUE_DEPTH_NOW, windowMs, DEPTH_SLOPE_STEP_MS);
}
/**
 * The line, in seconds, past which a sync is slow: the work-duration histogram's 10 s bucket, the only bound above
 * a second present in both bucket layouts (client-go's decades end at it). The slow-sync signals count finished
 * syncs past it, and a running sync older than it is slow by the same line.
 */
export const SLOW_SYNC_SECONDS = 10;
/**
 * The `SLOW_SYNC_SECONDS` bucket. client-go exposes it as `le="10"`; Prometheus 3 stores classic-histogram bounds
 * as floats (`le="10.0"`), so both spellings match.
 */
const SLOW_SYNC_BUCKET: LabelMatcher = regexMatch(LABEL.le, `${SLOW_SYNC_SECONDS}(\\.0)?`);
/** The add rate's median (see its signal): per queue, over the signal window. */
const ADD_RATE_MEDIAN: Expr = medianRate((windowMs) => perQueue(rate(WORKQUEUE.adds, windowMs)));
/** REST-client requests that write: PUT, PATCH and POST. */
const WRITES: LabelMatcher = regexMatch(LABEL.method, WRITE_METHODS.join('|'));
/** Writes rejected for a reason other than a conflict: neither 2xx nor 409. */
const FAILED_WRITES: readonly LabelMatcher[] = [WRITES, { label: LABEL.code, op: '!~', value: `2..|${CONFLICT_CODE}` }];
/** Depth series of keys at a negative priority (initial-list and resync events of a priority queue). */
export const LOW_PRIORITY: LabelMatcher = regexMatch(LABEL.priority, NEGATIVE_PRIORITY_PATTERN);
/** Depth series of keys at priority 0 or above, and of queues without priorities (empty or absent label). */
export const NOT_LOW_PRIORITY: LabelMatcher = { label: LABEL.priority, op: '!~', value: NEGATIVE_PRIORITY_PATTERN };
/** The priority queue's real changes (priority 0 and above); no series of a classic queue matches. */
const PRIORITY_QUEUE_NORMAL: LabelMatcher = regexMatch(LABEL.priority, NON_NEGATIVE_PRIORITY_PATTERN);
/** Depth series whose `priority` is set but is not a number (see `PRIORITY_NUMBER_PATTERN`). */
const UNKNOWN_PRIORITY: readonly LabelMatcher[] = [
  { label: LABEL.priority, op: '!=', value: '' },
  { label: LABEL.priority, op: '!~', value: PRIORITY_NUMBER_PATTERN },
];
/** Per queue, how many of its depth series have a priority that is not a number. */
export const unknownPrioritySeries: Expr = aggregateWithout(
  'count',
  [LABEL.priority],
  selector(WORKQUEUE.depth, [...UNKNOWN_PRIORITY]),
);

/**
 * A per-priority view of a queue, none for a queue with depth under a priority that is not a number: from then
 * on its per-priority series are frozen or hold depth of any priority, and only the whole depth is true.
 */
export function byPriority(expr: Expr): Expr {
  return binary('unless', expr, unknownPrioritySeries);
}

/** The depth's series (narrowed by `matchers`) under a function over the window. */
type DepthOverWindow = (matchers: readonly LabelMatcher[]) => Expr;

const depthOver =
  (fn: 'min_over_time' | 'avg_over_time'): DepthOverWindow =>
  (matchers) =>
    rangeFn(fn, WORKQUEUE.depth, W, matchers);

/** The median of the depth over the window: the depth at most scrapes, whatever a passing burst lifted. */
const depthMedianOver: DepthOverWindow = (matchers) => quantileOverTime(0.5, WORKQUEUE.depth, W, matchers);

/**
 * The depth over the window of the keys a worker takes first: a priority queue's at priority 0 or above (each
 * priority's series under `over`, summed), the whole depth of a queue without priorities or whose priorities are
 * unknown.
 */
function servedFirstDepth(over: DepthOverWindow): Expr {
  return binary('or', byPriority(perQueue(over([NOT_LOW_PRIORITY]))), perQueue(over([])));
}

const signalList = [
  {
    id: 'depth',
    title: 'Depth',
    unit: 'items',
    scope: 'queue',
    description: 'Keys waiting to be picked up by a worker, now. Items waiting for a delayed requeue are not counted.',
    expr: perQueue(selector(WORKQUEUE.depth)),
  },
  {
    id: 'depthAvg',
    title: 'Depth (average)',
    unit: 'items',
    scope: 'queue',
    description: 'Average depth over the window: a queue that keeps up stays near zero.',
    expr: perQueue(rangeFn('avg_over_time', WORKQUEUE.depth, W)),
  },
  {
    id: 'depthMedian',
    title: 'Depth (median)',
    unit: 'items',
    scope: 'queue',
    description:
      'Median depth over the window: the depth at most scrapes, which a burst that drains within a scrape or two does not move.',
    expr: perQueue(depthMedianOver([])),
  },
  {
    id: 'depthMin',
    title: 'Depth (minimum)',
    unit: 'items',
    scope: 'queue',
    description:
      'Lowest depth over the window: a queue that keeps up, even one with periodic bursts, drains to zero; a backlog never does.',
    expr: perQueue(rangeFn('min_over_time', WORKQUEUE.depth, W)),
  },
  {
    id: 'trendDepthMin',
    title: 'Depth (minimum, trend window)',
    unit: 'items',
    scope: 'queue',
    description:
      "Lowest depth over the trend window of a series older than it (one with samples in the five minutes before the window began): whether the queue, running all along, was near empty as recently as the trend window's slope reaches back. A burst that arrived on a queue keeping up shows that emptiness here while the slope still reads its rise; a series younger than the window (a controller that just started, its queue empty because nothing was listed yet) shows nothing.",
    expr: perQueue(
      binary(
        'and',
        rangeFn('min_over_time', WORKQUEUE.depth, TREND_WINDOW_MS),
        binary(
          '>',
          rangeFn('count_over_time', WORKQUEUE.depth, SUSTAINED_WINDOW_MS),
          rangeFn('count_over_time', WORKQUEUE.depth, TREND_WINDOW_MS),
        ),
      ),
    ),
  },
  {
    id: 'sustainedDepthMin',
    title: 'Depth (minimum, long window)',
    unit: 'items',
    scope: 'queue',
    description:
      'Lowest depth over the long window, once its samples span nine tenths of it (the window holds a sample older than that: more samples than its last nine tenths hold, at any scrape interval up to a tenth of the window). A free worker takes a waiting key at once, so a queue whose depth never reached zero in that time had every worker busy all along; over the few minutes of a new series (a restarted controller, a new scraper) that proves nothing.',
    expr: perQueue(
      onceSpanned(rangeFn('min_over_time', WORKQUEUE.depth, SUSTAINED_WINDOW_MS), WORKQUEUE.depth, SUSTAINED_WINDOW_MS),
    ),
  },
  {
    id: 'depthFloor',
    title: 'Depth (floor of the last minute)',
    unit: 'items',
    scope: 'queue',
    description:
      'Lowest depth over the last minute (over the last two where the minute holds no scrape, at a scrape interval of a minute). Checked at every 30-second step of a `for`, it shows a queue that did not drain once in that time, without waiting for a longer window to fill.',
    expr: perQueue(minuteFloor(WORKQUEUE.depth)),
  },
  {
    id: 'depthSlope',
    title: 'Depth growth',
    unit: '1/s',
    scope: 'queue',
    description:
      "Least-squares slope of the queue's whole depth (its priorities summed) over the trend window, in items per second: positive and sustained means arrivals outpace the workers.",
    expr: queueDepthSlope(TREND_WINDOW_MS),
  },
  {
    id: 'recentDepthSlope',
    title: 'Depth growth (last five minutes)',
    unit: '1/s',
    scope: 'queue',
    description:
      "Least-squares slope of the queue's whole depth over the last five minutes: whether the queue is draining now. The trend window's slope still reads a burst that arrived minutes ago (a two-minute bulk change keeps it positive for most of ten minutes after it ended), while this one falls with the depth once the workers overtake the arrivals.",
    expr: queueDepthSlope(W),
  },
  {
    id: 'depthTrend',
    title: 'Depth growth (half hour)',
    unit: '1/s',
    scope: 'queue',
    description:
      "Least-squares slope of the queue's whole depth over half an hour: the balance of batches that arrive faster than they drain, whose depth falls between arrivals but rises from one to the next.",
    expr: queueDepthSlope(BALANCE_WINDOW_MS),
  },
  {
    id: 'depthChangePerSync',
    title: 'Depth change per sync (half hour)',
    unit: 'ratio',
    scope: 'queue',
    description:
      "Net change of the depth over half an hour per sync finished in it, end to end (the depth's change over the completions' increase, both over what the window holds): the arrivals less the completions, as a share of the completions. A standing queue refilled by resyncs does not fall on balance; a list being worked off falls by a large share of what was completed, whatever lifted it within the half hour (a relist, a burst), where the least-squares slope weighs a recent lift as much as the fall before it.",
    expr: binary(
      '/',
      perQueue(rangeFn('delta', WORKQUEUE.depth, BALANCE_WINDOW_MS)),
      perQueue(rangeFn('increase', histogramSeries(WORKQUEUE.workDuration, SUFFIX.count), BALANCE_WINDOW_MS)),
    ),
  },
  {
    id: 'lowPriorityDepth',
    title: 'Depth (low priority)',
    unit: 'items',
    scope: 'queue',
    description:
      "Keys waiting at a negative priority in controller-runtime's priority queue: initial-list and resync events, added at -100 and handed out only when no higher-priority key is ready. Absent for the classic queue.",
    expr: byPriority(perQueue(selector(WORKQUEUE.depth, [LOW_PRIORITY]))),
  },
  {
    id: 'lowPriorityDepthSlope',
    title: 'Depth growth (low priority)',
    unit: '1/s',
    scope: 'queue',
    description:
      'Least-squares slope of the low-priority depth over the trend window: negative while the workers have time left over for initial-list and resync events, zero when real changes take all of it.',
    expr: byPriority(perQueue(rangeFn('deriv', WORKQUEUE.depth, TREND_WINDOW_MS, [LOW_PRIORITY]))),
  },
  {
    id: 'servedFirstDepthMin',
    title: 'Depth (minimum, served first)',
    unit: 'items',
    scope: 'queue',
    description:
      "Lowest depth over the window of the keys a worker takes first: a priority queue's keys at priority 0 or above (not its initial list and resyncs, at a negative priority, which wait for a free worker), the whole depth of a queue without priorities or whose priorities are unknown. A loop of L keys on W workers keeps L − W of them waiting (none when L ≤ W).",
    expr: servedFirstDepth(depthOver('min_over_time')),
  },
  {
    id: 'servedFirstDepthAvg',
    title: 'Depth (average, served first)',
    unit: 'items',
    scope: 'queue',
    description:
      "Average depth over the window of the keys a worker takes first: a priority queue's keys at priority 0 or above, the whole depth of a queue without priorities or whose priorities are unknown. An initial list starved at low priority by a loop at priority 0 is not keys piling up behind the loop.",
    expr: servedFirstDepth(depthOver('avg_over_time')),
  },
  {
    id: 'servedFirstDepthMedian',
    title: 'Depth (median, served first)',
    unit: 'items',
    scope: 'queue',
    description:
      "Median depth over the window of the keys a worker takes first (a priority queue's at priority 0 or above, each priority's median summed; the whole depth of a queue without priorities or whose priorities are unknown): the depth at most scrapes. A burst that passes through (a resync, an event storm) lifts a scrape or two and moves the average, not the median; keys that pile up hold it up.",
    expr: servedFirstDepth(depthMedianOver),
  },
  {
    id: 'normalPriorityDepthFloor',
    title: 'Depth (floor of the last minute, priority 0 and above)',
    unit: 'items',
    scope: 'queue',
    description:
      "Lowest depth over the last minute of a priority queue's keys at priority 0 or above: its real changes, which it hands out before any low-priority key. Absent for the classic queue, and for a priority queue that has queued no such key.",
    expr: byPriority(perQueue(minuteFloor(WORKQUEUE.depth, [PRIORITY_QUEUE_NORMAL]))),
  },
  {
    id: 'normalPriorityDepthSlope',
    title: 'Depth growth (priority 0 and above)',
    unit: '1/s',
    scope: 'queue',
    description:
      "Least-squares slope over the trend window of a priority queue's depth at priority 0 or above. Those keys are served first, so their depth grows only when real changes alone outpace the workers, whatever low-priority work waits. Absent for the classic queue.",
    expr: byPriority(perQueue(rangeFn('deriv', WORKQUEUE.depth, TREND_WINDOW_MS, [PRIORITY_QUEUE_NORMAL]))),
  },
  {
    id: 'unknownPriorityDepthSeries',
    title: 'Depth series of unknown priority',
    unit: 'items',
    scope: 'queue',
    description:
      "Depth series of a priority queue whose priority is not a number: controller-runtime's `exceeded_cardinality_limit`, written once the queue has seen more than 25 distinct priorities. From then on the depth per priority is lost (the per-priority signals are absent) and the whole depth decides. Absent when every priority is known.",
    expr: unknownPrioritySeries,
  },
  {
    id: 'addRate',
    title: 'Add rate',
    unit: '1/s',
    scope: 'queue',
    description: 'New (deduplicated) adds per second: events, resyncs and requeues that put a key into the queue.',
    expr: perQueue(rate(WORKQUEUE.adds)),
  },
  {
    id: 'addRateMedian',
    title: 'Add rate (median)',
    unit: '1/s',
    scope: 'queue',
    description:
      'New adds per second, the median over the window of their rate over two-minute slices a minute apart. A steady stream (a loop, a trickle of real changes) reads as the add rate does; a burst queued at one instant (a resync of every object, a relist) lifts two of the five slices and not the median, while it lifts the five-minute add rate for five minutes.',
    expr: ADD_RATE_MEDIAN,
  },
  {
    id: 'trendAddRate',
    title: 'Add rate (trend window)',
    unit: '1/s',
    scope: 'queue',
    description:
      "New adds per second over the trend window, once its samples span nine tenths of it (as the long window's lowest depth). Beside the add rate of the last five minutes it tells whether the adds rise as the depth falls: fewer keys waiting coalesce fewer events. Over the first minutes of a series both rates read the same few samples, and their difference is how each backend extrapolates them, not a rise.",
    expr: perQueue(onceSpanned(rate(WORKQUEUE.adds, TREND_WINDOW_MS), WORKQUEUE.adds, TREND_WINDOW_MS)),
  },
  {
    id: 'balanceAddRate',
    title: 'Add rate (half hour)',
    unit: '1/s',
    scope: 'queue',
    description:
      'New adds per second over the half hour, once its samples span nine tenths of it. Beside the add rate of the last five minutes it tells whether the adds rise as the depth falls, for falls too slow for the trend window to tell the rise from its counting noise.',
    expr: perQueue(onceSpanned(rate(WORKQUEUE.adds, BALANCE_WINDOW_MS), WORKQUEUE.adds, BALANCE_WINDOW_MS)),
  },
  {
    id: 'balanceDepthAvg',
    title: 'Depth (average, half hour)',
    unit: 'items',
    scope: 'queue',
    description:
      "Average depth over the half hour, once its samples span nine tenths of it. Above the last five minutes' average, the depth has fallen on balance over the half hour, by the difference.",
    expr: perQueue(
      onceSpanned(rangeFn('avg_over_time', WORKQUEUE.depth, BALANCE_WINDOW_MS), WORKQUEUE.depth, BALANCE_WINDOW_MS),
    ),
  },
  {
    id: 'processAddRate',
    title: 'Add rate (process)',
    unit: '1/s',
    scope: 'process',
    description:
      "New adds per second over every queue of the process: the syncs its controllers are asked for, each of which may write. Beside the process's write rate it says how much of the writing this queue's adds alone can explain.",
    expr: sumWithout([LABEL.priority, LABEL.controller, LABEL.name], rate(WORKQUEUE.adds)),
  },
  {
    id: 'processAddRateMedian',
    title: 'Add rate (process, median)',
    unit: '1/s',
    scope: 'process',
    description:
      "The add rate's median of each queue of the process, summed: the adds each queue makes steadily, without a burst that passed at one instant. The median of the process's whole add rate would not leave them out: resyncs of two queues at different times lift four of its five slices.",
    expr: sumWithout([LABEL.controller, LABEL.name], ADD_RATE_MEDIAN),
  },
  {
    id: 'completionRate',
    title: 'Completion rate',
    unit: '1/s',
    scope: 'queue',
    description: 'Syncs finished per second (the work-duration count rate): the throughput of the workers.',
    expr: perQueue(rate(histogramSeries(WORKQUEUE.workDuration, SUFFIX.count))),
  },
  {
    id: 'retryRate',
    title: 'Retry rate',
    unit: '1/s',
    scope: 'queue',
    description:
      'Delayed requeues per second. client-go counts every AddAfter, so correct RequeueAfter polling shows here as well as rate-limited error retries.',
    expr: perQueue(rate(WORKQUEUE.retries)),
  },
  quantileSignal(
    'queueLatencyP50',
    'Queue latency p50',
    WORKQUEUE.queueDuration,
    0.5,
    'Median time a key waited in the queue before a worker took it.',
  ),
  quantileSignal(
    'queueLatencyP90',
    'Queue latency p90',
    WORKQUEUE.queueDuration,
    0.9,
    'Time within which 90% of keys were picked up. Interpolated within decade buckets: coarse.',
  ),
  quantileSignal(
    'queueLatencyP99',
    'Queue latency p99',
    WORKQUEUE.queueDuration,
    0.99,
    'Time within which 99% of keys were picked up. Interpolated within decade buckets: coarse.',
  ),
  meanSignal(
    'queueLatencyMean',
    'Queue latency (mean)',
    WORKQUEUE.queueDuration,
    'Mean wait in the queue; sharper than the quantiles of decade buckets.',
  ),
  quantileSignal(
    'workDurationP50',
    'Work duration p50',
    WORKQUEUE.workDuration,
    0.5,
    'Median sync (reconcile) duration.',
  ),
  quantileSignal(
    'workDurationP90',
    'Work duration p90',
    WORKQUEUE.workDuration,
    0.9,
    'Sync duration within which 90% of syncs finished. Coarse: decade buckets.',
  ),
  quantileSignal(
    'workDurationP99',
    'Work duration p99',
    WORKQUEUE.workDuration,
    0.99,
    'Sync duration within which 99% of syncs finished. Coarse: a steady 2 s sync reads as about 9.9 s.',
  ),
  meanSignal('workDurationMean', 'Work duration (mean)', WORKQUEUE.workDuration, 'Mean sync duration.'),
  {
    id: 'slowSyncShare',
    title: 'Share of slow syncs',
    unit: 'ratio',
    scope: 'queue',
    description:
      'Share of the syncs finished over the sustained window that took longer than 10 s (the 10 s bucket, present in both bucket layouts). Catches a few blocking syncs that the p99 hides.',
    expr: binary(
      '-',
      num(1),
      binary(
        '/',
        perQueue(rate(histogramSeries(WORKQUEUE.workDuration, SUFFIX.bucket), SUSTAINED_WINDOW_MS, [SLOW_SYNC_BUCKET])),
        perQueue(rate(histogramSeries(WORKQUEUE.workDuration, SUFFIX.count), SUSTAINED_WINDOW_MS)),
        { ignoring: [LABEL.le] },
      ),
    ),
  },
  {
    id: 'slowSyncRate',
    title: 'Slow syncs',
    unit: '1/s',
    scope: 'queue',
    description:
      'Syncs per second finished over the sustained window that took longer than 10 s (the 10 s bucket). A busy controller dilutes a blocking call in the share of its syncs, not in their rate.',
    expr: binary(
      '-',
      perQueue(rate(histogramSeries(WORKQUEUE.workDuration, SUFFIX.count), SUSTAINED_WINDOW_MS)),
      perQueue(rate(histogramSeries(WORKQUEUE.workDuration, SUFFIX.bucket), SUSTAINED_WINDOW_MS, [SLOW_SYNC_BUCKET])),
      { ignoring: [LABEL.le] },
    ),
  },
  {
    id: 'busyWorkers',
    title: 'Busy workers',
    unit: 'workers',
    scope: 'queue',
    description:
      "Average number of workers busy with finished syncs (rate of the work-duration sum: Little's law). Syncs still running are not in it.",
    expr: perQueue(rate(histogramSeries(WORKQUEUE.workDuration, SUFFIX.sum))),
  },
  {
    id: 'sustainedBusyWorkers',
    title: 'Busy workers (sustained)',
    unit: 'workers',
    scope: 'queue',
    description:
      'Busy workers over the long window: steadier than the short window, whose arrivals and sync times vary by several percent at one or two workers.',
    expr: perQueue(rate(histogramSeries(WORKQUEUE.workDuration, SUFFIX.sum), SUSTAINED_WINDOW_MS)),
  },
  {
    id: 'sustainedOfferedWorkers',
    title: 'Offered load (sustained)',
    unit: 'workers',
    scope: 'queue',
    description:
      'Workers the arrivals of the long window keep busy: adds per second times the mean sync (the offered load of queueing theory, λ·E[S]). Each add is one later sync, so while the depth holds it equals the busy workers; while the queue works off keys added before the window (a start-up list, a burst) the workers are busier than the arrivals make them, and it is lower.',
    expr: binary(
      '*',
      perQueue(rate(WORKQUEUE.adds, SUSTAINED_WINDOW_MS)),
      binary(
        '/',
        perQueue(rate(histogramSeries(WORKQUEUE.workDuration, SUFFIX.sum), SUSTAINED_WINDOW_MS)),
        perQueue(rate(histogramSeries(WORKQUEUE.workDuration, SUFFIX.count), SUSTAINED_WINDOW_MS)),
      ),
    ),
  },
  {
    id: 'maxWorkers',
    title: 'Max workers',
    unit: 'workers',
    scope: 'controller',
    description: "The controller's MaxConcurrentReconciles, when controller-runtime exposes it.",
    expr: selector(CONTROLLER_RUNTIME.maxConcurrentReconciles),
  },
  {
    id: 'activeWorkers',
    title: 'Active workers',
    unit: 'workers',
    scope: 'controller',
    description: 'Workers busy right now, when controller-runtime exposes it.',
    expr: selector(CONTROLLER_RUNTIME.activeWorkers),
  },
  {
    id: 'unfinishedWork',
    title: 'Unfinished work',
    unit: 's',
    scope: 'queue',
    description: 'Sum of the ages of syncs still running.',
    expr: perQueue(selector(WORKQUEUE.unfinishedWork)),
  },
  {
    id: 'unfinishedWorkGrowth',
    title: 'Unfinished work growth',
    unit: 'workers',
    scope: 'queue',
    description:
      'Slope of the unfinished work in seconds per second: about 1 per worker stuck in a sync that never returns.',
    expr: perQueue(rangeFn('deriv', WORKQUEUE.unfinishedWork, W)),
  },
  {
    id: 'longestRunning',
    title: 'Longest-running sync',
    unit: 's',
    scope: 'queue',
    description: 'Age of the oldest sync still running, now.',
    expr: perQueue(selector(WORKQUEUE.longestRunningProcessor)),
  },
  {
    id: 'longestRunningMax',
    title: 'Longest-running sync (max)',
    unit: 's',
    scope: 'queue',
    description: 'Highest age of a running sync seen over the window: catches blocking syncs between scrapes.',
    expr: perQueue(rangeFn('max_over_time', WORKQUEUE.longestRunningProcessor, W)),
  },
  {
    id: 'longestRunningGrowth',
    title: 'Longest-running sync growth',
    unit: 'ratio',
    scope: 'queue',
    description: 'Slope of the longest-running sync age: 1 when one sync has been running all along.',
    expr: perQueue(rangeFn('deriv', WORKQUEUE.longestRunningProcessor, W)),
  },
  {
    id: 'reconcileRate',
    title: 'Reconcile rate',
    unit: '1/s',
    scope: 'controller',
    description: 'Reconciles per second, all results (controller-runtime).',
    expr: reconcileRate(W),
  },
  {
    id: 'sustainedReconcileRate',
    title: 'Reconcile rate (sustained)',
    unit: '1/s',
    scope: 'controller',
    description: 'Reconciles per second over the long window, all results (controller-runtime).',
    expr: reconcileRate(SUSTAINED_WINDOW_MS),
  },
  {
    id: 'reconcileErrorRate',
    title: 'Reconcile error rate',
    unit: '1/s',
    scope: 'controller',
    description: 'Reconciles per second that returned an error (controller-runtime).',
    expr: rate(CONTROLLER_RUNTIME.reconcileErrors),
  },
  {
    id: 'requeuedErrorRate',
    title: 'Requeued error rate',
    unit: '1/s',
    scope: 'controller',
    description:
      'Reconcile errors per second that the controller requeues: all of them less the terminal errors, which controller-runtime never requeues (every error without the terminal counter).',
    expr: requeuedErrorRate(),
  },
  {
    id: 'sustainedErrorRate',
    title: 'Reconcile error rate (sustained)',
    unit: '1/s',
    scope: 'controller',
    description:
      'Reconcile errors per second over the long window: keys failing with exponential backoff fail rarely but never stop.',
    expr: rangeFn('rate', CONTROLLER_RUNTIME.reconcileErrors, SUSTAINED_WINDOW_MS),
  },
  {
    id: 'unexplainedErrorRate',
    title: 'Unexplained error rate',
    unit: '1/s',
    scope: 'controller',
    description:
      "Reconcile errors per second that 409 Conflict answers do not explain (controller-runtime; the conflicts charged to a controller in proportion to its share of the process's reconciles).",
    expr: unexplainedErrorRate(W),
  },
  {
    id: 'sustainedUnexplainedErrorRate',
    title: 'Unexplained error rate (sustained)',
    unit: '1/s',
    scope: 'controller',
    description:
      'Reconcile errors per second over the long window that 409 Conflict answers do not explain: an object that fails on every sync keeps adding to it, at least once per maximum backoff, whatever the load.',
    expr: unexplainedErrorRate(SUSTAINED_WINDOW_MS),
  },
  {
    id: 'steadyUnexplainedErrorRate',
    title: 'Unexplained error rate (over the maximum backoff)',
    unit: '1/s',
    scope: 'controller',
    description:
      'Reconcile errors per second that 409 Conflict answers do not explain, over a window longer than the maximum backoff (1000 s): every object that fails on every sync adds at least one error to it, even in a quiet controller whose failing keys all wait at the cap.',
    expr: unexplainedErrorRate(BACKOFF_CAP_WINDOW_MS),
  },
  {
    id: 'errorRatio',
    title: 'Unexplained error ratio',
    unit: 'ratio',
    scope: 'controller',
    description:
      'Share of reconciles that failed, less the failures that 409 Conflict answers explain (transient optimistic-concurrency noise that succeeds on the retry).',
    expr: unexplainedErrorRatio(W),
  },
  {
    id: 'sustainedErrorRatio',
    title: 'Unexplained error ratio (sustained)',
    unit: 'ratio',
    scope: 'controller',
    description: 'The unexplained error ratio over the long window: failures that keep coming, not a passing spike.',
    expr: unexplainedErrorRatio(SUSTAINED_WINDOW_MS),
  },
  {
    id: 'recentErrorShareOfSustained',
    title: 'Unexplained errors now, per reconcile of the long window',
    unit: 'ratio',
    scope: 'controller',
    description:
      "Unexplained errors per second over the last five minutes, over the reconciles per second of the long window: whether failures still come at a share of the controller's usual throughput, whatever the last five minutes' own reconciles. A resync that queues every object serves the failing ones first (they already wait in the queue, in backoff), so their errors come in a spike at its start while its successes follow for minutes; the short window's own ratio then reads the successes without the spike.",
    expr: binary('/', unexplainedErrorRate(W), reconcileRate(SUSTAINED_WINDOW_MS)),
  },
  {
    id: 'terminalErrorRate',
    title: 'Terminal error rate',
    unit: '1/s',
    scope: 'controller',
    description:
      'Reconciles per second that returned a terminal error (controller-runtime): failures the controller declared permanent and does not retry.',
    expr: rate(CONTROLLER_RUNTIME.terminalReconcileErrors),
  },
  {
    id: 'sustainedRetryRate',
    title: 'Retry rate (sustained)',
    unit: '1/s',
    scope: 'queue',
    description: 'Delayed requeues per second over the long window.',
    expr: perQueue(rangeFn('rate', WORKQUEUE.retries, SUSTAINED_WINDOW_MS)),
  },
  {
    id: 'reconcileSuccessRate',
    title: 'Reconcile success rate',
    unit: '1/s',
    scope: 'controller',
    description: 'Reconciles per second that succeeded without requeue.',
    expr: reconcileResultRate(RECONCILE_RESULT.success),
  },
  {
    id: 'reconcileRequeueRate',
    title: 'Reconcile requeue rate',
    unit: '1/s',
    scope: 'controller',
    description: 'Reconciles per second that asked for an immediate, rate-limited requeue.',
    expr: reconcileResultRate(RECONCILE_RESULT.requeue),
  },
  {
    id: 'reconcileRequeueAfterRate',
    title: 'Reconcile requeue-after rate',
    unit: '1/s',
    scope: 'controller',
    description: 'Reconciles per second that asked to be requeued after an interval (polling).',
    expr: reconcileResultRate(RECONCILE_RESULT.requeueAfter),
  },
  {
    id: 'writeRate',
    title: 'API write rate',
    unit: '1/s',
    scope: 'process',
    description:
      'PUT, PATCH and POST requests per second from the whole process (client-go REST client). Per process, not per queue: next to the add rate it tells a self-triggering status write.',
    expr: restRequestRate([WRITES]),
  },
  {
    id: 'writeRateMedian',
    title: 'API write rate (median)',
    unit: '1/s',
    scope: 'process',
    description:
      "PUT, PATCH and POST requests per second from the whole process, the median over the window of their rate over two-minute slices a minute apart, to read beside the add rate's median: both leave out a burst that passed at one instant.",
    expr: medianRate((windowMs) => restRequestRate([WRITES], windowMs)),
  },
  {
    id: 'failedRequestRate',
    title: 'API request failures',
    unit: '1/s',
    scope: 'process',
    description:
      'API requests per second from the whole process that did not succeed (code not 2xx, any method): conflicts, rejected writes, objects not found.',
    expr: restRequestRate([{ label: LABEL.code, op: '!~', value: '2..' }]),
  },
  {
    id: 'conflictRate',
    title: 'API conflicts',
    unit: '1/s',
    scope: 'process',
    description:
      'API requests per second from the whole process answered 409 Conflict: optimistic-concurrency noise that a retry resolves.',
    expr: restRequestRate([eq(LABEL.code, CONFLICT_CODE)]),
  },
  {
    id: 'failedWriteRate',
    title: 'API write failures',
    unit: '1/s',
    scope: 'process',
    description:
      'PUT, PATCH and POST requests per second from the whole process that were rejected (code neither 2xx nor 409). Failed reads (a GET of an optional object answered 404) and optimistic-concurrency conflicts (409, resolved by the retry) are not in it.',
    expr: restRequestRate(FAILED_WRITES),
  },
  {
    id: 'failedWriteRateMedian',
    title: 'API write failures (median)',
    unit: '1/s',
    scope: 'process',
    description:
      "Rejected PUT, PATCH and POST requests per second from the whole process (code neither 2xx nor 409), the median over the window of their rate over two-minute slices a minute apart, to read beside the add rate's median.",
    expr: medianRate((windowMs) => restRequestRate(FAILED_WRITES, windowMs)),
  },
  {
    id: 'leaderStatus',
    title: 'Leader',
    unit: 'ratio',
    scope: 'process',
    description: '1 when this replica holds the leader lease, 0 on a standby replica.',
    expr: sumWithout([LABEL.name], selector(CLIENT_GO.leaderElectionMasterStatus)),
  },
] as const satisfies readonly SignalDefinition[];

export type SignalId = (typeof signalList)[number]['id'];
export const SIGNALS: readonly SignalDefinition[] = signalList;
export const SIGNAL_BY_ID: ReadonlyMap<string, SignalDefinition> = new Map(SIGNALS.map((s) => [s.id, s]));

export function signal(id: SignalId): SignalDefinition {
  const found = SIGNAL_BY_ID.get(id);
  if (found === undefined) throw new Error(`unknown signal ${id}`);
  return found;
}

/** Signals reported per queue in the report (all but process-level bookkeeping). */
export const REPORTED_SIGNALS: readonly SignalDefinition[] = SIGNALS.filter((s) => s.id !== 'leaderStatus');
