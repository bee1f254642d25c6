/**
 * Running a scenario on virtual time and writing what it did: parameters, the discrete-event loop,
 * the recording and its ground truth.
 *
 * The loop: the FakeClock holds every pending event (informer events, sync completions, watch echoes,
 * the queue's delayed adds and metric refreshes); each turn steps the clock to the earliest of its
 * next timer and the next scrape, then hands queued keys to idle workers with `tryGet()`. Scrapes
 * read the registry at exact multiples of the scrape interval. Nothing waits on a promise except the
 * scrape itself, so a seed and parameters give the same recording, byte for byte.
 */
import { FakeClock } from '../queue/index.js';
import { formatDuration, formatTime } from '../util/duration.js';
import {
  type ControllerSpec,
  DEFAULT_DURATION_MS,
  DEFAULT_FLAVOR,
  DEFAULT_SEED,
  type DiagnosisId,
  FLAVORS,
  type GroundTruth,
  type ProcessSpec,
  type QueueTruth,
  type Scenario,
  type SimulationParams,
} from './model.js';
import { SimProcess } from './process.js';
import { RecordingStore } from './recording-writer.js';
import { findScenario, SCENARIO_NAMES } from './scenarios/index.js';

/** 2026-01-01T00:00:00Z: recordings start here unless told otherwise, so they are reproducible. */
export const DEFAULT_START_MS = Date.UTC(2026, 0, 1);
export const DEFAULT_SCRAPE_INTERVAL_MS = 15_000;
/** `job` of every recorded sample. */
export const DEFAULT_JOB = 'workqueue-doctor-sim';
/** `instance` of every recorded sample: the scenario name and a nominal metrics port. */
export function defaultInstance(scenario: string): string {
  return `${scenario}:8080`;
}

/** Bad scenario name or parameter; the message says what is accepted. */
export class SimulationParamError extends Error {
  override readonly name = 'SimulationParamError';
}

export interface VirtualOptions {
  /** Default 15 s. */
  readonly scrapeIntervalMs?: number | undefined;
  /** Epoch ms of the first sample. Default 2026-01-01T00:00:00Z. */
  readonly startMs?: number | undefined;
  readonly job?: string | undefined;
  /** Default `<scenario>:8080`. */
  readonly instance?: string | undefined;
}

export interface RunStats {
  readonly simulatedMs: number;
  readonly scrapes: number;
  readonly series: number;
  readonly samples: number;
  readonly events: number;
  readonly syncs: number;
  readonly writes: number;
}

export interface VirtualRun {
  readonly truth: GroundTruth;
  /** The recording: `writeTo(write)` streams it in chunks, `text()` returns it whole. */
  readonly recording: RecordingStore;
  readonly stats: RunStats;
}

/** The scenario called `name`; throws `SimulationParamError` listing the known names otherwise. */
export function getScenario(name: string): Scenario {
  const scenario = findScenario(name);
  if (scenario === undefined) {
    throw new SimulationParamError(`unknown scenario "${name}"; known: ${SCENARIO_NAMES.join(', ')}`);
  }
  return scenario;
}

const MAX_WORKERS = 1_000;
const MAX_KEYS = 10_000_000;
const MAX_RATE = 100_000;
const MAX_DURATION_MS = 7 * 24 * 3_600_000;

