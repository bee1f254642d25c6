/**
 * A simulated controller over a reference queue (controller-runtime's priority queue or the classic
 * rate-limiting queue, see controller-queue.ts): an informer-like event source, N workers, a reconcile
 * model, and controller-runtime's handling of reconcile results.
 *
 * Result handling (controller-runtime `reconcileHandler`): error → `addRateLimited` (or, for the
 * no-backoff anti-pattern, a plain `add`); terminal error → nothing (not requeued, not forgotten);
 * `RequeueAfter` → `forget` + `addAfter`; `Requeue` → `addRateLimited`; success → `forget`; then always
 * `done`. Every requeue keeps the priority the key was handed out with; the initial list and resyncs
 * add at low priority, watch events (real changes, status-write echoes) at normal priority. A status write counts a PUT/PATCH and comes back as a watch event for the same key after the
 * watch latency.
 *
 * The background (`BackgroundSpec`) wraps the scenario's reconcile model: a sync that would have succeeded
 * may end in a 409 conflict (an error; its retry succeeds) or, for a polling key, in `RequeueAfter`; syncs
 * GET an optional object that is not there (404); a controller without a resync gets one. A process-wide
 * pause (`PauseState`) holds back new syncs and the completion of running ones. Both are in controller-background.ts.
 *
 * Everything is driven by the clock's timers. On virtual time the run loop calls `pump()` after
 * every clock step to hand queued keys to idle workers with the queue's synchronous `tryGet()`, so
 * nothing depends on promise order; on the real clock each worker is an async loop on `get()`.
 */
import type { Clock, MetricsProvider, TimerOptions } from '../queue/index.js';
import { ControllerBackground, type PauseState } from './controller-background.js';
import {
  type ControllerQueue,
  createControllerQueue,
  type HandedOut,
  LOW_PRIORITY,
  NORMAL_PRIORITY,
  type QueueKind,
} from './controller-queue.js';
import { keySampler } from './distributions.js';
import type { BackgroundSpec, BurstSpec, ControllerSpec, SyncContext, SyncModel, SyncPlan } from './model.js';
import type { ProcessMetrics, ReconcileMetrics } from './process-metrics.js';
import { Random } from './random.js';

export interface ControllerEnv {
  readonly clock: Clock;
  readonly seed: number;
  readonly durationMs: number;
  readonly metrics: ProcessMetrics;
  /** The work-queue metrics provider; undefined: the queue records nothing. */
  readonly provider: MetricsProvider | undefined;
  /** The queue every controller of the process runs. */
  readonly queueKind: QueueKind;
  /** Delay from a write to its watch event, ms. */
  readonly watchLatency: () => number;
  /** Options for the simulator's own timers (background on the real clock: they never hold the process open). */
  readonly timerOptions: TimerOptions;
  /** The controller's resolved background (`resolveBackground(mode, process.background, controller.background)`). */
  readonly background: (controller: ControllerSpec) => BackgroundSpec;
  /** The process's pauses, shared by its controllers. */
  readonly pause: PauseState;
}

/** Counters of what a controller did, for benchmarks and tests. */
export interface ControllerStats {
  events: number;
  /** Syncs started. */
  syncs: number;
  /** Syncs finished. */
  completed: number;
  writes: number;
  stuck: number;
  /** Syncs the background ended in a 409 conflict. */
  conflicts: number;
  /** Syncs of polling keys the background ended in `RequeueAfter`. */
  polls: number;
}

/** What the background did to a sync (bits). */
const OPTIONAL_GET = 1;
const CONFLICT = 2;
const POLL = 4;

export class SimController {
  readonly queue: ControllerQueue;
  readonly stats: ControllerStats = {
    events: 0,
    syncs: 0,
    completed: 0,
    writes: 0,
    stuck: 0,
    conflicts: 0,
    polls: 0,
  };
  readonly background: ControllerBackground;
  private busy = 0;
  private stopped = false;
  private readonly clock: Clock;
  private readonly startMs: number;
  private readonly model: SyncModel;
  private readonly reconcile: ReconcileMetrics | undefined;
  /** 1 when an external event arrived for the key since its last sync. */
  private readonly changed: Uint8Array;
  /** The priority each key being processed was handed out with: its requeues keep it. */
  private readonly priorityOf: Int32Array;
  private readonly ctx: SyncContext = { key: 0, nowMs: 0, changed: false, failures: 0 };
  private readonly eventRng: Random;
  private readonly pickKey: () => number;
  private readonly plainAddOnError: boolean;
  private readonly pause: PauseState;
  private readonly conflictRng: Random;
  private readonly optionalGetRng: Random;
  /** Keys whose last sync ended in a background conflict: their next sync sees a fresh cache. */
  private readonly conflicted = new Set<number>();
  private readonly countGetNotFound: () => void;
  private readonly countPutConflict: () => void;

