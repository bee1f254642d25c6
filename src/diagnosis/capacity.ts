/**
 * Little's law for worker counts: the one answer to "how many workers does this queue need", shared by every
 * diagnosis that recommends MaxConcurrentReconciles, so a report never advises two numbers for one queue.
 */

import { allOf, anyOf, binary, clampMin, type Expr, num } from '../promql/expr.js';
import { compare, negated, operand, scale, sig } from './conditions.js';
import { numberOf } from './format.js';
import { SHARE, type SignalSnapshot, type ThresholdSpec } from './rule.js';
import { BALANCE_WINDOW_MS, SIGNAL_WINDOW_MS, type SignalId, TREND_WINDOW_MS } from './signals.js';
import type { SignalValue } from './units.js';

/** The sizing target: one spec, listed by each rule that recommends workers. */
export const TARGET_UTILIZATION: ThresholdSpec = {
  default: 0.7,
  unit: 'ratio',
  // The recommended worker count divides by it.
  range: { min: 0.05, max: 1 },
  description:
    'Worker utilization the recommended worker count aims for: at 70% busy, queue waits stay short and a burst of 40% more load is absorbed.',
};

/**
 * The drain bound, one spec listed by each rule that must not mistake a list being worked off for a problem:
 * a queue whose depth falls by at least this share of its completions (the workers finish that much more
 * than arrives: a fifth) is draining, whatever its size, and empties on its own: an initial list, a resync,
 * a batch.
 */
export const DRAIN_SHARE: ThresholdSpec = {
  default: 0.2,
  unit: 'ratio',
  range: SHARE,
  description:
    'Fall of the depth, as a share of the completion rate, at or above which the queue is draining a list that empties on its own (start-up list, resync, batch) rather than standing: while a list is worked off, arrivals are a small part of the completions and the depth falls at most of the throughput; the depth of a saturated queue wanders up and down by several percent of it over ten minutes (more at one worker, where each sync is a large step).',
};

/**
 * `slope > -share × completionRate`: a depth (read by the slope signal `slope`) that does not fall at the drain
 * share of the completions (see `DRAIN_SHARE`).
 */
export function fallsSlowerThanDrain(slope: SignalId, share: Expr | number): Expr {
  return binary('>', sig(slope), scale('completionRate', negated(share)));
}

/**
 * `slope <= -share × completionRate`: a depth (read by the slope signal `slope`) that falls at the drain share of
 * the completions or faster: a list being worked off (see `DRAIN_SHARE`). The complement of `fallsSlowerThanDrain`.
 */
export function fallsAtDrain(slope: SignalId, share: Expr | number): Expr {
  return binary('<=', sig(slope), scale('completionRate', negated(share)));
}

/** `depthSlope > -share × completionRate`: the queue is not draining a list (see `DRAIN_SHARE`). */
export function notDraining(share: Expr | number): Expr {
  return fallsSlowerThanDrain('depthSlope', share);
}

/**
 * `recentDepthSlope <= -share × completionRate`: the queue drains now, over the last five minutes. The trend
 * window's slope lags a burst that has stopped: a bulk change of a few minutes keeps it above zero for most of ten
 * minutes after the depth turned, so a drain shows here first.
 */
export function drainsNow(share: Expr | number): Expr {
  return fallsAtDrain('recentDepthSlope', share);
}

/**
 * `recentDepthSlope > -share × completionRate`: the queue does not drain now, over the last five minutes (the
 * complement of `drainsNow`).
 */
export function notDrainingNow(share: Expr | number): Expr {
  return fallsSlowerThanDrain('recentDepthSlope', share);
}
/**
 * `lowPriorityDepthSlope > -share × completionRate`: a priority queue's low-priority keys (initial list, resyncs)
 * are not being worked off: what holds the workers at priority 0 starves them. Absent without low-priority depth.
 */
export function lowPriorityNotDraining(share: Expr | number): Expr {
  return fallsSlowerThanDrain('lowPriorityDepthSlope', share);
}

