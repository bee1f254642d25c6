import { allOf } from '../../promql/expr.js';
import { RETRIES_PER_ERROR, retriedWithBackoff } from '../backoff.js';
import { compare, sig, where } from '../conditions.js';
import { formatValue } from '../format.js';
import { defineObservation } from '../observation.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Steady reconcile errors below the persistent-failure floor. An object that fails on every sync keeps failing at
 * least once per maximum backoff (about 16 minutes) and at every event for it, whatever the load, so a few such
 * objects in a large controller are a small, steady share of its reconciles: the same share transient errors
 * spread over many objects reach. The counters cannot tell which keys failed, so this is an observation, never a
 * finding; it says how many errors keep coming and where to look. Errors that 409 conflicts explain are left out,
 * and so are errors that bypass the rate limiter (a hot loop's).
 */
export const steadyReconcileErrors = defineObservation({
  id: 'SteadyReconcileErrors',
  title: 'Steady reconcile errors',
  thresholds: {
    minErrorRate: {
      default: 0.002,
      unit: '1/s',
      description:
        'Unexplained reconcile errors per second over the long window at or above which errors keep coming: two or more in 15 minutes. One object failing forever reaches it on its backoff alone (once per 1000 s at the cap) only with events for it besides; two such objects reach it on backoff alone.',
    },
    minRecentErrorRate: {
      default: 0.002,
      unit: '1/s',
      description:
        'Unexplained reconcile errors per second over the short window at or above which they are still coming now, not a burst that ended.',
    },
    minRetryPerError: RETRIES_PER_ERROR,
  },
  forMs: 15 * MINUTE_MS,
  condition: (t) =>
    allOf(
      where(
        sig('sustainedRetryRate'),
        allOf(
          compare('sustainedUnexplainedErrorRate', '>=', t.minErrorRate),
          compare('unexplainedErrorRate', '>=', t.minRecentErrorRate),
        ),
        'controller',
      ),
      retriedWithBackoff(t.minRetryPerError),
    ),
  supersededBy: ['WorkqueuePersistentFailures', 'WorkqueueHotLoop'],
  evidence: [
    'unexplainedErrorRate',
    'sustainedUnexplainedErrorRate',
    'sustainedErrorRatio',
    'sustainedErrorRate',
    'conflictRate',
    'sustainedReconcileRate',
    'sustainedRetryRate',
  ],
  text: {
    summary: ({ signals }) =>
      `Reconciles keep failing at ${formatValue(signals.sustainedUnexplainedErrorRate)} beyond what conflicts explain (${formatValue(signals.sustainedErrorRatio)} of ${formatValue(signals.sustainedReconcileRate)} reconciles over 15 minutes; ${formatValue(signals.unexplainedErrorRate)} now), retried with backoff: a few objects failing on every sync, or transient errors spread over many; the counters cannot tell which. Look in the controller logs for keys that fail again and again with the same error.`,
    meaning:
      'Errors keep coming at a share of the reconciles below the persistent-failure floor. A few objects that can never reconcile (a missing dependency, a permission, invalid input) look like this in a large controller: each fails at every event for it and at least once per maximum backoff (about 16 minutes), and never converges. So do transient errors spread over many objects, which succeed on the retry. To tell, read the controller logs (or the reconcile error events) for keys that fail again and again with the same error; objects that never converge need what a persistent failure needs: fix the dependency or permission, or record a status condition and return a terminal error (reconcile.TerminalError) for input the controller cannot fix.',
  },
});