  constructor(
    readonly spec: ControllerSpec,
    private readonly env: ControllerEnv,
  ) {
    this.clock = env.clock;
    this.startMs = env.clock.now();
    this.queue = createControllerQueue(env.queueKind, {
      name: spec.name,
      clock: env.clock,
      metricsProvider: spec.workqueueMetrics === false ? undefined : env.provider,
      backoffBaseMs: spec.backoffBaseMs,
    });
    this.reconcile = spec.reconcileMetrics === false ? undefined : env.metrics.controller(spec.name, spec.workers);
    this.changed = new Uint8Array(spec.keys);
    this.priorityOf = new Int32Array(spec.keys);
    this.eventRng = new Random(env.seed, `${spec.name}/events`);
    this.pickKey = keySampler(spec.events.keys, spec.keys, this.eventRng);
    this.model = spec.sync({
      rng: new Random(env.seed, `${spec.name}/sync`),
      keys: spec.keys,
      durationMs: env.durationMs,
    });
    this.plainAddOnError = spec.onError === 'plain-add';
    this.pause = env.pause;
    this.background = new ControllerBackground(spec, env.seed, env.background(spec));
    this.conflictRng = new Random(env.seed, `${spec.name}/background/conflict`);
    this.optionalGetRng = new Random(env.seed, `${spec.name}/background/optional-get`);
    this.countGetNotFound = env.metrics.restCounter('GET', '404');
    this.countPutConflict = env.metrics.restCounter('PUT', '409');
  }

  get workers(): number {
    return this.spec.workers;
  }

  /** Starts the informer: initial list, steady events, bursts, resyncs, watch restarts. */
  start(): void {
    const { events } = this.spec;
    this.env.metrics.apiRequest('GET', '200'); // the informer's initial LIST
    for (const key of events.initialKeys ?? []) this.queue.add(key, LOW_PRIORITY);
    for (const key of events.changedKeys ?? []) this.queue.add(key, NORMAL_PRIORITY);
    if (events.rate > 0 || (events.ramp?.toRate ?? 0) > 0) this.scheduleEvent();
    for (const [index, burst] of (events.bursts ?? []).entries()) {
      const rng = new Random(this.env.seed, `${this.spec.name}/burst/${index}`);
      this.at(burst.firstAtMs, () => this.startBurst(burst, rng, burst.firstAtMs));
    }
    const resyncs = this.background.resync;
    if (resyncs !== null) {
      const period = resyncs.periodMs;
      const resync = (atMs: number): void => {
        this.resync();
        this.at(atMs + period, () => resync(atMs + period));
      };
      this.at(resyncs.firstAtMs, () => resync(resyncs.firstAtMs));
    }
    if (events.relistAtMs !== undefined) {
      this.at(events.relistAtMs, () => {
        this.env.metrics.apiRequest('GET', '200'); // the LIST
        this.resync();
      });
    }
    const watchRng = new Random(this.env.seed, `${this.spec.name}/watch`);
    const rewatch = (): void => {
      this.env.metrics.apiRequest('GET', '200');
      this.after(watchRng.uniform(300_000, 600_000), rewatch);
    };
    this.after(watchRng.uniform(300_000, 600_000), rewatch);
  }

  /** Whether the workers have started (`ControllerSpec.workersStartAtMs`). */
  private workersStarted(): boolean {
    return this.elapsed() >= (this.spec.workersStartAtMs ?? 0);
  }

  /** Virtual time: hands queued keys to idle workers, once they have started. */
  pump(): void {
    if (!this.workersStarted()) return;
    while (this.busy < this.spec.workers) {
      const next = this.queue.tryGet();
      if (next === undefined) return;
      this.startSync(next, undefined);
    }
  }

  /** Real time: runs one worker until the queue shuts down. */
  async runWorker(): Promise<void> {
    const startAtMs = this.spec.workersStartAtMs ?? 0;
    if (!this.workersStarted()) {
      if (!Number.isFinite(startAtMs)) return; // never starts: the keys stay queued until the process stops
      await new Promise<void>((resolve) =>
        this.clock.after(startAtMs - this.elapsed(), resolve, this.env.timerOptions),
      );
    }
    for (;;) {
      const next = await this.queue.get();
      if (next === undefined || this.stopped) return;
      if (this.pause.untilMs > this.clock.now()) await this.pause.wait();
      if (this.stopped) return;
      await new Promise<void>((resolve) => this.startSync(next, resolve));
    }
  }

