/**
 * Healthy controllers, several of them deliberately close to a problem's signature: none of them
 * may be diagnosed (their ground truth expects nothing unless overridden parameters push them over).
 */
import { type DurationDist, lognormal, meanMs, sampler } from '../distributions.js';
import type { ControllerSpec, ProcessSpec, QueueTruthSpec, Scenario, SimulationParams } from '../model.js';
import { ERROR, requeueAfter, SUCCESS } from '../model.js';
import {
  backgroundPollsPerSecond,
  capacity,
  capacityTruth,
  exposesReconcileErrors,
  failureTruth,
  firstKeys,
  type LoadSizes,
  leaseName,
  listDrainTruth,
  loadDefaults,
  loadSizes,
  MINUTE,
  overloadTruth,
  RECORDED_EVENT,
  risingCapacityTruth,
  round,
  SECOND,
  type Sizes,
  sizes,
  steadySync,
  UNWATCHED_UPDATE,
  withSyncMs,
} from './common.js';
import { blockingPerMinute, withSyncTail } from './slow-work.js';

// ---------------------------------------------------------------------------------------------
// healthy

const HEALTHY: Sizes = { workers: 4, keys: 800, rate: 4 };
const HEALTHY_SYNC = lognormal(8, 0.6);
const HEALTHY_WRITE_ON_CHANGE = 0.3;
const HEALTHY_RESYNC_MS = 10 * MINUTE;

/** A quiet controller: steady events (mildly skewed towards some objects), fast syncs, a 10-minute resync. */
export function healthyController(params: SimulationParams, name = 'deployment'): ControllerSpec {
  const { workers, keys, rate } = sizes(params, HEALTHY);
  // Syncs per second: events, the echoes of the writes they cause, and the resync spread over its period.
  const syncsPerSecond = rate * (1 + HEALTHY_WRITE_ON_CHANGE) + keys / (HEALTHY_RESYNC_MS / SECOND);
  const utilization = syncsPerSecond / capacity(workers, HEALTHY_SYNC);
  return {
    name,
    workers,
    keys,
    events: {
      rate,
      keys: { kind: 'zipf', s: 0.8 },
      resyncPeriodMs: HEALTHY_RESYNC_MS,
      firstResyncAtMs: 7 * MINUTE + 7_300,
    },
    sync: steadySync(HEALTHY_SYNC, HEALTHY_WRITE_ON_CHANGE),
    truth: capacityTruth(utilization, params),
    facts: { meanSyncSeconds: round(meanMs(HEALTHY_SYNC) / 1000, 4), utilization: round(utilization, 3) },
  };
}

export const healthy: Scenario = {
  name: 'healthy',
  summary: 'steady events, fast syncs, a 10-minute resync',
  description:
    'One controller over 800 objects: about 4 watch events per second, skewed towards some objects (zipf 0.8), ' +
    'syncs of ~8 ms (log-normal), a status write on 30% of real changes (whose echo costs one more, quiet sync), ' +
    'and a full resync every 10 minutes. Nothing to diagnose.',
  defaults: HEALTHY,
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'apps-operator'),
    controllers: [healthyController(params)],
  }),
};

// ---------------------------------------------------------------------------------------------
// resync-burst

const RESYNC: Sizes = { workers: 4, keys: 12_000, rate: 3 };
const RESYNC_SYNC = lognormal(12, 0.5);
const RESYNC_PERIOD_MS = 5 * MINUTE;

