import { allOf } from '../../promql/expr.js';
import { compare } from '../conditions.js';
import { formatValue } from '../format.js';
import { defineObservation } from '../observation.js';
import { MINUTE_MS } from '../signals.js';

/**
 * High add rate, low depth: the classic small-depth-huge-adds reading. It is what a self-requeue loop looks
 * like, and also what a busy controller with fast syncs looks like; the work-queue metrics alone cannot tell
 * which. When API writes, failed requests or reconcile errors track the adds, the hot-loop rule proves the
 * loop and this observation gives way to its finding.
 */
export const highAddRateLowDepth = defineObservation({
  id: 'HighAddRateLowDepth',
  title: 'High add rate with a nearly empty queue',
  thresholds: {
    maxDepth: {
      default: 1,
      unit: 'items',
      description:
        'Average depth at or below which every add is picked up at once: a loop re-adds a key the moment its sync ends, so its queue stays this empty.',
    },
    minAddRate: {
      default: 50,
      unit: '1/s',
      description:
        'Add rate over the signal window at or above which the adds are worth a look: more than the steady stream of real changes of most clusters (a few to tens of events a second), while a handful of keys looping on fast syncs reach it easily.',
    },
  },
  forMs: 5 * MINUTE_MS,
  condition: (t) => allOf(compare('depthAvg', '<=', t.maxDepth), compare('addRate', '>=', t.minAddRate)),
  supersededBy: ['WorkqueueHotLoop'],
  evidence: [
    'addRate',
    'depthAvg',
    'completionRate',
    'workDurationMean',
    'busyWorkers',
    'writeRate',
    'reconcileErrorRate',
    'retryRate',
  ],
  text: {
    summary: ({ signals }) =>
      `${formatValue(signals.addRate)} added with an average depth of ${formatValue(signals.depthAvg)}: a self-requeue loop or a busy controller with fast syncs; the metrics cannot tell which.`,
    meaning:
      'Keys are added far more often than a typical controller sees events, yet the queue stays empty. That is what a controller that wakes itself looks like (it writes an object it watches, or requeues failures with a plain Add), and also what a busy controller with fast syncs over many objects looks like. Nothing in the metrics corroborates a loop: API writes, failed requests and reconcile errors do not track the adds, or are not exposed. To tell, compare the add rate with the rate at which the watched objects really change (their resourceVersion, or the API server audit log), and look in the controller logs for the same keys reconciled over and over.',
  },
});
