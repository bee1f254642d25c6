/**
 * Hot loops: keys that wake themselves. Either the controller writes an object it watches on every
 * sync (status with a timestamp) and the watch echoes each write back, or a hand-written worker loop
 * re-adds failing keys with a plain `add`, skipping the rate limiter.
 */
import { lognormal, meanMs, sampler } from '../distributions.js';
import {
  type ControllerSpec,
  type DiagnosisId,
  ERROR,
  type QueueTruthSpec,
  type Scenario,
  type SimulationParams,
  SUCCESS,
  type SyncPlan,
} from '../model.js';
import {
  backgroundPollsPerSecond,
  capacityTruth,
  exposesMaxWorkers,
  firstKeys,
  leaseName,
  listThenLoopEvents,
  RECORDED_EVENT,
  round,
  type Sizes,
  sizes,
  steadySync,
  UNWATCHED_UPDATE,
  withSyncMs,
} from './common.js';

/** Mean delay from a write to its watch event (uniform 2–20 ms in the process model). */
const MEAN_WATCH_LATENCY_MS = 11;

/**
 * Waiting keys per worker below which a status-write loop is owed. A loop of more keys than workers holds every
 * worker and keeps the loopers less the workers waiting (a worker that finishes takes the next looping key at once),
 * and by Little's law each waits as many syncs as there are keys waiting per worker: ten syncs' wait is keys queued
 * behind a standing backlog. A status-write loop shows only as one write per add, which a full pool over a standing
 * queue whose every sync writes once (an Event recorded per sync) shows too: it is owed only where its keys do not
 * pile up. Failed writes and requeued errors prove a loop at any depth and are owed at any number of loopers.
 */
const STATUS_LOOP_WAITING_PER_WORKER_TOLD = 10;

/** The loop's waiting keys per worker (see `STATUS_LOOP_WAITING_PER_WORKER_TOLD`). */
function loopWaitingPerWorker(looping: number, workers: number): number {
  return Math.max(0, looping - workers) / workers;
}

/**
 * What a loop allows beside it once it keeps every worker busy by itself (`loopWorkers`: the workers its keys would
 * keep busy, unbounded, at or above `workers`): a saturation. A backlog only where something waits behind it the way
 * a backlog's keys do: on a priority queue the resyncs and the initial list wait at low priority and are never
 * worked off while a loop key is ready; on the classic queue where its keys wait ten syncs or more each (see
 * `STATUS_LOOP_WAITING_PER_WORKER_TOLD`), as keys behind a standing backlog do. A loop whose keys wait a few
 * syncs of milliseconds on the classic queue holds nothing back: no backlog.
 */
function standingLoop(
  loopWorkers: number,
  looping: number,
  workers: number,
  queue: SimulationParams['queue'],
): DiagnosisId[] {
  if (loopWorkers < workers) return [];
  const standsLikeBacklog =
    queue === 'priority' || loopWaitingPerWorker(looping, workers) >= STATUS_LOOP_WAITING_PER_WORKER_TOLD;
  return standsLikeBacklog ? ['WorkqueueBacklog', 'WorkqueueSaturated'] : ['WorkqueueSaturated'];
}

// ---------------------------------------------------------------------------------------------
// hot-loop-status-write

const STATUS_WRITE: Sizes = { workers: 2, keys: 300, rate: 1 };
const STATUS_HOT_KEYS = 3;
const STATUS_SYNC = lognormal(6, 0.4);
/**
 * The share of the adds a status-write loop must make for the metrics to show it. They show a loop only as writes
 * that track the adds: a loop making a share s of the adds, beside real changes whose syncs do not write, reads s
 * writes per add, as a controller that writes on that share of its syncs does (a status update on most real
 * changes is everyday behaviour). Nine adds in ten read as every sync writing; below that the loop is allowed, not
 * owed: one object looping through a 0.7 s sync (1.3 adds a second) beside one real change a second reads 0.57
 * writes per add, as a quiet controller writing on half its syncs does.
 */
const STATUS_LOOP_SHARE_SHOWN = 0.9;

