/**
 * Slow and stuck work: a small share of syncs blocking on a slow dependency, and a sync that never
 * returns.
 */
import { lognormal, meanMs, mixture, sampler, uniform } from '../distributions.js';
import { type ControllerSpec, type DiagnosisId, type Scenario, type SimulationParams, SUCCESS } from '../model.js';
import { leaseName, MINUTE, round, SECOND, type Sizes, sizes, steadySync } from './common.js';

// ---------------------------------------------------------------------------------------------
// blocking-call

const BLOCKING: Sizes = { workers: 4, keys: 1_500, rate: 2 };
const BLOCKING_SHARE = 0.008;
const FAST_SYNC = lognormal(25, 0.5);
const BLOCKED_SYNC = uniform(10 * SECOND, 60 * SECOND);

export function blockingCallController(params: SimulationParams, name = 'volumesnapshot'): ControllerSpec {
  const { workers, keys, rate } = sizes(params, BLOCKING);
  const dist = mixture({ weight: 1 - BLOCKING_SHARE, dist: FAST_SYNC }, { weight: BLOCKING_SHARE, dist: BLOCKED_SYNC });
  const blockedWorkers = rate * BLOCKING_SHARE * (meanMs(BLOCKED_SYNC) / SECOND);
  const busyWorkers = (rate * meanMs(dist)) / SECOND;
  const allowed: DiagnosisId[] = [];
  if (workers - blockedWorkers < 1.5 || busyWorkers / workers >= 0.85)
    allowed.push('WorkqueueSaturated', 'WorkqueueBacklog');
  return {
    name,
    workers,
    keys,
    events: { rate, keys: { kind: 'uniform' } },
    sync: steadySync(dist, 0.2),
    truth:
      rate > 0
        ? {
            expected: ['WorkqueueSlowWork'],
            allowed,
            note: `${BLOCKING_SHARE * 100}% of syncs block 10–60 s on a slow dependency`,
          }
        : { expected: [], allowed: [], note: 'no events, no syncs: nothing blocks' },
    facts: {
      blockingShare: BLOCKING_SHARE,
      blockingCallsPerMinute: round(rate * BLOCKING_SHARE * 60, 2),
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
// stuck-worker

const STUCK: Sizes = { workers: 4, keys: 1_000, rate: 3 };
const STUCK_SYNC = lognormal(30, 0.5);
/** How long a sync must have run before anyone, looking at it, would call it stuck rather than slow. */
const STUCK_AFTER_MS = 5 * MINUTE;

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
                  note: `the first sync from ${at / SECOND} s on never returns`,
                }
              : { expected: [], allowed: [], note: 'no events, no syncs: nothing gets stuck' },
          facts: { stuckAtSeconds: at / SECOND, stuckWorkers: 1, loadOnRemainingWorkers: round(load, 3) },
        },
      ],
    };
  },
};
