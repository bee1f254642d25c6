/**
 * A simulated controller process: one prom-client registry holding what a real manager exposes
 * (work-queue metrics through the reference queue's Prometheus provider, controller-runtime's
 * per-controller metrics, the REST client counter, the leader-election gauge), its controllers,
 * the leader-election loop, and the process-level background: pauses and sibling controllers' REST traffic
 * (`BackgroundSpec`; the controllers apply the controller-level parts).
 */
import { Registry } from 'prom-client';
import { type Clock, createPrometheusMetricsProvider, type TimerOptions } from '../queue/index.js';
import { SimController } from './controller.js';
import { PauseState } from './controller-background.js';
import type { QueueKind } from './controller-queue.js';
import {
  type BackgroundMode,
  type BackgroundSpec,
  type ControllerSpec,
  DEFAULT_BACKGROUND_MODE,
  defaultQueueKind,
  type Flavor,
  type ProcessSpec,
  resolveBackground,
} from './model.js';
import { ProcessMetrics } from './process-metrics.js';
import { Random } from './random.js';

/** client-go leader election's retry period: the leader renews (GET + PUT of the lease), a standby tries to acquire (GET). */
export const LEADER_ELECTION_RETRY_PERIOD_MS = 2_000;

export interface ProcessOptions {
  readonly clock: Clock;
  readonly seed: number;
  readonly flavor: Flavor;
  readonly durationMs: number;
  /** True on the real clock: the simulator's own timers then never hold the Node process open. */
  readonly realtime?: boolean | undefined;
  /** Default `default`: `DEFAULT_BACKGROUND` with the spec's overrides. */
  readonly background?: BackgroundMode | undefined;
  /** The queue every controller runs; default: the flavor's (`defaultQueueKind`). */
  readonly queue?: QueueKind | undefined;
}

export class SimProcess {
  readonly registry = new Registry();
  readonly metrics: ProcessMetrics;
  readonly controllers: readonly SimController[];
  /** The process-level background, resolved. */
  readonly background: BackgroundSpec;
  /** Pauses of the whole process (shared with the controllers). */
  readonly pause = new PauseState();
  private readonly clock: Clock;
  private readonly timerOptions: TimerOptions;
  private readonly seed: number;
  private stopped = false;

  constructor(
    readonly spec: ProcessSpec,
    options: ProcessOptions,
  ) {
    this.clock = options.clock;
    this.timerOptions = { background: options.realtime === true };
    this.seed = options.seed;
    const mode = options.background ?? DEFAULT_BACKGROUND_MODE;
    this.background = resolveBackground(mode, spec.background);
    this.metrics = new ProcessMetrics(this.registry, options.flavor);
    this.metrics.setLeader(spec.leaseName, spec.leader);
    if (!spec.leader) {
      // A standby starts no controller; controller-runtime versions that register per-controller series
      // at manager construction show them at zero.
      for (const controller of spec.controllers) this.metrics.controller(controller.name, controller.workers);
      this.controllers = [];
      return;
    }
    const provider = createPrometheusMetricsProvider({ registry: this.registry, flavor: options.flavor });
    const latencyRng = new Random(options.seed, 'watch-latency');
    const env = {
      clock: options.clock,
      seed: options.seed,
      durationMs: options.durationMs,
      metrics: this.metrics,
      provider,
      watchLatency: () => latencyRng.uniform(2, 20),
      timerOptions: this.timerOptions,
      background: (controller: ControllerSpec) => resolveBackground(mode, spec.background, controller.background),
      pause: this.pause,
      queueKind: options.queue ?? defaultQueueKind(options.flavor),
    };
    this.controllers = spec.controllers.map((controller) => new SimController(controller, env));
  }

  start(): void {
    this.leaderElectionTick();
    for (const controller of this.controllers) controller.start();
    if (this.spec.leader) {
      this.startPauses();
      this.startSiblingTraffic();
    }
  }

  /** Virtual time: hands queued keys to idle workers of every controller (none while the process is paused). */
  pump(): void {
    if (this.pause.untilMs > this.clock.now()) return;
    for (const controller of this.controllers) controller.pump();
  }

  stop(): void {
    this.stopped = true;
    for (const controller of this.controllers) controller.stop();
  }

  /** Pauses from stream `background/pauses`: the gap before each (from the end of the last), then its length. */
  private startPauses(): void {
    const pauses = this.background.pauses;
    if (pauses === null) return;
    const rng = new Random(this.seed, 'background/pauses');
    const { everyMs, durationMs } = pauses;
    const begin = (): void => {
      if (this.stopped) return;
      const length = rng.uniform(durationMs[0], durationMs[1]);
      this.pause.untilMs = this.clock.now() + length;
      this.after(length, end);
    };
    const end = (): void => {
      this.pause.end();
      if (this.stopped) return;
      this.after(rng.uniform(everyMs[0], everyMs[1]), begin);
    };
    this.after(rng.uniform(everyMs[0], everyMs[1]), begin);
  }

  /** Sibling controllers' requests (Poisson): GETs from stream `background/sibling-gets`, writes from `background/sibling-writes`. */
  private startSiblingTraffic(): void {
    const traffic = this.background.siblingTraffic;
    if (traffic === null) return;
    const metrics = this.metrics;
    if (traffic.getsPerSecond > 0) {
      const rng = new Random(this.seed, 'background/sibling-gets');
      const meanGapMs = 1000 / traffic.getsPerSecond;
      const get = (): void => {
        if (this.stopped) return;
        metrics.apiRequest('GET', rng.next() < traffic.getNotFoundShare ? '404' : '200');
        this.after(rng.exponential(meanGapMs), get);
      };
      this.after(rng.exponential(meanGapMs), get);
    }
    if (traffic.writesPerSecond > 0) {
      const rng = new Random(this.seed, 'background/sibling-writes');
      const meanGapMs = 1000 / traffic.writesPerSecond;
      const write = (): void => {
        if (this.stopped) return;
        const method = rng.next() < 0.5 ? 'PATCH' : 'PUT';
        metrics.apiRequest(method, rng.next() < traffic.writeConflictShare ? '409' : '200');
        this.after(rng.exponential(meanGapMs), write);
      };
      this.after(rng.exponential(meanGapMs), write);
    }
  }

  private after(ms: number, fn: () => void): void {
    this.clock.after(ms, fn, this.timerOptions);
  }

  private readonly leaderElectionTick = (): void => {
    if (this.stopped) return;
    this.metrics.apiRequest('GET', '200');
    if (this.spec.leader) this.metrics.apiRequest('PUT', '200');
    this.clock.after(LEADER_ELECTION_RETRY_PERIOD_MS, this.leaderElectionTick, this.timerOptions);
  };
}
