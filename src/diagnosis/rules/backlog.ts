import { allOf, anyOf, binary, type Expr } from '../../promql/expr.js';
import {
  burstDraining,
  DRAIN_SHARE,
  fallsSlowerThanDrain,
  notDraining,
  projectedBalance,
  RISE_SIGNIFICANCE,
  recommendedWorkers,
  settlesAboveEmptyOverHalfHour,
  settlesAboveEmptyOverTrend,
  TARGET_UTILIZATION,
} from '../capacity.js';
import { compare, negated } from '../conditions.js';
import { describeSlope, directionOf } from '../direction.js';
import { formatNumber, formatValue, numberOf } from '../format.js';
import { defineRule, type SignalSnapshot, type ThresholdNodes, type ThresholdValues } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * A floor of waiting keys whose keys are late (they wait the line or more) and that outpaces its drain or stands,
 * or that no worker serves. A priority queue's real changes backing up (served first, their depth grows only under
 * overload, however the whole depth moves as changes lift listed keys out of a low-priority list) are the standing
 * reading of the depth served first: keys lifted from a starved list carry their whole wait, so the wait holds it.
 */
function queueBacklog(
  t: ThresholdNodes<'minDepth' | 'minGrowth' | 'minWait' | 'drainShare' | 'riseSignificance'>,
): Expr {
  return allOf(
    compare('depthFloor', '>=', t.minDepth),
    anyOf(
      binary(
        'unless',
        allOf(
          // Late: a backlog is changes reconciled late. A depth growing (arrivals outpacing completions: both queues
          // count an add only for a key not already waiting, and the depth moves by the adds less the keys handed
          // out) makes its keys wait ever longer, by the excess share of the throughput every second (a tenth of a
          // second a second at 1.1 times capacity), so a queue that grows for minutes has late keys; a depth
          // deduplication holds where its workers clear it within the line is a full pool keeping up with every
          // object, and the slope of its depth, strayed about by its own noise (a standing 100 keys reads ±0.013 a
          // second over ten minutes) or lifted by its first fill, is no growth to report.
          anyOf(
            compare('queueLatencyMean', '>=', t.minWait),
            // Or still growing now: a depth that rises over the last five minutes too, before its keys are late (a
            // queue past its capacity by a few percent grows for minutes before its keys wait 5 s). A standing
            // depth's first fill is out of that window within five minutes, and its noise does not hold there for
            // a whole `for` (±0.036 a second over five minutes for 100 keys standing).
            compare('recentDepthSlope', '>=', t.minGrowth),
          ),
          anyOf(
            // Growing or standing: not draining a list (once many keys wait, deduplication absorbs new events, adds
            // fall to the completion rate and the depth levels off).
            notDraining(t.drainShare),
            // A priority queue's low-priority part (a resync's keys, lifted to priority 0 by changes to them) drains
            // while a floor of real changes, served first, stands and does not drain: those keep every worker.
            allOf(
              compare('normalPriorityDepthFloor', '>=', t.minDepth),
              fallsSlowerThanDrain('normalPriorityDepthSlope', t.drainShare),
            ),
            // A fall that ends above zero: an overload knocked off its balance (a relist, a resync queueing every
            // object) falls back to it as a list worked off falls, at most of the throughput for about 1.6 time
            // constants (objects / arrivals), longer than the keep. Its adds, rising as the depth falls, meet the
            // completions above zero; a list's do not.
            // Read over the trend window and, where the fall is too slow for its rise to leave the counting noise
            // (a relist of tens of thousands of objects, falling back for over an hour), over the half hour.
            settlesAboveEmptyOverTrend(t.riseSignificance),
            settlesAboveEmptyOverHalfHour(t.riseSignificance),
          ),
        ),
        burstDraining(t.drainShare, t.minDepth),
      ),
      // Served by no worker: no sync finished over the window, so no key left the queue (the depth cannot fall) and
      // every waiting key has waited all of it. Every object may be waiting already, so the depth cannot grow
      // either, and with nothing finished there is no wait or sync to compare: workers that never started (a
      // client-go controller whose informers never sync) hold a queue full of keys this way, and so do workers
      // that are all stuck.
      compare('completionRate', '<=', 0),
    ),
  );
}

