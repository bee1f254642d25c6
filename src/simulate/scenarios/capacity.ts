/**
 * Capacity problems: arrivals a little above what the workers can complete (backlog), and a queue
 * running just below that (saturation). Default arrival rates are derived from workers × mean sync
 * time, so they keep their ratio to capacity whatever `--workers` says; an explicit `--rate` is
 * taken as is and the ground truth follows the resulting ratio.
 */
import { lognormal, meanMs } from '../distributions.js';
import type { ControllerSpec, Scenario, SimulationParams } from '../model.js';
import {
  backgroundPollsPerSecond,
  type LoadSizes,
  leaseName,
  listDrainSeconds,
  listDrainTruth,
  loadDefaults,
  loadSizes,
  MINUTE,
  overloadTruth,
  relistedList,
  relistedOverloadTruth,
  risingCapacityTruth,
  round,
  steadySync,
} from './common.js';
import { withSyncTail } from './slow-work.js';

// ---------------------------------------------------------------------------------------------
// backlog

/** The backlog scenario's syncs (log-normal around 80 ms); `--sync-ms` moves their median. */
export const BACKLOG_SYNC = lognormal(80, 0.6);
const BACKLOG: LoadSizes = { workers: 4, keys: 200_000, sync: BACKLOG_SYNC, load: 1.2, rateDigits: 3 };

export function backlogController(params: SimulationParams, name = 'pod'): ControllerSpec {
  const { workers, keys, rate, capacity: cap, sync } = loadSizes(params, BACKLOG);
  // With uniform keys, events for keys already waiting are deduplicated: arrivals the queue counts
  // fall as depth builds, and depth levels off where they meet completions, at keys × (1 − 1/load).
  // The default population keeps that far away; a small one reaches it early and the queue is then
  // saturated at a high but flat depth rather than growing.
  const load = rate / cap;
  const ceiling = load > 1 ? keys * (1 - 1 / load) : 0;
  // A backlog that deduplication has levelled off is a backlog while its keys wait long; a small population
  // levels off at a few keys per worker, each reconciled within seconds: saturation.
  const overload = overloadTruth({ keys, rate, capacity: cap }, params);
  // A relist queues every object not already waiting: over an overload the depth jumps and falls back to where
  // deduplication balances it (`relistedOverloadTruth`); under capacity it is a list of every object, worked off in
  // the time left over (`listDrainTruth`).
  const relist = relistedList(listDrainSeconds(keys, rate, cap), params);
  const relisted =
    load >= 1
      ? relistedOverloadTruth(overload, { keys, rate }, params)
      : listDrainTruth(load, relist.drainSeconds, params, relist.note.replace(/^; /, ''));
  const truth = withSyncTail(relisted, sync, cap, { from: load, to: load });
  return {
    name,
    workers,
    keys,
    events: { rate, keys: { kind: 'uniform' }, ...relist.events },
    sync: steadySync(sync),
    truth,
    facts: {
      meanSyncSeconds: round(meanMs(sync) / 1000, 4),
      capacityPerSecond: round(cap, 3),
      arrivalsPerSecond: rate,
      load: round(load, 3),
      dedupCeiling: Math.round(ceiling),
    },
  };
}

export const backlog: Scenario = {
  name: 'backlog',
  summary: 'arrivals 1.2× what the workers can complete: depth grows',
  description:
    'A pod controller over 200,000 objects: syncs of ~96 ms (log-normal, median 80 ms) on 4 workers complete ~42 ' +
    'per second; events for distinct objects arrive at 1.2× that (derived from --workers). Depth grows by several ' +
    'items per second, queue latency with it; workers are always busy.',
  defaults: loadDefaults(BACKLOG),
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'pod-operator'),
    controllers: [backlogController(params)],
  }),
};

// ---------------------------------------------------------------------------------------------
// saturation

/** The saturation scenario's syncs (log-normal around 400 ms); `--sync-ms` moves their median. */
export const SATURATION_SYNC = lognormal(400, 0.5);
const SATURATION: LoadSizes = { workers: 8, keys: 20_000, sync: SATURATION_SYNC, load: 0.93, rateDigits: 3 };

