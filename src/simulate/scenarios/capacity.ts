/**
 * Capacity problems: arrivals a little above what the workers can complete (backlog), and a queue
 * running just below that (saturation). Default arrival rates are derived from workers × mean sync
 * time, so they keep their ratio to capacity whatever `--workers` says; an explicit `--rate` is
 * taken as is and the ground truth follows the resulting ratio.
 */
import { lognormal, meanMs } from '../distributions.js';
import type { ControllerSpec, Scenario, SimulationParams } from '../model.js';
import { capacityTruth, type LoadSizes, leaseName, loadDefaults, loadSizes, round, steadySync } from './common.js';

// ---------------------------------------------------------------------------------------------
// backlog

const BACKLOG_SYNC = lognormal(80, 0.6);
const BACKLOG: LoadSizes = { workers: 4, keys: 200_000, sync: BACKLOG_SYNC, load: 1.2, rateDigits: 3 };

export function backlogController(params: SimulationParams, name = 'pod'): ControllerSpec {
  const { workers, keys, rate, capacity: cap } = loadSizes(params, BACKLOG);
  // With uniform keys, events for keys already waiting are deduplicated: arrivals the queue counts
  // fall as depth builds, and depth levels off where they meet completions, at keys × (1 − 1/load).
  // The default population keeps that far away; a small one reaches it early and the queue is then
  // saturated at a high but flat depth rather than growing.
  const load = rate / cap;
  const ceiling = load > 1 ? keys * (1 - 1 / load) : 0;
  let truth = capacityTruth(load);
  if (load >= 1.1 && (rate * params.durationMs) / 1000 / keys > 3) {
    truth = {
      expected: ['WorkqueueSaturated'],
      allowed: ['WorkqueueBacklog'],
      note: `${keys} keys: deduplication levels depth off near ${Math.round(ceiling)} early in the run`,
    };
  }
  return {
    name,
    workers,
    keys,
    events: { rate, keys: { kind: 'uniform' } },
    sync: steadySync(BACKLOG_SYNC),
    truth,
    facts: {
      meanSyncSeconds: round(meanMs(BACKLOG_SYNC) / 1000, 4),
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

const SATURATION_SYNC = lognormal(400, 0.5);
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
    const { workers, keys, rate, capacity: cap } = loadSizes(params, SATURATION);
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'cluster-operator'),
      controllers: [
        {
          name: 'machine',
          workers,
          keys,
          events: { rate, keys: { kind: 'uniform' } },
          sync: steadySync(SATURATION_SYNC),
          truth: capacityTruth(rate / cap),
          facts: { capacityPerSecond: round(cap, 3), arrivalsPerSecond: rate, utilization: round(rate / cap, 3) },
        },
      ],
    };
  },
};