/**
 * Backlog: keys arrive faster than the workers finish them, so the queue never drains and changes are reconciled
 * late. Either the depth keeps growing, or (once deduplication caps it) it stands high; either way its keys wait
 * long enough to be changes reconciled late (`minWait`), since a depth that grows makes every key wait longer than
 * the one before it. A full pool whose standing depth its workers clear within the line is saturated, not behind,
 * however its slope strays. A burst that drains (resync, rollout, a short spike) reaches zero within the window; a backlog
 * does not, for the whole `forMs`. Once firing it stays firing for a trend window after the condition last held
 * (`keepFiringForMs`): between the refills of a standing queue fed by batches, its depth can fall as a list being
 * worked off falls for minutes.
 *
 * The drain bound (`DRAIN_SHARE`): a queue whose depth falls by at least a fifth of its completions (the
 * least-squares slope over the trend window) is draining, whatever its size, and is never a backlog: an
 * initial list of 100,000 keys worked off at 67/s, or a batch import, empties on its own. It is reported as
 * the `ListDraining` observation with its time to drain. A queue that falls slower than that is standing,
 * and the standing test applies. A priority queue's low-priority part falling while a floor of real changes,
 * served first, stands is not a list draining.
 *
 * Nor is a fall that ends above zero. A relist or a resync over an overloaded queue queues every object again, and
 * the depth falls back to its balance (objects × (1 − capacity / arrivals)) as a list falls, at most of the
 * throughput, for about 1.6 time constants (objects / arrivals: 13 minutes at 9,000 objects and 12 changes a second,
 * over an hour at 200,000), longer than the keep. In both falls the adds rise as the depth falls (fewer waiting
 * keys coalesce fewer events); an overload's meet the completions above zero and a list's do not, which the adds of
 * two times tell (`fallEndsAboveEmpty`), without the objects or the arrivals being known. Where the fall is slow (tens
 * of thousands of objects: a time constant of an hour or more), the adds' rise between the last five and ten minutes
 * is within their counting noise, and the half hour tells it; either reading needs the rise `riseSignificance` times
 * above its noise.
 *
 * A burst that lands on a queue keeping up (a bulk change of thousands of objects, a short spike) drains
 * at the capacity left over, every worker busy and its keys waiting minutes, but the least-squares slopes
 * lag it: the trend window's reads its rise for most of ten minutes after the depth turned, the half hour's
 * for longer. While the depth falls now (over the last five minutes) at the drain share, and within the trend
 * window the queue was under the backlog's floor, it is a burst draining and no reading holds; once the trend
 * window has left the burst's start behind, its own slope reads the drain.
 *
 * controller-runtime's priority queue (its default since v0.23) adds initial-list and resync events at a
 * negative priority and hands them out only when no real change is ready. A low-priority backlog that
 * falls (by `minGrowth` or more) while fewer than `minDepth` keys wait at priority 0 or above is the queue
 * doing its job: real changes are served first and the list drains with the time left over, however long
 * that takes. It is not a backlog. A priority-0 backlog is, and so is a low-priority one that does not fall
 * (real changes take every worker, so resyncs and the initial list are never worked off). Since priority-0
 * keys are served first, their depth growing is a backlog by itself, even while the whole depth falls
 * (real changes to keys of a low-priority list lift them rather than add to the depth).
 */
