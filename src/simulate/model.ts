/**
 * The data model of a simulated controller process: what a scenario declares (process, controllers,
 * event sources, reconcile models, ground truth) and what a run reports. The background of everyday noise
 * is declared in `background.ts` and re-exported here.
 *
 * Times inside a scenario are milliseconds since the simulated process started (the recording's
 * first scrape, give or take the background's scrape jitter). Rates are per second.
 */

import { RULE_IDS, type RuleId } from '../diagnosis/rule.js';
import type { BackgroundMode, BackgroundSpec, ResyncPlan } from './background.js';
import { QUEUE_KINDS, type QueueKind } from './controller-queue.js';
import type { KeyDistribution } from './distributions.js';
import type { Random } from './random.js';

export {
  BACKGROUND_MODES,
  BACKGROUND_OFF,
  type BackgroundMode,
  type BackgroundSpec,
  DEFAULT_BACKGROUND,
  DEFAULT_BACKGROUND_MODE,
  type ResyncPlan,
  resolveBackground,
  resyncPlan,
} from './background.js';

/**
 * Which metrics the process exposes: `controller-runtime` (a controller-runtime manager: work-queue
 * series labelled `controller` and `name`, plus `controller_runtime_*`) or `component-base` (a
 * kube-controller-manager-like process: work-queue series labelled `name` only, no `controller_runtime_*`).
 */
export type Flavor = 'controller-runtime' | 'component-base';
export const FLAVORS: readonly Flavor[] = ['controller-runtime', 'component-base'];

/** The diagnoses a scenario's ground truth names: the diagnosis rules' ids. */
export const DIAGNOSIS_IDS = RULE_IDS;
export type DiagnosisId = RuleId;

/** How a sync ended, as controller-runtime's reconcile result. */
export type SyncResult =
  | { readonly kind: 'success' }
  | { readonly kind: 'error' }
  /** `Result{Requeue: true}`: rate-limited requeue without an error. */
  | { readonly kind: 'requeue' }
  /** `Result{RequeueAfter: afterMs}`: `forget` and `addAfter`. */
  | { readonly kind: 'requeueAfter'; readonly afterMs: number }
  /**
   * `reconcile.TerminalError(err)`: counted as an error (`reconcile_total{result="error"}`,
   * `reconcile_errors_total`) and in `terminal_reconcile_errors_total`, and NOT requeued. As in
   * controller-runtime's `reconcileHandler`, the key is not forgotten either: the rate limiter keeps its
   * failure count until a later sync of the key succeeds.
   */
  | { readonly kind: 'terminalError' };

export const SUCCESS: SyncResult = Object.freeze({ kind: 'success' });
export const ERROR: SyncResult = Object.freeze({ kind: 'error' });
export const REQUEUE: SyncResult = Object.freeze({ kind: 'requeue' });
export const requeueAfter = (afterMs: number): SyncResult => ({ kind: 'requeueAfter', afterMs });
export const TERMINAL_ERROR: SyncResult = Object.freeze({ kind: 'terminalError' });

/** An API request made during a sync, counted in `rest_client_requests_total{code,method,host}`. */
export interface ApiRequest {
  readonly method: string;
  readonly code: string;
}

/** What one sync does. */
export interface SyncPlan {
  /** How long the sync runs; `Infinity` for a sync that never returns (its worker is lost). */
  readonly durationMs: number;
  readonly result: SyncResult;
  /**
   * A write to the watched object itself (a status update) at the end of the sync: counted as a
   * `PUT`/`PATCH` with code 200, and echoed back by the watch as an event for the same key after the
   * process's watch latency.
   */
  readonly write?: 'PUT' | 'PATCH' | undefined;
  /**
   * When `write` is made, in ms from the sync's start, where the sync goes on after it (the status updated first,
   * then the rest of the reconcile): its echo can come while the key is still being processed, which marks the key
   * dirty, and it is handed out again the moment the sync is done. Missing, or not before the end: at the end.
   */
  readonly writeAtMs?: number | undefined;
  /** Other API requests the sync made (reads, failed calls), counted at its end. */
  readonly requests?: readonly ApiRequest[] | undefined;
  /**
   * The sync adds its own key again, with a plain add at the priority it was handed out with, before it returns
   * (a generic event from the controller's own channel source, say): no write, no error, no retry. The key is
   * marked dirty while it is processed and handed out again the moment it is done.
   */
  readonly requeueSelf?: boolean | undefined;
}

