import { allOf, anyOf, binary } from '../../promql/expr.js';
import { burstDraining, DRAIN_SHARE, fallEndsAboveEmpty, fallsAtDrain, RISE_SIGNIFICANCE } from '../capacity.js';
import { compare } from '../conditions.js';
import { describeSlope, directionOf } from '../direction.js';
import { formatNumberWithUnit, formatValue, numberOf } from '../format.js';
import { defineObservation } from '../observation.js';
import type { SignalSnapshot } from '../rule.js';
import { MINUTE_MS } from '../signals.js';
import type { SignalValue } from '../units.js';

/**
 * A list draining: many keys wait, but the depth is falling by the drain bound (`DRAIN_SHARE` of the
 * completions), as after a start-up list, a resync or a rollout. Not a backlog (that one never drains), but the keys at the end of
 * the list wait until it has. A fall whose adds will meet the completions above zero (`fallEndsAboveEmpty`: an overload
 * falling back to its balance after a relist) is not a list: it never empties.
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
    riseSignificance: RISE_SIGNIFICANCE,
  },
  forMs: MINUTE_MS,
  condition: (t) =>
    allOf(
      compare('depth', '>=', t.minDepth),
      anyOf(
        // Falling at the drain share over the trend window, unless toward a balance above zero (an overload knocked
        // off it falls back as a list falls, and never empties).
        binary('unless', fallsAtDrain('depthSlope', t.drainShare), fallEndsAboveEmpty(t.riseSignificance)),
        // A burst that landed on a queue keeping up, draining before the trend window's slope has left its rise.
        burstDraining(t.drainShare, t.minDepth),
      ),
    ),
  evidence: [
    'depth',
    'depthSlope',
    'recentDepthSlope',
    'trendDepthMin',
    'addRate',
    'trendAddRate',
    'balanceAddRate',
    'completionRate',
    'normalPriorityDepthSlope',
  ],
  derivedTitles: { timeToDrain: 'Time to drain' },
  derive: (signals) => ({ timeToDrain: timeToDrain(signals) }),
  text: {
    summary: ({ signals }) => {
      const slope = drainSlope(signals);
      if (directionOf(slope) !== 'falling')
        return `A list of ${formatValue(signals.depth)} is waiting; its depth is no longer falling (${describeSlope(slope)}).`;
      const falling = `A list of ${formatValue(signals.depth)} is draining at ${formatNumberWithUnit(-(numberOf(slope) ?? 0), '1/s')}`;
      // Real changes are served first: while their depth grows, the list falls only as they lift its keys.
      if (directionOf(signals.normalPriorityDepthSlope) === 'growing')
        return `${falling}, but the depth at priority 0 and above is ${describeSlope(signals.normalPriorityDepthSlope)}: the queue will not empty while real changes back up.`;
      return `${falling}: empty in about ${formatValue(signals.timeToDrain)}.`;
    },
    meaning:
      'Many keys are waiting, but the workers finish them faster than new ones arrive and the depth is falling: a start-up list, a resync or a rollout being worked off. It is not a backlog and needs no action if it empties; keys at the end of the list wait until then. The metrics cannot tell whether it will empty before the next burst: if it keeps reappearing, or the time to drain is longer than changes may wait, compare the resync period and the worker count with the list size.',
  },
});

/**
 * Depth over the rate at which it falls; no finite time while it does not fall, nor while the depth at priority 0
 * and above grows (those keys are served first, so the queue cannot empty).
 */
function timeToDrain(signals: SignalSnapshot): SignalValue {
  const depth = numberOf(signals.depth);
  const drain = drainSlope(signals);
  const slope = numberOf(drain);
  return depth !== undefined &&
    slope !== undefined &&
    directionOf(drain) === 'falling' &&
    directionOf(signals.normalPriorityDepthSlope) !== 'growing'
    ? { value: depth / -slope, unit: 's' }
    : { value: null, unit: 's', missing: 'insufficient_data' };
}

/**
 * The slope the list drains at: the trend window's, or the last five minutes' while the trend window's does not fall
 * yet (a burst whose rise it still holds).
 */
function drainSlope(signals: SignalSnapshot): SignalValue | undefined {
  return directionOf(signals.depthSlope) !== 'falling' && directionOf(signals.recentDepthSlope) === 'falling'
    ? signals.recentDepthSlope
    : signals.depthSlope;
}
