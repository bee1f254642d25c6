/**
 * Errors retried with backoff, one spec and one clause listed by each diagnosis that reads failing reconciles
 * (the persistent-failure rule, the steady-errors observation): a failing key goes back through the rate limiter,
 * so retries follow the errors; errors without them bypass it, which is a hot loop's mark, not theirs.
 */
import type { Expr } from '../promql/expr.js';
import { relate, sig } from './conditions.js';
import type { ThresholdSpec } from './rule.js';

export const RETRIES_PER_ERROR: ThresholdSpec = {
  default: 0.6,
  unit: 'ratio',
  description:
    "Retries per unexplained error (long window) at or above which the errors go through the rate limiter, as a failing object is retried with backoff; below it the errors are a loop that bypasses it (a rate limiter that answers without delay: the priority queue counts a retry only when it waits). The counts set the two sides: every requeue through the rate limiter counts one retry on both queues, so errors retried with backoff read 1 or more (exactly 1 where nothing polls beside them); a loop's errors count none, so it reads only the `RequeueAfter` polls beside it, and a loop is told as such where those are under 0.4 of its errors. The line sits between the two with room on both sides, 0.6: doubled (1.2) it would miss failures backed off with nothing beside them, which read 1; halved (0.3) it would read a slow loop beside an everyday controller's polls as backoff (two objects failing every 0.6 to 1.2 s behind a zero-delay limiter, beside polls at about 0.35 of their errors, which the boundary grid holds). At 0.5 its double sat on the backoff's floor of 1 and no count could tell it from the right line. HotLoop reads its loops below the same line (`maxRetryPerError`).",
};

/**
 * `sustainedRetryRate >= sustainedUnexplainedErrorRate × share`: the errors are retried with backoff. Read against
 * the unexplained errors, since terminal errors are never retried by design: a controller that rejects invalid
 * objects with them beside objects failing for a dependency retries every failure of the second kind.
 */
export function retriedWithBackoff(share: Expr | number): Expr {
  return relate(sig('sustainedRetryRate'), '>=', 'sustainedUnexplainedErrorRate', share);
}