/** Fills defaults and checks ranges; throws `SimulationParamError`. */
export function resolveParams(input: Partial<SimulationParams> = {}): SimulationParams {
  const seed = input.seed ?? DEFAULT_SEED;
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new SimulationParamError(`seed must be an integer >= 0, got ${seed}`);
  const durationMs = input.durationMs ?? DEFAULT_DURATION_MS;
  if (!Number.isFinite(durationMs) || durationMs <= 0 || durationMs > MAX_DURATION_MS) {
    throw new SimulationParamError(`duration must be more than 0 and at most 7d, got ${durationMs} ms`);
  }
  const flavor = input.flavor ?? DEFAULT_FLAVOR;
  if (!FLAVORS.includes(flavor)) {
    throw new SimulationParamError(`flavor must be one of ${FLAVORS.join(', ')}, got "${String(flavor)}"`);
  }
  const check = (name: string, value: number | undefined, min: number, max: number, integer: boolean): void => {
    if (value === undefined) return;
    if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
      throw new SimulationParamError(
        `${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${value}`,
      );
    }
  };
  check('workers', input.workers, 1, MAX_WORKERS, true);
  check('keys', input.keys, 1, MAX_KEYS, true);
  check('rate', input.rate, 0, MAX_RATE, false);
  return {
    seed,
    durationMs,
    flavor,
    ...(input.workers === undefined ? {} : { workers: input.workers }),
    ...(input.keys === undefined ? {} : { keys: input.keys }),
    ...(input.rate === undefined ? {} : { rate: input.rate }),
  };
}

function resolveOptions(scenario: Scenario, options: VirtualOptions) {
  const scrapeIntervalMs = options.scrapeIntervalMs ?? DEFAULT_SCRAPE_INTERVAL_MS;
  if (!Number.isFinite(scrapeIntervalMs) || scrapeIntervalMs < 1000) {
    throw new SimulationParamError(`scrape interval must be at least 1s, got ${scrapeIntervalMs} ms`);
  }
  const startMs = options.startMs ?? DEFAULT_START_MS;
  if (!Number.isFinite(startMs) || startMs < 0)
    throw new SimulationParamError(`start must be a time after 1970, got ${startMs}`);
  return {
    scrapeIntervalMs,
    startMs,
    job: options.job ?? DEFAULT_JOB,
    instance: options.instance ?? defaultInstance(scenario.name),
  };
}

/**
 * What the metrics can show of a queue's truth. Saturation is busy workers against the configured
 * maximum, which only controller-runtime exposes (`controller_runtime_max_concurrent_reconciles`); where
 * it is absent (component-base, a controller without reconcile metrics) an expected saturation becomes
 * allowed, and the note says why.
 */
function observableTruth(
  truth: ControllerSpec['truth'],
  exposesMaxWorkers: boolean,
): { expected: DiagnosisId[]; allowed: DiagnosisId[]; note?: string } {
  const expected = [...truth.expected];
  const allowed = [...truth.allowed];
  let note = truth.note;
  if (!exposesMaxWorkers && expected.includes('WorkqueueSaturated')) {
    expected.splice(expected.indexOf('WorkqueueSaturated'), 1);
    if (!allowed.includes('WorkqueueSaturated')) allowed.push('WorkqueueSaturated');
    const why = 'saturated, but no max-workers metric is exposed, so utilization cannot be measured';
    note = note === undefined ? why : `${note}; ${why}`;
  }
  return { expected, allowed, ...(note === undefined ? {} : { note }) };
}

/** The ground truth of `scenario` run with `params` (what `--list` shows and the truth file holds). */
export function groundTruth(
  scenario: Scenario,
  params: SimulationParams,
  options: VirtualOptions = {},
  spec: ProcessSpec = scenario.build(params),
): GroundTruth {
  const resolved = resolveOptions(scenario, options);
  const queues: QueueTruth[] = [];
  if (spec.leader) {
    for (const controller of spec.controllers) {
      const observable = controller.workqueueMetrics !== false;
      const reconcileLabels = params.flavor === 'controller-runtime' && controller.reconcileMetrics !== false;
      queues.push({
        name: observable ? controller.name : null,
        // controller-runtime's work-queue provider labels every queue with `controller`; without work-queue
        // series the controller is only known from controller_runtime_* series.
        controller: params.flavor === 'controller-runtime' && (observable || reconcileLabels) ? controller.name : null,
        ...observableTruth(controller.truth, params.flavor === 'controller-runtime' && reconcileLabels),
        facts: jsonFacts({
          workers: controller.workers,
          keys: controller.keys,
          rate: controller.events.rate,
          ...controller.facts,
        }),
      });
    }
  }
  if (spec.targetTruth !== undefined) {
    const target = spec.targetTruth;
    queues.push({
      name: null,
      controller: target.controller,
      expected: [...target.expected],
      allowed: [...target.allowed],
      ...(target.status === undefined ? {} : { status: target.status }),
      ...(target.note === undefined ? {} : { note: target.note }),
    });
  }
  const main = spec.controllers[0];
  return {
    scenario: scenario.name,
    summary: scenario.summary,
    job: resolved.job,
    instance: resolved.instance,
    flavor: params.flavor,
    standby: !spec.leader,
    parameters: {
      seed: params.seed,
      duration: formatDuration(params.durationMs),
      scrapeInterval: formatDuration(resolved.scrapeIntervalMs),
      start: formatTime(resolved.startMs),
      workers: main?.workers ?? params.workers ?? scenario.defaults.workers,
      keys: main?.keys ?? params.keys ?? scenario.defaults.keys,
      rate: main?.events.rate ?? params.rate ?? scenario.defaults.rate,
    },
    queues,
  };
}