export function statusWriteLoopController(params: SimulationParams, name = 'ingress-status'): ControllerSpec {
  const { workers, keys, rate } = sizes(params, STATUS_WRITE);
  const hotKeys = Math.min(params.loopKeys ?? STATUS_HOT_KEYS, keys);
  // `syncMs` moves the looping keys' syncs (a loop whose sync first waits on a slow call, then writes).
  const loopSync = withSyncMs(STATUS_SYNC, params);
  const sync = meanMs(loopSync);
  const statusAtMs = params.statusAtMs;
  // A status updated early in the sync is echoed while the sync runs: the key is counted in the depth meanwhile and
  // handed out again the moment it is done, so each looping key holds a worker for good.
  const echoedWhileRunning = statusAtMs !== undefined && statusAtMs + MEAN_WATCH_LATENCY_MS < sync;
  const loopCycleMs = echoedWhileRunning ? sync : sync + MEAN_WATCH_LATENCY_MS;
  // Each looping key is busy for its sync out of every cycle, as long as the workers go round.
  const loopWorkers = (hotKeys * sync) / loopCycleMs;
  const loopBusy = Math.min(workers, loopWorkers);
  // Real changes are synced at the scenario's own pace (`syncMs` moves only the looping keys').
  const busy = (loopBusy + (rate * 1.2 * meanMs(STATUS_SYNC)) / 1000) / workers;
  const allowed = [
    ...new Set<DiagnosisId>([
      ...(busy >= 0.8 || (echoedWhileRunning && !exposesMaxWorkers(params.flavor))
        ? ['WorkqueueSaturated' as const]
        : []),
      ...standingLoop(loopWorkers, hotKeys, workers, params.queue),
    ]),
  ];
  const waitingPerWorker = loopWaitingPerWorker(hotKeys, workers);
  const told = waitingPerWorker < STATUS_LOOP_WAITING_PER_WORKER_TOLD;
  // One add per looping sync: the echo of its write.
  const loopAddsPerSecond = (loopBusy * 1000) / sync;
  // Real changes and the background's polls add without a write.
  const loopShare =
    loopAddsPerSecond / (loopAddsPerSecond + rate + backgroundPollsPerSecond({ name, keys }, rate, params));
  const note = `${hotKeys} keys update their own status on every sync${echoedWhileRunning ? `, ${statusAtMs} ms into it,` : ''} and are woken by the echo of that write${
    echoedWhileRunning && !exposesMaxWorkers(params.flavor)
      ? '; the echoes hold the depth off zero as a full pool would, and without a max-workers metric nothing tells the two apart'
      : ''
  }`;
  const loopingSync = (durationMs: number): SyncPlan =>
    echoedWhileRunning
      ? { durationMs, result: SUCCESS, write: 'PUT', writeAtMs: statusAtMs }
      : { durationMs, result: SUCCESS, write: 'PUT' };
  return {
    name,
    workers,
    keys,
    events: { rate, keys: { kind: 'uniform' }, initialKeys: firstKeys(hotKeys) },
    sync: (env) => {
      const normal = steadySync(STATUS_SYNC, 0.2)(env);
      const draw = sampler(loopSync, env.rng);
      return (ctx) => (ctx.key < hotKeys ? loopingSync(draw()) : normal(ctx));
    },
    truth:
      loopShare < STATUS_LOOP_SHARE_SHOWN
        ? {
            expected: [],
            allowed: ['WorkqueueHotLoop', ...allowed],
            note: `${note}; the loop makes ${Math.round(loopShare * 100)}% of the adds, beside real changes that do not write: its writes read as a controller writing on part of its syncs`,
          }
        : told
          ? { expected: ['WorkqueueHotLoop'], allowed, note }
          : {
              expected: [],
              allowed: ['WorkqueueHotLoop', ...allowed],
              note: `${note}; ${hotKeys - workers} looping keys wait behind ${workers} workers, ${round(waitingPerWorker, 1)} syncs each: a full pool over a standing queue whose every sync writes once reads the same`,
            },
    facts: {
      keysInLoop: hotKeys,
      expectedLoopAddsPerSecond: round(loopAddsPerSecond, 1),
      loopShareOfAdds: round(loopShare, 3),
      busyWorkers: round(busy * workers, 2),
    },
  };
}

