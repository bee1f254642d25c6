import { allOf, anyOf, binary, num } from '../../promql/expr.js';
import { RETRIES_PER_ERROR } from '../backoff.js';
import { DRAIN_SHARE, lowPriorityNotDraining, waitingPerBusyWorker } from '../capacity.js';
import { compare, relate, scale, sig, unlessAny, where } from '../conditions.js';
import { formatValue, numberOf } from '../format.js';
import { defineRule, type RuleCase, SHARE, type SignalSnapshot, type ThresholdValues } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Hot loop: the queue is nearly empty yet keys are added far more often than the world changes,
 * because each sync causes the next one. Two mechanisms, told apart by the evidence:
 * - a status write to a watched object on every sync (writes track adds, syncs succeed);
 * - errors requeued with a plain Add instead of AddRateLimited, or through a limiter whose delay is zero (requeued
 *   errors at the loop's rate, no retries counted): proven by the errors alone, at any depth.
 * The write rate is per process: with several busy queues in one process it is a hint, so the ratio
 * must fall in a band that this queue's adds alone explain, and the process's other queues must add less than
 * a loop would write (`minWriteRatio` of this queue's adds): otherwise they could make the writes as well, at
 * one write per sync, and a queue whose adds merely match them would be blamed. Failed writes that track the
 * adds (a conflict or a rejected update, retried at once) are the missing-backoff loop seen without reconcile
 * metrics; failed reads are not (an optional object answered 404 on every sync is normal). Writes that track the
 * adds prove a loop only while the depth stays low (a full pool whose every sync writes once shows them too); failed
 * writes without retries, and requeued errors, prove it at any depth. A loop with neither
 * writes nor error metrics cannot be told from a busy controller with fast syncs: that is the
 * `HighAddRateLowDepth` observation, not a finding.
 *
 * A loop is steady; what comes beside it often is not. The adds, the writes and the failed writes are compared by
 * their median over the window (of rates over two-minute slices), so a resync queueing thousands of objects at one
 * instant neither dilutes the loop's writes below the band (3,000 objects resynced beside a loop of 40 adds a second
 * are 10 more a second over five minutes: 0.78 denied writes per add) nor lifts a quiet controller's adds past the
 * floor for five minutes. The retries stay a five-minute rate: a loop counts none, and those beside it (polls,
 * failures backed off) come steadily, not in a burst.
 *
 * Both queues count a retry for a requeue through the rate limiter (its delay is never zero) and none for a
 * plain Add, so "no retries counted" reads the same with controller-runtime's priority queue (retries only for
 * a positive delay) and the classic queue (every AddAfter). controller-runtime itself always requeues errors
 * through the rate limiter; the missing-backoff loop is a hand-written worker over client-go's queue.
 */
const HOT_LOOP_CASES = {
  'status-write': {
    when: 'API writes track the adds and the syncs succeed',
    cause:
      'Each sync writes an object the controller watches (usually its status, or an annotation or timestamp that changes every time), and the watch event puts the key straight back into the queue.',
    fix: 'Write only when the status actually changed (compare before Update/Patch; no timestamps that change on every pass), and filter self-caused events with predicates such as GenerationChangedPredicate.',
  },
  'no-backoff': {
    when: "reconcile errors are requeued at a loop's rate, or failed API writes track the adds, and next to no retries are counted",
    cause:
      'Failing syncs are requeued with a plain Add (or Requeue without the rate limiter), so a failing key retries at once instead of backing off.',
    fix: 'Return the error to controller-runtime (or call AddRateLimited) so the key backs off exponentially; use RequeueAfter for "not ready yet".',
  },
} as const satisfies Record<string, RuleCase>;

