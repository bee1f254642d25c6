import { allOf, binary } from '../../promql/expr.js';
import { DRAIN_SHARE, notDraining, recommendedWorkers, TARGET_UTILIZATION } from '../capacity.js';
import { compare, relate, scale, sig } from '../conditions.js';
import { formatNumber, formatValue, numberOf } from '../format.js';
import { defineRule, SHARE } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Saturation: the workers are busy nearly all the time, so keys wait for a free worker; the depth holds
 * (unlike a backlog) but latency suffers and any extra load becomes a backlog. Needs the configured maximum
 * (controller-runtime's max concurrent reconciles); without it the utilization cannot be known.
 *
 * Utilization is read over the long window: at one or two workers (controller-runtime's default is one) the
 * busy time of five minutes swings by several percent with Poisson arrivals and skewed sync times, so a
 * queue 93% busy dips under any short-window threshold inside the `for`. The short window only has to stay
 * clearly busy, which ends the finding soon after the load falls.
 */
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
        'Busy workers per configured worker over the long window at or above which the controller is saturated: in an M/G/1 queue at 88% busy the mean wait is already several syncs long.',
    },
    minRecentUtilization: {
      default: 0.75,
      unit: 'ratio',
      range: SHARE,
      description:
        'Busy workers per configured worker over the short window below which the load has fallen and saturation has ended; below the long-window threshold by more than the short window swings at one worker.',
    },
    minDepth: { default: 1, unit: 'items', description: 'Average depth at or above which keys wait for a worker.' },
    drainShare: DRAIN_SHARE,
    minWaitRatio: {
      default: 0.05,
      unit: 'ratio',
      description: 'Mean queue wait per mean sync duration at or above which the wait for a worker is felt.',
    },
    targetUtilization: TARGET_UTILIZATION,
  },
  // The long window already demands a quarter of an hour of load; the `for` confirms it held.
  forMs: 5 * MINUTE_MS,
  condition: (t) =>
    allOf(
      relate(sig('sustainedBusyWorkers'), '>=', 'maxWorkers', t.minUtilization),
      relate(sig('busyWorkers'), '>=', 'maxWorkers', t.minRecentUtilization),
      compare('depthAvg', '>=', t.minDepth),
      notDraining(t.drainShare),
      binary('>=', sig('queueLatencyMean'), scale('workDurationMean', t.minWaitRatio)),
    ),
  evidence: [
    'busyWorkers',
    'sustainedBusyWorkers',
    'maxWorkers',
    'queueLatencyMean',
    'queueLatencyP99',
    'workDurationMean',
    'depthAvg',
    'addRate',
  ],
  derivedTitles: { utilization: 'Utilization', recommendedWorkers: 'Recommended workers' },
  derive(signals, t) {
    const busy = numberOf(signals.sustainedBusyWorkers) ?? numberOf(signals.busyWorkers);
    const max = numberOf(signals.maxWorkers);
    return {
      utilization:
        busy !== undefined && max !== undefined && max > 0
          ? { value: busy / max, unit: 'ratio' }
          : { value: null, unit: 'ratio', missing: max === undefined ? 'metric_absent' : 'insufficient_data' },
      recommendedWorkers: recommendedWorkers(signals, t.targetUtilization),
    };
  },
  text: {
    summary: ({ signals }) =>
      `Workers are ${formatValue(signals.utilization)} busy (${formatNumber(signals.sustainedBusyWorkers)} of ${formatValue(signals.maxWorkers)}); keys wait ${formatValue(signals.queueLatencyMean)} on average for a worker.`,
    meaning:
      'The controller runs at the edge of its capacity. The queue is not growing yet, but every key waits for a free worker and any extra load turns into a backlog.',
    cause: ({ signals }) =>
      `Too few workers for the load: ${formatValue(signals.addRate)} arrive and each sync takes ${formatValue(signals.workDurationMean)} on average.`,
    fix: ({ signals, thresholds }) =>
      `Set MaxConcurrentReconciles to about ${formatValue(signals.recommendedWorkers)} (Little's law: offered load / ${Math.round(thresholds.targetUtilization * 100)}% target utilization), or make syncs cheaper.`,
    confirm: [
      { text: 'Busy workers sit near the maximum:', signals: ['busyWorkers', 'maxWorkers'] },
      { text: 'Keys wait for a worker:', signals: ['queueLatencyMean', 'depthAvg'] },
    ],
  },
});
