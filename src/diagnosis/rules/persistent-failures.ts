import { allOf, anyOf } from '../../promql/expr.js';
import { RETRIES_PER_ERROR, retriedWithBackoff } from '../backoff.js';
import { compare, sig, where } from '../conditions.js';
import { formatValue, numberOf, round } from '../format.js';
import { defineRule, type RuleCase, SHARE, type SignalSnapshot } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Persistent failures: reconciles keep failing, well above the noise every busy controller makes, and the
 * keys are retried with backoff. Read from controller-runtime's reconcile errors, never from the retry
 * count alone: client-go counts every AddAfter as a retry, so correct RequeueAfter polling has as many
 * "retries" as a failing controller (without reconcile metrics the queue gets the
 * `RetriesWithoutErrorMetrics` observation instead).
 *
 * What a work queue is for: a conflicting write (409), a dependency not created yet, a throttled API. Such
 * errors succeed on the retry and stay a small share of the syncs. A failure that persists differs in two
 * ways the metrics carry: it is not explained by 409 answers, and it keeps coming at a share of the
 * reconciles above that noise. So the condition reads the error ratio after conflicts over the long window
 * (the noise floor), and over the short window (still failing now), at every step of a `for` as long as the
 * long window: 30 consecutive windows. A dependency that fails for a few minutes and recovers clears the
 * short window within five minutes and never completes the `for`. Errors that bypass the rate limiter (no
 * retries) are a hot loop, not this.
 *
 * No floor on the number of errors is needed for the ratios to mean something: the short-window ratio held at every
 * step of the 15-minute `for` puts an error in every five minutes of it, three or more in the long window.
 */
const FAILURE_CASES = {
  dependency: {
    when: 'reconcile errors persist and successes far outnumber them (some objects always fail)',
    cause:
      'A dependency keeps failing for these objects: an API call rejected (validation, RBAC), an external service down, or invalid user input the controller cannot fix.',
    fix: 'Read the controller logs for the failing keys, fix the dependency or the permission; for invalid input, record a status condition and an event and return a terminal error (reconcile.TerminalError) so the key stops retrying until the object changes.',
  },
  'not-ready': {
    when: 'errors and successes keep pace (the same objects fail a few times, then succeed)',
    cause:
      'This looks like "not ready yet" (waiting for another object, a volume, an external condition) returned as an error. That pollutes the error metrics and puts healthy objects on exponential backoff, so they converge late.',
    fix: 'For "not ready yet", return ctrl.Result{RequeueAfter: interval} with a nil error (or AddAfter), and keep errors for real failures. Surface the waiting state in a status condition.',
  },
} as const satisfies Record<string, RuleCase>;