/**
 * `max(busyWorkers, 1) × perWorker`: a count of waiting keys that follows the pool. A loop of L keys on W workers
 * keeps L − W waiting (a worker that finishes takes the next key at once), and by Little's law a key waits as many
 * syncs as there are keys waiting per busy worker, so "few keys waiting" is a number per worker, not a constant.
 * At least one worker: a queue none of whose workers is busy is held to the count of one.
 */
export function waitingPerBusyWorker(perWorker: Expr | number): Expr {
  return binary('*', clampMin(sig('busyWorkers'), 1), operand(perWorker));
}

/**
 * Workers that carry the queue's offered load at `targetUtilization`, rounded up; insufficient data when the
 * load is unknown. The offered load (busy worker-seconds per second) is the larger of what arrives (adds ×
 * mean sync time) and what the workers were seen to carry (busy workers): in a backlog the workers carry only
 * what they can, in a saturated queue deduplication can hide arrivals; either way the larger is the demand.
 */
export function recommendedWorkers(signals: SignalSnapshot, targetUtilization: number): SignalValue {
  const adds = numberOf(signals.addRate);
  const meanSync = numberOf(signals.workDurationMean);
  const busy = numberOf(signals.busyWorkers);
  const arriving = adds === undefined || meanSync === undefined ? undefined : adds * meanSync;
  const loads = [arriving, busy].filter((load): load is number => load !== undefined);
  if (loads.length === 0) return { value: null, unit: 'workers', missing: 'insufficient_data' };
  return { value: Math.max(1, Math.ceil(Math.max(...loads) / targetUtilization)), unit: 'workers' };
}

/**
 * A burst draining: the depth falls now (over the last five minutes) at `share` of the completions, and within the
 * trend window, running all along, the queue fell under `floor` (the backlog's): the burst arrived on a queue that
 * kept up. The trend window's slope still reads its rise for most of ten minutes after the depth turned (a
 * two-minute bulk change of thousands of objects), the half hour's for longer, and its keys wait many syncs while
 * they drain; none of it is a backlog. Batches that outpace their drain land on a queue that has not emptied (the
 * lowest stays near the depth the last batch left), and an overload falling back to where deduplication balances it
 * (after a resync) falls slower than the drain share or from a depth that never came near empty. A controller that
 * just started had an empty queue because nothing was listed yet, which shows nothing of keeping up: the floor is
 * read only for a series older than the trend window.
 */
export function burstDraining(share: Expr | number, floor: Expr | number): Expr {
  return allOf(drainsNow(share), compare('trendDepthMin', '<', floor));
}

/**
 * The significance the adds' rise must reach, in multiples of its counting noise, before a fall is read as one that
 * ends above zero: one spec, listed by each definition that tells an overload falling back to its balance from a list
 * draining (see `fallEndsAboveEmpty`).
 */
export const RISE_SIGNIFICANCE: ThresholdSpec = {
  default: 2,
  unit: 'count',
  description:
    "How many times its counting noise the adds' rise (the last five minutes' rate less the trend window's, or less the half hour's) must be for a fall to be read as one ending above zero. Adds are counts: the rate over T seconds strays by the square root of adds / T, and the difference of two nested windows by the square root of adds × (1/300 − 1/T). Where a handful of adds come in half an hour (a hundred objects changing every few hours, a list behind one worker of minute-long syncs) one or two more in five minutes would read a balance above zero by chance; at twice the noise, chance passes a step about one time in forty-four. Where a fall is real the rise grows with the depth fallen: on overloads of 9,000 to 50,000 objects relisted at 1.5 and 2.3 times their capacity it stands above twice its noise through the fall but for the last of the slowest (50,000 objects at 1.5 times, over three hours in). Twice the line (four times the noise) loses the middle of those falls (the boundary grid's relisted overloads of 50,000 objects); half of it (the noise itself) passes a step one time in six by chance, and calls a list of 60 objects behind one worker of minute-long syncs a backlog (the boundary grid's seed 13217).",
};