export const hotLoop = defineRule({
  id: 'WorkqueueHotLoop',
  title: 'Work queue hot loop',
  severity: 'warning',
  scope: 'queue',
  thresholds: {
    maxWaitingPerWorker: {
      default: 10,
      unit: 'items',
      description:
        "Median depth over the window of the keys served first, per busy worker (at least one), at or below which keys do not pile up. A loop of L keys on W workers holds every worker and keeps L − W waiting (a worker that finishes takes the next looping key at once), so the depth a loop holds grows with the loopers and the workers, not to a constant: each waiting key waits, by Little's law, as many syncs as there are keys waiting per worker, and ten syncs' wait is far past what a full pool below its capacity shows at one worker (about nine at 90% busy) and at more. A write loop shows only as one write per add, which a full pool over a standing queue of real changes also shows when every sync writes once (an Event recorded per sync): the low depth is what tells the loop. The median, not the average: a burst that passes through the queue beside the loop (a resync of every object, an event storm) lifts one or two scrapes, which moves a five-minute average by a twentieth of the burst each but leaves the median where the loop holds it; keys that pile up hold the median up. On a priority queue only keys at priority 0 and above count: a loop there starves the initial list and resyncs at low priority, whose depth then stands high without anything piling up behind the loop (the detection curve: 5 failing keys on 4 workers, missed on every seed while the whole depth counted). The boundary grid holds both sides: 18 looping objects on 2 workers hold a median near 13, found at this threshold and missed at half of it; a quiet controller recording an Event per sync, overloaded over 200 objects on 2 workers, holds 26 to 39 waiting and is not called a loop, as it would be at twice it. From about 25 loopers on 2 workers a write loop reads as a standing queue: it is reported as the saturation it causes. Only the write loop depends on it: requeued errors, and failed writes requeued without backoff, prove a loop at any depth (30 objects failing behind a zero-delay limiter on 4 workers hold 26 waiting; 30 objects re-added with a plain Add after a denied write, the same).",
    },
    minAddRate: {
      default: 1,
      unit: '1/s',
      description:
        "Add rate at or above which a self-triggering loop is worth reporting. One object looping through syncs of tens of milliseconds is added tens to hundreds of times a second, far above it; below one add a second a loop writes less than a fifth of client-go's default budget of 5 requests a second, which a periodic RequeueAfter poll of many objects also does. It is also where the metrics stop telling a loop from a quiet controller that writes once per sync without waking itself (an Event recorded on every sync, as client-go's sample-controller does): both show one write per add and an empty queue. The boundary grid holds both sides: a loop whose sync waits 0.7 s before its status write adds itself 1.4 times a second and is found (twice the floor misses it); an Event recorder at 0.9 adds a second stays silent (half the floor calls it a loop). The detection curve of one object writing its status after a sync of 0.25 to 2.5 s beside one real change a second: found on every seed to 0.5 s, on some at 0.7 and 1 s, where the loop is only half the adds and its writes no longer track them, on none from 1.5 s. Requeued errors without retries are held to it as well, by their own rate: a key requeued at once after each failure adds itself once per error, so its errors are the loop's adds, however many real changes come beside it (two objects failing behind a rate limiter whose every delay is zero make about 19 errors a second each, 0.47 per add beside 30 real changes a second); terminal errors are left out, since controller-runtime never requeues them.",
    },
    minWriteRatio: {
      default: 0.8,
      unit: 'ratio',
      description:
        "API writes per add at or above which every sync writes and wakes itself again. A status-write loop makes exactly one write per add (each write is the event that adds the key again); writes rejected by a conflict still count, so the ratio sits at 1 and a loop with a share of its syncs skipping the write stays above 0.8. The same share bounds the process's other queues: adding that many per add of this queue, they could make the writes themselves at one write per sync, and the writes (and failed writes) no longer point at this queue (the boundary grid: a report controller adding as much as a hand-written loop beside it, whose denied writes its adds match, is not called a loop).",
    },
    maxWriteRatio: {
      default: 1.6,
      unit: 'ratio',
      description:
        "API writes per add above which the process's writes come from elsewhere (another queue). The write rate is the process's, not this queue's: a loop explains one write per add, a sync that writes twice (status and an annotation) two; above 1.6 the writes are mostly not this queue's and prove nothing about it.",
    },
    drainShare: {
      ...DRAIN_SHARE,
      description:
        "Fall of the low-priority depth (the initial list, resyncs), as a share of the completions, at or above which the list is being worked off and what holds the workers beside it is not shown to be a loop. Without a loop, a list whose every sync writes its status once falls at half the completions (the write's echo is one more sync of the key), one whose syncs converge in two writes at a third, in four at a fifth: under a fifth, more than four syncs are spent for each listed key worked off, which only a loop makes. The boundary grid holds a restarted controller whose two looping objects hold two of four workers through their status writes' echoes while its list of 30,000 falls at about an eighth of the completions: found at this bound, missed at half of it. The same share as the drain bound of Backlog and Saturated, for its own reason.",
    },
    maxRetryPerError: {
      default: RETRIES_PER_ERROR.default,
      unit: 'ratio',
      range: SHARE,
      description:
        "Retries per requeued reconcile error (or per add, when failed writes track the adds) at or below which failures bypass the rate limiter: most of them requeued with a plain Add, or through a limiter whose delay is zero. The counts set the line, not a scenario: every requeue through the rate limiter counts one retry on both queues, so errors retried with backoff read 1 or more, never less; a loop re-adding at once counts none, and reads only the retries that come beside it, chiefly the `RequeueAfter` polls (the priority queue counts a retry for every positive delay, the classic queue for every AddAfter). The line is PersistentFailures' (its `minRetryPerError`, 0.6, between the two with room on both sides), so one line divides the two readings: doubled (1.2) it would call errors backed off by a dependency outage a loop (they read 1). A tenth would miss a slow loop beside an everyday controller's polls: two objects failing after 0.6 s each (3.2 errors a second) beside 27 objects polling every 30 to 60 s (0.7 retries a second) read 0.22; 0.3 (the line halved) would miss the same loop beside a fixed set of 34 objects polled every 30 s (retries 0.36 of the errors: most of the errors went back without a delay), which the boundary grid holds. The detection curve (two objects failing after 0.2 to 4 s behind a zero-delay limiter, beside the polls, priority queue): found on every seed down to 2 s (1 error a second, the rate floor; on half the seeds when the line was a half, since the polls' retries beside so slow a loop come near half its errors), on none at 4 s; the classic queue counts every requeue as a retry and never shows it.",
    },
  },
  // With the add rate's window, no shorter than the trend window: a relist's burst of adds leaves the rate window
  // only as its jump of the low-priority depth has half the trend window left to leave it, so the starvation that
  // jump reads cannot hold for the whole `for` beside a trickle of changes writing once each.
  forMs: 5 * MINUTE_MS,
  condition: (t) => {
    // Keys that do not pile up: a loop's waiting keys follow its loopers and workers.
    const waitingLimit = waitingPerBusyWorker(t.maxWaitingPerWorker);
    return anyOf(
      allOf(
        compare('addRateMedian', '>=', t.minAddRate),
        // The writes are the process's: this queue's adds alone explain them only where the other queues of the
        // process add fewer than `minWriteRatio` of them, or those could write as much at one write per sync.
        relate(scale('addRateMedian', binary('+', num(1), t.minWriteRatio)), '>', 'processAddRateMedian'),
        anyOf(
          // Writes track adds: the sync writes an object it watches on every pass, while keys do not pile up. A
          // write per add is also what a full pool over a standing queue of real changes shows when each sync
          // writes once (an Event recorded per sync): only the low depth tells the loop.
          allOf(
            binary('<=', sig('servedFirstDepthMedian'), waitingLimit),
            // The whole depth stays low too, unless what stands is a low-priority list the loop starves: a list
            // being worked off (an initial list whose every status write re-adds its key once) is work, not a loop.
            anyOf(binary('<=', sig('depthMedian'), waitingLimit), lowPriorityNotDraining(t.drainShare)),
            relate(scale('addRateMedian', t.minWriteRatio), '<=', 'writeRateMedian'),
            relate(scale('addRateMedian', t.maxWriteRatio), '>=', 'writeRateMedian'),
          ),
          // Without reconcile metrics: rejected writes track adds, and nothing goes through the rate limiter:
          // requeued with a plain Add. Failed reads are not evidence (a controller that GETs an optional
          // object on every sync is answered 404 once per sync, by design), nor are conflicts (409: the noise
          // of every writer). With reconcile metrics the errors themselves are the evidence (next branch). A
          // failed write on every add with no backoff proves the loop at any depth, as requeued errors do: more
          // looping keys than workers keep the loopers less the workers waiting.
          unlessAny(
            allOf(
              relate(scale('addRateMedian', t.minWriteRatio), '<=', 'failedWriteRateMedian'),
              relate(scale('addRateMedian', t.maxWriteRatio), '>=', 'failedWriteRateMedian'),
              binary('<=', sig('retryRate'), scale('addRateMedian', t.maxRetryPerError)),
            ),
            sig('sustainedErrorRate'),
            'controller',
          ),
        ),
      ),
      // Requeued errors bypass the rate limiter: requeued with a plain Add, or through a limiter that answers
      // without delay (the priority queue counts a retry only for a positive delay). Terminal errors are never
      // requeued: rejected objects wait for a change, whatever their share of the syncs. The errors are this
      // controller's own (unlike the process's writes), and each re-adds its key, so they prove the loop by their
      // rate alone: a loop's adds are its errors, whatever the real changes beside it add, and however many keys
      // loop (more than the workers stand waiting, a depth of the loopers less the workers).
      where(
        relate(sig('retryRate'), '<=', 'requeuedErrorRate', t.maxRetryPerError),
        compare('requeuedErrorRate', '>=', t.minAddRate),
        'controller',
      ),
    );
  },
  evidence: [
    'addRateMedian',
    'addRate',
    'servedFirstDepthMedian',
    'depthMedian',
    'servedFirstDepthAvg',
    'depthAvg',
    'lowPriorityDepthSlope',
    'writeRateMedian',
    'processAddRateMedian',
    'failedWriteRateMedian',
    'requeuedErrorRate',
    'retryRate',
    'completionRate',
    'workDurationMean',
    'busyWorkers',
  ],
  derivedTitles: { writesPerAdd: 'API writes per add' },
  derive(signals) {
    const adds = numberOf(signals.addRateMedian);
    const writes = numberOf(signals.writeRateMedian);
    return {
      writesPerAdd:
        adds !== undefined && writes !== undefined && adds > 0
          ? { value: writes / adds, unit: 'ratio' }
          : { value: null, unit: 'ratio', missing: writes === undefined ? 'metric_absent' : 'insufficient_data' },
    };
  },
  text: {
    summary: ({ signals, thresholds }) =>
      `${formatValue(signals.addRateMedian)} added with a median depth of ${formatValue(signals.servedFirstDepthMedian)}${servedFirstOnly(signals)}: ${loopEvidence(signals, thresholds).sentence}.`,
    meaning:
      'The controller wakes itself: each sync causes the next one, so the same few keys are reconciled over and over while the queue looks empty (or, with more looping keys than workers, holds only the loopers the workers have not reached). It burns CPU and API-server capacity and can starve other work.',
    cause: ({ signals, thresholds }) => HOT_LOOP_CASES[loopEvidence(signals, thresholds).mechanism].cause,
    fix: ({ signals, thresholds }) => HOT_LOOP_CASES[loopEvidence(signals, thresholds).mechanism].fix,
    cases: [HOT_LOOP_CASES['status-write'], HOT_LOOP_CASES['no-backoff']],
    confirm: [
      { text: 'Adds are high while the depth stays near zero:', signals: ['addRateMedian', 'servedFirstDepthMedian'] },
      {
        text: 'Writes (status loop) or errors (missing backoff) track the adds:',
        signals: ['writeRateMedian', 'failedWriteRateMedian', 'requeuedErrorRate', 'retryRate'],
      },
    ],
  },
});