/** What a reconcile model sees when a sync starts. The object is reused: read it, don't keep it. */
export interface SyncContext {
  key: number;
  /** Milliseconds since the process started. */
  nowMs: number;
  /** An external watch event (not a resync, not the echo of our own write) arrived since the last sync of this key. */
  changed: boolean;
  /** Failures tracked by the rate limiter for this key (`numRequeues`). */
  failures: number;
}

export type SyncModel = (ctx: SyncContext) => SyncPlan;

/** Builds a controller's reconcile model; called once per run with the controller's own random stream. */
export type SyncModelFactory = (env: { rng: Random; keys: number; durationMs: number }) => SyncModel;

/** A burst of watch events on top of the steady stream. */
export interface BurstSpec {
  /** Start of the first burst (ms since process start). */
  readonly firstAtMs: number;
  /** Repeat period; missing: once. */
  readonly everyMs?: number | undefined;
  readonly durationMs: number;
  /** Events per second during the burst (Poisson). */
  readonly rate: number;
  /** `few`: each burst picks `count` random keys and spreads its events over them (a rollout); `distinct`: every event is a key not used by an earlier burst event (a bulk import). */
  readonly keys: { readonly kind: 'few'; readonly count: number } | { readonly kind: 'distinct' };
}

/** The informer side: watch events and resyncs. */
export interface EventSpec {
  /** Steady watch events per second (Poisson); with `ramp`, the rate at the start of the ramp. */
  readonly rate: number;
  /**
   * A rate that changes over time: rises (or falls) linearly from `rate` at `fromMs` to `toRate` at
   * `fromMs + overMs`, and stays there (load that grows through the day, a rollout across a fleet).
   */
  readonly ramp?:
    | { readonly fromMs?: number | undefined; readonly overMs: number; readonly toRate: number }
    | undefined;
  readonly keys: KeyDistribution;
  readonly bursts?: readonly BurstSpec[] | undefined;
  /** Full resync period: every key is re-added. Missing: no resync. */
  readonly resyncPeriodMs?: number | undefined;
  /** When the first resync happens (ms since process start). Missing: one period after start. */
  readonly firstResyncAtMs?: number | undefined;
  /**
   * When the informer relists (ms since process start): its watch's resourceVersion expired, and the new list
   * delivers every object as an update with its resourceVersion unchanged, queued like a resync. The resync timer is
   * not reset. Missing: no relist.
   */
  readonly relistAtMs?: number | undefined;
  /** Keys added once at start (objects already pending when the process started, e.g. failing ones). */
  readonly initialKeys?: readonly number[] | undefined;
  /** Keys changed once at start, after the initial keys: real changes, at normal priority in the priority queue. */
  readonly changedKeys?: readonly number[] | undefined;
}

/** The ground truth for one queue: diagnoses it must produce, and those acceptable beside them. */
export interface QueueTruthSpec {
  readonly expected: readonly DiagnosisId[];
  readonly allowed: readonly DiagnosisId[];
  /** Why, in one or two sentences, for people reading the truth file. */
  readonly note?: string | undefined;
  /**
   * When the problem begins, in milliseconds since the process started: the expected diagnoses must be
   * present at every judged time from their detection budgets after it (src/calibrate/detection-budget.ts);
   * before that they are only allowed. Missing: present from the start.
   */
  readonly onsetMs?: number | undefined;
  /**
   * When the planted cause began, where that is before the onset: a sync that never returns starts long before
   * anyone could call it stuck. The signals' windows fill from the cause, so the expected diagnoses are owed
   * from the later of their budgets past the cause and past the onset. Missing: the onset.
   */
  readonly causeMs?: number | undefined;
  /**
   * Milliseconds since the process started after which the allowed diagnoses are no longer acceptable: a
   * passing problem (an outage that recovered) must have cleared by then. Missing: allowed throughout.
   */
  readonly allowedUntilMs?: number | undefined;
}

