import { workersFor } from '../capacity.js';
import { compare, scale, sig } from '../conditions.js';
import { allOf, anyOf, binary } from '../expr.js';
import { formatValue, numberOf } from '../format.js';
import { defineRule } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Backlog: keys arrive faster than the workers finish them, so the queue never drains. Either the depth
 * keeps growing, or (once deduplication caps it) it stands high with keys waiting far longer than a sync
 * takes. A burst that drains (resync, rollout, a short spike) reaches zero within the window; a backlog
 * does not, for the whole `forMs`.
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
      description: 'Average depth over the window at or above which a backlog counts.',
    },
    minGrowth: {
      default: 0.02,
      unit: '1/s',
      description:
        'Depth growth (least-squares slope over the trend window) at or above which the queue is falling behind.',
    },
    arrivalRatio: {
      default: 1.02,
      unit: 'ratio',
      description: 'Adds per completed sync at or above which arrivals outpace the workers.',
    },
    minWaitRatio: {
      default: 10,
      unit: 'ratio',
      description:
        'Mean queue wait per mean sync at or above which keys wait on the backlog (when deduplication hides the excess arrivals).',
    },
    targetUtilization: {
      default: 0.7,
      unit: 'ratio',
      description: 'Worker utilization the recommended worker count aims for.',
    },
  },
  forMs: 10 * MINUTE_MS,
  condition: (t) =>
    allOf(
      compare('depthMin', '>=', t.minDepth),
      anyOf(
        // Growing: arrivals outpace completions.
        allOf(
          compare('depthSlope', '>=', t.minGrowth),
          binary('>=', sig('addRate'), scale('completionRate', t.arrivalRatio)),
        ),
        // Standing: once many keys wait, deduplication absorbs new events, adds fall to the completion
        // rate and the depth levels off; keys then wait far longer than a sync takes.
        binary('>=', sig('queueLatencyMean'), scale('workDurationMean', t.minWaitRatio)),
      ),
    ),
  evidence: [
    'depth',
    'depthMin',
    'depthSlope',
    'addRate',
    'completionRate',
    'busyWorkers',
    'maxWorkers',
    'workDurationMean',
    'queueLatencyMean',
  ],
  derivedTitles: { timeToDrain: 'Time to drain', workersNeeded: 'Workers needed' },
  derive(signals, t) {
    const depth = numberOf(signals.depth);
    const adds = numberOf(signals.addRate);
    const completions = numberOf(signals.completionRate);
    const meanSync = numberOf(signals.workDurationMean);
    const net = adds !== undefined && completions !== undefined ? completions - adds : undefined;
    const timeToDrain =
      depth === undefined || net === undefined
        ? { value: null, unit: 's' as const, missing: 'insufficient_data' as const }
        : net > 0
          ? { value: depth / net, unit: 's' as const }
          : // Not draining: arrivals are at or above completions; there is no finite time.
            { value: null, unit: 's' as const, missing: 'insufficient_data' as const };
    const offeredLoad = adds === undefined || meanSync === undefined ? undefined : adds * meanSync;
    return { timeToDrain, workersNeeded: workersFor(offeredLoad, t.targetUtilization) };
  },
  text: {
    summary: ({ signals }) =>
      `Depth ${formatValue(signals.depth)} and growing ${formatValue(signals.depthSlope)}: ${formatValue(signals.addRate)} added, ${formatValue(signals.completionRate)} finished; ${
        signals.timeToDrain?.value == null ? 'not draining' : `drains in ${formatValue(signals.timeToDrain)}`
      }.`,
    meaning:
      'Keys arrive faster than the workers finish them, so the queue grows without bound and every change waits longer to be reconciled.',
    cause: ({ signals }) =>
      `Syncs are too slow or too few for the event rate (mean sync ${formatValue(signals.workDurationMean)}, ${formatValue(signals.busyWorkers)} busy of ${formatValue(signals.maxWorkers)}). A burst that drains is not a backlog: this one has grown for the whole evaluation period.`,
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
