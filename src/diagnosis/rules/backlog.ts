import { allOf, anyOf, binary, type Expr } from '../../promql/expr.js';
import { DRAIN_SHARE, notDraining, recommendedWorkers, TARGET_UTILIZATION } from '../capacity.js';
import { compare, negated, scale, sig } from '../conditions.js';
import { formatNumber, formatNumberWithUnit, formatValue, numberOf, round } from '../format.js';
import { defineRule, type SignalSnapshot, type ThresholdNodes } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * A floor of waiting keys that grows, outpaces its drain or stands, or (priority queue) real changes that back up.
 */
function queueBacklog(
  t: ThresholdNodes<'minDepth' | 'minGrowth' | 'arrivalRatio' | 'minWaitRatio' | 'drainShare'>,
): Expr {
  return allOf(
    compare('depthFloor', '>=', t.minDepth),
    anyOf(
      // Growing: arrivals outpace completions.
      allOf(
        compare('depthSlope', '>=', t.minGrowth),
        binary('>=', sig('addRate'), scale('completionRate', t.arrivalRatio)),
      ),
      // Outpaced on balance: batches arrive faster than they drain, so each drain phase starts higher
      // than the last, though the depth falls between them; over half an hour it rises.
      compare('depthTrend', '>=', t.minGrowth),
      // Standing: once many keys wait, deduplication absorbs new events, adds fall to the completion
      // rate and the depth levels off; keys then wait far longer than a sync takes. Not while draining.
      allOf(
        binary('>=', sig('queueLatencyMean'), scale('workDurationMean', t.minWaitRatio)),
        notDraining(t.drainShare),
      ),
      // A priority queue's real changes backing up: served first, their depth grows only under overload,
      // however the whole depth moves (real changes lift listed keys out of a low-priority list). Their floor
      // is at most the whole depth's, so the first clause holds too.
      allOf(
        compare('normalPriorityDepthFloor', '>=', t.minDepth),
        compare('normalPriorityDepthSlope', '>=', t.minGrowth),
      ),
    ),
  );
}

/**
 * Backlog: keys arrive faster than the workers finish them, so the queue never drains. Either the depth
 * keeps growing, or (once deduplication caps it) it stands high with keys waiting far longer than a sync
 * takes. A burst that drains (resync, rollout, a short spike) reaches zero within the window; a backlog
 * does not, for the whole `forMs`.
 *
 * The drain bound (`DRAIN_SHARE`): a queue whose depth falls by at least a fifth of its completions (the
 * least-squares slope over the trend window) is draining, whatever its size, and is never a backlog: an
 * initial list of 100,000 keys worked off at 67/s, or a batch import, empties on its own. It is reported as
 * the `ListDraining` observation with its time to drain. A queue that falls slower than that is standing,
 * and the standing test applies.
 *
 * controller-runtime's priority queue (its default since v0.23) adds initial-list and resync events at a
 * negative priority and hands them out only when no real change is ready. A low-priority backlog that
 * falls (by `minGrowth` or more) while fewer than `minDepth` keys wait at priority 0 or above is the queue
 * doing its job: real changes are served first and the list drains with the time left over, however long
 * that takes. It is not a backlog. A priority-0 backlog is, and so is a low-priority one that does not fall
 * (real changes take every worker, so resyncs and the initial list are never worked off). Since priority-0
 * keys are served first, their depth growing is a backlog by itself, even while the whole depth falls
 * (real changes to keys of a low-priority list lift them rather than add to the depth).
 */