export const hotLoopStatusWrite: Scenario = {
  name: 'hot-loop-status-write',
  summary: 'a few keys write their status on every sync and wake themselves',
  description:
    'An ingress-status controller over 300 objects, 1 event per second, 2 workers. Three ingresses get a status ' +
    'update (with a fresh timestamp) on every sync: each PUT comes back through the watch 2–20 ms later and ' +
    're-adds the key, so those 3 keys are synced ~60 times per second each. Depth stays tiny while adds and PUTs ' +
    'run at ~170 per second.',
  defaults: STATUS_WRITE,
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'ingress-operator'),
    controllers: [statusWriteLoopController(params)],
  }),
};

// ---------------------------------------------------------------------------------------------
// hot-loop-no-backoff

const NO_BACKOFF: Sizes = { workers: 4, keys: 500, rate: 2 };
const FAILING_KEYS = 2;
const FAILING_SYNC = lognormal(10, 0.4);
const NORMAL_SYNC = lognormal(8, 0.5);

/**
 * The sizes of a no-backoff loop for `params`: its failing keys (`loopKeys`, default two), their sync (`syncMs` moves
 * it: a write denied after a slower call) and the adds a second they make, each re-added the moment its sync ends.
 */
function noBackoffLoop(params: SimulationParams, defaults: Sizes) {
  const { workers, keys, rate } = sizes(params, defaults);
  const failing = Math.min(params.loopKeys ?? FAILING_KEYS, keys);
  const failingSync = withSyncMs(FAILING_SYNC, params);
  const loopAddsPerSecond = (Math.min(failing, workers) * 1000) / meanMs(failingSync);
  return { workers, keys, rate, failing, failingSync, loopAddsPerSecond };
}

export function noBackoffLoopController(
  params: SimulationParams,
  name = 'secret-mirror',
  defaults: Sizes = NO_BACKOFF,
): ControllerSpec {
  const { workers, keys, rate, failing, failingSync, loopAddsPerSecond } = noBackoffLoop(params, defaults);
  const busy = (Math.min(failing, workers) + (rate * meanMs(NORMAL_SYNC)) / 1000) / workers;
  const allowed = [
    ...new Set<DiagnosisId>([
      'WorkqueuePersistentFailures',
      ...(busy >= 0.8 ? ['WorkqueueSaturated' as const] : []),
      // Re-added while its sync runs, each failing key holds a worker for good.
      ...standingLoop(failing, failing, workers, params.queue),
    ]),
  ];
  const forbidden = [{ method: 'PUT', code: '403' }] as const;
  return {
    name,
    workers,
    keys,
    events: { rate, keys: { kind: 'uniform' }, initialKeys: firstKeys(failing) },
    onError: 'plain-add',
    reconcileMetrics: false,
    sync: (env) => {
      const normal = steadySync(NORMAL_SYNC, 0.2)(env);
      const draw = sampler(failingSync, env.rng);
      return (ctx) => (ctx.key < failing ? { durationMs: draw(), result: ERROR, requests: forbidden } : normal(ctx));
    },
    truth: {
      expected: ['WorkqueueHotLoop'],
      allowed,
      note: `${failing} keys fail on every sync (the write of their copy is forbidden) and are re-added with a plain add, without backoff`,
    },
    facts: {
      keysInLoop: failing,
      expectedLoopAddsPerSecond: round(loopAddsPerSecond, 1),
      busyWorkers: round(busy * workers, 2),
    },
  };
}

export const hotLoopNoBackoff: Scenario = {
  name: 'hot-loop-no-backoff',
  summary: 'failing keys re-added with a plain add instead of addRateLimited',
  description:
    "A hand-written secret-mirror controller (its own queue, client-go's unless --queue priority, and worker loop, so no controller_runtime_* " +
    'series of its own) over 500 objects, 2 events per second, 4 workers. Two secrets are mirrored into a namespace that ' +
    'cannot be written (the controller lacks RBAC in their target namespace): the PUT of every sync is answered 403 and the ' +
    'error handler calls queue.Add instead of AddRateLimited, so each key ' +
    'is re-queued while it is processed and synced again the moment it is done, ~100 times per second, holding a ' +
    'worker each. workqueue_retries_total stays flat: nothing goes through the rate limiter.',
  defaults: NO_BACKOFF,
  // A hand-written loop, most often over client-go's queue (controller-runtime's reconciler never adds without
  // backoff); over controller-runtime's priority queue (`priorityqueue.New`) the plain add loops the same way.
  defaultQueue: 'classic',
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'secret-operator'),
    controllers: [noBackoffLoopController(params)],
  }),
};

