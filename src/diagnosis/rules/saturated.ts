import { allOf, anyOf, binary } from '../../promql/expr.js';
import { formatDuration } from '../../util/duration.js';
import { DRAIN_SHARE, notDraining, notDrainingNow, recommendedWorkers, TARGET_UTILIZATION } from '../capacity.js';
import { compare, relate, sig, unlessAny } from '../conditions.js';
import { formatNumber, formatValue, numberOf } from '../format.js';
import { defineRule, SHARE, type SignalSnapshot } from '../rule.js';
import { MINUTE_MS, SUSTAINED_WINDOW_MS } from '../signals.js';
import { lowPriorityStarvation } from '../starvation.js';
import type { SignalValue } from '../units.js';

/**
 * Saturation: the workers are busy nearly all the time, so keys wait for a free worker; the depth holds
 * (unlike a backlog) but latency suffers and any extra load becomes a backlog. The utilization is the busy
 * workers per configured maximum (controller-runtime's max concurrent reconciles).
 *
 * Without that maximum (component-base controllers, kube-controller-manager's among them) the worker count is
 * inferred where the queue's physics gives it: a free worker takes a waiting key at once, so a depth that never
 * reached zero over the long window means every worker was busy all along, and the busy workers over it are the
 * worker count (a pool kept full holds its busy count flat, one worker or more: nothing is left to vary). The
 * utilization is then 1 by construction, and the report says the count was inferred. A queue that drains now and
 * then is not judged without the maximum: at 90% busy the depth touches zero, and nothing tells 90% from 50%. The
 * floor is read only once its samples span the long window: over the first minutes of a new series any busy queue
 * may not have drained yet. Two shapes hold a depth off zero with workers idle. Workers that never started: a
 * client-go controller starts them once its caches have synced, its handlers queue keys from the first event, and
 * no worker is busy at all (ruled out by the busy floor). And a key re-added while its own sync runs, which no
 * worker may take until that sync returns: a worker stuck in a sync of an object that keeps changing holds the
 * depth at one for good while the others idle, so a depth floor proves nothing while a sync has run for the whole
 * long window. (Keys that re-add themselves early in every short sync hold it the same way, and the metrics cannot
 * tell them from a full pool without the maximum.)
 *
 * Utilization is read over the long window, of the workers' busy time and of the load the arrivals offer (adds
 * times the mean sync, λ·E[S]): each add is one later sync, so the two agree while the depth holds. They part
 * when the window holds work added before it: a start-up list or a burst worked off keeps every worker busy,
 * and minutes after the list is gone the long window still reads them busy while the arrivals alone keep them
 * 80% busy. A queue that drains is not saturated by what it drains, over the trend window or the last five
 * minutes alike: a list lifted by a jump (every object queued again by a relist while it is worked off) drains on
 * at the whole throughput while the trend window's slope reads the jump as a rise for most of ten minutes. Without
 * the maximum the offered load is read against the inferred pool, the busy workers: the last stretch of a long
 * list under changes at 80% of capacity falls at a fifth of the throughput or less and never reaches zero, a pool
 * full of the list, not of the arrivals.
 *
 * Utilization is read over the long window: at one or two workers (controller-runtime's default is one) the
 * busy time of five minutes swings by several percent with Poisson arrivals and skewed sync times, so a
 * queue 93% busy dips under any short-window threshold inside the `for`. After the load falls, the long window
 * ends the finding by itself within minutes: from full busy to a load u it reads under 88% after 12%/(1 − u) of its
 * 15 minutes (2.3 minutes at u = 0.2, 4.5 at 0.6, 7.2 at 0.75), 0.55/(1 − u) minutes after a five-minute reading
 * would read under 75% (under a minute to u = 0.45, two minutes at 0.72): a short-window test beside it would end
 * the finding those seconds sooner and decide nothing else.
 *
 * Utilization alone decides where the maximum is known; how long keys wait does not. A pool shares its
 * waiting: at the same utilization, the share of keys that wait and the wait itself fall with the pool's
 * size (Erlang's C formula: the mean wait is the chance of waiting over c × (1 − utilization) syncs). One
 * worker 93% busy (M/M/1) holds about twelve keys waiting, each some thirteen syncs; 128 workers 90.5% busy hold under
 * one key waiting on average, each a few percent of a sync, and are as close to the edge of their capacity:
 * 7% more load and either becomes a backlog. The depth and the wait are evidence of what the saturation
 * costs, not a condition of it.
 */