export const persistentFailures = defineRule({
  id: 'WorkqueuePersistentFailures',
  title: 'Work queue persistent failures',
  severity: 'warning',
  scope: 'queue',
  thresholds: {
    minErrorRatio: {
      default: 0.05,
      unit: 'ratio',
      range: SHARE,
      description:
        "Share of reconciles over the long window failing for reasons 409 conflicts do not explain, at or above which failures stand out of the noise. Once conflicts are charged, what busy healthy controllers still fail transiently (a throttled API, a dependency created a moment later) stays at a few percent of syncs: at 3% and four syncs a second, 15 minutes reach 5% only 7 standard deviations out, and must stay there for the whole `for`. An object that always fails is synced about as often as the others under controller-runtime's priority queue (each event ends its backoff wait at once) and somewhat more under the classic queue (the delayed add left from its backoff fires as well), so its share of syncs is about its share of objects, less what keys deep in backoff miss. The detection curve (1,000 objects, 45 minutes, the priority queue with the REST client's counts): silent up to 2% of objects failing forever, found at some step on 1 of 4 seeds at 4% and on every seed from 6%, in 16 minutes; fewer are named by the SteadyReconcileErrors observation. Without the REST client's counts (conflicts not charged) and on the classic queue (failing keys synced more often) it fires a little earlier, 3 of 4 seeds at 4%.",
    },
    minRecentErrorRatio: {
      default: 0.025,
      unit: 'ratio',
      range: SHARE,
      description:
        "The same share over the short window, below which the failures have stopped (a dependency that recovered): the finding ends within minutes of the recovery instead of lingering for the long window. Far below the long-window threshold because keys that entered backoff together (after a restart) fail in waves, and five minutes between two waves can hold few of their errors. The short window's errors are also read against the long window's reconciles, where a burst of successes fills the short window: a resync that queues every object serves the failing ones first (they already wait in the queue, in backoff), so its errors spike at its start while its successes follow for minutes (500 failing objects of 5,000 on two workers: the short window's own ratio dips under the line for a step at each resync, the boundary grid's seed 8750).",
    },
    minRetryPerError: RETRIES_PER_ERROR,
  },
  forMs: 15 * MINUTE_MS,
  // Once firing, kept for two minutes after the condition last held: a resync's errors come in a spike at its start
  // (see `recentErrorShareOfSustained`), so a ratio dips under its line for a step or two when the spike leaves its
  // window while the successes queued with it remain. Failures that stopped end it two minutes later.
  keepFiringForMs: 2 * MINUTE_MS,
  condition: (t) =>
    allOf(
      where(
        sig('sustainedRetryRate'),
        allOf(
          // Still failing now: over the last five minutes' reconciles, or over the long window's where a resync's burst
          // of successes fills the last five minutes (`recentErrorShareOfSustained`).
          anyOf(
            compare('errorRatio', '>=', t.minRecentErrorRatio),
            compare('recentErrorShareOfSustained', '>=', t.minRecentErrorRatio),
          ),
          compare('sustainedErrorRatio', '>=', t.minErrorRatio),
        ),
        'controller',
      ),
      retriedWithBackoff(t.minRetryPerError),
    ),
  evidence: [
    'reconcileErrorRate',
    'errorRatio',
    'sustainedErrorRatio',
    'sustainedErrorRate',
    'conflictRate',
    'terminalErrorRate',
    'reconcileRate',
    'reconcileSuccessRate',
    'reconcileRequeueAfterRate',
    'sustainedRetryRate',
    'retryRate',
    'addRate',
  ],
  text: {
    summary: ({ signals }) =>
      `Reconciles keep failing: ${formatValue(signals.reconcileErrorRate)} errors now, ${formatValue(signals.errorRatio)} of reconciles beyond what conflicts explain (${formatValue(signals.sustainedErrorRatio)} over 15 minutes)${retries(signals)}.`,
    meaning:
      'Some objects fail to reconcile again and again, far more often than the everyday conflicts and not-yet-created dependencies of a busy controller. Backoff keeps the controller from spinning, but those objects are not converging, and each retry waits longer than the last (up to about 16 minutes).',
    cause: ({ signals }) => FAILURE_CASES[failureCase(signals)].cause,
    fix: ({ signals }) => FAILURE_CASES[failureCase(signals)].fix,
    cases: [FAILURE_CASES.dependency, FAILURE_CASES['not-ready']],
    confirm: [
      {
        text: 'Errors are a lasting share of the reconciles, beyond the 409 conflicts:',
        signals: ['errorRatio', 'sustainedErrorRatio', 'conflictRate'],
      },
      {
        text: 'Result mix: errors next to successes and requeue-after:',
        signals: ['reconcileErrorRate', 'reconcileSuccessRate', 'reconcileRequeueAfterRate'],
      },
      { text: 'Errors go through the rate limiter (retries follow them):', signals: ['sustainedRetryRate'] },
    ],
  },
});

function failureCase(signals: SignalSnapshot): keyof typeof FAILURE_CASES {
  return looksNotReady(signals) ? 'not-ready' : 'dependency';
}

/**
 * "Not ready yet" returned as an error: the same objects fail a few times, then succeed, so successes
 * keep pace with the errors. A dependency that stays broken leaves errors alone at the top of the mix.
 */
function looksNotReady(signals: SignalSnapshot): boolean {
  const errors = numberOf(signals.reconcileErrorRate);
  const successes = numberOf(signals.reconcileSuccessRate);
  return (
    errors !== undefined &&
    successes !== undefined &&
    errors > 0 &&
    successes >= errors * 0.5 &&
    successes <= errors * 4
  );
}

/** How the failures are retried: with backoff at the sustained retry rate, or not through the rate limiter at all. */
function retries(signals: SignalSnapshot): string {
  const rate = numberOf(signals.sustainedRetryRate);
  if (rate === undefined) return `; retries ${formatValue(signals.sustainedRetryRate)}`;
  return round(rate) === '0'
    ? ', with no retries counted'
    : `, retried with backoff at ${formatValue(signals.sustainedRetryRate)}`;
}
