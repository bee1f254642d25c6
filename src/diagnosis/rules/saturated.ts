import { workersFor } from '../capacity.js';
import { compare, relate, scale, sig } from '../conditions.js';
import { allOf, binary } from '../expr.js';
import { formatValue, numberOf } from '../format.js';
import { defineRule } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Saturation: the workers are busy nearly all the time, so keys wait for a free worker; the depth holds
 * (unlike a backlog) but latency suffers and any extra load becomes a backlog. Needs the configured maximum
 * (controller-runtime's max concurrent reconciles); without it the utilization cannot be known.
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
      description: 'Busy workers per configured worker at or above which the controller is saturated.',
    },
    minDepth: { default: 1, unit: 'items', description: 'Average depth at or above which keys wait for a worker.' },
    minWaitRatio: {
      default: 0.05,
      unit: 'ratio',
      description: 'Mean queue wait per mean sync duration at or above which the wait for a worker is felt.',
    },
    targetUtilization: {
      default: 0.7,
      unit: 'ratio',
      description: 'Utilization the recommended worker count aims for.',
    },
  },
  forMs: 10 * MINUTE_MS,
  condition: (t) =>
    allOf(
      relate(sig('busyWorkers'), '>=', 'maxWorkers', t.minUtilization),
      compare('depthAvg', '>=', t.minDepth),
      binary('>=', sig('queueLatencyMean'), scale('workDurationMean', t.minWaitRatio)),
    ),
  evidence: [
    'busyWorkers',
    'maxWorkers',
    'queueLatencyMean',
    'queueLatencyP99',
    'workDurationMean',
    'depthAvg',
    'addRate',
  ],
  derivedTitles: { utilization: 'Utilization', recommendedWorkers: 'Recommended workers' },
  derive(signals, t) {
    const busy = numberOf(signals.busyWorkers);
    const max = numberOf(signals.maxWorkers);
    return {
      utilization:
        busy !== undefined && max !== undefined && max > 0
          ? { value: busy / max, unit: 'ratio' }
          : { value: null, unit: 'ratio', missing: max === undefined ? 'metric_absent' : 'insufficient_data' },
      recommendedWorkers: workersFor(busy, t.targetUtilization),
    };
  },
  text: {
    summary: ({ signals }) =>
      `Workers are ${formatValue(signals.utilization)} busy (${formatValue(signals.busyWorkers)} of ${formatValue(signals.maxWorkers)}); keys wait ${formatValue(signals.queueLatencyMean)} on average for a worker.`,
    meaning:
      'The controller runs at the edge of its capacity. The queue is not growing yet, but every key waits for a free worker and any extra load turns into a backlog.',
    cause: ({ signals }) =>
      `Too few workers for the load: ${formatValue(signals.addRate)} arrive and each sync takes ${formatValue(signals.workDurationMean)} on average.`,
    fix: ({ signals, thresholds }) =>
      `Set MaxConcurrentReconciles to about ${formatValue(signals.recommendedWorkers)} (Little's law: busy workers / ${Math.round(thresholds.targetUtilization * 100)}% target utilization), or make syncs cheaper.`,
    confirm: [
      { text: 'Busy workers sit near the maximum:', signals: ['busyWorkers', 'maxWorkers'] },
      { text: 'Keys wait for a worker:', signals: ['queueLatencyMean', 'depthAvg'] },
    ],
  },
});
