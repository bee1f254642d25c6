/**
 * Everything `serve` runs except the HTTP server: the source of metrics chosen by the configuration
 * (static targets, Kubernetes discovery, Prometheus, or the demo's simulated controllers), the diagnosis
 * service over it, the service's own metrics, and the views the API serves.
 *
 * Contract:
 * - `createServiceRuntime` validates what only I/O can check (the API token file, the basic-auth password
 *   file, the Kubernetes configuration, the state directory) and fails with a `ConfigError` naming the key; it
 *   starts nothing that outlives a failure.
 * - With a state directory (`state.dir`, scraping real targets), the history the previous run saved is read
 *   before anything is scraped, written every minute once started, and written a last time by `close()` after
 *   scraping has stopped (state-persistence.ts).
 * - `start()` scrapes every target once, then starts the evaluation loop (so the first report is not
 *   made from an empty history) and the scrape interval. `close()` stops scraping and evaluating and
 *   releases every timer, socket and child server; it is idempotent.
 * - Modules a mode does not use are not loaded: the Kubernetes client only with discovery, the simulator
 *   only in the demo.
 */

import { ConfigError } from '../config/config-error.js';
import type { ServiceConfig } from '../config/service-config.js';
import { isFiring } from '../diagnosis/report.js';
import { staticTargets } from '../discovery/static.js';
import type { Target } from '../discovery/target.js';
import { createPrometheusClient } from '../prometheus/prometheus-api.js';
import { redactUrl } from '../scrape/scrape-error.js';
import { historySizing } from '../scrape/scrape-settings.js';
import type { MetricsSource } from '../sources/source.js';
import type { TargetProvider } from '../sources/target-provider.js';
import { History } from '../store/history.js';
import { readApiToken } from './api-token.js';
import { createDiagnosisService, type DiagnosisService, type EvaluationOutcome } from './diagnosis-service.js';
import { createRecurringFailureLog } from './recurring-failure-log.js';
import { createServiceMetrics, type ServiceMetrics } from './service-metrics.js';
import { prometheusClientOptions, prometheusSourceFor, scrapeSourceFor } from './source-factory.js';
import { stateLimitsFor } from './state-limits.js';
import {
  createPrometheusStatus,
  type DiscoveryView,
  type PrometheusStatus,
  scrapeTargetsView,
  type TargetsView,
  targetNameOf,
} from './target-status.js';

/** What the runtime logs; a pino logger fits. */
export interface RuntimeLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
  debug(object: object, message: string): void;
}

export interface ServiceRuntime {
  readonly config: ServiceConfig;
  readonly source: MetricsSource;
  readonly service: DiagnosisService;
  readonly metrics: ServiceMetrics;
  /** The API token, when `api.tokenFile` is set. */
  readonly apiToken?: string;
  targets(): TargetsView;
  /** In the demo: the simulated controllers' ground truth (which queue should show which diagnosis). */
  readonly demo?: {
    readonly url: string;
    readonly expected: ReadonlyArray<{ name: string | null; expected: readonly string[] }>;
  };
  start(): Promise<void>;
  close(): Promise<void>;
}

export type RuntimeOptions = {
  readonly logger?: RuntimeLogger;
  /** Add prom-client's process metrics to the service's metrics; default true. */
  readonly processMetrics?: boolean;
  /** Demo: how much virtual history to create first; default the history's retention. */
  readonly demoWarmUpMs?: number;
  /** With `state.dir`: how often the state file is written; default one minute. */
  readonly stateWriteIntervalMs?: number;
  /** Aborted when the service is stopping during the start: reading the state file ends at its next read. */
  readonly signal?: AbortSignal;
};

const SILENT: RuntimeLogger = { info() {}, warn() {}, error() {}, debug() {} };