export const backlog = defineRule({
  id: 'WorkqueueBacklog',
  title: 'Work queue backlog',
  severity: 'warning',
  scope: 'queue',
  thresholds: {
    minDepth: {
      default: 20,
      unit: 'items',
      description:
        'Depth that the queue must not fall below (its floor over each minute, at every step of the `for`) for a backlog to count: a queue that keeps up drains to zero between bursts, and one of slow syncs below its capacity, draining a key at a time, strays from zero only by its geometric tail (n keys or more with odds of about its utilization to the n at one worker). The detection curve turns on between 0.95 and 1.0 of capacity, where the depth stops random-walking back to zero, in 12 minutes (the `for` and the minute of floor). Twice the floor misses a standing backlog of about 60 keys whose depth dips toward 30; half of it calls a backlog one worker of 11 s syncs at 0.88 of its capacity, whose depth holds 10 to 20 keys for ten minutes and more (both in the boundary grid). A standing queue under it is reported saturated, not a backlog, however long its keys wait. The same line tells a queue that kept up: under it within the trend window, a burst that landed and now drains is not a backlog.',
    },
    minGrowth: {
      default: 0.02,
      unit: '1/s',
      description:
        "Depth rise over the last five minutes (least-squares slope) at or above which a queue whose keys are not late yet is growing: one past its capacity by a few percent grows for minutes before its keys wait `minWait`; 72 items an hour. The same rate of fall tells a priority queue's low-priority list being worked off while real changes are served first. The reports call a depth rising this fast over half an hour batches outpacing their drain. A queue below capacity random-walks back to zero, its slope scattered around zero by a small fraction of an item a second; one over capacity by even 2% of a few syncs a second rises faster than this. A growing depth needs no slope of its own: it makes its keys late (the wait grows by the excess share of the throughput every second) and does not drain, which the standing reading holds.",
    },
    minWait: {
      default: 5,
      unit: 's',
      description:
        "Mean queue wait at or above which waiting keys are changes reconciled late, which every reading of a backlog needs (but a queue no worker serves, where nothing finishes to measure a wait): a depth that grows makes it so within minutes, at 1.1 times capacity a tenth of a second more every second, and a depth that stands must wait it to be behind (when deduplication hides the excess arrivals). Once many keys wait, events for them coalesce, adds fall to the completion rate and the depth levels off at keys × (1 − capacity/arrivals): the queue no longer grows, yet each key waits that depth over the completion rate. Five seconds is late: it is the whole budget of Kubernetes' own latency objectives for an object to be acted on (pod start-up, 5 s at the 99th percentile), spent waiting in one queue; a standing queue whose keys wait a second is a full pool keeping up with every object, however many events coalesce: saturated, not behind. The line is in seconds, not in syncs: at full busy a key waits as many syncs as keys stand per busy worker (Little's law), and what a full pool below its capacity waits in syncs falls with its size (Erlang C at 90% busy: about nine syncs at one worker, under one at eight), so no count of syncs holds for every pool. Twice the line misses 8 workers of 1.2 s syncs at 1.5× capacity over 120 objects, 40 keys standing 6 s each (the boundary grid); half of it calls a backlog standing queues whose keys wait 2.5 to 5 s, and the boundary grid holds one (4 workers of 96 ms syncs at 1.5× capacity over 441 objects, 147 keys standing 3.5 s each, under 5 s even three of their spreads above) where no change is late. Without the line, the slope of a standing depth strays about by its own noise (±0.013 a second over ten minutes for 100 keys standing) and reads its first fill as growth for ten minutes, so such a queue would be called a backlog on some seeds. The detection curves over the population: at 1.5× the capacity of 8 workers of 1.2 s syncs, 60 and 90 objects (20 and 30 keys standing, 3 and 4.5 s each) are never called a backlog, 120 and more (6 s and more) on every seed in 12 minutes; at 1.2× the capacity of 4 workers of 96 ms syncs, 20 and 200 objects (3 and 33 standing, under a second each) never, 2,000 and more (8 s and more) on every seed. A standing queue under the floor of `minDepth` is not a backlog however long its keys wait: tens of objects behind one or two slow workers are reported saturated.",
    },
    riseSignificance: RISE_SIGNIFICANCE,
    drainShare: DRAIN_SHARE,
    targetUtilization: TARGET_UTILIZATION,
  },
  // No shorter than the trend window: a single jump of the depth (a relist, a resync) leaves the window before a
  // reading that only the jump holds (its least-squares rise) can have held for the whole `for`.
  forMs: 10 * MINUTE_MS,
  // As long as the trend window: a standing queue refilled by batches holds a reading while a refill is within the
  // trend window, and between refills falls as a list being worked off falls (deduplication absorbs a batch whose keys
  // still wait, so refills come less often than the batches). Kept firing for another trend window, a backlog
  // refilled at least every two trend windows stays one; a queue that drained ends it a trend window later.
  keepFiringForMs: 10 * MINUTE_MS,
  condition: (t) =>
    binary(
      'unless',
      queueBacklog(t),
      // A priority queue serving real changes first while its low-priority list drains.
      binary(
        'unless',
        compare('lowPriorityDepthSlope', '<=', negated(t.minGrowth)),
        compare('normalPriorityDepthFloor', '>=', t.minDepth),
      ),
    ),
  evidence: [
    'depth',
    'depthMin',
    'depthFloor',
    'depthSlope',
    'recentDepthSlope',
    'addRate',
    'trendAddRate',
    'balanceAddRate',
    'completionRate',
    'depthAvg',
    'balanceDepthAvg',
    'depthTrend',
    'depthChangePerSync',
    'sustainedDepthMin',
    'trendDepthMin',
    'busyWorkers',
    'maxWorkers',
    'workDurationMean',
    'queueLatencyMean',
    'longestRunning',
    'lowPriorityDepth',
    'lowPriorityDepthSlope',
    'normalPriorityDepthFloor',
    'normalPriorityDepthSlope',
  ],
  derivedTitles: {
    timeToDrain: 'Time to drain',
    balanceDepth: 'Depth it falls back to',
    workersNeeded: 'Workers needed',
  },
  derive(signals, t) {
    const depth = numberOf(signals.depth);
    const adds = numberOf(signals.addRate);
    const completions = numberOf(signals.completionRate);
    const net = adds !== undefined && completions !== undefined ? completions - adds : undefined;
    // The queue empties only if every level of it falls: real changes (priority 0 and above) are served first,
    // so while their depth grows the queue never drains, however fast the low-priority list falls.
    // A fall that ends at a balance above zero never drains (see `fallEndsAboveEmpty`).
    const balanceDepth = projectedBalance(signals);
    const draining =
      directionOf(signals.depthSlope) === 'falling' &&
      directionOf(signals.normalPriorityDepthSlope) !== 'growing' &&
      !((numberOf(balanceDepth) ?? 0) > 0);
    const timeToDrain =
      depth === undefined || net === undefined
        ? { value: null, unit: 's' as const, missing: 'insufficient_data' as const }
        : draining && net > 0
          ? { value: depth / net, unit: 's' as const }
          : // Not draining: the depth (or its part at priority 0 and above) does not fall; there is no finite time.
            { value: null, unit: 's' as const, missing: 'insufficient_data' as const };
    return { timeToDrain, balanceDepth, workersNeeded: recommendedWorkers(signals, t.targetUtilization) };
  },
  text: {
    summary: ({ signals, thresholds }) =>
      `${depthNow(signals, backlogShape(signals, thresholds))}: ${formatValue(signals.addRate)} added, ${formatValue(signals.completionRate)} finished; ${
        signals.timeToDrain?.value == null ? 'not draining' : `drains in ${formatValue(signals.timeToDrain)}`
      }.`,
    meaning:
      'Keys arrive faster than the workers finish them, so the queue grows without bound and every change waits longer to be reconciled.',
    cause: ({ signals, thresholds }) =>
      `${capacityCause(signals, thresholds)} A burst that drains is not a backlog: this one did not drain in the last minute (never below ${formatValue(signals.depthFloor)}), and ${backlogEvidence(signals, backlogShape(signals, thresholds))}.`,
    fix: ({ signals, thresholds }) =>
      noSyncFinished(signals)
        ? 'Find why the workers do not run: a client-go controller starts them only once every informer has synced, so grant the RBAC its informers need to list and watch (or install the resource they watch), or fix whatever keeps the worker loop from starting.'
        : `Raise MaxConcurrentReconciles to about ${formatValue(signals.workersNeeded)} (Little's law at ${Math.round(thresholds.targetUtilization * 100)}% utilization), or make the sync cheaper: cache reads, avoid API calls that need no answer, batch work. Check that events are not triggered needlessly (predicates on generation or resourceVersion).`,
    confirm: [
      {
        text: 'The depth keeps rising and arrivals stay above completions:',
        signals: ['depth', 'addRate', 'completionRate'],
      },
      {
        text: 'Keys are late: their mean wait before a worker takes them is at or above the line (minWait):',
        signals: ['queueLatencyMean'],
      },
      {
        text: 'Workers are busy (near the maximum) and syncs take long:',
        signals: ['busyWorkers', 'workDurationMean'],
      },
    ],
  },
});

