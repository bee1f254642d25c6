import { allOf, binary } from '../../promql/expr.js';
import { compare, scale, sig, unlessAny } from '../conditions.js';
import { formatValue } from '../format.js';
import { defineObservation } from '../observation.js';
import { SHARE } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Retries without reconcile error metrics: keys keep being requeued with a delay, and the controller
 * exposes no reconcile error metric (kube-controller-manager, plain client-go). client-go counts every
 * AddAfter as a retry, so failures retried with backoff and correct RequeueAfter polling look the same.
 */
export const retriesWithoutErrorMetrics = defineObservation({
  id: 'RetriesWithoutErrorMetrics',
  title: 'Retries without reconcile error metrics',
  thresholds: {
    minRetryRate: {
      default: 0.02,
      unit: '1/s',
      description:
        'Retries per second over the sustained window at or above which keys keep being requeued: about one a minute, more than a stray failure.',
    },
    minRetryShare: {
      default: 0.02,
      unit: 'ratio',
      range: SHARE,
      description:
        'Retries per add at or above which delayed requeues are a steady part of the work, not noise next to the events.',
    },
  },
  forMs: 10 * MINUTE_MS,
  condition: (t) =>
    // No reconcile error series for the queue's controller (or no controller at all): only retries are known.
    unlessAny(
      allOf(
        compare('sustainedRetryRate', '>=', t.minRetryRate),
        binary('>=', sig('retryRate'), scale('addRate', t.minRetryShare)),
      ),
      sig('sustainedErrorRate'),
      'controller',
    ),
  evidence: ['sustainedRetryRate', 'retryRate', 'addRate', 'reconcileRequeueAfterRate'],
  text: {
    summary: ({ signals }) =>
      `Keys are requeued with a delay at ${formatValue(signals.retryRate)} (${formatValue(signals.addRate)} adds); without reconcile error metrics this is either failures retried with backoff or RequeueAfter polling.`,
    meaning:
      'Keys keep going back into the queue after a delay. client-go counts every AddAfter as a retry, so this is either reconciles that fail and are retried with backoff, or correct RequeueAfter/AddAfter polling of objects that are not ready yet. The controller exposes no reconcile error metric that would tell the two apart. To tell, read the controller logs for the requeued keys (errors or a "not ready, requeue" message), or expose controller-runtime reconcile metrics; polling needs no fix.',
  },
});