// ---------------------------------------------------------------------------------------------
// loop-beside-writers

const BESIDE_WRITERS: Sizes = { workers: 4, keys: 500, rate: 15 };
/** The denied write of the looping keys, after a slower call than the plain mirror's (a GET of the source first). */
const BESIDE_WRITERS_FAILING_SYNC_MS = 50;
const REPORT_SYNC = lognormal(20, 0.5);
/** What a report sync writes, none of it watched: the report's status, a ConfigMap of totals, an Event. */
const REPORT_WRITES = [UNWATCHED_UPDATE, UNWATCHED_UPDATE, RECORDED_EVENT] as const;
/**
 * The process's writes are the loop's only where the other queues cannot have made them: they add fewer than half
 * the loop's adds, so at one write per sync (everyday behaviour) they explain at most half of what the loop writes.
 * Closer, nothing in the counters says which queue writes what.
 */
const OTHERS_ADDS_TOLD = 0.5;

/**
 * A busy controller of the same process that writes objects it does not watch on every sync: `rate` events a
 * second, three writes each, no echo. Its own queue is healthy.
 */
export function reportWriterController(params: SimulationParams, name = 'usage-report'): ControllerSpec {
  const { workers, keys, rate } = sizes(params, BESIDE_WRITERS);
  const utilization = (rate * meanMs(REPORT_SYNC)) / 1000 / workers;
  return {
    name,
    workers,
    keys,
    events: { rate, keys: { kind: 'uniform' } },
    sync: ({ rng }) => {
      const draw = sampler(REPORT_SYNC, rng);
      return () => ({ durationMs: draw(), result: SUCCESS, requests: REPORT_WRITES });
    },
    truth: capacityTruth(utilization, params),
    facts: { writesPerSync: REPORT_WRITES.length, utilization: round(utilization, 3) },
  };
}