export async function createServiceRuntime(
  config: ServiceConfig,
  options: RuntimeOptions = {},
): Promise<ServiceRuntime> {
  const log = options.logger ?? SILENT;
  const apiToken = await readApiToken(config);
  const metrics = createServiceMetrics({ processMetrics: options.processMetrics !== false });
  const cleanups: Array<() => Promise<void> | void> = [];
  const closeAll = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        log.warn({ err: error }, 'cleanup failed');
      }
    }
  };

  try {
    let source: MetricsSource;
    let targetsView: () => TargetsView;
    let startSource: () => Promise<void> = async () => {};
    let demo: ServiceRuntime['demo'];

    if (config.source.kind === 'prometheus') {
      const s = config.source;
      const clientOptions = await prometheusClientOptions(config, s);
      source = prometheusSourceFor(config, clientOptions, s);
      cleanups.push(() => source.close());
      const status: PrometheusStatus = createPrometheusStatus(
        createPrometheusClient(clientOptions),
        s.url,
        config.evaluation.intervalMs,
      );
      cleanups.push(() => status.stop());
      targetsView = () => ({ mode: 'prometheus', prometheus: status.view() });
      startSource = async () => {
        await status.refresh();
        status.start();
      };
    } else {
      const history = new History(historySizing(config.scrape));
      const persistence =
        config.stateDir === undefined
          ? undefined
          : await (await import('./state-persistence.js')).openStatePersistence({
              dir: config.stateDir,
              where: config.origins['state.dir'] ?? 'state.dir',
              history,
              limits: stateLimitsFor(config.scrape, config.source),
              log,
              signal: options.signal,
              ...(options.stateWriteIntervalMs !== undefined ? { intervalMs: options.stateWriteIntervalMs } : {}),
              onWrite: (outcome) => metrics.stateWrite(outcome),
            });
      // Pushed before the scrape source's cleanup, so it runs after scraping has stopped.
      if (persistence !== undefined) cleanups.push(() => persistence.close());
      let provider: TargetProvider;
      let currentTargets: () => readonly Target[];
      let discoveryView: (() => DiscoveryView) | undefined;

      if (config.source.kind === 'kubernetes') {
        const s = config.source;
        const { createPodDiscovery } = await import('../discovery/kubernetes.js');
        const discovery = createPodDiscovery({
          connection: s.kubeconfig !== undefined ? { kind: 'kubeconfig', path: s.kubeconfig } : { kind: 'in-cluster' },
          namespaces: s.namespaces,
          ...(s.selector !== undefined ? { labelSelector: s.selector } : {}),
          defaults: {
            ...(s.port !== undefined ? { port: s.port } : {}),
            ...(s.path !== undefined ? { path: s.path } : {}),
            ...(s.scheme !== undefined ? { scheme: s.scheme } : {}),
            ...(s.job !== undefined ? { job: s.job } : {}),
          },
        });
        cleanups.push(() => discovery.stop());
        try {
          await discovery.start();
        } catch (error) {
          const where = config.origins['kubernetes.kubeconfig'] ?? config.origins['kubernetes.enabled'] ?? 'kubernetes';
          throw new ConfigError(`${where}: cannot start Kubernetes discovery: ${(error as Error).message}`);
        }
        provider = discovery;
        currentTargets = () => discovery.targets();
        discoveryView = () => {
          const st = discovery.status();
          return {
            kind: 'kubernetes',
            healthy: st.healthy,
            lastSync: st.lastSyncAt === null ? null : new Date(st.lastSyncAt).toISOString(),
            consecutiveFailures: st.consecutiveFailures,
            lastError:
              st.lastError === null
                ? null
                : { message: st.lastError.message, at: new Date(st.lastError.at).toISOString() },
          };
        };
      } else if (config.source.kind === 'demo') {
        const { startDemoTarget } = await import('./demo-source.js');
        const sim = await startDemoTarget({
          scenario: config.source.scenario,
          history,
          scrapeIntervalMs: config.scrape.intervalMs,
          ...(options.demoWarmUpMs !== undefined ? { warmUpMs: options.demoWarmUpMs } : {}),
        });
        cleanups.push(() => sim.stop());
        const list = [sim.target];
        provider = list;
        currentTargets = () => list;
        demo = { url: sim.target.url, expected: sim.truth.queues.map((q) => ({ name: q.name, expected: q.expected })) };
        log.info({ url: sim.target.url, warmUpScrapes: sim.warmUpScrapes }, 'demo controllers running');
      } else {
        let list: Target[];
        try {
          list = staticTargets(config.source.urls);
        } catch (error) {
          throw new ConfigError(`${config.origins.targets ?? 'targets'}: ${(error as Error).message}`);
        }
        provider = list;
        currentTargets = () => list;
      }

      const scrapeSource = scrapeSourceFor(config, {
        targets: provider,
        history,
        onScrape: (event) => {
          const target = targetNameOf(event.target);
          metrics.scrape({
            target,
            durationMs: event.durationMs,
            ok: event.ok,
            ...(event.errorCode !== undefined ? { errorCode: event.errorCode } : {}),
          });
          if (!event.ok) log.warn({ target, url: redactUrl(event.target.url), code: event.errorCode }, 'scrape failed');
        },
      });
      cleanups.push(() => scrapeSource.close());
      source = scrapeSource;
      metrics.read({
        targets: () => {
          const health = new Map(scrapeSource.health().map((h) => [h.key, h.up]));
          return currentTargets().map((t) => ({ target: targetNameOf(t), up: health.get(t.key) ?? false }));
        },
      });
      targetsView = () => scrapeTargetsView(currentTargets(), scrapeSource.health(), discoveryView?.());
      let interval: NodeJS.Timeout | undefined;
      cleanups.push(() => clearTimeout(interval));
      startSource = async () => {
        await scrapeSource.scrapeOnce();
        // The source's own schedule starts one interval after this first round (start() scrapes at once).
        interval = setTimeout(() => scrapeSource.start(), config.scrape.intervalMs);
        interval.unref();
        persistence?.start();
      };
    }

    let evaluations = 0;
    const evaluationFailures = createRecurringFailureLog(log, {
      failed: 'evaluation failed; the previous report is kept',
      recovered: 'evaluation succeeded again',
    });
    const service = createDiagnosisService({
      source,
      evaluationIntervalMs: config.evaluation.intervalMs,
      runbookBaseUrl: config.runbookBaseUrl,
      overrides: config.overrides,
      onEvaluation: (outcome: EvaluationOutcome) => {
        metrics.evaluation(outcome);
        evaluations++;
        if (!outcome.ok) evaluationFailures.failed(outcome.error ?? 'unknown error');
        else {
          evaluationFailures.succeeded();
          logEvaluation(log, outcome, evaluations === 1);
        }
      },
    });
    cleanups.push(() => service.stop());
    metrics.read({ report: () => service.report() });

    let started = false;
    let closing: Promise<void> | undefined;
    return {
      config,
      source,
      service,
      metrics,
      ...(apiToken !== undefined ? { apiToken } : {}),
      ...(demo !== undefined ? { demo } : {}),
      targets: () => targetsView(),
      async start() {
        if (started || closing !== undefined) return;
        started = true;
        await startSource();
        service.start();
      },
      close() {
        closing ??= closeAll();
        return closing;
      },
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

function logEvaluation(log: RuntimeLogger, outcome: EvaluationOutcome, first: boolean): void {
  const report = outcome.report;
  if (report === undefined) return;
  const count = (status: string) => report.queues.filter((q) => q.status === status).length;
  const entry = {
    queues: report.queues.length,
    findings: report.queues.reduce((n, q) => n + q.findings.filter(isFiring).length, 0),
    pending: count('pending'),
    unknown: count('unknown'),
    errors: report.errors.length,
    ms: Math.round(outcome.durationMs),
  };
  if (first) log.info(entry, 'first evaluation finished; ready');
  else log.debug(entry, 'evaluation finished');
}