type HotLoopThresholds = ThresholdValues<'minAddRate' | 'minWriteRatio' | 'maxWriteRatio' | 'maxRetryPerError'>;

/**
 * Which loop the evidence shows, and the sentence that says so, by the comparisons of the rule's branches in
 * its order of proof: requeued reconcile errors at `minAddRate` or more with retries at most
 * `maxRetryPerError` of them, failed writes within the write band of the adds with retries at most
 * `maxRetryPerError` of the adds (both: requeued without backoff), writes within the band (a status write).
 * None of them holding now (the rule held over its `for`, the evidence is of this instant): the rates,
 * without a claim that they track the adds.
 */
function loopEvidence(
  signals: SignalSnapshot,
  t: HotLoopThresholds,
): { mechanism: keyof typeof HOT_LOOP_CASES; sentence: string } {
  const adds = numberOf(signals.addRateMedian) ?? 0;
  const retries = numberOf(signals.retryRate) ?? 0;
  const errors = numberOf(signals.requeuedErrorRate);
  const withinWriteBand = (rate: number | undefined): boolean =>
    rate !== undefined && rate >= t.minWriteRatio * adds && rate <= t.maxWriteRatio * adds;
  if (errors !== undefined && errors >= t.minAddRate && retries <= t.maxRetryPerError * errors)
    return {
      mechanism: 'no-backoff',
      sentence: `${formatValue(signals.requeuedErrorRate)} reconcile errors are requeued without backoff (${formatValue(signals.retryRate)} retries)`,
    };
  if (withinWriteBand(numberOf(signals.failedWriteRateMedian)) && retries <= t.maxRetryPerError * adds)
    return {
      mechanism: 'no-backoff',
      sentence: `${formatValue(signals.failedWriteRateMedian)} failed API writes track the adds and are requeued without backoff (${formatValue(signals.retryRate)} retries)`,
    };
  if (withinWriteBand(numberOf(signals.writeRateMedian)))
    return { mechanism: 'status-write', sentence: `${formatValue(signals.writeRateMedian)} API writes track the adds` };
  return {
    mechanism: 'no-backoff',
    sentence: `API writes ${formatValue(signals.writeRateMedian)}, failed writes ${formatValue(signals.failedWriteRateMedian)}, reconcile errors ${formatValue(signals.reconcileErrorRate)}, retries ${formatValue(signals.retryRate)}`,
  };
}

/** ", at priority 0 and above" when the served-first depth is not the whole depth (keys wait at low priority). */
function servedFirstOnly(signals: SignalSnapshot): string {
  const servedFirst = numberOf(signals.servedFirstDepthMedian);
  const whole = numberOf(signals.depthMedian);
  return servedFirst !== undefined && whole !== undefined && whole > servedFirst
    ? ` at priority 0 and above (${formatValue(signals.depthMedian)} in all)`
    : '';
}
