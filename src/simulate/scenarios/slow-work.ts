/**
 * Slow and stuck work: a small share of syncs blocking on a slow dependency, and a sync that never
 * returns.
 */
import { type DurationDist, lognormal, meanMs, mixture, sampler, shareAbove, uniform } from '../distributions.js';
import {
  type ControllerSpec,
  type DiagnosisId,
  type QueueTruthSpec,
  requeueAfter,
  type Scenario,
  type SimulationParams,
  SUCCESS,
} from '../model.js';
import { firstKeys, leaseName, MINUTE, round, SECOND, type Sizes, sizes, steadySync } from './common.js';

// ---------------------------------------------------------------------------------------------
// blocking-call

const BLOCKING: Sizes = { workers: 4, keys: 1_500, rate: 2 };
const BLOCKING_SHARE = 0.008;
const FAST_SYNC = lognormal(25, 0.5);
/** How long a blocking sync takes unless `--blocking-seconds` says: 10 to 60 s, uniform. */
const BLOCKED_RANGE_MS: readonly [number, number] = [10 * SECOND, 60 * SECOND];
/**
 * A sync that holds its worker this long blocks: a sync of cached reads and one API write takes tens of
 * milliseconds, so this is hundreds of times that, a decade above client-go's 1 s work-duration bucket, and
 * a sizeable share of the apiserver's own 60 s request timeout. Syncs that block at least this long, recurring,
 * are slow work to anyone reading them.
 */
const BLOCKING_AT_MS = 10 * SECOND;
/** Shorter than this, a sync is slow but nobody would call it blocked: nothing is owed, nothing is wrong. */
const SLOW_AT_MS = 2 * SECOND;
/**
 * Blocking syncs at least this often (one per so many minutes, on average) are a steady condition that any
 * five-minute view of the queue shows, several times over; rarer ones come and go between views: seen, not owed at
 * every moment.
 */
const RECURRING_EVERY_MINUTES = 2;
/**
 * Syncs of `BLOCKING_AT_MS` or more rarer than once in eight hours (an on-call shift) are the occasional stall every
 * controller has (a slow apiserver, a long garbage collection, a provider's bad minute): one in a shift, seldom two
 * near each other, and nobody would call them slow work. More often, two fall in the same quarter hour now and then.
 */
const OCCASIONAL_EVERY_HOURS = 8;

/**
 * What syncs of `BLOCKING_AT_MS` or longer owe when `perMinute` of them come on average, whatever makes them (a call
 * that blocks on some syncs, or the tail of syncs that are all slow): slow work where they recur
 * (`RECURRING_EVERY_MINUTES`), allowed where they come more often than the occasional stall
 * (`OCCASIONAL_EVERY_HOURS`: some views hold two, others none), nothing rarer.
 */
export function blockingSyncsOwe(perMinute: number): 'owed' | 'allowed' | 'none' {
  if (perMinute * RECURRING_EVERY_MINUTES >= 1) return 'owed';
  return perMinute * 60 * OCCASIONAL_EVERY_HOURS >= 1 ? 'allowed' : 'none';
}

/**
 * Syncs of `BLOCKING_AT_MS` or longer a minute among those drawn from `sync` by workers of `capacity` syncs a second
 * under a load of `load` × capacity: they complete the load, their capacity at most.
 */
export function blockingPerMinute(sync: DurationDist, capacity: number, load: number): number {
  return syncsPastPerMinute(sync, capacity, load, BLOCKING_AT_MS);
}

/** Syncs of `ms` or longer a minute, counted as `blockingPerMinute` counts those of `BLOCKING_AT_MS`. */
function syncsPastPerMinute(sync: DurationDist, capacity: number, load: number, ms: number): number {
  return Math.min(load, 1) * capacity * shareAbove(sync, ms) * 60;
}

/**
 * `truth` with what the tail of syncs drawn from `sync` owes (`withBlockingTail`), for workers of `capacity` syncs a
 * second under a load rising from `load.from` to `load.to` × capacity over the run, and a stuck worker allowed where
 * that tail runs past `STUCK_AFTER_MS` more often than the occasional stall.
 */
