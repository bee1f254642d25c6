/**
 * The controller simulator: named scenarios driven through the reference work queue, on virtual time
 * into a recording with its ground truth (`runVirtual`), or on the real clock serving live metrics
 * (`startLiveSimulation`).
 */

export { LOW_PRIORITY, NORMAL_PRIORITY, QUEUE_KINDS, type QueueKind } from './controller-queue.js';
export { type LiveOptions, type LiveSimulation, parseListen, startLiveSimulation } from './live.js';
export {
  BACKGROUND_MODES,
  BACKGROUND_OFF,
  type BackgroundMode,
  type BackgroundSpec,
  type BackgroundTruth,
  DEFAULT_BACKGROUND,
  DEFAULT_BACKGROUND_MODE,
  DEFAULT_DURATION_MS,
  DEFAULT_FLAVOR,
  DEFAULT_SEED,
  DIAGNOSIS_IDS,
  type DiagnosisId,
  defaultQueueKind,
  FLAVORS,
  type Flavor,
  type GroundTruth,
  type QueueBackgroundTruth,
  type QueueTruth,
  queueKindsOf,
  resolveBackground,
  type Scenario,
  type SimulationParams,
} from './model.js';
export { formatOpenMetrics, formatValue, RecordingStore, type RecordingTarget } from './recording-writer.js';
export {
  DEFAULT_JOB,
  DEFAULT_SCRAPE_INTERVAL_MS,
  DEFAULT_START_MS,
  defaultInstance,
  getScenario,
  groundTruth,
  type RunStats,
  resolveParams,
  runVirtual,
  SimulationParamError,
  scrapeTimes,
  type VirtualOptions,
  type VirtualRun,
} from './run.js';
export { findScenario, SCENARIO_NAMES, SCENARIOS } from './scenarios/index.js';
export {
  DEFAULT_WARM_UP_MS,
  startWarmLiveSimulation,
  type WarmLiveOptions,
  type WarmLiveSimulation,
  type WarmUpScrape,
} from './warm-live.js';
