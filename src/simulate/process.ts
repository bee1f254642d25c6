/**
 * A simulated controller process: one prom-client registry holding what a real manager exposes
 * (work-queue metrics through the reference queue's Prometheus provider, controller-runtime's
 * per-controller metrics, the REST client counter, the leader-election gauge), its controllers,
 * and the leader-election loop.
 */
import { Registry } from 'prom-client';
import { type Clock, createPrometheusMetricsProvider, type TimerOptions } from '../queue/index.js';
import { SimController } from './controller.js';
import type { Flavor, ProcessSpec } from './model.js';
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
}

export class SimProcess {
  readonly registry = new Registry();
  readonly metrics: ProcessMetrics;
  readonly controllers: readonly SimController[];
  private readonly clock: Clock;
  private readonly timerOptions: TimerOptions;
  private stopped = false;

  constructor(
    readonly spec: ProcessSpec,
    options: ProcessOptions,
  ) {
    this.clock = options.clock;
    this.timerOptions = { background: options.realtime === true };
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
    };
    this.controllers = spec.controllers.map((controller) => new SimController(controller, env));
  }

  start(): void {
    this.leaderElectionTick();
    for (const controller of this.controllers) controller.start();
  }

  /** Virtual time: hands queued keys to idle workers of every controller. */
  pump(): void {
    for (const controller of this.controllers) controller.pump();
  }

  stop(): void {
    this.stopped = true;
    for (const controller of this.controllers) controller.stop();
  }

  private readonly leaderElectionTick = (): void => {
    if (this.stopped) return;
    this.metrics.apiRequest('GET', '200');
    if (this.spec.leader) this.metrics.apiRequest('PUT', '200');
    this.clock.after(LEADER_ELECTION_RETRY_PERIOD_MS, this.leaderElectionTick, this.timerOptions);
  };
}