/**
 * Advances virtual time to `timeMs` one event instant at a time, handing queued keys to idle workers
 * after each (so a key that becomes ready is picked up at the instant it does).
 */
export function advanceTo(clock: FakeClock, sim: SimProcess, timeMs: number): void {
  for (let next = clock.nextTimerAt(); next !== undefined && next <= timeMs; next = clock.nextTimerAt()) {
    clock.stepTo(next);
    sim.pump();
  }
  clock.stepTo(timeMs);
}

/** Facts as JSON keeps them: a non-finite number (an unbounded drain time, say) becomes a string. */
function jsonFacts(facts: Record<string, number | string | boolean>): Record<string, number | string | boolean> {
  const out: Record<string, number | string | boolean> = {};
  for (const [key, value] of Object.entries(facts)) {
    out[key] = typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
  }
  return out;
}

/**
 * Runs `scenario` on virtual time from `startMs` for `durationMs`, scraping every `scrapeIntervalMs`
 * (first scrape at the start, last at the last multiple of the interval within the duration).
 */
export async function runVirtual(
  scenario: string | Scenario,
  params: Partial<SimulationParams> = {},
  options: VirtualOptions = {},
): Promise<VirtualRun> {
  const definition = typeof scenario === 'string' ? getScenario(scenario) : scenario;
  const resolvedParams = resolveParams(params);
  const resolved = resolveOptions(definition, options);
  if (resolved.scrapeIntervalMs > resolvedParams.durationMs) {
    throw new SimulationParamError(
      `scrape interval (${formatDuration(resolved.scrapeIntervalMs)}) is longer than the duration (${formatDuration(resolvedParams.durationMs)})`,
    );
  }
  const spec = definition.build(resolvedParams);
  const truth = groundTruth(definition, resolvedParams, options, spec);

  const clock = new FakeClock(resolved.startMs);
  const sim = new SimProcess(spec, {
    clock,
    seed: resolvedParams.seed,
    flavor: resolvedParams.flavor,
    durationMs: resolvedParams.durationMs,
  });
  const store = new RecordingStore({ job: resolved.job, instance: resolved.instance });
  const scrapes = Math.floor(resolvedParams.durationMs / resolved.scrapeIntervalMs);

  sim.start();
  sim.pump();
  for (let k = 0; k <= scrapes; k++) {
    const scrapeAt = resolved.startMs + k * resolved.scrapeIntervalMs;
    advanceTo(clock, sim, scrapeAt);
    store.add(scrapeAt, await sim.registry.getMetricsAsJSON());
  }
  sim.stop();

  let events = 0;
  let syncs = 0;
  let writes = 0;
  for (const controller of sim.controllers) {
    events += controller.stats.events;
    syncs += controller.stats.syncs;
    writes += controller.stats.writes;
  }
  return {
    truth,
    recording: store,
    stats: {
      simulatedMs: scrapes * resolved.scrapeIntervalMs,
      scrapes: store.scrapeCount,
      series: store.seriesCount,
      samples: store.sampleCount,
      events,
      syncs,
      writes,
    },
  };
}