export const loopBesideWriters: Scenario = {
  name: 'loop-beside-writers',
  summary: 'a hand-written loop without backoff in a process whose other controller writes more than it',
  description:
    'A secret-mirror worker (its own client-go queue, no controller_runtime_* series of its own, 4 workers) whose ' +
    'two failing keys are re-added with a plain add after a denied PUT of ~50 ms (about 40 adds a second), in one ' +
    'process with a usage-report controller that takes 15 events a second and writes a report status, a ConfigMap ' +
    'and an Event on each (45 writes a second, unwatched). The REST client counts the whole process: about 2.2 ' +
    "writes per add of the loop's queue, more than a loop explains, while its denied writes track its adds. " +
    "--rate is the report controller's events; --loop-keys and --sync-ms the loop's.",
  defaults: BESIDE_WRITERS,
  defaultQueue: 'classic',
  build: (params) => {
    const loopParams = { ...params, syncMs: params.syncMs ?? BESIDE_WRITERS_FAILING_SYNC_MS, rate: NO_BACKOFF.rate };
    const loop = noBackoffLoopController(loopParams, 'secret-mirror', BESIDE_WRITERS);
    const writer = reportWriterController(params);
    const loopAdds = noBackoffLoop(loopParams, BESIDE_WRITERS).loopAddsPerSecond + loop.events.rate;
    const othersAdds = writer.events.rate;
    const told = othersAdds < OTHERS_ADDS_TOLD * loopAdds;
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'platform-operator'),
      controllers: [
        told
          ? loop
          : {
              ...loop,
              truth: {
                expected: [],
                allowed: [...new Set([...loop.truth.expected, ...loop.truth.allowed])],
                note: `${loop.truth.note}; the other queue adds ${round(othersAdds, 1)} a second beside the loop's ${round(loopAdds, 1)}, enough to make the process's writes as well: the counters cannot say whose they are`,
              },
            },
        writer,
      ],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// self-requeue-loop

const SELF_REQUEUE: Sizes = { workers: 2, keys: 2_000, rate: 2 };
const SELF_REQUEUE_LOOP_KEYS = 3;
const LOOP_SYNC = lognormal(5, 0.3);
const LISTED_SYNC = lognormal(20, 0.5);

export function selfRequeueLoopController(params: SimulationParams, name = 'nodepool'): ControllerSpec {
  const { workers, keys, rate } = sizes(params, SELF_REQUEUE);
  const looping = Math.min(params.loopKeys ?? SELF_REQUEUE_LOOP_KEYS, keys);
  const cycleMs = meanMs(LOOP_SYNC);
  return {
    name,
    workers,
    keys,
    events: listThenLoopEvents(rate, keys, looping),
    sync: (env) => {
      const listed = steadySync(LISTED_SYNC, 0.2)(env);
      const draw = sampler(LOOP_SYNC, env.rng);
      return (ctx) => (ctx.key < looping ? { durationMs: draw(), result: SUCCESS, requeueSelf: true } : listed(ctx));
    },
    truth: {
      // A loop nothing corroborates (no writes, no errors): the hot-loop rule cannot prove it; the queue must still
      // not be called healthy without a word (the observation), and with the workers held by the loop the listed
      // objects back up and the workers are saturated.
      expected: [],
      allowed: ['WorkqueueHotLoop', 'WorkqueueBacklog', 'WorkqueueSaturated'],
      note: `${looping} objects add their own key again during syncs of about ${round(meanMs(LOOP_SYNC), 1)} ms, looping on ${workers} workers without writes or errors; the initial list waits behind them`,
    },
    facts: {
      keysInLoop: looping,
      expectedLoopAddsPerSecond: round((Math.min(looping, workers) * 1000) / cycleMs, 1),
      waitingLoopKeys: Math.max(0, looping - workers),
    },
  };
}

export const selfRequeueLoop: Scenario = {
  name: 'self-requeue-loop',
  summary: 'a few keys requeue themselves during every 5 ms sync and hold the workers; the initial list starves',
  description:
    'A node-pool controller over 2,000 objects, 2 events per second, 2 workers. The syncs of three node pools ' +
    "enqueue their own key again (a generic event on the controller's own channel) and take about 5 ms, so each " +
    'is synced again the moment it is done: about two hundred adds a second per worker, with neither writes nor ' +
    'errors behind them. With the priority queue the loop runs at ' +
    'priority 0 with one key waiting (loopers minus workers), and the initial list, at low priority, is worked off ' +
    'only as real changes lift its keys.',
  defaults: SELF_REQUEUE,
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'nodepool-operator'),
    controllers: [selfRequeueLoopController(params)],
  }),
};

// ---------------------------------------------------------------------------------------------
// loop-beside-list

const BESIDE_LIST: Sizes = { workers: 4, keys: 30_000, rate: 0.2 };
const BESIDE_LIST_LOOP_KEYS = 2;
/** A listed object's sync: a cloud provider's API read, about 300 ms at the median (`--sync-ms` moves it). */
const PROVIDER_SYNC = lognormal(300, 0.5);
/** A looping sync updates the status first, this many ms in, then goes on with the rest of the reconcile. */
const LOOP_STATUS_AT_MS = 5;
/** The rest of a looping sync after its status update: long enough that the update's echo comes while it runs. */
const LOOP_REST = lognormal(40, 0.3);
/** Share of real changes whose sync writes the object's status (its echo is one more sync, which writes nothing). */
const CHANGE_WRITE_SHARE = 0.2;
/**
 * The share of the completions, at most, at which the list must fall for a status-write loop beside it to show.
 * Without the loop, a list whose every sync writes its status once falls at half the completions (the write's echo
 * is one more sync of the key), one that converges in two writes at a third, in four at a fifth: a list that falls
 * at under 0.15 of the completions takes more than five syncs for each key worked off, more than any controller
 * converging on its status makes, with the ten-minute fall's wander (a few percent of the throughput) to spare.
 * Above it the counters read as a list whose syncs write more than once: the loop is allowed, not owed.
 */
const LOOP_LIST_SHARE_SHOWN = 0.15;