export function withSyncTail(
  truth: QueueTruthSpec,
  sync: DurationDist,
  capacity: number,
  load: { readonly from: number; readonly to: number },
): QueueTruthSpec {
  const blocking = withBlockingTail(truth, {
    fewest: blockingPerMinute(sync, capacity, load.from),
    most: blockingPerMinute(sync, capacity, load.to),
  });
  // A sync of the tail that runs past the stuck line holds its worker as a stuck one does, for as long: calling it
  // stuck is fair wherever such syncs come more often than the occasional stall.
  const stuckPerMinute = syncsPastPerMinute(sync, capacity, load.to, STUCK_AFTER_MS);
  if (blockingSyncsOwe(stuckPerMinute) === 'none' || blocking.allowed.includes('WorkqueueStuckWorker')) return blocking;
  return {
    ...blocking,
    allowed: [...blocking.allowed, 'WorkqueueStuckWorker'],
    note: `${blocking.note}; syncs past ${STUCK_AFTER_MS / MINUTE} minutes ${round(stuckPerMinute * 60, 2)} an hour: each holds its worker as a stuck one does`,
  };
}

/**
 * How many syncs of the tail must have finished, on average, before their count says they recur: ten, the fewest
 * whose count (Poisson) comes to two or more on all but one run in two thousand. A tail that passes 10 s by a second
 * or two is seldom caught running (a scrape must fall in that second), so only the finished syncs show it.
 */
const TAIL_SYNCS_SEEN = 10;

/**
 * `truth` with what the tail of a load's syncs owes (uniformly slow syncs, or a backlog's and a saturated pool's
 * when their syncs are slow): syncs that pass `BLOCKING_AT_MS` block as a blocking call's do, whatever their cause, and owe slow work where they recur (`blockingSyncsOwe`), once
 * `TAIL_SYNCS_SEEN` of them have finished. `perMinute`: how many a minute at the start (`fewest`) and, with the
 * background's polls, at the end (`most`).
 */
function withBlockingTail(
  truth: QueueTruthSpec,
  perMinute: { readonly fewest: number; readonly most: number },
): QueueTruthSpec {
  const atFewest = blockingSyncsOwe(perMinute.fewest);
  const atMost = blockingSyncsOwe(perMinute.most);
  const tail = `syncs of 10 s or more ${round(perMinute.fewest * 60, 1)} an hour`;
  if (atFewest === 'owed')
    return {
      ...truth,
      expected: [...truth.expected, 'WorkqueueSlowWork'],
      onsetMs: Math.max(truth.onsetMs ?? 0, Math.ceil((TAIL_SYNCS_SEEN / perMinute.fewest) * MINUTE)),
      note: `${truth.note}; ${tail}: they block`,
    };
  if (atMost === 'none') return truth;
  return {
    ...truth,
    allowed: [...truth.allowed, 'WorkqueueSlowWork'],
    note: `${truth.note}; ${tail}: they block, but rarer than one in two minutes`,
  };
}

/** How long a sync must have run before anyone, looking at it, would call it stuck rather than slow. */
const STUCK_AFTER_MS = 5 * MINUTE;

/** The shortest and longest blocking sync: `--blocking-seconds` ±20%, else `BLOCKED_RANGE_MS`. */
function blockedRangeMs(params: SimulationParams): readonly [number, number] {
  const s = params.blockingSeconds;
  return s === undefined ? BLOCKED_RANGE_MS : [0.8 * s * SECOND, 1.2 * s * SECOND];
}

/**
 * What a pool whose blocking syncs hold `blockedWorkers` of its `workers` (all of them busy `busyWorkers` on average)
 * may show beside slow work: saturation and a backlog when the blocked syncs leave under one and a half workers or
 * the pool is 85% busy; a stuck worker when a sync that returns runs past the line where no returning sync would
 * still run (it holds its worker as a stuck one does, for as long: calling it stuck is fair, not owed).
 */
