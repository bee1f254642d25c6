import { allOf, binary } from '../../promql/expr.js';
import { DRAIN_SHARE, waitingPerBusyWorker } from '../capacity.js';
import { compare, sig } from '../conditions.js';
import { formatNumber, formatValue, numberOf, round } from '../format.js';
import { defineObservation } from '../observation.js';
import type { SignalSnapshot, ThresholdValues } from '../rule.js';
import { MINUTE_MS } from '../signals.js';
import { lowPriorityStarvation } from '../starvation.js';

/**
 * High add rate, low depth: the classic small-depth-huge-adds reading. It is what a self-requeue loop looks
 * like, and also what a busy controller with fast syncs looks like; the work-queue metrics alone cannot tell
 * which. "Low" follows the workers, not a constant: a loop of L keys on W workers keeps L − W keys waiting (a
 * worker that finishes takes the next at once), so the depth of the keys served first must fall, at least once
 * in the window, to about one key per busy worker; on a priority queue those are the keys at priority 0 and
 * above, since the initial list and resyncs wait at low priority behind whatever holds the workers. When API writes, failed writes or reconcile errors track the adds, the hot-loop rule proves the
 * loop and this observation gives way to its finding. Its summary prints every rate the hot-loop rule compares,
 * and the failed requests of any method, and claims nothing of them but what it compares.
 */
export const highAddRateLowDepth = defineObservation({
  id: 'HighAddRateLowDepth',
  title: 'High add rate with a nearly empty queue',
  thresholds: {
    maxWaitingPerWorker: {
      default: 1.5,
      unit: 'items',
      description:
        "Keys waiting, per busy worker (at least one), that the queue's served-first depth falls to at least once over the window, at or below which adds are picked up about as they come: each worker frees within one sync. A loop of L keys on W workers keeps L − W waiting (none when L ≤ W), so loops of up to two and a half times the workers stay under it, twice the workers with room to spare; a longer loop holds every worker and is a saturation, and a backlog of real changes never falls this low.",
    },
    drainShare: DRAIN_SHARE,
    minAddRate: {
      default: 50,
      unit: '1/s',
      description:
        'Add rate over the signal window at or above which the adds are worth a look: more than the steady stream of real changes of most clusters (a few to tens of events a second), while a handful of keys looping on fast syncs reach it easily.',
    },
  },
  forMs: 5 * MINUTE_MS,
  condition: (t) =>
    allOf(
      binary('<=', sig('servedFirstDepthMin'), waitingPerBusyWorker(t.maxWaitingPerWorker)),
      compare('addRate', '>=', t.minAddRate),
    ),
  supersededBy: ['WorkqueueHotLoop'],
  evidence: [
    'addRate',
    'servedFirstDepthMin',
    'depthAvg',
    'lowPriorityDepth',
    'lowPriorityDepthSlope',
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
    summary: ({ signals, thresholds }) =>
      `${formatValue(signals.addRate)} added, and the keys served first fall to ${formatValue(signals.servedFirstDepthMin)} waiting with ${formatNumber(signals.busyWorkers)} workers busy, beside ${formatValue(signals.writeRate)} API writes, ${formatValue(signals.failedRequestRate)} failed API requests (${formatValue(signals.failedWriteRate)} of them writes) and ${formatValue(signals.reconcileErrorRate)} reconcile errors: ${failedCalls(signals)}a self-requeue loop or a busy controller with fast syncs; the metrics cannot tell which.${starvation(signals, thresholds)}`,
    meaning:
      'Keys are added far more often than a typical controller sees events, yet the keys served first are picked up about as fast as they come (no more waiting, at least once in the window, than about one and a half per busy worker). That is what a controller that wakes itself looks like (it writes an object it watches, or requeues failures with a plain Add), and also what a busy controller with fast syncs over many objects looks like. The hot-loop diagnosis, which proves a loop, has not held for its whole `for`: it needs API writes or failed API writes at about one per add, or reconcile errors on half the adds or more with next to no retries. Failed reads are not proof of a loop (a controller that reads an optional object on every sync is answered 404 each time), though a loop on a failing read shows them at one or more per add. To tell, compare the add rate with the rate at which the watched objects really change (their resourceVersion, or the API server audit log), and look in the controller logs for the same keys reconciled over and over. A loop of L keys on W workers keeps L − W waiting; on a priority queue it runs at its own priority and starves the initial list and resyncs, which wait at low priority until no loop key is ready.',
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

/** The starvation sentence after the summary, with its leading space; empty where the list is worked off. */
function starvation(signals: SignalSnapshot, t: ThresholdValues<'drainShare'>): string {
  const sentence = lowPriorityStarvation(signals, t.drainShare);
  return sentence === '' ? '' : ` ${sentence}`;
}
