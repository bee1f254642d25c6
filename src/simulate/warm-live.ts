/**
 * A live simulation that already has a past: the scenario runs on virtual time from `now - warmUpMs` to
 * now (the discrete-event loop of `runVirtual`, scraped every interval), then the SAME simulated process
 * keeps running, its FakeClock stepped to the real time every `tickMs`, serving its registry on
 * `/metrics`. A scraper that loads the warm-up scrapes and then scrapes `/metrics` sees one continuous
 * history: counters never reset, the backlog's depth carries on. The service's demo uses it so that
 * diagnoses that need minutes of history show at once.
 *
 * Contract:
 * - The server listens before the warm-up, so the warm-up scrapes can name the target as a live scrape
 *   will (`url`, and `instance` = the URL's `host:port` unless given).
 * - `onWarmUpScrape` gets every warm-up scrape as Prometheus text, in time order, each awaited before the
 *   simulation moves on; `recording` holds the same scrapes (OpenMetrics with timestamps). Their times carry
 *   the background's scrape jitter, as `runVirtual`'s do.
 * - After the warm-up the clock never runs ahead of the real time; `stop()` stops the pacing, the process
 *   and the server (connections included).
 */
import { FakeClock } from '../queue/index.js';
import { parseListen } from './live.js';
import { listenMetrics } from './metrics-server.js';
import type { GroundTruth, Scenario, SimulationParams } from './model.js';
import { SimProcess } from './process.js';
import { RecordingStore } from './recording-writer.js';
import {
  advanceTo,
  DEFAULT_JOB,
  DEFAULT_SCRAPE_INTERVAL_MS,
  getScenario,
  groundTruth,
  resolveParams,
  SimulationParamError,
  scrapeTimes,
} from './run.js';

export const DEFAULT_WARM_UP_MS = 30 * 60_000;
export const DEFAULT_TICK_MS = 50;

export interface WarmUpScrape {
  /** Epoch ms of the scrape (virtual time, before the start of the live part). */
  readonly timeMs: number;
  /** The page as `/metrics` serves it (Prometheus text 0.0.4, no timestamps). */
  readonly text: string;
  /** The live server's `/metrics` URL. */
  readonly url: string;
}

export interface WarmLiveOptions {
  readonly scenario: string | Scenario;
  /** Virtual time run before now. Default 30 minutes. */
  readonly warmUpMs?: number | undefined;
  /** `host:port`; default `127.0.0.1:0` (a free port). */
  readonly listen?: string | undefined;
  /** `job` of the recorded samples; default the simulator's. */
  readonly job?: string | undefined;
  /** `instance` of the recorded samples; default the server's `host:port`, as a static target's. */
  readonly instance?: string | undefined;
  readonly params?: Partial<SimulationParams> | undefined;
  /** Warm-up scrape interval; default 15 s. */
  readonly scrapeIntervalMs?: number | undefined;
  /** Real-time pacing step; default 50 ms. */
  readonly tickMs?: number | undefined;
  readonly onWarmUpScrape?: ((scrape: WarmUpScrape) => void | Promise<void>) | undefined;
  /** Epoch ms now; default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

export interface WarmLiveSimulation {
  /** `http://host:port/metrics` */
  readonly url: string;
  readonly job: string;
  readonly instance: string;
  readonly truth: GroundTruth;
  /** The warm-up scrapes. */
  readonly recording: RecordingStore;
  /** Time of the last warm-up scrape (epoch ms). */
  readonly warmUpEndMs: number;
  stop(): Promise<void>;
}

export async function startWarmLiveSimulation(options: WarmLiveOptions): Promise<WarmLiveSimulation> {
  const scenario = typeof options.scenario === 'string' ? getScenario(options.scenario) : options.scenario;
  const params = resolveParams(options.params, scenario);
  const warmUpMs = options.warmUpMs ?? DEFAULT_WARM_UP_MS;
  const intervalMs = options.scrapeIntervalMs ?? DEFAULT_SCRAPE_INTERVAL_MS;
  const tickMs = options.tickMs ?? DEFAULT_TICK_MS;
  const now = options.now ?? Date.now;
  if (!(Number.isFinite(intervalMs) && intervalMs >= 1000)) {
    throw new SimulationParamError(`scrape interval must be at least 1s, got ${intervalMs} ms`);
  }
  if (!(Number.isFinite(warmUpMs) && warmUpMs >= intervalMs)) {
    throw new SimulationParamError(`warm-up must be at least one scrape interval, got ${warmUpMs} ms`);
  }
  if (!(tickMs > 0)) throw new SimulationParamError(`tick must be above 0, got ${tickMs} ms`);
  const { host, port } = parseListen(options.listen ?? '127.0.0.1:0');

  const startMs = now() - warmUpMs;
  const clock = new FakeClock(startMs);
  const spec = scenario.build(params);
  const sim = new SimProcess(spec, {
    clock,
    seed: params.seed,
    flavor: params.flavor,
    durationMs: params.durationMs,
    realtime: true,
    background: params.background,
    queue: params.queue,
  });

  const { server, address, url } = await listenMetrics(sim, scenario.name, host, port);
  const job = options.job ?? DEFAULT_JOB;
  const instance = options.instance ?? `${new URL(url).hostname}:${address.port}`;
  const recording = new RecordingStore({ job, instance });

  let pacer: NodeJS.Timeout | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= new Promise<void>((resolve) => {
      if (pacer !== undefined) clearInterval(pacer);
      sim.stop();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return stopping;
  };

  let warmUpEndMs = startMs;
  try {
    sim.start();
    sim.pump();
    const scrapes = Math.floor(warmUpMs / intervalMs);
    // Jittered like the recordings of `runVirtual`; the last never after its nominal time, which is not after now.
    for (const at of scrapeTimes(startMs, intervalMs, scrapes, sim.background.scrapeJitterMs, params.seed, true)) {
      advanceTo(clock, sim, at);
      recording.add(at, await sim.registry.getMetricsAsJSON());
      if (options.onWarmUpScrape !== undefined) {
        await options.onWarmUpScrape({ timeMs: at, text: await sim.registry.metrics(), url });
      }
      warmUpEndMs = at;
    }
  } catch (error) {
    await stop();
    throw error;
  }

  // From here on the same process follows the real clock.
  const pace = (): void => {
    const target = now();
    if (target > clock.now()) advanceTo(clock, sim, target);
  };
  pace();
  pacer = setInterval(pace, tickMs);
  pacer.unref();

  return {
    url,
    job,
    instance,
    truth: groundTruth(scenario, params, { job, instance, startMs, scrapeIntervalMs: intervalMs }, spec),
    recording,
    warmUpEndMs,
    stop,
  };
}
