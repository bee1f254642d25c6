/**
 * Running a scenario on virtual time and writing what it did: parameters, the discrete-event loop,
 * the recording and its ground truth.
 *
 * The loop: the FakeClock holds every pending event (informer events, sync completions, watch echoes,
 * the queue's delayed adds and metric refreshes); each turn steps the clock to the earliest of its
 * next timer and the next scrape, then hands queued keys to idle workers with `tryGet()`. Scrapes
 * read the registry at the multiples of the scrape interval, each offset by the background's seeded
 * jitter (`scrapeTimes`). Nothing waits on a promise except the scrape itself, so a seed and parameters
 * give the same recording, byte for byte.
 */

import { DEFAULT_MAX_BACKOFF_MS, FakeClock } from '../queue/index.js';
import { DEFAULT_SCRAPE_INTERVAL_MS } from '../store/history.js';
import { formatDuration, formatTime } from '../util/duration.js';
import { ControllerBackground } from './controller-background.js';
import {
  BACKGROUND_MODES,
  type BackgroundSpec,
  type ControllerSpec,
  DEFAULT_BACKGROUND_MODE,
  DEFAULT_DURATION_MS,
  DEFAULT_FLAVOR,
  DEFAULT_SEED,
  defaultQueueKind,
  FLAVORS,
  type GroundTruth,
  type ProcessSpec,
  type QueueBackgroundTruth,
  type QueueTruth,
  queueKindsOf,
  resolveBackground,
  type Scenario,
  type SimulationParams,
  scenarioQueueKind,
} from './model.js';
import { SimProcess } from './process.js';
import { Random } from './random.js';
import { RecordingStore } from './recording-writer.js';
import { findScenario, SCENARIO_NAMES } from './scenarios/index.js';

/** 2026-01-01T00:00:00Z: recordings start here unless told otherwise, so they are reproducible. */
export const DEFAULT_START_MS = Date.UTC(2026, 0, 1);
export { DEFAULT_SCRAPE_INTERVAL_MS };
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
/** A sync (blocking or not) of a day is already a stuck one. */
const MAX_BLOCKING_SECONDS = 86_400;
/** More writes than this in one sync is not a controller's sync any more. */
const MAX_WRITES_PER_SYNC = 20;
const MAX_DURATION_MS = 7 * 24 * 3_600_000;

/**
 * Fills defaults and checks ranges; throws `SimulationParamError`. The queue, when not given, is
 * `scenario`'s own default (`scenarioQueueKind`), or the flavor's without a scenario.
 */