/** How far apart the mean times of the last five minutes and the trend window are, in seconds. */
const APART_S = (TREND_WINDOW_MS - SIGNAL_WINDOW_MS) / 2 / 1000;

/**
 * `clamp_min(addRate − longer, 0)² ≥ significance² × addRate × (1/300 − 1/window)`: the adds of the last five
 * minutes rise above those of the longer `window` that holds them (read by the signal `longer`) by at least
 * `significance` times the counting noise of the difference. The adds are counts, the rate over a window of T
 * seconds strays by adds / T in variance, and the five minutes are part of the longer window, so the difference
 * strays by adds × (1/300 − 1/window): adds / 600 against the trend window, adds / 360 against the half hour. Squared
 * to stay in PromQL's arithmetic; a rise that is not above zero never passes.
 */
function addsRiseAboveNoise(longer: SignalId, windowMs: number, significance: Expr | number): Expr {
  const rise = clampMin(binary('-', sig('addRate'), sig(longer)), 0);
  const k = operand(significance);
  const varianceSeconds = (SIGNAL_WINDOW_MS * windowMs) / (windowMs - SIGNAL_WINDOW_MS) / 1000;
  return binary(
    '>=',
    binary('*', rise, rise),
    binary('*', binary('*', k, k), binary('/', sig('addRate'), num(varianceSeconds))),
  );
}

/**
 * A fall that ends above zero, not at it, read over the trend window (`settlesAboveEmptyOverTrend`) or, for falls too
 * slow for it, over the half hour (`settlesAboveEmptyOverHalfHour`), each once the adds' rise stands `significance`
 * times above its counting noise.
 */
export function fallEndsAboveEmpty(significance: Expr | number): Expr {
  return anyOf(settlesAboveEmptyOverTrend(significance), settlesAboveEmptyOverHalfHour(significance));
}

/**
 * A fall that ends above zero, not at it: `depthAvg × (addRate − trendAddRate) ≥ (trend window − five minutes) / 2
 * × −depthSlope × (completionRate − addRate)`, with the adds' rise above its noise.
 *
 * With every worker busy and events spread over the objects, a queue's adds are arrivals × (1 − depth / objects):
 * an event for a key already waiting coalesces into it. So while the depth falls the adds rise, by arrivals /
 * objects per key fallen, both for a list being worked off and for an overload knocked off its balance (a relist or
 * a resync queueing every object) falling back to it; both fall at most of the throughput at first. Projected along
 * that line, the adds meet the completions (the fall ends) at `projectedBalance`: above zero exactly when the
 * arrivals with nothing waiting, the adds plus their rise per key fallen times the depth, reach the completions (an
 * overload), below it for a list, which empties first. Neither the objects nor the arrivals need be known. The rise
 * per key is the adds of the last five minutes against the trend window's over the depth fallen between their mean
 * times (2.5 minutes apart), read from the trend window's least-squares slope.
 *
 * The projection is the physics of a depth that falls over the trend window with the adds under the completions.
 * Where the adds already reach the completions (and still rise), the fall has ended above zero and it holds; where
 * the depth does not fall over the trend window it decides nothing, since the queue is not draining and that
 * reading holds. A jump of the adds within the trend window (the relist itself, a batch) makes them fall between
 * the windows once it is in the older part, and lifts the depth while it is in the newer: it does not hold on a fall
 * for the ten minutes after one. Where a handful of adds come in ten minutes (a list behind one worker of two-minute
 * syncs, real changes every few minutes) one more add in the last five reaches the completions by chance, and would
 * hold for as long as it stays in them: the rise must stand above its counting noise (`addsRiseAboveNoise`).
 */
export function settlesAboveEmptyOverTrend(significance: Expr | number): Expr {
  const addsRise = binary('*', sig('depthAvg'), binary('-', sig('addRate'), sig('trendAddRate')));
  const fallBetween = binary('*', num(-APART_S), sig('depthSlope'));
  return allOf(
    binary('>=', addsRise, binary('*', fallBetween, binary('-', sig('completionRate'), sig('addRate')))),
    addsRiseAboveNoise('trendAddRate', TREND_WINDOW_MS, significance),
  );
}