  stop(): void {
    this.stopped = true;
    this.queue.shutDown();
  }

  /** An external watch event for `key` (an update made by someone else). */
  externalEvent(key: number): void {
    this.stats.events++;
    this.changed[key] = 1;
    this.queue.add(key, NORMAL_PRIORITY);
  }

  private readonly onEvent = (): void => {
    if (this.stopped) return;
    this.externalEvent(this.pickKey());
    this.scheduleEvent();
  };

  /**
   * The next steady event, at the rate in force now (a ramp changes slowly against the gaps, so drawing each
   * gap at the current rate is the usual piecewise approximation of a non-homogeneous Poisson process).
   * While the rate is 0 on a rising ramp, it looks again a second later.
   */
  private scheduleEvent(): void {
    const rate = this.eventRate(this.elapsed());
    if (rate > 0) this.after(this.eventRng.exponential(1000 / rate), this.onEvent);
    else if ((this.spec.events.ramp?.toRate ?? 0) > 0) this.after(1000, () => this.scheduleEvent());
  }

  private eventRate(nowMs: number): number {
    const { rate, ramp } = this.spec.events;
    if (ramp === undefined) return rate;
    const from = ramp.fromMs ?? 0;
    const progress = ramp.overMs <= 0 ? 1 : Math.min(1, Math.max(0, (nowMs - from) / ramp.overMs));
    return rate + (ramp.toRate - rate) * progress;
  }

  private startBurst(burst: BurstSpec, rng: Random, startedAtMs: number): void {
    if (this.stopped) return;
    const keys = this.spec.keys;
    let pick: () => number;
    if (burst.keys.kind === 'few') {
      const chosen = Array.from({ length: Math.min(burst.keys.count, keys) }, () => rng.int(keys));
      pick = () => chosen[rng.int(chosen.length)]!;
    } else {
      let cursor = rng.int(keys);
      pick = () => {
        cursor = (cursor + 1) % keys;
        return cursor;
      };
    }
    const endMs = startedAtMs + burst.durationMs;
    const meanGapMs = 1000 / burst.rate;
    const next = (): void => {
      if (this.stopped) return;
      if (this.elapsed() >= endMs) return;
      this.externalEvent(pick());
      this.after(rng.exponential(meanGapMs), next);
    };
    this.after(rng.exponential(meanGapMs), next);
    if (burst.everyMs !== undefined && burst.everyMs > 0) {
      const nextStart = startedAtMs + burst.everyMs;
      this.at(nextStart, () => this.startBurst(burst, rng, nextStart));
    }
  }

  private resync(): void {
    if (this.stopped) return;
    for (let key = 0; key < this.spec.keys; key++) this.queue.add(key, LOW_PRIORITY);
  }

  private startSync(next: HandedOut, onFinish: (() => void) | undefined): void {
    const key = next.key;
    this.priorityOf[key] = next.priority;
    this.busy++;
    this.stats.syncs++;
    this.reconcile?.workerStarted();
    const ctx = this.ctx;
    ctx.key = key;
    ctx.nowMs = this.elapsed();
    ctx.changed = this.changed[key] === 1;
    ctx.failures = this.queue.numRequeues(key);
    this.changed[key] = 0;
    const plan = this.model(ctx);
    if (!(plan.durationMs < Number.POSITIVE_INFINITY)) {
      this.stats.stuck++;
      return; // never returns: the worker is lost, the key stays in processing
    }
    const flags = this.background.perSync ? this.backgroundFlags(key, plan) : 0;
    const startedAt = this.clock.now();
    // A PUT that conflicts is the write that failed: counted when the sync ends, no echo.
    if (writesDuringSync(plan) && !((flags & CONFLICT) !== 0 && plan.write === 'PUT')) {
      const { write, writeAtMs } = plan;
      this.clock.after(writeAtMs, () => this.writeObject(key, write), this.env.timerOptions);
    }
    this.clock.after(
      plan.durationMs,
      () => this.syncEnded(key, plan, flags, startedAt, onFinish),
      this.env.timerOptions,
    );
  }

  /** The sync's time is up: it finishes, unless the process is paused (then it finishes when the pause ends). */
  private syncEnded(
    key: number,
    plan: SyncPlan,
    flags: number,
    startedAt: number,
    onFinish: (() => void) | undefined,
  ): void {
    if (this.pause.untilMs > this.clock.now()) {
      this.pause.defer(() => this.syncEnded(key, plan, flags, startedAt, onFinish));
      return;
    }
    if (!this.stopped) this.finishSync(key, plan, flags, startedAt);
    onFinish?.();
  }