function blockedPoolAllows(
  workers: number,
  blockedWorkers: number,
  busyWorkers: number,
  longestMs: number,
): DiagnosisId[] {
  const allowed: DiagnosisId[] = [];
  if (workers - blockedWorkers < 1.5 || busyWorkers / workers >= 0.85)
    allowed.push('WorkqueueSaturated', 'WorkqueueBacklog');
  if (longestMs > STUCK_AFTER_MS) allowed.push('WorkqueueStuckWorker');
  return allowed;
}

/**
 * The truth of blocking syncs lasting `shortestMs` to `longestMs`, `perMinute` of them on average, `recurring` when
 * their rate owes slow work: owed where every one passes `BLOCKING_AT_MS`; allowed beside `allowed` where the longest
 * is slow (`SLOW_AT_MS`), shorter or rarer (`notes.rare` says how rare); nothing more where none is slow. `notes.what`
 * describes them, `notes.none` a run without any.
 */
function blockingSyncTruth(
  syncs: { perMinute: number; recurring: boolean; shortestMs: number; longestMs: number },
  allowed: DiagnosisId[],
  notes: { what: string; rare: string; none: string },
): QueueTruthSpec {
  const { perMinute, recurring, shortestMs, longestMs } = syncs;
  const { what } = notes;
  if (perMinute <= 0) return { expected: [], allowed: [], note: notes.none };
  if (recurring && shortestMs >= BLOCKING_AT_MS) return { expected: ['WorkqueueSlowWork'], allowed, note: what };
  if (longestMs >= SLOW_AT_MS)
    return {
      expected: [],
      allowed: ['WorkqueueSlowWork', ...allowed],
      note: `${what}: slow, but shorter than ${BLOCKING_AT_MS / SECOND} s or ${notes.rare}`,
    };
  return { expected: [], allowed, note: `${what}: not slow enough to block` };
}

export function blockingCallController(params: SimulationParams, name = 'volumesnapshot'): ControllerSpec {
  const { workers, keys, rate } = sizes(params, BLOCKING);
  const share = params.blockingShare ?? BLOCKING_SHARE;
  const [shortestMs, longestMs] = blockedRangeMs(params);
  const blocked = uniform(shortestMs, longestMs);
  const dist = mixture({ weight: 1 - share, dist: FAST_SYNC }, { weight: share, dist: blocked });
  const blockedWorkers = rate * share * (meanMs(blocked) / SECOND);
  const busyWorkers = (rate * meanMs(dist)) / SECOND;
  const perMinute = rate * share * 60;
  const allowed = blockedPoolAllows(workers, blockedWorkers, busyWorkers, longestMs);
  const lengths = `${round(shortestMs / SECOND, 1)}–${round(longestMs / SECOND, 1)} s`;
  const what = `${round(share * 100, 3)}% of syncs (${round(perMinute, 2)} a minute) block ${lengths} on a slow dependency`;
  const truth = blockingSyncTruth(
    { perMinute, recurring: blockingSyncsOwe(perMinute) === 'owed', shortestMs, longestMs },
    allowed,
    {
      what,
      rare: `rarer than one per ${RECURRING_EVERY_MINUTES} minutes`,
      none: 'no events or no blocking syncs: nothing blocks',
    },
  );
  return {
    name,
    workers,
    keys,
    events: { rate, keys: { kind: 'uniform' } },
    sync: steadySync(dist, 0.2),
    truth,
    facts: {
      blockingShare: share,
      shortestBlockedSeconds: round(shortestMs / SECOND, 3),
      longestBlockedSeconds: round(longestMs / SECOND, 3),
      blockingCallsPerMinute: round(perMinute, 2),
      meanBlockedWorkers: round(blockedWorkers, 2),
      busyWorkers: round(busyWorkers, 2),
    },
  };
}