/**
 * The same fall read over the half hour, for falls too slow for the trend window: `depthAvg × (addRate −
 * balanceAddRate) ≥ (balanceDepthAvg − depthAvg) × (completionRate − addRate)`, with the adds' rise above its
 * noise.
 *
 * The adds are arrivals × (1 − depth / objects) at every moment, a line in the depth, so their mean over a window is
 * the same line in the window's mean depth: the adds of the half hour and of its last five minutes differ by arrivals
 * / objects times the difference of the two mean depths, whatever the shape of the fall between them, and the test
 * is the trend window's with the fall measured as that difference (12.5 minutes apart in mean time, not 2.5). An
 * overload that a relist of 50,000 objects knocked off its balance falls with a time constant of over an hour; five
 * minutes against ten, its adds rise by about a third of their counting noise, five minutes against the half hour by
 * several times more, for a noise larger by only a quarter. A depth that has not fallen on balance (its last five
 * minutes at or above the half hour's mean) while the adds rise projects a balance above its own depth, and holds:
 * it does not empty either. A relist's jump of the adds within the half hour makes them fall between the windows
 * (the jump is in the older part) for the half hour after it, and lifts the depth while it is in the newer: this
 * holds only once the jump has left the half hour, when the trend window's reading has already had its chance.
 */
export function settlesAboveEmptyOverHalfHour(significance: Expr | number): Expr {
  const rise = binary('-', sig('addRate'), sig('balanceAddRate'));
  const fall = binary('-', sig('balanceDepthAvg'), sig('depthAvg'));
  return allOf(
    binary(
      '>=',
      binary('*', sig('depthAvg'), rise),
      binary('*', fall, binary('-', sig('completionRate'), sig('addRate'))),
    ),
    addsRiseAboveNoise('balanceAddRate', BALANCE_WINDOW_MS, significance),
  );
}

/**
 * Where a falling depth ends, projected as `settlesAboveEmptyOverTrend` reads it (or, where that projects no balance
 * above zero, as `settlesAboveEmptyOverHalfHour` does): the depth at which the adds, rising as it falls, meet the
 * completions. Absent unless the depth falls, the adds stay under the completions and rise: then there is no fall to
 * project. A value at or below zero is a list that empties.
 */
export function projectedBalance(signals: SignalSnapshot): SignalValue {
  const depth = numberOf(signals.depthAvg);
  const adds = numberOf(signals.addRate);
  const completions = numberOf(signals.completionRate);
  const slope = numberOf(signals.depthSlope);
  const halfHourDepth = numberOf(signals.balanceDepthAvg);
  const halfHourAdds = numberOf(signals.balanceAddRate);
  const trendAdds = numberOf(signals.trendAddRate);
  if (depth === undefined || adds === undefined || completions === undefined || adds >= completions)
    return { value: null, unit: 'items', missing: 'insufficient_data' };
  // The adds rise by rise / fall per key fallen; they meet the completions (completions − adds) / that further down.
  const balanceAlong = (fall: number | undefined, rise: number): number | undefined =>
    fall === undefined || fall <= 0 || rise <= 0 ? undefined : depth - ((completions - adds) * fall) / rise;
  const overTrend =
    trendAdds === undefined
      ? undefined
      : balanceAlong(slope === undefined ? undefined : -slope * APART_S, adds - trendAdds);
  const overHalfHour =
    halfHourDepth === undefined || halfHourAdds === undefined
      ? undefined
      : balanceAlong(halfHourDepth - depth, adds - halfHourAdds);
  const balance = overTrend !== undefined && overTrend > 0 ? overTrend : (overHalfHour ?? overTrend);
  return balance === undefined
    ? { value: null, unit: 'items', missing: 'insufficient_data' }
    : { value: balance, unit: 'items' };
}
