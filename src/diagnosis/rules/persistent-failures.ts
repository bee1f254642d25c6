import { LABEL } from '../../metrics/names.js';
import { compare, relate, scale, sig, where } from '../conditions.js';
import { allOf, anyOf, binary } from '../expr.js';
import { formatValue, numberOf } from '../format.js';
import { defineRule, type RuleCase, type SignalSnapshot } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Persistent failures: reconciles keep failing and the keys are retried with backoff. Read from
 * controller-runtime's reconcile errors, never from the retry count alone: client-go counts every AddAfter
 * as a retry, so correct RequeueAfter polling has as many "retries" as a failing controller. Keys deep in
 * their backoff fail rarely, so the rates use the sustained (long) window. Errors that bypass the rate
 * limiter (no retries) are a hot loop, not this.
 */
const FAILURE_CASES = {
  dependency: {
    when: 'reconcile errors persist and successes far outnumber them (some objects always fail)',
    cause:
      'A dependency keeps failing for these objects: an API call rejected (validation, RBAC, conflict), an external service down, or invalid user input the controller cannot fix.',
    fix: 'Read the controller logs for the failing keys, fix the dependency or the permission; for invalid input, record a status condition and an event and stop retrying (return nil) until the object changes.',
  },
  'not-ready': {
    when: 'errors and successes keep pace (the same objects fail a few times, then succeed)',
    cause:
      'This looks like "not ready yet" (waiting for another object, a volume, an external condition) returned as an error. That pollutes the error metrics and puts healthy objects on exponential backoff, so they converge late.',
    fix: 'For "not ready yet", return ctrl.Result{RequeueAfter: interval} with a nil error (or AddAfter), and keep errors for real failures. Surface the waiting state in a status condition.',
  },
  'retries-only': {
    when: 'the controller exposes no reconcile error metrics (kube-controller-manager, plain client-go)',
    cause:
      'Keys are requeued with a delay again and again. Without reconcile error metrics this is either a dependency that keeps failing (retries with backoff) or correct RequeueAfter/AddAfter polling of objects that are not ready; the controller logs tell which.',
    fix: 'Check the controller logs for the requeued keys. Real failures: fix the dependency. Polling of objects that are not ready: nothing to fix; silence this queue for PersistentFailures in the configuration.',
  },
} as const satisfies Record<string, RuleCase>;

export const persistentFailures = defineRule({
  id: 'WorkqueuePersistentFailures',
  title: 'Work queue persistent failures',
  severity: 'warning',
  scope: 'queue',
  thresholds: {
    minErrorRate: {
      default: 0.002,
      unit: '1/s',
      description: 'Reconcile errors per second over the sustained window at or above which failures persist.',
    },
    minRetryRate: {
      default: 0.02,
      unit: '1/s',
      description:
        'Without reconcile metrics: retries per second over the sustained window at or above which keys keep being retried.',
    },
    minRetryShare: {
      default: 0.02,
      unit: 'ratio',
      description:
        'Without reconcile metrics: retries per add at or above which retries are a steady part of the work.',
    },
    minRetryPerError: {
      default: 0.5,
      unit: 'ratio',
      description: 'Retries per error at or above which the errors go through the rate limiter (backoff works).',
    },
  },
  forMs: 10 * MINUTE_MS,
  condition: (t) =>
    anyOf(
      // With controller-runtime's reconcile errors: errors persist and go through the rate limiter.
      allOf(
        where(sig('sustainedRetryRate'), compare('sustainedErrorRate', '>=', t.minErrorRate), 'controller'),
        relate(sig('sustainedRetryRate'), '>=', 'sustainedErrorRate', t.minRetryPerError),
      ),
      // Without them (kube-controller-manager, plain client-go): sustained retries are all there is, and
      // correct RequeueAfter polling cannot be told from them; the text says so.
      binary(
        'unless',
        allOf(
          compare('sustainedRetryRate', '>=', t.minRetryRate),
          binary('>=', sig('retryRate'), scale('addRate', t.minRetryShare)),
        ),
        sig('sustainedErrorRate'),
        { ignoring: [LABEL.name] },
      ),
    ),
  evidence: [
    'sustainedErrorRate',
    'reconcileErrorRate',
    'reconcileRate',
    'reconcileSuccessRate',
    'reconcileRequeueAfterRate',
    'sustainedRetryRate',
    'retryRate',
    'addRate',
  ],
  derivedTitles: { errorRatio: 'Errors per reconcile' },
  derive(signals) {
    const errors = numberOf(signals.sustainedErrorRate);
    const reconciles = numberOf(signals.reconcileRate);
    return {
      errorRatio:
        errors !== undefined && reconciles !== undefined && reconciles > 0
          ? { value: Math.min(1, errors / reconciles), unit: 'ratio' }
          : { value: null, unit: 'ratio', missing: 'insufficient_data' },
    };
  },
  text: {
    summary: ({ signals }) =>
      numberOf(signals.sustainedErrorRate) === undefined
        ? `Keys keep being retried: ${formatValue(signals.sustainedRetryRate)} retries (${formatValue(signals.addRate)} adds); no reconcile error metric to tell failures from RequeueAfter polling.`
        : `Reconciles keep failing: ${formatValue(signals.sustainedErrorRate)} errors (${formatValue(signals.errorRatio)} of reconciles), retried with backoff at ${formatValue(signals.sustainedRetryRate)}.`,
    meaning:
      'Some objects fail to reconcile again and again. Backoff keeps the controller from spinning, but those objects are not converging, and each retry waits longer than the last (up to about 16 minutes).',
    cause: ({ signals }) => FAILURE_CASES[failureCase(signals)].cause,
    fix: ({ signals }) => FAILURE_CASES[failureCase(signals)].fix,
    cases: [FAILURE_CASES.dependency, FAILURE_CASES['not-ready'], FAILURE_CASES['retries-only']],
    confirm: [
      { text: 'Errors persist over the long window:', signals: ['sustainedErrorRate', 'reconcileErrorRate'] },
      {
        text: 'Result mix: errors next to successes and requeue-after:',
        signals: ['reconcileSuccessRate', 'reconcileRequeueAfterRate'],
      },
      { text: 'Errors go through the rate limiter (retries follow them):', signals: ['sustainedRetryRate'] },
    ],
  },
});

function failureCase(signals: SignalSnapshot): keyof typeof FAILURE_CASES {
  if (numberOf(signals.sustainedErrorRate) === undefined) return 'retries-only';
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