export const blockingCall: Scenario = {
  name: 'blocking-call',
  summary: 'a small share of syncs block 10–60 s on a slow dependency',
  description:
    'A volume-snapshot controller over 1,500 objects, 2 events per second, 4 workers. 99.2% of syncs take ~25 ms; ' +
    '0.8% block 10–60 s on a cloud API without a timeout (about one a minute). The longest-running processor ' +
    'and unfinished work jump to tens of seconds, the work-duration p99 into the +Inf or top buckets, while depth ' +
    'and throughput look fine most of the time.',
  defaults: BLOCKING,
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'snapshot-operator'),
    controllers: [blockingCallController(params)],
  }),
};

// ---------------------------------------------------------------------------------------------
// slow-poll

const SLOW_POLL: Sizes = { workers: 4, keys: 2_000, rate: 1 };
/** Objects polled unless `--polling-keys` says. */
const POLLED_OBJECTS = 1;
/** How long a poll blocks unless `--blocking-seconds` says (±20%, as for blocking-call). */
const SLOW_POLL_SECONDS = 15;
/** The `RequeueAfter` of a polled object: the next poll comes this long after the last one returned. */
const POLL_AFTER_MS = 4 * MINUTE;
/**
 * Blocking syncs on a schedule at least this often (one per so many minutes per object polled, or more often) leave
 * no quarter hour of the queue without two of them, however the quarter hour falls: a standing blocking call that
 * every view of it shows more than once, owed. Rarer schedules owe what Poisson ones of that rate owe.
 */
const SCHEDULED_EVERY_MINUTES = 6;

export function slowPollController(params: SimulationParams, name = 'loadbalancer'): ControllerSpec {
  const { workers, keys, rate } = sizes(params, SLOW_POLL);
  const polled = Math.min(keys, params.pollingKeys ?? POLLED_OBJECTS);
  const [shortestMs, longestMs] = blockedRangeMs({
    ...params,
    blockingSeconds: params.blockingSeconds ?? SLOW_POLL_SECONDS,
  });
  const blocked = uniform(shortestMs, longestMs);
  // Each poll asks for the next one when it returns; an event for a polled object brings one more sync between them.
  const scheduledPerMinute = (polled * MINUTE) / (POLL_AFTER_MS + meanMs(blocked));
  const perMinute = scheduledPerMinute + (polled * rate * 60) / keys;
  const blockedWorkers = (perMinute / 60) * (meanMs(blocked) / SECOND);
  const busyWorkers = (rate * (1 - polled / keys) * meanMs(FAST_SYNC)) / SECOND + blockedWorkers;
  const allowed = blockedPoolAllows(workers, blockedWorkers, busyWorkers, longestMs);
  const lengths = `${round(shortestMs / SECOND, 1)}–${round(longestMs / SECOND, 1)} s`;
  const what = `${polled} object(s) polled every ${POLL_AFTER_MS / MINUTE} minutes, each poll blocking ${lengths} on a slow provider API (${round(perMinute * 60, 1)} an hour)`;
  const recurring = scheduledPerMinute * SCHEDULED_EVERY_MINUTES >= 1 || blockingSyncsOwe(perMinute) === 'owed';
  const truth = blockingSyncTruth({ perMinute, recurring, shortestMs, longestMs }, allowed, {
    what,
    rare: 'too rare to stand',
    none: 'no object polled: nothing blocks',
  });
  return {
    name,
    workers,
    keys,
    // The informer's initial list: every object is synced once at start, the polled ones' first poll among them.
    events: { rate, keys: { kind: 'uniform' }, initialKeys: firstKeys(keys) },
    sync: (env) => {
      const fast = steadySync(FAST_SYNC, 0.2)(env);
      const poll = sampler(blocked, env.rng);
      const next = requeueAfter(POLL_AFTER_MS);
      return (ctx) => (ctx.key < polled ? { durationMs: poll(), result: next } : fast(ctx));
    },
    truth,
    facts: {
      polledObjects: polled,
      pollAfterSeconds: POLL_AFTER_MS / SECOND,
      shortestBlockedSeconds: round(shortestMs / SECOND, 3),
      longestBlockedSeconds: round(longestMs / SECOND, 3),
      blockingPollsPerHour: round(perMinute * 60, 2),
      meanBlockedWorkers: round(blockedWorkers, 3),
    },
  };
}

