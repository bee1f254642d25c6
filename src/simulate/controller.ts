/**
 * A simulated controller over the reference rate-limiting queue: an informer-like event source,
 * N workers, a reconcile model, and controller-runtime's handling of reconcile results.
 *
 * Result handling (controller-runtime `reconcileHandler`): error → `addRateLimited` (or, for the
 * no-backoff anti-pattern, a plain `add`); `RequeueAfter` → `forget` + `addAfter`; `Requeue` →
 * `addRateLimited`; success → `forget`; then always `done`. A status write counts a PUT/PATCH and
 * comes back as a watch event for the same key after the watch latency.
 *
 * Everything is driven by the clock's timers. On virtual time the run loop calls `pump()` after
 * every clock step to hand queued keys to idle workers with the queue's synchronous `tryGet()`, so
 * nothing depends on promise order; on the real clock each worker is an async loop on `get()`.
 */
import {
  type Clock,
  createRateLimitingQueue,
  defaultControllerRateLimiter,
  type MetricsProvider,
  type RateLimitingQueue,
  type TimerOptions,
} from '../queue/index.js';
import { keySampler } from './distributions.js';
import type { BurstSpec, ControllerSpec, SyncContext, SyncModel, SyncPlan } from './model.js';
import type { ProcessMetrics, ReconcileMetrics } from './process-metrics.js';
import { Random } from './random.js';

export interface ControllerEnv {
  readonly clock: Clock;
  readonly seed: number;
  readonly durationMs: number;
  readonly metrics: ProcessMetrics;
  /** The work-queue metrics provider; undefined: the queue records nothing. */
  readonly provider: MetricsProvider | undefined;
  /** Delay from a write to its watch event, ms. */
  readonly watchLatency: () => number;
  /** Options for the simulator's own timers (background on the real clock: they never hold the process open). */
  readonly timerOptions: TimerOptions;
}

/** Counters of what a controller did, for benchmarks and tests. */
export interface ControllerStats {
  events: number;
  syncs: number;
  writes: number;
  stuck: number;
}

export class SimController {
  readonly queue: RateLimitingQueue<number>;
  readonly stats: ControllerStats = { events: 0, syncs: 0, writes: 0, stuck: 0 };
  private busy = 0;
  private stopped = false;
  private readonly clock: Clock;
  private readonly startMs: number;
  private readonly model: SyncModel;
  private readonly reconcile: ReconcileMetrics | undefined;
  /** 1 when an external event arrived for the key since its last sync. */
  private readonly changed: Uint8Array;
  private readonly ctx: SyncContext = { key: 0, nowMs: 0, changed: false, failures: 0 };
  private readonly eventRng: Random;
  private readonly pickKey: () => number;
  private readonly plainAddOnError: boolean;

  constructor(
    readonly spec: ControllerSpec,
    private readonly env: ControllerEnv,
  ) {
    this.clock = env.clock;
    this.startMs = env.clock.now();
    this.queue = createRateLimitingQueue<number>(defaultControllerRateLimiter<number>(env.clock), {
      name: spec.name,
      clock: env.clock,
      metricsProvider: spec.workqueueMetrics === false ? undefined : env.provider,
    });
    this.reconcile = spec.reconcileMetrics === false ? undefined : env.metrics.controller(spec.name, spec.workers);
    this.changed = new Uint8Array(spec.keys);
    this.eventRng = new Random(env.seed, `${spec.name}/events`);
    this.pickKey = keySampler(spec.events.keys, spec.keys, this.eventRng);
    this.model = spec.sync({
      rng: new Random(env.seed, `${spec.name}/sync`),
      keys: spec.keys,
      durationMs: env.durationMs,
    });
    this.plainAddOnError = spec.onError === 'plain-add';
  }

  get workers(): number {
    return this.spec.workers;
  }

  /** Starts the informer: initial list, steady events, bursts, resyncs, watch restarts. */
  start(): void {
    const { events } = this.spec;
    this.env.metrics.apiRequest('GET', '200'); // the informer's initial LIST
    for (const key of events.initialKeys ?? []) this.queue.add(key);
    if (events.rate > 0) this.after(this.eventRng.exponential(1000 / events.rate), this.onEvent);
    for (const [index, burst] of (events.bursts ?? []).entries()) {
      const rng = new Random(this.env.seed, `${this.spec.name}/burst/${index}`);
      this.at(burst.firstAtMs, () => this.startBurst(burst, rng, burst.firstAtMs));
    }
    const period = events.resyncPeriodMs;
    if (period !== undefined && period > 0) {
      const first = events.firstResyncAtMs ?? period;
      const resync = (atMs: number): void => {
        this.resync();
        this.at(atMs + period, () => resync(atMs + period));
      };
      this.at(first, () => resync(first));
    }
    const watchRng = new Random(this.env.seed, `${this.spec.name}/watch`);
    const rewatch = (): void => {
      this.env.metrics.apiRequest('GET', '200');
      this.after(watchRng.uniform(300_000, 600_000), rewatch);
    };
    this.after(watchRng.uniform(300_000, 600_000), rewatch);
  }

  /** Virtual time: hands queued keys to idle workers. */
  pump(): void {
    while (this.busy < this.spec.workers) {
      const next = this.queue.tryGet();
      if (next === undefined) return;
      this.startSync(next.item, undefined);
    }
  }

  /** Real time: runs one worker until the queue shuts down. */
  async runWorker(): Promise<void> {
    for (;;) {
      const next = await this.queue.get();
      if (next.shutdown || this.stopped) return;
      await new Promise<void>((resolve) => this.startSync(next.item, resolve));
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
    this.queue.add(key);
  }

  private readonly onEvent = (): void => {
    if (this.stopped) return;
    this.externalEvent(this.pickKey());
    this.after(this.eventRng.exponential(1000 / this.spec.events.rate), this.onEvent);
  };

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
    for (let key = 0; key < this.spec.keys; key++) this.queue.add(key);
  }

  private startSync(key: number, onFinish: (() => void) | undefined): void {
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
    const startedAt = this.clock.now();
    this.clock.after(
      plan.durationMs,
      () => {
        if (!this.stopped) this.finishSync(key, plan, startedAt);
        onFinish?.();
      },
      this.env.timerOptions,
    );
  }

  private finishSync(key: number, plan: SyncPlan, startedAt: number): void {
    const metrics = this.env.metrics;
    const reconcile = this.reconcile;
    reconcile?.observe((this.clock.now() - startedAt) / 1000);
    if (plan.requests !== undefined) {
      for (const request of plan.requests) metrics.apiRequest(request.method, request.code);
    }
    if (plan.write !== undefined) {
      this.stats.writes++;
      metrics.apiRequest(plan.write, '200');
      this.clock.after(
        this.env.watchLatency(),
        () => {
          if (!this.stopped) this.queue.add(key);
        },
        this.env.timerOptions,
      );
    }
    const result = plan.result;
    switch (result.kind) {
      case 'success':
        this.queue.forget(key);
        reconcile?.success();
        break;
      case 'error':
        reconcile?.error();
        if (this.plainAddOnError) this.queue.add(key);
        else this.queue.addRateLimited(key);
        break;
      case 'requeue':
        reconcile?.requeue();
        this.queue.addRateLimited(key);
        break;
      case 'requeueAfter':
        reconcile?.requeueAfter();
        this.queue.forget(key);
        this.queue.addAfter(key, result.afterMs);
        break;
    }
    this.busy--;
    reconcile?.workerFinished();
    this.queue.done(key);
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