/** One controller: a named rate-limiting queue, its workers, its informer and its reconcile model. */
export interface ControllerSpec {
  /** The queue name (and, in controller-runtime, the controller name): a lowercase kind or kebab name. */
  readonly name: string;
  /** Max concurrent reconciles. */
  readonly workers: number;
  /** Number of objects (keys `0 … keys-1`). */
  readonly keys: number;
  readonly events: EventSpec;
  readonly sync: SyncModelFactory;
  /** `rate-limited` (controller-runtime: `addRateLimited`) or `plain-add` (the no-backoff anti-pattern). Default rate-limited. */
  readonly onError?: 'rate-limited' | 'plain-add' | undefined;
  /**
   * A custom rate limiter: per-item exponential backoff from this many ms to 1000 s, alone (no shared bucket); 0
   * requeues failing keys at once. Missing: controller-runtime's default for the queue kind.
   */
  readonly backoffBaseMs?: number | undefined;
  /**
   * Whether this controller records `controller_runtime_*` metrics (only in the controller-runtime
   * flavor). Default true; false models a hand-written worker loop over a client-go queue.
   */
  readonly reconcileMetrics?: boolean | undefined;
  /** Whether its queue records `workqueue_*` metrics. Default true; false: the provider was never registered. */
  readonly workqueueMetrics?: boolean | undefined;
  /**
   * When its workers start, in milliseconds since the process started: a client-go controller starts them once
   * its informers' caches have synced (`cache.WaitForCacheSync`), while their handlers queue keys from the first
   * event. Infinity: a cache that never syncs (its LIST forbidden, its resource not installed). Missing: at once.
   */
  readonly workersStartAtMs?: number | undefined;
  readonly truth: QueueTruthSpec;
  /** Numbers worth writing into the truth file (mean sync time, capacity, utilization …). */
  readonly facts?: Readonly<Record<string, number | string | boolean>> | undefined;
  /** Overrides of the background's controller-level components for this controller (see `BackgroundSpec`). */
  readonly background?: Partial<BackgroundSpec> | undefined;
}

/** One simulated process (one scrape target). */
export interface ProcessSpec {
  /** Whether this replica holds the leader-election lease; a standby starts no controllers. */
  readonly leader: boolean;
  /** The lease name (`leader_election_master_status{name}`). */
  readonly leaseName: string;
  readonly controllers: readonly ControllerSpec[];
  /** Truth for a target-level entry (a standby or a process with no observable queue), if any. */
  readonly targetTruth?:
    | (QueueTruthSpec & { readonly controller: string | null; readonly status?: 'standby' })
    | undefined;
  /** Overrides of the background for the whole process (see `BackgroundSpec`). */
  readonly background?: Partial<BackgroundSpec> | undefined;
}