/** A depth that never fell below one key over the long window never drained: every worker was busy all along. */
const NEVER_DRAINED_DEPTH = 1;
export const saturated = defineRule({
  id: 'WorkqueueSaturated',
  title: 'Work queue saturated',
  severity: 'warning',
  scope: 'queue',
  thresholds: {
    minUtilization: {
      default: 0.88,
      unit: 'ratio',
      range: SHARE,
      description:
        'Busy workers per configured worker over the long window, and the load the arrivals offer (adds times the mean sync), at or above which the controller is saturated: in an M/G/1 queue at 88% busy the mean wait is already several syncs long. The detection curve turns on between 80% (never) and 88% (every seed) at 1, 2 and 8 workers, in about 20 minutes.',
    },
    drainShare: DRAIN_SHARE,
    targetUtilization: TARGET_UTILIZATION,
    minInferredWorkers: {
      default: 0.9,
      unit: 'workers',
      description:
        'Without a configured maximum: busy workers (long window) at or above which a depth that never reached zero is read as a full pool. A full pool keeps one worker busy all along at least; the reading counts a sync in the window where it finishes, so a whole worker reads a little less by the syncs still running at its edges. Far below one worker the waiting keys are not being taken: workers that never started (a client-go controller whose caches never synced) finish nothing while its handlers queue keys. One worker is a pool too (client-go controllers often run one): the boundary grid holds a one-worker queue standing at 1.2x capacity, which a floor of two workers would not call saturated.',
    },
  },
  // The long window already demands a quarter of an hour of load; the `for` confirms it held.
  forMs: 5 * MINUTE_MS,
  condition: (t) =>
    allOf(
      anyOf(
        allOf(
          relate(sig('sustainedBusyWorkers'), '>=', 'maxWorkers', t.minUtilization),
          // The arrivals keep them that busy, not keys added before the window (a list just worked off).
          relate(sig('sustainedOfferedWorkers'), '>=', 'maxWorkers', t.minUtilization),
        ),
        // No configured maximum: a full pool, inferred from a depth that never reached zero.
        unlessAny(
          allOf(
            binary(
              'unless',
              compare('sustainedDepthMin', '>=', NEVER_DRAINED_DEPTH),
              // Unless a sync has run the whole window: its key, re-added meanwhile, may be what holds the depth.
              compare('longestRunning', '>=', SUSTAINED_WINDOW_MS / 1000),
            ),
            // A full pool keeps a worker busy all along, at least: workers that never started (caches that never
            // synced) hold a depth off zero with none busy.
            compare('sustainedBusyWorkers', '>=', t.minInferredWorkers),
            // The arrivals keep the inferred pool that busy, as in the measured branch, not a list being worked off:
            // the end of a long list falls slowly, never reaching zero, while the arrivals alone leave workers idle.
            relate(sig('sustainedOfferedWorkers'), '>=', 'sustainedBusyWorkers', t.minUtilization),
          ),
          sig('maxWorkers'),
          'controller',
        ),
      ),
      // Not draining over the trend window, nor over the last five minutes: a list lifted by a jump (a relist while
      // it is worked off) drains on at the whole throughput while the trend window's slope still reads the jump.
      allOf(notDraining(t.drainShare), notDrainingNow(t.drainShare)),
    ),
  evidence: [
    'busyWorkers',
    'sustainedBusyWorkers',
    'sustainedOfferedWorkers',
    'maxWorkers',
    'queueLatencyMean',
    'queueLatencyP99',
    'workDurationMean',
    'depthAvg',
    'sustainedDepthMin',
    'longestRunning',
    'addRate',
    'lowPriorityDepth',
    'lowPriorityDepthSlope',
  ],
  derivedTitles: {
    utilization: 'Utilization',
    inferredWorkers: 'Workers (inferred)',
    recommendedWorkers: 'Recommended workers',
  },
  derive(signals, t) {
    const busy = numberOf(signals.sustainedBusyWorkers) ?? numberOf(signals.busyWorkers);
    const max = numberOf(signals.maxWorkers);
    const inferred = inferredWorkers(signals, max);
    const pool = max ?? numberOf(inferred);
    return {
      utilization:
        busy !== undefined && pool !== undefined && pool > 0
          ? { value: busy / pool, unit: 'ratio' }
          : { value: null, unit: 'ratio', missing: max === undefined ? 'metric_absent' : 'insufficient_data' },
      inferredWorkers: inferred,
      recommendedWorkers: recommendedWorkers(signals, t.targetUtilization),
    };
  },
  text: {
    summary: ({ signals, thresholds }) =>
      [
        numberOf(signals.maxWorkers) === undefined && numberOf(signals.inferredWorkers) !== undefined
          ? `Every worker is busy: the depth never fell below ${formatValue(signals.sustainedDepthMin)} over the last ${formatDuration(SUSTAINED_WINDOW_MS)}, so the ${formatNumber(signals.sustainedBusyWorkers)} busy workers are the whole pool (${formatValue(signals.inferredWorkers)}, inferred: the controller exposes no max-workers metric); keys wait ${formatValue(signals.queueLatencyMean)} on average for a worker.`
          : `Workers are ${formatValue(signals.utilization)} busy (${formatNumber(signals.sustainedBusyWorkers)} of ${formatValue(signals.maxWorkers)}); keys wait ${formatValue(signals.queueLatencyMean)} on average for a worker.`,
        // On a priority queue, what holds every worker at priority 0 keeps the initial list and resyncs waiting.
        lowPriorityStarvation(signals, thresholds.drainShare),
      ]
        .filter((sentence) => sentence !== '')
        .join(' '),
    meaning:
      'The controller runs at the edge of its capacity. The queue is not growing yet, but every key waits for a free worker and any extra load turns into a backlog.',
    cause: ({ signals }) =>
      `Too few workers for the load: ${formatValue(signals.addRate)} arrive and each sync takes ${formatValue(signals.workDurationMean)} on average.`,
    fix: ({ signals, thresholds }) =>
      `Set MaxConcurrentReconciles to about ${formatValue(signals.recommendedWorkers)} (Little's law: offered load / ${Math.round(thresholds.targetUtilization * 100)}% target utilization), or make syncs cheaper. First check that the adds are real changes (against how often the watched objects change): keys that add themselves again (a write to an object the controller watches, a failure re-added without backoff) hold every worker the same way, and more workers only make them loop faster.`,
    confirm: [
      {
        text: 'Busy workers sit near the maximum (or, without one, the depth never reaches zero while they hold flat):',
        signals: ['busyWorkers', 'maxWorkers', 'sustainedDepthMin'],
      },
      { text: 'Keys wait for a worker:', signals: ['queueLatencyMean', 'depthAvg'] },
    ],
  },
});

/**
 * The worker count a queue without a configured maximum shows: its busy workers over the long window, rounded,
 * when its depth never reached zero over that window (every worker busy all along); insufficient data otherwise,
 * and not inferred at all when the maximum is exposed.
 */
function inferredWorkers(signals: SignalSnapshot, max: number | undefined): SignalValue {
  const busy = numberOf(signals.sustainedBusyWorkers);
  const floor = numberOf(signals.sustainedDepthMin);
  if (max !== undefined) return { value: null, unit: 'workers', missing: 'insufficient_data' };
  if (busy === undefined || floor === undefined || floor < NEVER_DRAINED_DEPTH) {
    return { value: null, unit: 'workers', missing: 'insufficient_data' };
  }
  return { value: Math.max(1, Math.round(busy)), unit: 'workers' };
}