export function resolveParams(input: Partial<SimulationParams> = {}, scenario?: Scenario): SimulationParams {
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
  check('failingKeys', input.failingKeys, 0, MAX_KEYS, true);
  check('invalidKeys', input.invalidKeys, 0, MAX_KEYS, true);
  check('pollingKeys', input.pollingKeys, 0, MAX_KEYS, true);
  check('backoffBaseMs', input.backoffBaseMs, 0, DEFAULT_MAX_BACKOFF_MS, false);
  check('loopKeys', input.loopKeys, 1, MAX_KEYS, true);
  check('writesPerSync', input.writesPerSync, 1, MAX_WRITES_PER_SYNC, true);
  check('listWrites', input.listWrites, 0, MAX_WRITES_PER_SYNC, true);
  check('statusAtMs', input.statusAtMs, 0, MAX_BLOCKING_SECONDS * 1000, false);
  check('transientShare', input.transientShare, 0, 1, false);
  check('outageSeconds', input.outageSeconds, 1, MAX_DURATION_MS / 1000, false);
  check('spikeSeconds', input.spikeSeconds, 1, MAX_DURATION_MS / 1000, false);
  check('batchSize', input.batchSize, 1, MAX_KEYS, true);
  check('relistAtSeconds', input.relistAtSeconds, 0, MAX_DURATION_MS / 1000, false);
  check('blockingShare', input.blockingShare, 0, 1, false);
  check('blockingSeconds', input.blockingSeconds, 0.001, MAX_BLOCKING_SECONDS, false);
  check('syncMs', input.syncMs, 0.01, MAX_BLOCKING_SECONDS * 1000, false);
  const background = input.background ?? DEFAULT_BACKGROUND_MODE;
  if (!BACKGROUND_MODES.includes(background)) {
    throw new SimulationParamError(
      `background must be one of ${BACKGROUND_MODES.join(', ')}, got "${String(background)}"`,
    );
  }
  const queue =
    input.queue ?? (scenario === undefined ? defaultQueueKind(flavor) : scenarioQueueKind(scenario, flavor));
  if (!queueKindsOf(flavor).includes(queue)) {
    throw new SimulationParamError(
      `queue must be one of ${queueKindsOf(flavor).join(', ')} for the ${flavor} flavor, got "${String(queue)}"`,
    );
  }
  return {
    seed,
    durationMs,
    flavor,
    background,
    queue,
    ...(input.workers === undefined ? {} : { workers: input.workers }),
    ...(input.keys === undefined ? {} : { keys: input.keys }),
    ...(input.rate === undefined ? {} : { rate: input.rate }),
    ...(input.failingKeys === undefined ? {} : { failingKeys: input.failingKeys }),
    ...(input.invalidKeys === undefined ? {} : { invalidKeys: input.invalidKeys }),
    ...(input.pollingKeys === undefined ? {} : { pollingKeys: input.pollingKeys }),
    ...(input.backoffBaseMs === undefined ? {} : { backoffBaseMs: input.backoffBaseMs }),
    ...(input.loopKeys === undefined ? {} : { loopKeys: input.loopKeys }),
    ...(input.writesPerSync === undefined ? {} : { writesPerSync: input.writesPerSync }),
    ...(input.listWrites === undefined ? {} : { listWrites: input.listWrites }),
    ...(input.statusAtMs === undefined ? {} : { statusAtMs: input.statusAtMs }),
    ...(input.transientShare === undefined ? {} : { transientShare: input.transientShare }),
    ...(input.outageSeconds === undefined ? {} : { outageSeconds: input.outageSeconds }),
    ...(input.spikeSeconds === undefined ? {} : { spikeSeconds: input.spikeSeconds }),
    ...(input.batchSize === undefined ? {} : { batchSize: input.batchSize }),
    ...(input.relistAtSeconds === undefined ? {} : { relistAtSeconds: input.relistAtSeconds }),
    ...(input.blockingShare === undefined ? {} : { blockingShare: input.blockingShare }),
    ...(input.blockingSeconds === undefined ? {} : { blockingSeconds: input.blockingSeconds }),
    ...(input.syncMs === undefined ? {} : { syncMs: input.syncMs }),
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

/** The ground truth of `scenario` run with `params` (what `--list` shows and the truth file holds). */
export function groundTruth(
  scenario: Scenario,
  params: SimulationParams,
  options: VirtualOptions = {},
  spec: ProcessSpec = scenario.build(params),
): GroundTruth {
  const resolved = resolveOptions(scenario, options);
  const processBackground = resolveBackground(params.background, spec.background);
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
        expected: [...controller.truth.expected],
        allowed: [...controller.truth.allowed],
        ...(controller.truth.note === undefined ? {} : { note: controller.truth.note }),
        ...(controller.truth.onsetMs === undefined ? {} : { onsetMs: controller.truth.onsetMs }),
        ...(controller.truth.causeMs === undefined ? {} : { causeMs: controller.truth.causeMs }),
        ...(controller.truth.allowedUntilMs === undefined ? {} : { allowedUntilMs: controller.truth.allowedUntilMs }),
        facts: jsonFacts({
          workers: controller.workers,
          keys: controller.keys,
          rate: controller.events.rate,
          ...controller.facts,
        }),
        background: queueBackground(
          controller,
          params.seed,
          resolveBackground(params.background, spec.background, controller.background),
        ),
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
    queue: params.queue,
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
    background: { mode: params.background, ...processBackground },
    queues,
  };
}

/** What the truth file says of one controller's background. */
function queueBackground(controller: ControllerSpec, seed: number, spec: BackgroundSpec): QueueBackgroundTruth {
  const background = new ControllerBackground(controller, seed, spec);
  return {
    conflictShare: spec.conflictShare,
    optionalGetShare: spec.optionalGetShare,
    pollingKeyShare: spec.pollingKeyShare,
    pollingKeys: background.polling.count(controller.keys),
    pollIntervalMs: spec.pollIntervalMs,
    resync: background.resync,
  };
}

/**
 * The times of scrapes `0 … count` (epoch ms): `startMs + k × intervalMs`, each offset by a uniform jitter
 * within ±`jitterMs` (stream `background/scrape-jitter`, one draw per scrape; whole ms; at most a quarter of
 * the interval, so they stay in order). The first is never before `startMs`; with `notAfterLast`, the last is
 * never after its nominal time either (a warm-up that must not run ahead of the real clock).
 */
export function scrapeTimes(
  startMs: number,
  intervalMs: number,
  count: number,
  jitterMs: number,
  seed: number,
  notAfterLast = false,
): number[] {
  const times: number[] = [];
  const jitter = Math.min(jitterMs, Math.floor(intervalMs / 4));
  const rng = jitter > 0 ? new Random(seed, 'background/scrape-jitter') : undefined;
  for (let k = 0; k <= count; k++) {
    let offset = rng === undefined ? 0 : Math.round(rng.uniform(-jitter, jitter));
    if (k === 0) offset = Math.abs(offset);
    if (notAfterLast && k === count) offset = -Math.abs(offset);
    times.push(startMs + k * intervalMs + offset);
  }
  return times;
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
 * (first scrape at the start, last at the last multiple of the interval within the duration), each scrape
 * offset by the background's jitter.
 */
export async function runVirtual(
  scenario: string | Scenario,
  params: Partial<SimulationParams> = {},
  options: VirtualOptions = {},
): Promise<VirtualRun> {
  const definition = typeof scenario === 'string' ? getScenario(scenario) : scenario;
  const resolvedParams = resolveParams(params, definition);
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
    background: resolvedParams.background,
    queue: resolvedParams.queue,
  });
  const store = new RecordingStore({ job: resolved.job, instance: resolved.instance });
  const scrapes = Math.floor(resolvedParams.durationMs / resolved.scrapeIntervalMs);
  const times = scrapeTimes(
    resolved.startMs,
    resolved.scrapeIntervalMs,
    scrapes,
    sim.background.scrapeJitterMs,
    resolvedParams.seed,
  );

  sim.start();
  sim.pump();
  for (const scrapeAt of times) {
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
