/**
 * A controller starting over a large cluster while real changes keep arriving: what controller-runtime's
 * priority queue was made for. Its handlers add the informer's initial list at low priority (-100) and real
 * changes at 0, so real changes are served first and the list drains with the workers' time left over.
 * With the classic queue the same list is one FIFO in front of every change (changes wait for minutes, as
 * they always did at startup), and drains at the same rate.
 *
 * - startup-list: real changes at 60% of capacity; the list drains in the remaining 40%. Healthy.
 * - starved-backlog: real changes at 120% of capacity; priority-0 keys back up and the list is never worked
 *   off. A backlog.
 */
import { lognormal, meanMs } from '../distributions.js';
import type { ControllerSpec, Scenario, SimulationParams } from '../model.js';
import {
  capacity,
  changeLoad,
  firstKeys,
  LIST_STATUS_WRITE_SHARE,
  leaseName,
  listDrainSeconds,
  listDrainTruth,
  relistedList,
  round,
  type Sizes,
  sizes,
  steadySync,
  withSyncMs,
} from './common.js';
import { withSyncTail } from './slow-work.js';

const STARTUP_SYNC = lognormal(38, 0.4);

/** A controller over `keys` objects, all in the initial list, with real changes at `rate` per second. */
function startupController(
  params: SimulationParams,
  defaults: Sizes,
  note: (listSeconds: number) => string,
): ControllerSpec {
  const { workers, keys, rate } = sizes(params, defaults);
  // `syncMs` moves the syncs' median (a controller of slow syncs, provisioning cloud resources), their spread kept.
  const sync = withSyncMs(STARTUP_SYNC, params);
  const cap = capacity(workers, sync);
  const load = changeLoad(rate, LIST_STATUS_WRITE_SHARE);
  const listSeconds = listDrainSeconds(keys, load, cap);
  const relist = relistedList(listSeconds, params);
  const drainSeconds = relist.drainSeconds;
  // The note tells the list's own drain; a relist's words say when the queue's work ends.
  const truth = listDrainTruth(load / cap, drainSeconds, params, `${note(listSeconds)}${relist.note}`);
  return {
    name: 'clusterpolicy',
    workers,
    keys,
    events: {
      rate,
      keys: { kind: 'uniform' },
      initialKeys: firstKeys(keys),
      ...relist.events,
    },
    sync: steadySync(sync, LIST_STATUS_WRITE_SHARE),
    // Overloaded on the classic queue, changes to listed keys join them: the depth falls from the list towards the
    // ~keys × (1 − capacity / arrivals) where arrivals and completions balance, over a time constant of keys /
    // arrivals, and its metrics show no more than a slowly draining list within the run (a backlog is allowed,
    // not expected). The priority queue serves changes first: their depth at priority 0 grows from the start.
    // Slow syncs block as a blocking call's do: the list keeps every worker busy (the most syncs a minute), the
    // changes alone once it is gone (the fewest).
    truth: withSyncTail(
      params.queue === 'priority' || truth.expected.length === 0
        ? truth
        : {
            expected: [],
            allowed: [...truth.expected, ...truth.allowed],
            note: 'arrivals outpace the workers, but with the classic queue changes join the listed keys and the depth falls towards its balance for the whole run',
          },
      sync,
      cap,
      { from: load / cap, to: 1 },
    ),
    facts: {
      capacityPerSecond: round(cap, 2),
      ...(Number.isFinite(drainSeconds) ? { drainSeconds: round(drainSeconds, 0) } : {}),
      meanSyncSeconds: round(meanMs(sync) / 1000, 4),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// startup-list

const STARTUP: Sizes = { workers: 4, keys: 60_000, rate: 63 };

export const startupList: Scenario = {
  name: 'startup-list',
  summary: 'a controller starts over 60,000 objects while real changes arrive at 60% of capacity: the list drains',
  description:
    'A cluster-policy controller (4 workers, syncs of ~40 ms: ~105 per second) starts over 60,000 objects while ' +
    'real changes keep arriving at 63 per second. The initial list is added at low priority (-100) by ' +
    "controller-runtime's handlers and drains in the ~40% of the workers' time that real changes leave, in about " +
    '25 minutes; with the priority queue real changes wait milliseconds all along, with the classic queue they wait ' +
    'behind the list, as at every startup before v0.23. Workers are busy throughout and the depth is high, but ' +
    'it falls steadily: healthy.',
  defaults: STARTUP,
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'policy-operator'),
    controllers: [
      startupController(
        params,
        STARTUP,
        (drain) => `the initial list drains in about ${Math.round(drain / 60)} minutes, after real changes`,
      ),
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// starved-backlog

const STARVED: Sizes = { workers: 4, keys: 100_000, rate: 126 };

export const starvedBacklog: Scenario = {
  name: 'starved-backlog',
  summary: 'real changes arrive at 1.2× capacity after a startup: priority-0 keys back up, the list is never drained',
  description:
    'The same controller as startup-list, 4 workers (~105 syncs per second) over 100,000 objects, but real ' +
    'changes arrive at 126 per second. Every worker is taken by priority-0 keys, whose depth grows by ~20 per ' +
    'second; the low-priority initial list only shrinks as real changes lift its keys to priority 0. A backlog. ' +
    'With the classic queue the same overload hides behind the list: changes to listed keys join them, so the ' +
    'depth falls from 100,000 towards the ~17,000 where arrivals and completions balance, with a time constant ' +
    'of ~13 minutes; its metrics show no more than a slowly draining list within the run (a backlog is allowed, ' +
    'not expected).',
  defaults: STARVED,
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'policy-operator'),
    controllers: [starvedController(params)],
  }),
};

/**
 * The starved controller: with the priority queue a backlog (priority-0 depth grows from the start); with the
 * classic queue one its metrics cannot tell from a draining list within the run (`startupController`).
 */
function starvedController(params: SimulationParams): ControllerSpec {
  return startupController(params, STARVED, () => 'the initial list is never worked off');
}

// ---------------------------------------------------------------------------------------------
// caches-never-sync

const NEVER_SYNCED: Sizes = { workers: 4, keys: 20_000, rate: 2 };

export const cachesNeverSync: Scenario = {
  name: 'caches-never-sync',
  summary: 'a client-go controller whose caches never sync: its handlers queue keys, no worker ever starts',
  description:
    'A hand-written client-go controller (4 workers over 20,000 objects, a change every half second) starts its ' +
    'workers only once its informers have synced (cache.WaitForCacheSync), and one never does: its LIST is ' +
    "forbidden by a missing RBAC rule. The other informer's handlers queue every change from the start, so the " +
    'depth grows at the event rate less the changes to keys already waiting, and nothing is ever completed: a ' +
    'backlog, though no worker is busy, so not saturation (controller-runtime instead gives up after its cache ' +
    "sync timeout and the process exits; a worker loop of one's own inside its manager waits like this).",
  defaults: NEVER_SYNCED,
  defaultQueue: 'classic',
  build: (params) => {
    const { workers, keys, rate } = sizes(params, NEVER_SYNCED);
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'storage-operator'),
      controllers: [
        {
          name: 'volumeattachment',
          workers,
          keys,
          events: { rate, keys: { kind: 'uniform' } },
          sync: steadySync(STARTUP_SYNC, LIST_STATUS_WRITE_SHARE),
          reconcileMetrics: false,
          workersStartAtMs: Number.POSITIVE_INFINITY,
          truth:
            rate > 0
              ? {
                  expected: ['WorkqueueBacklog'],
                  allowed: [],
                  note: 'keys are queued from the first change and no worker ever takes one: the depth only grows, with every worker idle',
                }
              : { expected: [], allowed: [], note: 'no changes: nothing is queued' },
          facts: { workersStarted: false },
        },
      ],
    };
  },
};