/**
 * Which of the backlog's clauses the evidence shows now, in the order the texts prefer them: the depth growing,
 * the priority queue's real changes (priority 0 and above) growing while the whole depth does not, the depth
 * rising over half an hour (batches outpacing their drain), a fall that ends at a balance above zero (an overload
 * knocked off it), keys standing in a queue that holds its level, or keys no worker serves (no sync finished over
 * the window).
 */
type BacklogShape = 'growing' | 'priority' | 'outpaced' | 'settling' | 'standing' | 'unserved';

function backlogShape(signals: SignalSnapshot, t: ThresholdValues<'minGrowth'>): BacklogShape {
  const atLeastGrowth = (id: string): boolean => (numberOf(signals[id]) ?? Number.NEGATIVE_INFINITY) >= t.minGrowth;
  if (atLeastGrowth('depthSlope')) return 'growing';
  if (atLeastGrowth('normalPriorityDepthSlope')) return 'priority';
  if (atLeastGrowth('depthTrend')) return 'outpaced';
  if (directionOf(signals.depthSlope) === 'falling' && (numberOf(signals.balanceDepth) ?? 0) > 0) return 'settling';
  return numberOf(signals.completionRate) === 0 ? 'unserved' : 'standing';
}

/**
 * The depth that is backing up, with its direction: the depth at priority 0 and above when that is what
 * grows (the whole depth falls as real changes lift listed keys to priority 0), the whole depth otherwise.
 */
