/**
 * A scenario on the real clock, serving its process's metrics live on `/metrics` (Prometheus text
 * 0.0.4, or OpenMetrics 1.0 when the Accept header asks for `application/openmetrics-text`), for
 * demos and for scraping by a real Prometheus or by the service itself.
 *
 * The controllers run as they would in a process: each worker is an async loop on the queue's
 * `get()`, syncs and events are timers. The simulator's timers never hold Node open; `stop()` shuts
 * the queues down and closes the server with its connections.
 */
import { realClock } from '../queue/index.js';
import { listenMetrics } from './metrics-server.js';
import type { GroundTruth, Scenario, SimulationParams } from './model.js';
import { SimProcess } from './process.js';
import { getScenario, groundTruth, resolveParams, SimulationParamError } from './run.js';

export interface LiveOptions {
  readonly scenario: string | Scenario;
  /** `host:port` (`[::1]:port` for IPv6); port 0 picks a free one. Default `127.0.0.1:0`. */
  readonly listen?: string | undefined;
  readonly params?: Partial<SimulationParams> | undefined;
}

export interface LiveSimulation {
  /** `http://host:port/metrics` */
  readonly url: string;
  readonly truth: GroundTruth;
  stop(): Promise<void>;
}

/** Splits `host:port`; throws `SimulationParamError` on anything else. */
export function parseListen(listen: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(listen.trim());
  const port = match === null ? Number.NaN : Number(match[3]);
  if (match === null || !(port >= 0 && port <= 65_535)) {
    throw new SimulationParamError(`invalid listen address "${listen}": expected host:port, e.g. 127.0.0.1:8080`);
  }
  const host = match[1] ?? match[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/** Starts `scenario` on the real clock and serves its metrics; resolves once the server listens. */
export async function startLiveSimulation(options: LiveOptions): Promise<LiveSimulation> {
  const scenario = typeof options.scenario === 'string' ? getScenario(options.scenario) : options.scenario;
  const params = resolveParams(options.params, scenario);
  const { host, port } = parseListen(options.listen ?? '127.0.0.1:0');
  const spec = scenario.build(params);
  const sim = new SimProcess(spec, {
    clock: realClock,
    seed: params.seed,
    flavor: params.flavor,
    durationMs: params.durationMs,
    realtime: true,
    background: params.background,
    queue: params.queue,
  });

  const { server, url } = await listenMetrics(sim, scenario.name, host, port);

  sim.start();
  for (const controller of sim.controllers) {
    for (let i = 0; i < controller.workers; i++) void controller.runWorker();
  }

  let stopping: Promise<void> | undefined;
  return {
    url,
    truth: groundTruth(scenario, params, {}, spec),
    stop: () => {
      stopping ??= new Promise<void>((resolve) => {
        sim.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopping;
    },
  };
}