export const backlog = defineRule({
  id: 'WorkqueueBacklog',
  title: 'Work queue backlog',
  severity: 'warning',
  scope: 'queue',
  thresholds: {
    minDepth: {
      default: 20,
      unit: 'items',
      description:
        'Depth that the queue must not fall below (its floor over each minute, at every step of the `for`) for a backlog to count: a queue that keeps up drains to zero between bursts.',
    },
    minGrowth: {
      default: 0.02,
      unit: '1/s',
      description:
        'Depth growth (least-squares slope over the trend window, or over half an hour for batches) at or above which the queue is falling behind: 72 items an hour.',
    },
    arrivalRatio: {
      default: 1,
      unit: 'ratio',
      description:
        'Adds per completed sync at or above which arrivals outpace the workers. At 1: the depth growth and its floor already prove the excess; a higher ratio only delays a queue that falls behind gradually, whose excess starts at a fraction of a percent.',
    },
    minWaitRatio: {
      default: 10,
      unit: 'ratio',
      description:
        'Mean queue wait per mean sync at or above which keys wait on the backlog (when deduplication hides the excess arrivals).',
    },
    drainShare: DRAIN_SHARE,
    targetUtilization: TARGET_UTILIZATION,
  },
  forMs: 10 * MINUTE_MS,
  condition: (t) =>
    binary(
      'unless',
      queueBacklog(t),
      // A priority queue serving real changes first while its low-priority list drains.
      binary(
        'unless',
        compare('lowPriorityDepthSlope', '<=', negated(t.minGrowth)),
        compare('normalPriorityDepthFloor', '>=', t.minDepth),
      ),
    ),
  evidence: [
    'depth',
    'depthMin',
    'depthFloor',
    'depthSlope',
    'addRate',
    'completionRate',
    'depthTrend',
    'busyWorkers',
    'maxWorkers',
    'workDurationMean',
    'queueLatencyMean',
    'lowPriorityDepth',
    'lowPriorityDepthSlope',
    'normalPriorityDepthSlope',
  ],
  derivedTitles: { timeToDrain: 'Time to drain', workersNeeded: 'Workers needed' },
  derive(signals, t) {
    const depth = numberOf(signals.depth);
    const adds = numberOf(signals.addRate);
    const completions = numberOf(signals.completionRate);
    const net = adds !== undefined && completions !== undefined ? completions - adds : undefined;
    const timeToDrain =
      depth === undefined || net === undefined
        ? { value: null, unit: 's' as const, missing: 'insufficient_data' as const }
        : net > 0
          ? { value: depth / net, unit: 's' as const }
          : // Not draining: arrivals are at or above completions; there is no finite time.
            { value: null, unit: 's' as const, missing: 'insufficient_data' as const };
    return { timeToDrain, workersNeeded: recommendedWorkers(signals, t.targetUtilization) };
  },
  text: {
    summary: ({ signals }) =>
      `Depth ${formatValue(signals.depth)}, ${depthDirection(signals)}: ${formatValue(signals.addRate)} added, ${formatValue(signals.completionRate)} finished; ${
        signals.timeToDrain?.value == null ? 'not draining' : `drains in ${formatValue(signals.timeToDrain)}`
      }.`,
    meaning:
      'Keys arrive faster than the workers finish them, so the queue grows without bound and every change waits longer to be reconciled.',
    cause: ({ signals }) =>
      `Syncs are too slow or too few for the event rate (mean sync ${formatValue(signals.workDurationMean)}, ${formatNumber(signals.busyWorkers)} of ${formatValue(signals.maxWorkers)} busy). A burst that drains is not a backlog: this one has grown for the whole evaluation period.`,
    fix: ({ signals, thresholds }) =>
      `Raise MaxConcurrentReconciles to about ${formatValue(signals.workersNeeded)} (Little's law at ${Math.round(thresholds.targetUtilization * 100)}% utilization), or make the sync cheaper: cache reads, avoid API calls that need no answer, batch work. Check that events are not triggered needlessly (predicates on generation or resourceVersion).`,
    confirm: [
      {
        text: 'The depth keeps rising and arrivals stay above completions:',
        signals: ['depth', 'addRate', 'completionRate'],
      },
      {
        text: 'Workers are busy (near the maximum) and syncs take long:',
        signals: ['busyWorkers', 'workDurationMean'],
      },
    ],
  },
});

/**
 * "growing 3.2/s" for a rising depth, "falling 67/s" for a falling one (a backlog at priority 0 while the
 * listed keys drain), "holding steady" for a level one (a standing backlog).
 */
function depthDirection(signals: SignalSnapshot): string {
  const slope = numberOf(signals.depthSlope);
  if (slope === undefined) return 'trend unknown';
  if (round(slope) === '0') return 'holding steady while keys wait';
  return slope > 0 ? `growing ${formatValue(signals.depthSlope)}` : `falling ${formatNumberWithUnit(-slope, '1/s')}`;
}
