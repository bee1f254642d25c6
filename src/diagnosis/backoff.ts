/**
 * Errors retried with backoff, one spec and one clause listed by each diagnosis that reads failing reconciles
 * (the persistent-failure rule, the steady-errors observation): a failing key goes back through the rate limiter,
 * so retries follow the errors; errors without them bypass it, which is a hot loop's mark, not theirs.
 */
import type { Expr } from '../promql/expr.js';
import { relate, sig } from './conditions.js';
import type { ThresholdSpec } from './rule.js';

export const RETRIES_PER_ERROR: ThresholdSpec = {
  default: 0.5,
  unit: 'ratio',
  description:
    'Retries per unexplained error (long window) at or above which the errors go through the rate limiter, as a failing object is retried with backoff; below it the errors are a loop that bypasses it (a rate limiter that answers without delay: the priority queue counts a retry only when it waits).',
};

/**
 * `sustainedRetryRate >= sustainedUnexplainedErrorRate × share`: the errors are retried with backoff. Read against
 * the unexplained errors, since terminal errors are never retried by design: a controller that rejects invalid
 * objects with them beside objects failing for a dependency retries every failure of the second kind.
 */
export function retriedWithBackoff(share: Expr | number): Expr {
  return relate(sig('sustainedRetryRate'), '>=', 'sustainedUnexplainedErrorRate', share);
}