export const saturation: Scenario = {
  name: 'saturation',
  summary: 'workers ~93% busy: queue latency high, depth bounded',
  description:
    'A machine controller over 20,000 objects: syncs of ~450 ms on 8 workers (~17.6/s), distinct-object events at ' +
    '93% of that (derived from --workers). Items wait several times as long as they take; depth fluctuates but has ' +
    'no trend. The capacity is nearly spent: one more burst or slower dependency and it becomes a backlog.',
  defaults: loadDefaults(SATURATION),
  build: (params) => {
    const { workers, keys, rate, capacity: cap, sync } = loadSizes(params, SATURATION);
    const name = 'machine';
    const finalUtilization = (rate + backgroundPollsPerSecond({ name, keys }, rate, params)) / cap;
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'cluster-operator'),
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
            capacityPerSecond: round(cap, 3),
            arrivalsPerSecond: rate,
            utilization: round(rate / cap, 3),
            finalUtilization: round(finalUtilization, 3),
          },
        },
      ],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// gradual-backlog

const GRADUAL_SYNC = lognormal(80, 0.6);
const GRADUAL: LoadSizes = { workers: 4, keys: 200_000, sync: GRADUAL_SYNC, load: 0.5, rateDigits: 3 };
const GRADUAL_FINAL_LOAD = 1.3;
const GRADUAL_RAMP_MS = 30 * MINUTE;
/** Load above which the queue no longer drains: the excess is more than the depth's random walk takes back. */
const GRADUAL_DRAIN_LIMIT = 1.02;

export const gradualBacklog: Scenario = {
  name: 'gradual-backlog',
  summary: 'arrivals rise from 50% to 130% of capacity over 30 minutes: the queue falls behind gradually',
  description:
    'A pod controller over 200,000 objects, 4 workers (~42 syncs per second). Events for distinct objects rise ' +
    'linearly from half of that to 1.3× over 30 minutes (derived from --workers), then stay there. The queue keeps ' +
    'up until arrivals pass capacity near 19 minutes, stops draining soon after, and then grows ever faster.',
  defaults: loadDefaults(GRADUAL),
  build: (params) => {
    const { workers, keys, rate, capacity: cap, sync } = loadSizes(params, GRADUAL);
    const finalRate = round((rate / GRADUAL.load) * GRADUAL_FINAL_LOAD, GRADUAL.rateDigits);
    const loadAt = (ms: number) => (rate + (finalRate - rate) * Math.min(1, ms / GRADUAL_RAMP_MS)) / cap;
    // Where arrivals pass capacity; from there the depth random-walks upward and stops returning to zero.
    const overloadedAtMs = rate >= cap ? 0 : finalRate <= cap ? Number.POSITIVE_INFINITY : rampTimeOf(1.0);
    function rampTimeOf(load: number): number {
      return ((load * cap - rate) / (finalRate - rate)) * GRADUAL_RAMP_MS;
    }
    const final = overloadTruth(
      { keys, rate: loadAt(params.durationMs) * cap, capacity: cap },
      params,
      params.durationMs - Math.min(params.durationMs, overloadedAtMs),
    );
    const drainsUntilMs = Math.max(0, rampTimeOf(GRADUAL_DRAIN_LIMIT));
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'pod-operator'),
      controllers: [
        {
          name: 'pod',
          workers,
          keys,
          events: { rate, ramp: { overMs: GRADUAL_RAMP_MS, toRate: finalRate }, keys: { kind: 'uniform' } },
          sync: steadySync(sync),
          truth: withSyncTail(
            {
              ...final,
              // Found within one `for` of the queue ceasing to drain: where arrivals pass capacity by the 2% the
              // depth needs to rise measurably against the completions instead of random-walking back to zero.
              ...(Number.isFinite(overloadedAtMs) ? { onsetMs: drainsUntilMs } : {}),
              note: `arrivals rise from ${round(rate / cap, 2)}× to ${round(finalRate / cap, 2)}× capacity; overloaded from ${round(overloadedAtMs / MINUTE, 1)}m`,
            },
            sync,
            cap,
            { from: rate / cap, to: finalRate / cap },
          ),
          facts: {
            capacityPerSecond: round(cap, 3),
            initialRate: rate,
            finalRate,
            overloadedAtMs: round(overloadedAtMs, 0),
          },
        },
      ],
    };
  },
};
