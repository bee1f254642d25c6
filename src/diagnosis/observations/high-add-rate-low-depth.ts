import { allOf } from '../../promql/expr.js';
import { compare } from '../conditions.js';
import { formatValue, numberOf, round } from '../format.js';
import { defineObservation } from '../observation.js';
import type { SignalSnapshot } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * High add rate, low depth: the classic small-depth-huge-adds reading. It is what a self-requeue loop looks
 * like, and also what a busy controller with fast syncs looks like; the work-queue metrics alone cannot tell
 * which. When API writes, failed writes or reconcile errors track the adds, the hot-loop rule proves the
 * loop and this observation gives way to its finding. Its summary prints every rate the hot-loop rule compares,
 * and the failed requests of any method, and claims nothing of them but what it compares.
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
    'failedWriteRate',
    'failedRequestRate',
    'reconcileErrorRate',
    'retryRate',
  ],
  text: {
    summary: ({ signals }) =>
      `${formatValue(signals.addRate)} added with an average depth of ${formatValue(signals.depthAvg)}, beside ${formatValue(signals.writeRate)} API writes, ${formatValue(signals.failedRequestRate)} failed API requests (${formatValue(signals.failedWriteRate)} of them writes) and ${formatValue(signals.reconcileErrorRate)} reconcile errors: ${failedCalls(signals)}a self-requeue loop or a busy controller with fast syncs; the metrics cannot tell which.`,
    meaning:
      'Keys are added far more often than a typical controller sees events, yet the queue stays empty. That is what a controller that wakes itself looks like (it writes an object it watches, or requeues failures with a plain Add), and also what a busy controller with fast syncs over many objects looks like. The hot-loop diagnosis, which proves a loop, has not held for its whole `for`: it needs API writes or failed API writes at about one per add, or reconcile errors on half the adds or more with next to no retries. Failed reads are not proof of a loop (a controller that reads an optional object on every sync is answered 404 each time), though a loop on a failing read shows them at one or more per add. To tell, compare the add rate with the rate at which the watched objects really change (their resourceVersion, or the API server audit log), and look in the controller logs for the same keys reconciled over and over.',
  },
});

/**
 * A clause for failed requests at one or more per add, the mark of a sync whose call fails every time (reads
 * included, which the hot-loop rule does not take as proof); empty otherwise.
 */
function failedCalls(signals: SignalSnapshot): string {
  const adds = numberOf(signals.addRate);
  const failed = numberOf(signals.failedRequestRate);
  if (adds === undefined || failed === undefined || adds <= 0 || failed < adds) return '';
  return `failed requests outnumber the adds (${round(failed / adds)} per add), as when a call fails on every sync; `;
}
