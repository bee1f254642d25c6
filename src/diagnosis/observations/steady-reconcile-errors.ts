import { allOf } from '../../promql/expr.js';
import { RETRIES_PER_ERROR, retriedWithBackoff } from '../backoff.js';
import { compare, sig, where } from '../conditions.js';
import { formatValue } from '../format.js';
import { defineObservation } from '../observation.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Steady reconcile errors below the persistent-failure floor. An object that fails on every sync keeps failing at
 * least once per maximum backoff (1000 s) and at every event for it, whatever the load, so a few such objects are
 * a small, steady share of a large controller's reconciles (the same share transient errors spread over many
 * objects reach), and in a quiet controller whose failing keys all wait at the cap, errors that come in waves
 * 1000 s apart. So the condition reads the errors over a window longer than that cap
 * (`steadyUnexplainedErrorRate`): every failing key adds to every such window, and a window shorter than the cap
 * falls between two retries. The counters cannot tell which keys failed, so this is an observation, never a
 * finding; it says how many errors keep coming and where to look. Errors that 409 conflicts explain are left out,
 * and so are errors that bypass the rate limiter (a hot loop's).
 *
 * Held for 30 minutes: errors in every 20-minute window for 30 minutes, at least two errors ten minutes or more
 * apart and no gap of 20 minutes in 50. One object at the cap makes that; a lone transient error cannot (it
 * leaves the window after 20 minutes). After a dependency recovers the errors stop, and the observation ends at
 * most 20 minutes later, when the last of them leaves the window: no sooner can the counters tell a key that
 * stopped failing from one waiting out its 1000 s backoff.
 */
export const steadyReconcileErrors = defineObservation({
  id: 'SteadyReconcileErrors',
  title: 'Steady reconcile errors',
  thresholds: {
    minErrorRate: {
      default: 0.0005,
      unit: '1/s',
      description:
        'Unexplained reconcile errors per second over the 20-minute window (longer than the 1000 s maximum backoff) at or above which errors keep coming: one error per 2,000 s. One object failing on every sync makes at least one per 1000 s at the cap, twice that, and more with events for it; two such objects at least four times. Below it the rate is fractional noise left by charging conflicts to the controller.',
    },
    minRetryPerError: RETRIES_PER_ERROR,
  },
  forMs: 30 * MINUTE_MS,
  condition: (t) =>
    allOf(
      where(sig('sustainedRetryRate'), compare('steadyUnexplainedErrorRate', '>=', t.minErrorRate), 'controller'),
      retriedWithBackoff(t.minRetryPerError),
    ),
  supersededBy: ['WorkqueuePersistentFailures', 'WorkqueueHotLoop'],
  evidence: [
    'steadyUnexplainedErrorRate',
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
      `Reconciles keep failing at ${formatValue(signals.steadyUnexplainedErrorRate)} beyond what conflicts explain, over 20 minutes (${formatValue(signals.sustainedErrorRatio)} of ${formatValue(signals.sustainedReconcileRate)} reconciles over 15 minutes; ${formatValue(signals.unexplainedErrorRate)} now), retried with backoff: a few objects failing on every sync, or transient errors spread over many; the counters cannot tell which. Look in the controller logs for keys that fail again and again with the same error.`,
    meaning:
      'Errors keep coming at a share of the reconciles below the persistent-failure floor. A few objects that can never reconcile (a missing dependency, a permission, invalid input) look like this in a large controller: each fails at every event for it and at least once per maximum backoff (about 17 minutes), and never converges. So do transient errors spread over many objects, which succeed on the retry. To tell, read the controller logs (or the reconcile error events) for keys that fail again and again with the same error; objects that never converge need what a persistent failure needs: fix the dependency or permission, or record a status condition and return a terminal error (reconcile.TerminalError) for input the controller cannot fix.',
  },
});