/** Parameters every scenario accepts. `workers`, `keys` and `rate` override the scenario's defaults. */
export interface SimulationParams {
  readonly seed: number;
  readonly durationMs: number;
  readonly flavor: Flavor;
  /** The everyday noise of a real process: `default` (with the scenario's overrides) or `off`. */
  readonly background: BackgroundMode;
  /**
   * The queue the controllers run: `priority` (controller-runtime's default since v0.23) or `classic`
   * (client-go's rate-limiting queue; the only one component-base has). See `defaultQueueKind`.
   */
  readonly queue: QueueKind;
  readonly workers?: number | undefined;
  readonly keys?: number | undefined;
  readonly rate?: number | undefined;
  /** Objects whose every sync fails, where the scenario has such objects (persistent-failure); else ignored. */
  readonly failingKeys?: number | undefined;
  /**
   * Objects whose spec the controller rejects, where the scenario has them (persistent-failure): every sync of
   * them returns `reconcile.TerminalError`, counted as an error and not retried. Else ignored.
   */
  readonly invalidKeys?: number | undefined;
  /**
   * Objects the main controller polls with `RequeueAfter` at a fixed interval (each waits on something outside),
   * where the scenario has them (persistent-failure: every 30 s; slow-poll: every 4 minutes, each poll blocking): a set
   * of pollers counted exactly, unlike the background's (drawn per object, re-armed by events). Else ignored.
   */
  readonly pollingKeys?: number | undefined;
  /**
   * The first delay of the main controller's rate limiter, in ms, where the scenario takes it (persistent-failure):
   * a custom per-item exponential limiter from it to 1000 s, alone (controller-runtime's option
   * `RateLimiter`). 0 is a limiter whose every delay is zero: failing keys are requeued at once. Missing:
   * controller-runtime's default limiter for the queue (5 ms; the classic queue adds a 10 qps bucket).
   */
  readonly backoffBaseMs?: number | undefined;
  /** Keys in the loop, where the scenario has a loop (the hot-loop and self-requeue scenarios); else ignored. */
  readonly loopKeys?: number | undefined;
  /**
   * API writes each sync makes, where the scenario writes on every sync without waking itself (event-per-sync: the
   * Event, then updates of objects the controller does not watch); else ignored.
   */
  readonly writesPerSync?: number | undefined;
  /**
   * Status writes each listed object takes to converge, where the scenario lists every object at start (initial-list):
   * its first sync writes, and each write's echo syncs it again at priority 0 until a pass finds nothing to write (a
   * new version filling in new status fields, one pass at a time). Missing: none (listed syncs write nothing).
   */
  readonly listWrites?: number | undefined;
  /**
   * How far into each sync of a looping key its status update is made, in milliseconds, where the scenario has a
   * status-write loop (hot-loop-status-write): made before the sync's end, its echo re-adds the key while the sync
   * still runs, so the key is counted in the depth and handed out again the moment it is done (a reconcile that
   * sets a condition first, then does its slow work). Missing: at the end of the sync.
   */
  readonly statusAtMs?: number | undefined;
  /**
   * Share of first attempts that fail once and succeed on the retry (a throttled cloud API), where the scenario has
   * them (transient-errors; dependency-outage outside its outage); else ignored.
   */
  readonly transientShare?: number | undefined;
  /** How long the dependency is down, in seconds, where the scenario has an outage (dependency-outage); else ignored. */
  readonly outageSeconds?: number | undefined;
  /** How long the burst of distinct objects lasts, in seconds, where the scenario has one (short-spike); else ignored. */
  readonly spikeSeconds?: number | undefined;
  /**
   * How many distinct objects each periodic batch touches, where the scenario has batches (sawtooth-batches); else
   * ignored.
   */
  readonly batchSize?: number | undefined;
  /**
   * When the informer relists every object, in seconds after the start, where the scenario has an initial list
   * (initial-list, startup-list, starved-backlog); else ignored. A watch whose resourceVersion has expired (410 Gone,
   * as after a control-plane upgrade) is restarted with a full list, and every object comes back as an update with
   * its resourceVersion unchanged, queued like a resync (at low priority on the priority queue).
   */
  readonly relistAtSeconds?: number | undefined;
  /** Share of syncs that block on a slow dependency, where the scenario has them (blocking-call); else ignored. */
  readonly blockingShare?: number | undefined;
  /**
   * How long a blocking sync takes, in seconds, where the scenario has them (blocking-call; slow-poll, its polls): each
   * lasts from 0.8 to 1.2 times this. Else ignored.
   */
  readonly blockingSeconds?: number | undefined;
  /**
   * Median sync time of the main controller, in milliseconds, where the scenario sets its load relative to its
   * capacity (backlog, gradual-backlog, saturation): the syncs keep their spread, the capacity follows; of the
   * looping keys in hot-loop-status-write (a slower loop adds less often); of every sync in slow-but-steady (a
   * slower provider); of the failing keys' syncs in persistent-failure (a failure that waits on a timeout: behind a
   * zero-delay limiter, a slower loop). Else ignored.
   */
  readonly syncMs?: number | undefined;
}

export const DEFAULT_SEED = 1;
export const DEFAULT_DURATION_MS = 30 * 60_000;
export const DEFAULT_FLAVOR: Flavor = 'controller-runtime';

