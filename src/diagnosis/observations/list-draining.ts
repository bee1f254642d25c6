import { allOf, binary } from '../../promql/expr.js';
import { DRAIN_SHARE } from '../capacity.js';
import { compare, negated, scale, sig } from '../conditions.js';
import { formatNumberWithUnit, formatValue, numberOf } from '../format.js';
import { defineObservation } from '../observation.js';
import type { SignalSnapshot } from '../rule.js';
import { MINUTE_MS } from '../signals.js';
import type { SignalValue } from '../units.js';

/**
 * A list draining: many keys wait, but the depth is falling by the drain bound (`DRAIN_SHARE` of the
 * completions), as after a start-up list, a resync or a rollout. Not a backlog (that one never drains), but the keys at the end of
 * the list wait until it has.
 */
export const listDraining = defineObservation({
  id: 'ListDraining',
  title: 'Large list draining',
  thresholds: {
    minDepth: {
      default: 20,
      unit: 'items',
      description:
        'Depth at or above which the waiting keys form a list worth reporting; the same size at which a standing queue counts as a backlog.',
    },
    drainShare: DRAIN_SHARE,
  },
  forMs: MINUTE_MS,
  condition: (t) =>
    allOf(
      compare('depth', '>=', t.minDepth),
      binary('<=', sig('depthSlope'), scale('completionRate', negated(t.drainShare))),
    ),
  evidence: ['depth', 'depthSlope', 'addRate', 'completionRate'],
  derivedTitles: { timeToDrain: 'Time to drain' },
  derive: (signals) => ({ timeToDrain: timeToDrain(signals) }),
  text: {
    summary: ({ signals }) => {
      const slope = numberOf(signals.depthSlope);
      const draining = slope !== undefined && slope < 0;
      return draining
        ? `A list of ${formatValue(signals.depth)} is draining at ${formatNumberWithUnit(-slope, '1/s')}: empty in about ${formatValue(signals.timeToDrain)}.`
        : `A list of ${formatValue(signals.depth)} is waiting; its depth is no longer falling (${formatValue(signals.depthSlope)}).`;
    },
    meaning:
      'Many keys are waiting, but the workers finish them faster than new ones arrive and the depth is falling: a start-up list, a resync or a rollout being worked off. It is not a backlog and needs no action if it empties; keys at the end of the list wait until then. The metrics cannot tell whether it will empty before the next burst: if it keeps reappearing, or the time to drain is longer than changes may wait, compare the resync period and the worker count with the list size.',
  },
});

/** Depth over the rate at which it falls; no finite time while it does not fall. */
function timeToDrain(signals: SignalSnapshot): SignalValue {
  const depth = numberOf(signals.depth);
  const slope = numberOf(signals.depthSlope);
  return depth !== undefined && slope !== undefined && slope < 0
    ? { value: depth / -slope, unit: 's' }
    : { value: null, unit: 's', missing: 'insufficient_data' };
}
