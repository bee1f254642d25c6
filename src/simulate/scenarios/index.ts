/**
 * The named scenarios, in the order `simulate --list` shows them: near misses first, then one per
 * diagnosis, then the mix.
 */
import type { Scenario } from '../model.js';
import { backlog, gradualBacklog, saturation } from './capacity.js';
import { initialList, sawtoothBatches } from './draining.js';
import { persistentFailure, requeueAsError } from './failures.js';
import {
  hotLoopNoBackoff,
  hotLoopStatusWrite,
  loopBesideList,
  loopBesideWriters,
  selfRequeueLoop,
} from './hot-loops.js';
import { mixed } from './mixed.js';
import {
  bulkChange,
  busyButFine,
  eventPerSync,
  healthy,
  rejectedWrites,
  requeueAfterScenario,
  resyncBurst,
  rolloutBurst,
  shortSpike,
  slowButSteady,
} from './near-misses.js';
import { notObservable, standby } from './observability.js';
import { blockingCall, slowPoll, stuckWorker } from './slow-work.js';
import { cachesNeverSync, startupList, starvedBacklog } from './startup.js';
import { dependencyOutage, transientErrors } from './transient.js';

export const SCENARIOS: readonly Scenario[] = [
  healthy,
  resyncBurst,
  rolloutBurst,
  shortSpike,
  bulkChange,
  busyButFine,
  slowButSteady,
  eventPerSync,
  rejectedWrites,
  requeueAfterScenario,
  transientErrors,
  dependencyOutage,
  initialList,
  sawtoothBatches,
  startupList,
  standby,
  backlog,
  gradualBacklog,
  starvedBacklog,
  cachesNeverSync,
  saturation,
  hotLoopStatusWrite,
  hotLoopNoBackoff,
  loopBesideWriters,
  loopBesideList,
  selfRequeueLoop,
  blockingCall,
  slowPoll,
  stuckWorker,
  persistentFailure,
  requeueAsError,
  notObservable,
  mixed,
];

export const SCENARIO_NAMES: readonly string[] = SCENARIOS.map((scenario) => scenario.name);

/** The scenario called `name`, or undefined. */
export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((scenario) => scenario.name === name);
}