export const slowPoll: Scenario = {
  name: 'slow-poll',
  summary: 'every scheduled poll of an object blocks 12–18 s on a slow provider API',
  description:
    'A load-balancer controller over 2,000 objects, 1 event a second, syncs of ~25 ms on 4 workers. One object ' +
    "(--polling-keys) waits on its cloud load balancer and is polled with RequeueAfter(4m); the provider's describe " +
    'call blocks 12–18 s (--blocking-seconds) on every poll, without a timeout: about 14 blocking syncs an hour, on a ' +
    'schedule, three or four in every quarter hour. Depth, throughput and the p99 look fine; the longest-running ' +
    'processor sees a poll only when a scrape falls in its last seconds.',
  defaults: SLOW_POLL,
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'lb-operator'),
    controllers: [slowPollController(params)],
  }),
};

// ---------------------------------------------------------------------------------------------
// stuck-worker

const STUCK: Sizes = { workers: 4, keys: 1_000, rate: 3 };
const STUCK_SYNC = lognormal(30, 0.5);

/** When the sync that never returns starts: 5 minutes in, or a fifth into shorter runs. */
export function stuckAtMs(durationMs: number): number {
  return Math.min(5 * MINUTE, Math.floor(durationMs / 5));
}

export const stuckWorker: Scenario = {
  name: 'stuck-worker',
  summary: 'one sync never returns: a worker is lost for good',
  description:
    'A backup controller over 1,000 objects, 3 events per second, syncs of ~34 ms on 4 workers. At 5m (a fifth into ' +
    'shorter runs) one sync deadlocks and never returns: its worker is gone, unfinished work and the longest-running ' +
    'processor grow by one second per second from then on, while the other workers carry the load. With few workers ' +
    'the rest of the queue backs up too.',
  defaults: STUCK,
  build: (params) => {
    const { workers, keys, rate } = sizes(params, STUCK);
    const at = stuckAtMs(params.durationMs);
    const remaining = workers - 1;
    const load = remaining <= 0 ? Number.POSITIVE_INFINITY : (rate * meanMs(STUCK_SYNC)) / SECOND / remaining;
    const allowed: DiagnosisId[] = ['WorkqueueSlowWork'];
    if (workers <= 2 || load >= 0.85) allowed.push('WorkqueueBacklog', 'WorkqueueSaturated');
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'backup-operator'),
      controllers: [
        {
          name: 'backup',
          workers,
          keys,
          events: { rate, keys: { kind: 'uniform' } },
          sync: ({ rng }) => {
            const draw = sampler(STUCK_SYNC, rng);
            let stuck = false;
            return (ctx) => {
              if (!stuck && ctx.nowMs >= at) {
                stuck = true;
                return { durationMs: Number.POSITIVE_INFINITY, result: SUCCESS };
              }
              return { durationMs: draw(), result: SUCCESS };
            };
          },
          truth:
            rate > 0
              ? {
                  expected: ['WorkqueueStuckWorker'],
                  allowed,
                  // Stuck, as opposed to slow, from when no sync that returns would still be running: a blocking
                  // call bounded by a timeout returns within a minute or two.
                  onsetMs: at + STUCK_AFTER_MS,
                  // Its age and the growth of its age and of the unfinished work count from when it began.
                  causeMs: at,
                  note: `the first sync from ${at / SECOND} s on never returns`,
                }
              : { expected: [], allowed: [], note: 'no events, no syncs: nothing gets stuck' },
          facts: { stuckAtSeconds: at / SECOND, stuckWorkers: 1, loadOnRemainingWorkers: round(load, 3) },
        },
      ],
    };
  },
};