function depthNow(signals: SignalSnapshot, shape: BacklogShape): string {
  if (shape === 'priority')
    return `Depth at priority 0 and above ${describeSlope(signals.normalPriorityDepthSlope)} (at least ${formatValue(signals.normalPriorityDepthFloor)} over the last minute); the whole depth, ${formatValue(signals.depth)}, is ${describeSlope(signals.depthSlope)}`;
  return `Depth ${formatValue(signals.depth)}, ${describeSlope(signals.depthSlope)}`;
}

/** What shows that keys keep waiting, by the clause that holds now. */
function backlogEvidence(signals: SignalSnapshot, shape: BacklogShape): string {
  switch (shape) {
    case 'growing':
      return `its depth is ${describeSlope(signals.depthSlope)}`;
    case 'priority':
      return `real changes back up: its depth at priority 0 and above is ${describeSlope(signals.normalPriorityDepthSlope)}, and they are served before any other key`;
    case 'outpaced':
      return `over half an hour its depth is ${describeSlope(signals.depthTrend)}: batches arrive faster than they drain`;
    case 'settling':
      return `its depth falls back to a balance, not to zero: the adds rise as it falls (${formatValue(signals.addRate)} now, ${formatValue(signals.trendAddRate)} over ten minutes, ${formatValue(signals.balanceAddRate)} over half an hour), as events for keys no longer waiting stop coalescing, and meet the completions near ${formatValue(signals.balanceDepth)} waiting`;
    case 'standing':
      return `keys wait ${formatValue(signals.queueLatencyMean)} on average for a sync of ${formatValue(signals.workDurationMean)}`;
    case 'unserved':
      return (numberOf(signals.longestRunning) ?? 0) > 0
        ? `no sync finished over the window, so every waiting key waited all of it; the longest-running sync has run ${formatValue(signals.longestRunning)}`
        : 'no sync finished over the window and none runs, so every waiting key waited all of it';
  }
}

/**
 * Why keys wait: workers too slow or too few when they are busy (at or above the sizing target), something
 * other than their capacity when most of them are idle.
 */
function capacityCause(signals: SignalSnapshot, t: ThresholdValues<'targetUtilization'>): string {
  const busy = numberOf(signals.busyWorkers);
  const max = numberOf(signals.maxWorkers);
  if (noSyncFinished(signals))
    return 'Keys are queued but no sync finished: no worker takes them. A client-go controller starts its workers only once its informers have synced (its log shows "Waiting for caches to sync" and never "Caches are synced"); an informer whose LIST fails (a missing RBAC rule, a resource that is not installed) keeps them from starting for good.';
  const workers = `mean sync ${formatValue(signals.workDurationMean)}, ${formatNumber(signals.busyWorkers)} of ${formatValue(signals.maxWorkers)} busy`;
  if (busy !== undefined && max !== undefined && max > 0 && busy / max < t.targetUtilization)
    return `Keys wait although most workers are idle (${workers}): something other than worker capacity holds them, such as a sync that never returns holding its key, or keys the queue hands out only when nothing else is ready.`;
  return `Syncs are too slow or too few for the event rate (${workers}).`;
}

/**
 * Whether the queue completed nothing and runs nothing while keys wait: its workers are not running (a worker stuck
 * in a sync shows as the longest-running one instead).
 */
function noSyncFinished(signals: SignalSnapshot): boolean {
  return (
    numberOf(signals.completionRate) === 0 &&
    (numberOf(signals.longestRunning) ?? 0) === 0 &&
    (numberOf(signals.depth) ?? 0) > 0
  );
}