/** The queue a flavor runs unless told otherwise: controller-runtime's default, or client-go's only queue. */
export function defaultQueueKind(flavor: Flavor): QueueKind {
  return flavor === 'controller-runtime' ? 'priority' : 'classic';
}

/** The queue `scenario` runs under `flavor` unless told otherwise: its own default where the flavor has it. */
export function scenarioQueueKind(scenario: Scenario, flavor: Flavor): QueueKind {
  const own = scenario.defaultQueue;
  return own !== undefined && queueKindsOf(flavor).includes(own) ? own : defaultQueueKind(flavor);
}

/** The queues a flavor can run: the priority queue is controller-runtime's. */
export function queueKindsOf(flavor: Flavor): readonly QueueKind[] {
  return flavor === 'controller-runtime' ? QUEUE_KINDS : ['classic'];
}

/** A named, documented scenario that knows its ground truth. */
export interface Scenario {
  readonly name: string;
  /** One line. */
  readonly summary: string;
  /** What is simulated and why it must (or must not) be diagnosed. */
  readonly description: string;
  /** Defaults of the main controller's `workers`, `keys`, `rate` (watch events per second). */
  readonly defaults: { readonly workers: number; readonly keys: number; readonly rate: number };
  /**
   * The queue every controller of the scenario runs when `SimulationParams.queue` is not given, where the
   * flavor allows it: `classic` for a hand-written worker loop over client-go's queue, which
   * controller-runtime's default does not change. Missing: the flavor's default (`defaultQueueKind`). An
   * explicit `queue` always wins: the process runs one queue kind, and the truth file names it.
   */
  readonly defaultQueue?: QueueKind | undefined;
  build(params: SimulationParams): ProcessSpec;
}

/** The truth file written beside a recording (`FILE.truth.json`). */
export interface GroundTruth {
  readonly scenario: string;
  readonly summary: string;
  readonly job: string;
  readonly instance: string;
  readonly flavor: Flavor;
  /** The queue the controllers ran (missing in truth files written before the priority queue: `classic`). */
  readonly queue?: QueueKind;
  /** True for a replica that does not hold the lease (no queues by design). */
  readonly standby: boolean;
  readonly parameters: {
    readonly seed: number;
    readonly duration: string;
    readonly scrapeInterval: string;
    readonly start: string;
    readonly workers: number;
    readonly keys: number;
    readonly rate: number;
  };
  /**
   * The background the recording has: the mode and the process's resolved parameters (each queue's own in
   * `queues[].background`). Absent in truth files written before the background existed.
   */
  readonly background?: BackgroundTruth | undefined;
  /**
   * One entry per queue. `name` null: an entry for the target as a whole (no work-queue series to
   * name a queue by: a standby, or the not-observable case); `controller` is the `controller` label
   * when the metrics carry one.
   */
  readonly queues: readonly QueueTruth[];
}

export interface QueueTruth {
  readonly name: string | null;
  readonly controller: string | null;
  readonly expected: readonly DiagnosisId[];
  readonly allowed: readonly DiagnosisId[];
  readonly status?: 'standby' | undefined;
  readonly note?: string | undefined;
  /** See `QueueTruthSpec.onsetMs`. */
  readonly onsetMs?: number | undefined;
  /** See `QueueTruthSpec.causeMs`. */
  readonly causeMs?: number | undefined;
  /** See `QueueTruthSpec.allowedUntilMs`. */
  readonly allowedUntilMs?: number | undefined;
  readonly facts?: Readonly<Record<string, number | string | boolean>> | undefined;
  /** The background of this queue's controller, resolved (absent for a target-level entry). */
  readonly background?: QueueBackgroundTruth | undefined;
}

export type BackgroundTruth = { readonly mode: BackgroundMode } & BackgroundSpec;

export interface QueueBackgroundTruth {
  readonly conflictShare: number;
  readonly optionalGetShare: number;
  readonly pollingKeyShare: number;
  /** How many of the controller's keys poll. */
  readonly pollingKeys: number;
  readonly pollIntervalMs: readonly [number, number];
  /** The controller's resync (its scenario's or the background's), or null. */
  readonly resync: ResyncPlan | null;
}