  /**
   * The background's part in one sync: the optional GET (every sync, or a share), then, only for a sync that
   * would have succeeded, a conflict (never twice in a row for a key: its retry reads a fresh cache) or, for a
   * polling key, `RequeueAfter`.
   */
  private backgroundFlags(key: number, plan: SyncPlan): number {
    const background = this.background;
    let flags = 0;
    const getShare = background.optionalGetShare;
    if (getShare >= 1 || (getShare > 0 && this.optionalGetRng.nextUint32() < background.optionalGetThreshold)) {
      flags |= OPTIONAL_GET;
    }
    const retryAfterConflict = this.conflicted.size > 0 && this.conflicted.delete(key);
    const kind = plan.result.kind;
    if (kind !== 'success' && kind !== 'requeueAfter') return flags;
    if (
      !retryAfterConflict &&
      background.conflictShare > 0 &&
      this.conflictRng.nextUint32() < background.conflictThreshold
    ) {
      this.conflicted.add(key);
      return flags | CONFLICT;
    }
    if (background.polling.isPolling(key)) flags |= POLL;
    return flags;
  }

  /** A successful write of the watched object `key`: counted, and echoed back by the watch as an event for it. */
  private writeObject(key: number, method: 'PUT' | 'PATCH'): void {
    if (this.stopped) return;
    this.stats.writes++;
    this.env.metrics.apiRequest(method, '200');
    this.clock.after(
      this.env.watchLatency(),
      () => {
        if (!this.stopped) this.queue.add(key, NORMAL_PRIORITY);
      },
      this.env.timerOptions,
    );
  }

  private finishSync(key: number, plan: SyncPlan, flags: number, startedAt: number): void {
    const metrics = this.env.metrics;
    const reconcile = this.reconcile;
    this.stats.completed++;
    reconcile?.observe((this.clock.now() - startedAt) / 1000);
    if (plan.requests !== undefined) {
      for (const request of plan.requests) metrics.apiRequest(request.method, request.code);
    }
    let write = writesDuringSync(plan) ? undefined : plan.write;
    if (flags !== 0) {
      if ((flags & OPTIONAL_GET) !== 0) this.countGetNotFound();
      if ((flags & CONFLICT) !== 0) {
        this.stats.conflicts++;
        this.countPutConflict();
        if (write === 'PUT') write = undefined; // the status update was the write that conflicted: no echo
      }
    }
    if (write !== undefined) this.writeObject(key, write);
    const result = plan.result;
    const priority = this.priorityOf[key] as number;
    if ((flags & CONFLICT) !== 0) this.failed(key, priority);
    else if ((flags & POLL) !== 0) {
      this.stats.polls++;
      reconcile?.requeueAfter();
      this.queue.forget(key);
      this.queue.addAfter(key, this.background.polling.intervalMs(key), priority);
    } else {
      switch (result.kind) {
        case 'success':
          this.queue.forget(key);
          reconcile?.success();
          break;
        case 'error':
          this.failed(key, priority);
          break;
        case 'terminalError':
          // controller-runtime counts it and neither requeues nor forgets the key.
          reconcile?.terminalError();
          break;
        case 'requeue':
          reconcile?.requeue();
          this.queue.addRateLimited(key, priority);
          break;
        case 'requeueAfter':
          reconcile?.requeueAfter();
          this.queue.forget(key);
          this.queue.addAfter(key, result.afterMs, priority);
          break;
      }
    }
    if (plan.requeueSelf === true) this.queue.add(key, priority);
    this.busy--;
    reconcile?.workerFinished();
    this.queue.done(key);
  }

  /** A failed sync: an error, requeued with backoff (or, for the no-backoff anti-pattern, at once). */
  private failed(key: number, priority: number): void {
    this.reconcile?.error();
    if (this.plainAddOnError) this.queue.add(key, priority);
    else this.queue.addRateLimited(key, priority);
  }

  /** Milliseconds since the process started. */
  private elapsed(): number {
    return this.clock.now() - this.startMs;
  }

  private after(ms: number, fn: () => void): void {
    this.clock.after(ms, fn, this.env.timerOptions);
  }

  /** Runs `fn` at `atMs` since process start. */
  private at(atMs: number, fn: () => void): void {
    this.clock.after(this.startMs + atMs - this.clock.now(), fn, this.env.timerOptions);
  }
}

/** Whether `plan` writes before its end (`SyncPlan.writeAtMs`). */
function writesDuringSync(
  plan: SyncPlan,
): plan is SyncPlan & { readonly write: 'PUT' | 'PATCH'; readonly writeAtMs: number } {
  return plan.write !== undefined && plan.writeAtMs !== undefined && plan.writeAtMs < plan.durationMs;
}