export function loopBesideListController(params: SimulationParams, name = 'loadbalancer'): ControllerSpec {
  const { workers, keys, rate } = sizes(params, BESIDE_LIST);
  const looping = Math.min(params.loopKeys ?? BESIDE_LIST_LOOP_KEYS, keys);
  const listedSync = withSyncMs(PROVIDER_SYNC, params);
  // The echo of a looping key's status update comes while its sync still runs: the key is handed out again the
  // moment it is done, so each looping key holds a worker for good (the ones beyond the workers wait their turn).
  const heldWorkers = Math.min(looping, workers);
  // Real changes (and their writes' echoes) wait at priority 0 beside the loop and go to the first worker free, most
  // often a looping one: at most, the loop loses all their work, and the list none (the largest share it can fall at).
  const changeSyncsPerSecond = rate * (1 + CHANGE_WRITE_SHARE);
  const changeWork = (changeSyncsPerSecond * meanMs(listedSync)) / 1000;
  const loopPerSecond = (Math.max(0, heldWorkers - changeWork) * 1000) / (LOOP_STATUS_AT_MS + meanMs(LOOP_REST));
  const listSyncsPerSecond = ((workers - heldWorkers) * 1000) / meanMs(listedSync);
  // A change to a listed key lifts it to priority 0: it leaves the list as a listed key worked off does.
  const listFallPerSecond = listSyncsPerSecond + rate;
  const listShare = listFallPerSecond / (loopPerSecond + listSyncsPerSecond + changeSyncsPerSecond);
  const note = `${looping} objects update their status with a fresh timestamp early in every sync and are woken by its echo, at priority 0, beside the initial list of ${keys} objects at low priority`;
  const starved: DiagnosisId[] = ['WorkqueueBacklog', 'WorkqueueSaturated'];
  const truth: QueueTruthSpec =
    params.queue !== 'priority'
      ? {
          expected: [],
          allowed: ['WorkqueueHotLoop', ...starved],
          note: `${note}; the classic queue serves in order, so each looping key waits its turn behind the list and spins once the list is gone`,
        }
      : listShare <= LOOP_LIST_SHARE_SHOWN
        ? {
            expected: ['WorkqueueHotLoop'],
            allowed: starved,
            note: `${note}: the list falls at ${round(listShare * 100, 1)}% of the completions`,
          }
        : {
            expected: [],
            allowed: ['WorkqueueHotLoop', ...starved],
            note: `${note}: the list falls at ${round(listShare * 100, 1)}% of the completions, as a list whose syncs write more than once would`,
          };
  return {
    name,
    workers,
    keys,
    events: listThenLoopEvents(rate, keys, looping),
    sync: (env) => {
      const listed = steadySync(listedSync, CHANGE_WRITE_SHARE)(env);
      const rest = sampler(LOOP_REST, env.rng);
      return (ctx) =>
        ctx.key < looping
          ? { durationMs: LOOP_STATUS_AT_MS + rest(), result: SUCCESS, write: 'PUT', writeAtMs: LOOP_STATUS_AT_MS }
          : listed(ctx);
    },
    truth,
    facts: {
      keysInLoop: looping,
      expectedLoopAddsPerSecond: round(loopPerSecond, 1),
      listShareOfCompletions: round(listShare, 3),
      listDrainMinutes: round(keys / listFallPerSecond / 60, 1),
    },
  };
}

export const loopBesideList: Scenario = {
  name: 'loop-beside-list',
  summary: 'after a restart, a status-write loop on two objects holds two workers while the initial list waits',
  description:
    'A load-balancer controller restarted over 30,000 objects, a change every 5 seconds, 4 workers. Each listed ' +
    "object is synced through a cloud provider's API (about 300 ms) and the initial list waits at low priority. Two " +
    'objects update their status with a fresh timestamp early in every sync and go on with the reconcile; the echo ' +
    'of the update comes while the sync runs, so each is handed out again the moment it is done and holds a worker ' +
    'for good: about 41 syncs a second of the loop against 6 of the list, which falls at about an eighth of the ' +
    'completions. On the classic queue the looping keys wait their turn behind the list.',
  defaults: BESIDE_LIST,
  defaultQueue: 'priority',
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'loadbalancer-operator'),
    controllers: [loopBesideListController(params)],
  }),
};