export const resyncBurst: Scenario = {
  name: 'resync-burst',
  summary: 'a large population re-added by a full resync every 5 minutes; each resync drains in under a minute',
  description:
    '12,000 objects, 3 watch events per second, syncs of ~12 ms, 4 workers (about 290 syncs/s of capacity). ' +
    'Every 5 minutes (first at 2m) the informer resyncs: depth jumps to 12,000 and drains in ~40 s, queue ' +
    'latency peaks at the drain time. Periodic, bounded, and expected: not a backlog.',
  defaults: RESYNC,
  build: (params) => {
    const { workers, keys, rate } = sizes(params, RESYNC);
    const cap = capacity(workers, RESYNC_SYNC);
    const drainSeconds = rate >= cap ? Number.POSITIVE_INFINITY : keys / (cap - rate);
    const steady = (rate + keys / (RESYNC_PERIOD_MS / SECOND)) / cap;
    let truth = capacityTruth(steady, params);
    if (truth.expected.length === 0 && drainSeconds > RESYNC_PERIOD_MS / SECOND) {
      truth = {
        expected: ['WorkqueueBacklog'],
        allowed: ['WorkqueueSaturated'],
        note: 'a resync does not drain before the next one',
      };
    } else if (truth.expected.length === 0 && drainSeconds > 120) {
      truth = {
        expected: [],
        allowed: ['WorkqueueSaturated', 'WorkqueueBacklog'],
        note: `each resync takes ${Math.round(drainSeconds)} s to drain`,
      };
    } else if (truth.expected.length === 0) {
      truth = { ...truth, note: `each resync drains in ${Math.round(drainSeconds)} s` };
    }
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'rbac-operator'),
      controllers: [
        {
          name: 'rolebinding',
          workers,
          keys,
          events: {
            rate,
            keys: { kind: 'uniform' },
            resyncPeriodMs: RESYNC_PERIOD_MS,
            firstResyncAtMs: 2 * MINUTE + 7_300,
          },
          sync: steadySync(RESYNC_SYNC, 0.1),
          truth,
          facts: {
            capacityPerSecond: round(cap, 2),
            drainSeconds: round(drainSeconds, 1),
            resyncPeriodSeconds: RESYNC_PERIOD_MS / SECOND,
          },
        },
      ],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// rollout-burst

const ROLLOUT: Sizes = { workers: 5, keys: 600, rate: 2 };
const ROLLOUT_SYNC = lognormal(15, 0.4);

export const rolloutBurst: Scenario = {
  name: 'rollout-burst',
  summary: 'bursts of many events for a few keys (rollouts), absorbed by deduplication',
  description:
    'A deployment controller over 600 objects, 2 events per second. Every 4 minutes (first at 1m) a rollout ' +
    'sends 600 events per second for 10 s, all about 3 deployments (their pods changing): the queue collapses ' +
    'them, each of the 3 keys is synced back to back (~15 ms) while events keep coming, and a status write on half ' +
    'of those syncs echoes back. Short, bounded, deduplicated: no hot loop, no backlog.',
  defaults: ROLLOUT,
  build: (params) => {
    const { workers, keys, rate } = sizes(params, ROLLOUT);
    const utilization = (rate * 1.5) / capacity(workers, ROLLOUT_SYNC);
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'apps-operator'),
      controllers: [
        {
          name: 'deployment',
          workers,
          keys,
          events: {
            rate,
            keys: { kind: 'zipf', s: 0.6 },
            bursts: [
              {
                firstAtMs: 1 * MINUTE + 4_100,
                everyMs: 4 * MINUTE,
                durationMs: 10 * SECOND,
                rate: 600,
                keys: { kind: 'few', count: 3 },
              },
            ],
          },
          sync: steadySync(ROLLOUT_SYNC, 0.5),
          truth: { ...capacityTruth(utilization, params), note: 'rollout bursts are absorbed by deduplication' },
          facts: { burstEventsPerSecond: 600, burstSeconds: 10, burstKeys: 3, burstEverySeconds: 240 },
        },
      ],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// A burst of distinct objects over a steady load: short-spike, bulk-change

/** When a burst scenario's burst begins: at 10 minutes, or a third into shorter runs. */
function burstStartMs(params: SimulationParams): number {
  return Math.min(10 * MINUTE, Math.floor(params.durationMs / 3));
}

/** Whether what a burst left has not drained well (two minutes) before the end of the run. */
function undrainedAtEnd(drainedAtMs: number, params: SimulationParams): boolean {
  return drainedAtMs > params.durationMs - 2 * MINUTE;
}

/**
 * A config operator whose configmap controller syncs `rate` uniform events a second over `keys` objects and takes
 * one burst of `burst.rate` events a second for distinct objects.
 */
function configmapBurstProcess(
  params: SimulationParams,
  c: {
    readonly workers: number;
    readonly keys: number;
    readonly rate: number;
    readonly sync: DurationDist;
    readonly burst: { readonly firstAtMs: number; readonly durationMs: number; readonly rate: number };
    readonly truth: QueueTruthSpec;
    readonly facts: Readonly<Record<string, number>>;
  },
): ProcessSpec {
  return {
    leader: true,
    leaseName: leaseName(params.flavor, 'config-operator'),
    controllers: [
      {
        name: 'configmap',
        workers: c.workers,
        keys: c.keys,
        events: { rate: c.rate, keys: { kind: 'uniform' }, bursts: [{ ...c.burst, keys: { kind: 'distinct' } }] },
        sync: steadySync(c.sync),
        truth: c.truth,
        facts: c.facts,
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// short-spike

const SPIKE: Sizes = { workers: 4, keys: 30_000, rate: 5 };
const SPIKE_SYNC = lognormal(40, 0.4);
const SPIKE_FACTOR = 1.6;
const SPIKE_DURATION_MS = 2 * MINUTE;

export const shortSpike: Scenario = {
  name: 'short-spike',
  summary: 'a two-minute burst of distinct keys builds real depth, then drains',
  description:
    'A configmap controller, 30,000 objects, 5 events per second, syncs of ~43 ms on 4 workers (~92/s). At 10m ' +
    '(or a third into shorter runs) a bulk change touches distinct objects at 1.6× capacity for 2 minutes: depth ' +
    'climbs to several thousand, then drains in about a minute and a half. Transient: not a backlog.',
  defaults: SPIKE,
  build: (params) => {
    const { workers, keys, rate } = sizes(params, SPIKE);
    const cap = capacity(workers, SPIKE_SYNC);
    const spikeRate = SPIKE_FACTOR * cap;
    const startMs = burstStartMs(params);
    const spikeMs = params.spikeSeconds === undefined ? SPIKE_DURATION_MS : params.spikeSeconds * SECOND;
    const peak = Math.max(0, (spikeRate + rate - cap) * (spikeMs / SECOND));
    const drainSeconds = rate >= cap ? Number.POSITIVE_INFINITY : peak / (cap - rate);
    const drainedAtMs = startMs + spikeMs + drainSeconds * SECOND;
    let truth = capacityTruth(rate / cap, params);
    if (truth.expected.length === 0 && undrainedAtEnd(drainedAtMs, params)) {
      truth = {
        expected: [],
        allowed: ['WorkqueueBacklog', 'WorkqueueSaturated'],
        note: 'the spike has not drained well before the end',
      };
    } else if (truth.expected.length === 0) {
      truth = {
        expected: [],
        allowed: [],
        note: `the spike peaks near ${Math.round(peak)} items and drains ${Math.round(drainSeconds)} s after it ends`,
      };
    }
    return configmapBurstProcess(params, {
      workers,
      keys,
      rate,
      sync: SPIKE_SYNC,
      burst: { firstAtMs: startMs, durationMs: spikeMs, rate: spikeRate },
      truth,
      facts: {
        capacityPerSecond: round(cap, 2),
        spikeEventsPerSecond: round(spikeRate, 2),
        spikeStartSeconds: startMs / SECOND,
        spikeSeconds: spikeMs / SECOND,
        expectedPeakDepth: Math.round(peak),
        drainSeconds: round(drainSeconds, 1),
      },
    });
  },
};

// ---------------------------------------------------------------------------------------------
// bulk-change

const BULK: LoadSizes = { workers: 4, keys: 100_000, sync: lognormal(40, 0.4), load: 0.7, rateDigits: 1 };
/** Share of the objects the bulk change touches: a relabelling, a migration, an upstream import. */
const BULK_SHARE = 0.2;
/** The change lands within two seconds (an upstream job's batch, a controller relabelling what it owns). */
const BULK_SPREAD_MS = 2 * SECOND;

export const bulkChange: Scenario = {
  name: 'bulk-change',
  summary: 'a change to 20,000 objects lands at once on a controller at 70% load and drains for about 12 minutes',
  description:
    'A configmap controller over 100,000 objects, syncs of ~43 ms on 4 workers (~92/s), 65 events per second. At ' +
    '10m (or a third into shorter runs) a bulk change (a relabelling, a migration) touches a fifth of the objects, ' +
    '20,000, within 2 seconds: the depth jumps to 20,000 and falls at the capacity left over, every worker busy, ' +
    'for about twelve minutes, keys waiting up to that long. One list worked off, however long: not a backlog.',
  defaults: loadDefaults(BULK),
  build: (params) => {
    const { workers, keys, rate, capacity: cap, sync } = loadSizes(params, BULK);
    const objects = Math.floor(keys * BULK_SHARE);
    const startMs = burstStartMs(params);
    // At most: steady events for keys already waiting coalesce, so the list drains a little faster.
    const drainSeconds = rate >= cap ? Number.POSITIVE_INFINITY : objects / (cap - rate);
    const drainedAtMs = startMs + drainSeconds * SECOND;
    const list = listDrainTruth(
      rate / cap,
      drainSeconds,
      params,
      `a bulk change of ${objects} objects at ${Math.round(startMs / MINUTE)}m drains in about ${Math.round(drainSeconds / 60)} minutes`,
    );
    // The list's allowances run from when it lands.
    let truth: QueueTruthSpec =
      list.allowedUntilMs === undefined ? list : { ...list, allowedUntilMs: list.allowedUntilMs + startMs };
    // Syncs of the steady events before the change, every worker's while it drains.
    truth = withSyncTail(truth, sync, cap, { from: rate / cap, to: 1 });
    if (truth.expected.length === 0 && undrainedAtEnd(drainedAtMs, params)) {
      truth = {
        expected: [],
        allowed: [...new Set([...truth.allowed, 'WorkqueueBacklog' as const, 'WorkqueueSaturated' as const])],
        note: `${truth.note}; it has not drained well before the end`,
      };
    }
    return configmapBurstProcess(params, {
      workers,
      keys,
      rate,
      sync,
      burst: { firstAtMs: startMs, durationMs: BULK_SPREAD_MS, rate: objects / (BULK_SPREAD_MS / SECOND) },
      truth,
      facts: {
        capacityPerSecond: round(cap, 2),
        bulkObjects: objects,
        bulkAtSeconds: startMs / SECOND,
        drainSeconds: round(drainSeconds, 1),
      },
    });
  },
};

// ---------------------------------------------------------------------------------------------
// busy-but-fine

const BUSY_SYNC = lognormal(100, 0.5);
const BUSY: LoadSizes = { workers: 4, keys: 20_000, sync: BUSY_SYNC, load: 0.8, rateDigits: 2 };

export const busyButFine: Scenario = {
  name: 'busy-but-fine',
  summary: 'workers ~80% busy, stable depth and latency',
  description:
    'An ingress controller over 20,000 objects, syncs of ~113 ms on 4 workers (~35/s), and distinct-object events ' +
    'at 80% of that capacity (the default rate is derived from --workers). Workers are busy most of the time, a few ' +
    'items wait, depth and queue latency stay bounded with no trend. Busy is not saturated.',
  defaults: loadDefaults(BUSY),
  build: (params) => {
    const { workers, keys, rate, capacity: cap, sync } = loadSizes(params, BUSY);
    const name = 'ingress';
    const finalUtilization = (rate + backgroundPollsPerSecond({ name, keys }, rate, params)) / cap;
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'ingress-operator'),
      controllers: [
        {
          name,
          workers,
          keys,
          events: { rate, keys: { kind: 'uniform' } },
          sync: steadySync(sync),
          truth: withSyncTail(risingCapacityTruth(rate / cap, finalUtilization, params), sync, cap, {
            from: rate / cap,
            to: finalUtilization,
          }),
          facts: {
            capacityPerSecond: round(cap, 2),
            utilization: round(rate / cap, 3),
            finalUtilization: round(finalUtilization, 3),
          },
        },
      ],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// slow-but-steady

const SLOW: Sizes = { workers: 8, keys: 2_000, rate: 1.2 };
const SLOW_SYNC = lognormal(2_000, 0.25);
const SLOW_WRITE_ON_CHANGE = 0.3;

export const slowButSteady: Scenario = {
  name: 'slow-but-steady',
  summary: 'every sync takes ~2 s, enough workers, nothing queues up',
  description:
    'A DNS-record controller whose every sync calls a provider API: ~2 s each (log-normal, sigma 0.25, p99 ~3.6 s). ' +
    '1.2 events per second on 8 workers keeps them ~40% busy; depth stays near 0. Uniformly slow syncs are the ' +
    'cost of the job, not a blocking call: the longest-running processor never passes a few seconds. A slower ' +
    'provider (--sync-ms) stretches the tail: from a median of about 5.5 s, syncs of 10 s and more recur every ' +
    'minute or two, the blocking call of any other controller, and slow work is owed.',
  defaults: SLOW,
  build: (params) => {
    const { workers, keys, rate } = sizes(params, SLOW);
    // `syncMs` moves the median of the uniformly slow syncs (a slower provider), their spread kept.
    const sync = withSyncMs(SLOW_SYNC, params);
    const cap = capacity(workers, sync);
    const utilization = (rate * (1 + SLOW_WRITE_ON_CHANGE)) / cap;
    const name = 'dnsrecord';
    const finalUtilization = utilization + backgroundPollsPerSecond({ name, keys }, rate, params) / cap;
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'dns-operator'),
      controllers: [
        {
          name,
          workers,
          keys,
          // Syncs of 2 s: a full resync would hold every worker for minutes, so it keeps controller-runtime's
          // default SyncPeriod of 10 hours.
          events: { rate, keys: { kind: 'uniform' }, resyncPeriodMs: 10 * 60 * MINUTE },
          sync: steadySync(sync, SLOW_WRITE_ON_CHANGE),
          truth: withSyncTail(risingCapacityTruth(utilization, finalUtilization, params), sync, cap, {
            from: utilization,
            to: finalUtilization,
          }),
          facts: {
            meanSyncSeconds: round(meanMs(sync) / 1000, 3),
            blockingSyncsPerHour: round(blockingPerMinute(sync, cap, utilization) * 60, 2),
            utilization: round(utilization, 3),
            finalUtilization: round(finalUtilization, 3),
          },
        },
      ],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// event-per-sync

const EVENT_PER_SYNC: Sizes = { workers: 2, keys: 40, rate: 0.8 };
const EVENT_SYNC = lognormal(15, 0.5);

export const eventPerSync: Scenario = {
  name: 'event-per-sync',
  summary: 'a quiet controller records an Event on every sync: one write per add, no loop',
  description:
    'A controller over 40 objects, 0.8 events per second, syncs of ~17 ms on 2 workers, that records a Kubernetes ' +
    'Event on every successful sync (as client-go\'s sample-controller does with "Synced"). Each sync makes one API ' +
    'write that no watch of the controller echoes: with the lease renewals (a PUT every 2 s) the process writes ' +
    'about 1.6 times per add and the depth stays near zero, the signature of a status-write loop, but every add is a ' +
    'real change and there are under one a second. Nothing to diagnose. From one add a second (--rate) the metrics ' +
    'no longer tell it from a loop: the hot-loop rule reads it as one, which this truth counts as a false alarm.',
  defaults: EVENT_PER_SYNC,
  build: (params) => {
    const { workers, keys, rate } = sizes(params, EVENT_PER_SYNC);
    const writes = params.writesPerSync ?? 1;
    const requests = [RECORDED_EVENT, ...Array.from({ length: writes - 1 }, () => UNWATCHED_UPDATE)];
    const cap = capacity(workers, EVENT_SYNC);
    const utilization = rate / cap;
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'sample-operator'),
      controllers: [
        {
          name: 'foo',
          workers,
          keys,
          events: { rate, keys: { kind: 'uniform' } },
          sync: ({ rng }) => {
            const draw = sampler(EVENT_SYNC, rng);
            return () => ({ durationMs: draw(), result: SUCCESS, requests });
          },
          // Overloaded over few objects, deduplication holds the depth (`overloadTruth`).
          truth: {
            ...overloadTruth({ keys, rate, capacity: cap }, params),
            note:
              writes === 1
                ? 'every sync records an Event: one write per real change, nothing loops'
                : `every sync records an Event and updates ${writes - 1} unwatched object(s): ${writes} writes per real change, nothing loops`,
          },
          facts: { writesPerAdd: writes, utilization: round(utilization, 4) },
        },
      ],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// rejected-writes

const REJECTED_WRITES: Sizes = { workers: 2, keys: 300, rate: 3 };
const REJECTED_SYNC = lognormal(15, 0.5);
/** A write an admission webhook denies: the controller logs it and returns (no error, no requeue). */
const DENIED_WRITE = { method: 'PATCH', code: '403' } as const;

/**
 * Nothing loops: every add is a real change. Where the reconciler's own metrics are there (controller-runtime),
 * they show it: no errors and no requeues, so nothing puts the keys back, and a hot loop is wrong. Without them
 * (a hand-written worker), one denied write per add with no retries is also what a slow loop of denied writes
 * re-added at once shows (each pass one denied write and its Warning Event, one add): the counters cannot tell
 * them, and a hot loop is allowed. Two or more denied writes per add are more than such a loop makes.
 */
function rejectedWritesTruth(
  capacity: QueueTruthSpec,
  denied: number,
  params: Pick<SimulationParams, 'flavor'>,
): QueueTruthSpec {
  const note = `every sync makes ${denied} write(s) a webhook denies, logged with a Warning Event and dropped: the adds are real changes, nothing loops`;
  return denied === 1 && !exposesReconcileErrors(params.flavor)
    ? {
        ...capacity,
        allowed: [...capacity.allowed, 'WorkqueueHotLoop'],
        note: `${note}; without reconcile metrics one failed write per add and no retries read as a slow loop of denied writes would`,
      }
    : { ...capacity, note };
}

export const rejectedWrites: Scenario = {
  name: 'rejected-writes',
  summary: 'every sync makes writes a webhook denies, logged and dropped: failed writes track the adds, no loop',
  description:
    'A label-sync controller over 300 objects, 3 events a second, 2 workers. An admission webhook denies its patches ' +
    "of the objects' children: every sync tries two of them, both answered 403, records a Warning Event and returns " +
    'without an error (no requeue, no retry). The process counts two failed writes and three writes per add and no ' +
    'retries while the depth stays at zero, but every add is a real change: not a loop. In the component-base ' +
    "flavor it is a hand-written worker over client-go's queue (no controller_runtime_* series); in the " +
    'controller-runtime flavor a reconciler, whose metrics count every reconcile a success. --writes-per-sync sets ' +
    'the denied writes per sync (default 2); --backoff-base-ms makes the worker return the error instead, each key ' +
    'requeued through a per-item exponential rate limiter from that first delay to 1000 s: retried with backoff, ' +
    'every object failing.',
  defaults: REJECTED_WRITES,
  defaultQueue: 'classic',
  build: (params) => {
    const { workers, keys, rate } = sizes(params, REJECTED_WRITES);
    const denied = params.writesPerSync ?? 2;
    const requests = [...Array.from({ length: denied }, () => DENIED_WRITE), RECORDED_EVENT];
    // Returned as an error, the failure goes back through the rate limiter: retried with backoff, not dropped.
    const returned = params.backoffBaseMs !== undefined;
    const capacity = capacityTruth((rate * meanMs(REJECTED_SYNC)) / 1000 / workers, params);
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'label-operator'),
      controllers: [
        {
          name: 'labelsync',
          workers,
          keys,
          events: { rate, keys: { kind: 'uniform' } },
          backoffBaseMs: params.backoffBaseMs,
          sync: ({ rng }) => {
            const draw = sampler(REJECTED_SYNC, rng);
            const result = returned ? ERROR : SUCCESS;
            return () => ({ durationMs: draw(), result, requests });
          },
          truth: !returned
            ? rejectedWritesTruth(capacity, denied, params)
            : params.backoffBaseMs === 0
              ? {
                  expected: [],
                  // Every object loops: each key holds a worker, those beyond the workers stand waiting.
                  allowed: [
                    'WorkqueueHotLoop',
                    'WorkqueuePersistentFailures',
                    ...(keys >= 0.8 * workers ? (['WorkqueueSaturated'] as const) : []),
                    ...(keys > workers ? (['WorkqueueBacklog'] as const) : []),
                  ],
                  note: `every sync makes ${denied} write(s) a webhook denies and returns the error, requeued at once by a limiter whose every delay is zero: every object loops`,
                }
              : failureTruth(
                  params,
                  `every sync makes ${denied} write(s) a webhook denies and returns the error: every object fails and is retried with backoff`,
                ),
          facts: { deniedWritesPerSync: denied },
        },
      ],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// requeue-after

const REQUEUE_AFTER: Sizes = { workers: 2, keys: 400, rate: 1 };
const POLL_MS = 30 * SECOND;
const WAITING_SHARE = 0.3;
const POLL_SYNC = lognormal(30, 0.5);

export function requeueAfterController(params: SimulationParams, name = 'certificate'): ControllerSpec {
  const { workers, keys, rate } = sizes(params, REQUEUE_AFTER);
  const waiting = Math.max(1, Math.round(keys * WAITING_SHARE));
  const polls = waiting / (POLL_MS / SECOND);
  const utilization = (rate + polls) / capacity(workers, POLL_SYNC);
  const truth = capacityTruth(utilization, params);
  return {
    name,
    workers,
    keys,
    events: { rate, keys: { kind: 'uniform' }, initialKeys: firstKeys(waiting) },
    sync: ({ rng }) => {
      const draw = sampler(POLL_SYNC, rng);
      const poll = requeueAfter(POLL_MS);
      return (ctx) => ({ durationMs: draw(), result: ctx.key < waiting ? poll : SUCCESS });
    },
    truth: {
      ...truth,
      note:
        params.flavor === 'component-base'
          ? 'correct RequeueAfter polling; without reconcile error metrics steady retries prove nothing (an observation, not a finding)'
          : 'correct RequeueAfter polling: retries without errors',
    },
    facts: { waitingKeys: waiting, pollIntervalSeconds: POLL_MS / SECOND, expectedRetriesPerSecond: round(polls, 3) },
  };
}

export const requeueAfterScenario: Scenario = {
  name: 'requeue-after',
  summary: 'objects waiting on an external condition, polled correctly with RequeueAfter(30s)',
  description:
    'A certificate controller over 400 objects; 30% of them wait on an external condition that does not resolve ' +
    'during the run (an ACME order, a DNS record) and are polled every 30 s with RequeueAfter. client-go counts ' +
    'every addAfter as a retry, so workqueue_retries_total rises steadily (~4/s) with no reconcile error: a retry ' +
    'is not a failure.',
  defaults: REQUEUE_AFTER,
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'cert-operator'),
    controllers: [requeueAfterController(params)],
  }),
};
