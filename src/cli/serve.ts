/**
 * `workqueue-doctor serve`: the sidecar / service. The only code that listens.
 *
 * Reads the configuration (flags > `WQD_` environment > `--config` file), starts the runtime (scraping or
 * Prometheus, evaluation), builds the HTTP app and listens; on SIGTERM or SIGINT stops scraping and
 * evaluating, closes the server and exits 0 (at once when the start has not finished: nothing is held yet).
 * SIGHUP does the same, logged as such: the configuration is read
 * once, at start, so a new one takes effect when the supervisor (Kubernetes, systemd) starts the service again.
 * A bad configuration exits 2 with the key named.
 *
 * `serve --demo` runs built-in reference controllers (the `mixed` scenario) on loopback with half an hour
 * of history already simulated, and prints the URL of the page to open; every mode logs it (`page`).
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { type Logger, pino } from 'pino';
import { ConfigError } from '../config/config-error.js';
import { loadServiceConfig, type ServiceConfig } from '../config/service-config.js';
import {
  DEFAULT_DEMO_LISTEN,
  DEFAULT_EVALUATION_INTERVAL,
  DEFAULT_LISTEN,
  DEFAULT_PROMETHEUS_TIMEOUT,
  DEFAULT_RETENTION,
  DEFAULT_SCRAPE_INTERVAL,
  DEFAULT_TARGET,
} from '../config/service-defaults.js';
import { formatListenAddress, LOG_LEVELS } from '../config/setting-values.js';
import { ruleSettings } from '../diagnosis/catalog.js';
import { rulesBeyondKept } from '../diagnosis/judgement.js';
import { API_PREFIX, buildApp, DOCS_PREFIX } from '../server/app.js';
import { rulesView } from '../server/rules-view.js';
import { type ContainerMemoryLimit, readContainerMemoryLimit } from '../service/container-memory.js';
import { applyMemoryBudget, type MemoryBudget } from '../service/memory-budget.js';
import { createQueueSeries, DEFAULT_SERIES_WINDOW_MS } from '../service/queue-series.js';
import { createServiceRuntime, type RuntimeOptions, type ServiceRuntime } from '../service/runtime.js';
import { formatDuration } from '../util/duration.js';
import { formatMiB } from '../util/memory-quantity.js';
import { packageVersion } from '../util/version.js';
import { configUsageError } from './config-file.js';
import { EXIT, UsageError } from './exit-codes.js';
import { addScrapeLimitOptions } from './scrape-options.js';

/** A shutdown that has not finished after this long ends the process anyway. */
const SHUTDOWN_DEADLINE_MS = 10_000;

/**
 * The proxies believed about a request's client address and scheme (`X-Forwarded-For`, `X-Forwarded-Proto`):
 * those in the pod itself, as a TLS-terminating sidecar (kube-rbac-proxy, oauth2-proxy, Envoy) connects over
 * loopback. Behind it, the session cookie is `Secure` and the sign-in throttle counts the proxy's clients, not the
 * proxy. A proxy on another address is not believed: anyone could claim to be one.
 */
const TRUSTED_PROXIES = 'loopback';

export interface RunningServer {
  /** `http://host:port` the API listens on (a wildcard host shown as 127.0.0.1). */
  readonly origin: string;
  readonly runtime: ServiceRuntime;
  /** Stops scraping and evaluating, then closes the server. Idempotent. */
  close(): Promise<void>;
}

export type StartOptions = RuntimeOptions & {
  /** Default: JSON lines to stdout at the configured level. */
  readonly logger?: Logger;
  /** Where the demo prints the URL to open; default stderr (stdout carries the JSON log). */
  readonly announce?: (line: string) => void;
  /** Runs after the runtime is built and before it starts scraping (e.g. to preload history). */
  readonly beforeStart?: (runtime: ServiceRuntime) => void | Promise<void>;
  /**
   * The container's memory limit (`serve` reads its cgroup), which sizes the limits not given unless `memory.limit`
   * is set (service/memory-budget.ts); unset: none.
   */
  readonly containerMemory?: ContainerMemoryLimit;
};

export function registerServeCommand(program: Command): void {
  const command = program
    .command('serve')
    .description(
      'Run the service: scrape targets (or query Prometheus), evaluate the diagnoses on an interval and serve ' +
        `them: REST under ${API_PREFIX}, /metrics, /healthz, /readyz, OpenAPI at ${DOCS_PREFIX}. Settings come ` +
        'from flags, WQD_* environment variables and --config FILE, in that order of precedence.',
    )
    .option('--config <file>', 'YAML configuration file (see deploy/config-example.yaml) [WQD_CONFIG]')
    .option(
      '--listen <host:port>',
      `address to listen on (default ${DEFAULT_LISTEN}; demo ${DEFAULT_DEMO_LISTEN}) [WQD_LISTEN]`,
    )
    .addOption(new Option('--log-level <level>', 'log level (default info) [WQD_LOG_LEVEL]').choices(LOG_LEVELS))
    .option('--target <url...>', `metrics URLs to scrape (default ${DEFAULT_TARGET}) [WQD_TARGETS, comma-separated]`)
    .option('--kubernetes', 'discover pods to scrape from the Kubernetes API [WQD_KUBERNETES]')
    .option('--namespace <namespace...>', 'discovery: namespaces to watch (default all) [WQD_NAMESPACES]')
    .option('--selector <selector>', 'discovery: pod label selector, e.g. app=my-operator [WQD_SELECTOR]')
    .option('--kubeconfig <file>', 'discovery: kubeconfig file (default in-cluster service account) [WQD_KUBECONFIG]')
    .option(
      '--pod-port <port>',
      'discovery: metrics port of pods without a prometheus.io/port annotation [WQD_POD_PORT]',
    )
    .option('--prometheus-url <url>', 'Prometheus mode: a Prometheus-compatible API to query [WQD_PROMETHEUS_URL]')
    .option(
      '--prometheus-engine <engine>',
      "Prometheus mode: the API's query engine, prometheus, victoriametrics or auto (ask it; the default) [WQD_PROMETHEUS_ENGINE]",
    )
    .option(
      '--prometheus-recorded-series <mode>',
      'Prometheus mode: read signals from the series of the generated recording rules, auto (where the API holds them; the default), on or off [WQD_PROMETHEUS_RECORDED_SERIES]',
    )
    .option(
      '--prometheus-series-refresh <duration>',
      'Prometheus mode: how long a series lookup stands for the next evaluations; new queues show up to that late; shorter than --evaluation-interval lists them every evaluation (default 5m) [WQD_PROMETHEUS_SERIES_REFRESH]',
    )
    .option(
      '--prometheus-max-sample-delay <duration>',
      'Prometheus mode: how late samples may reach the API (remote write, federation); steps older than that are kept between evaluations (default 2m) [WQD_PROMETHEUS_MAX_SAMPLE_DELAY]',
    )
    .option(
      '--prometheus-timeout <duration>',
      `Prometheus request timeout (default ${DEFAULT_PROMETHEUS_TIMEOUT}) [WQD_PROMETHEUS_TIMEOUT]`,
    )
    .option('--header <header...>', 'extra header for Prometheus, "Name: value" (e.g. "X-Scope-OrgID: team-a")')
    .option('--basic-auth-user <user>', 'Prometheus basic-auth user [WQD_BASIC_AUTH_USER]')
    .option(
      '--basic-auth-password-file <file>',
      'file holding the Prometheus basic-auth password [WQD_BASIC_AUTH_PASSWORD_FILE]',
    )
    .option(
      '--scrape-interval <duration>',
      `scrape interval (default ${DEFAULT_SCRAPE_INTERVAL}) [WQD_SCRAPE_INTERVAL]`,
    )
    .option('--scrape-timeout <duration>', 'scrape timeout (default min(10s, 0.8 x interval)) [WQD_SCRAPE_TIMEOUT]')
    .option(
      '--fleet-selector <matchers>',
      'Prometheus mode: label matchers added to every query, e.g. \'job=~"my-operator.*"\' [WQD_FLEET_SELECTOR]',
    )
    .option('--retention <duration>', `history kept per series (default ${DEFAULT_RETENTION}) [WQD_RETENTION]`)
    .option(
      '--memory-limit <size>',
      "memory the limits not given are sized for, e.g. 192Mi, or max for the fixed defaults (default: the container's limit, read from its cgroup) [WQD_MEMORY_LIMIT]",
    )
    .option(
      '--state-dir <dir>',
      'keep the scraped history in DIR across restarts (static targets, discovery; default off) [WQD_STATE_DIR]',
    )
    .option(
      '--evaluation-interval <duration>',
      `how often the diagnoses run (default ${DEFAULT_EVALUATION_INTERVAL}) [WQD_EVALUATION_INTERVAL]`,
    )
    .option('--bearer-token-file <file>', 'bearer token sent to targets or Prometheus [WQD_BEARER_TOKEN_FILE]')
    .option('--ca-file <file>', 'CA bundle for HTTPS targets or Prometheus [WQD_CA_FILE]')
    .option(
      '--insecure-skip-verify',
      'do not verify TLS certificates of targets or Prometheus [WQD_INSECURE_SKIP_VERIFY]',
    )
    .option(
      '--api-token-file <file>',
      `require "Authorization: Bearer <token>" on ${API_PREFIX} (token in the file) [WQD_API_TOKEN_FILE]`,
    )
    .option(
      '--secure-cookie',
      'always mark the sign-in cookie Secure (behind a TLS proxy outside the pod; without it: when the request came over TLS) [WQD_SECURE_COOKIE]',
    )
    .option('--runbook-base-url <url>', 'base URL of the runbooks linked from findings [WQD_RUNBOOK_BASE_URL]')
    .option(
      '--grafana-url <url>',
      'Grafana with the generated dashboards: the page links each queue to its detail dashboard there [WQD_GRAFANA_URL]',
    )
    .option('--demo', 'run built-in simulated controllers (scenario mixed) on 127.0.0.1 and diagnose them');
  addScrapeLimitOptions(command, '', true).action(async (flags: Record<string, unknown>) => {
    process.exitCode = await runServe(flags);
  });
}

async function runServe(flags: Record<string, unknown>): Promise<number> {
  let config: ServiceConfig;
  try {
    config = await loadServiceConfig(flags, process.env);
  } catch (error) {
    if (error instanceof ConfigError) throw configUsageError(error);
    throw error;
  }
  const logger = pino({
    level: config.logLevel,
    base: { service: 'workqueue-doctor' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
  // Listen for the signals before starting, so that one arriving during the start (the demo's warm-up,
  // discovery's first list) still shuts down cleanly once the start has finished.
  const handlers: Array<[NodeJS.Signals, () => void]> = [];
  // Aborted by the first signal: a start still reading the state file stops reading it.
  const stopping = new AbortController();
  const signal = new Promise<NodeJS.Signals>((resolve) => {
    for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      const handler = (): void => {
        stopping.abort();
        resolve(name);
      };
      handlers.push([name, handler]);
      process.once(name, handler);
    }
  });
  const forget = (): void => {
    for (const [name, handler] of handlers) process.off(name, handler);
  };
  let server: RunningServer;
  try {
    const containerMemory = config.memoryLimit === undefined ? await readContainerMemoryLimit() : undefined;
    const started = await Promise.race([
      startServer(config, {
        logger,
        signal: stopping.signal,
        ...(containerMemory !== undefined ? { containerMemory } : {}),
      }).then((running) => ({ running })),
      signal.then((name) => ({ name })),
    ]);
    if ('name' in started) {
      // A signal during the start (the first scrape round, the demo's warm-up, discovery's first list): nothing
      // is held yet that a stop would keep, and the start may wait on a slow target for its whole timeout, so
      // the process ends at once instead of after it.
      forget();
      logger.info({ signal: started.name }, 'shutting down before the start finished');
      process.exit(EXIT.ok);
    }
    server = started.running;
  } catch (error) {
    forget();
    if (error instanceof ConfigError) throw configUsageError(error);
    throw error;
  }
  const received = await signal;
  forget();
  logger.info(
    received === 'SIGHUP'
      ? { signal: received, note: 'the configuration is read at start: start the service again to apply a new one' }
      : { signal: received },
    'shutting down',
  );
  const deadline = setTimeout(() => {
    logger.error({ ms: SHUTDOWN_DEADLINE_MS }, 'shutdown took too long; exiting');
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS);
  deadline.unref();
  await server.close();
  clearTimeout(deadline);
  logger.info({}, 'stopped');
  return EXIT.ok;
}

/**
 * Starts the runtime and listens (the programmatic entry of `serve`). Rejects with a `ConfigError` for
 * a configuration that only fails at start (unreadable token file, Kubernetes configuration).
 */
export async function startServer(given: ServiceConfig, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? pino({ level: given.logLevel, base: { service: 'workqueue-doctor' } });
  const { config, budget } = applyMemoryBudget(given, options.containerMemory);
  logBudget(logger, config, budget);
  warnOfShortRetention(logger, config);
  const runtime = await createServiceRuntime(config, { ...options, logger });
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    app = await buildApp({
      report: () => runtime.service.report(),
      ready: () => runtime.service.ready(),
      evaluationError: () => runtime.service.lastError(),
      targets: () => runtime.targets(),
      rules: rulesView(config.overrides, config.runbookBaseUrl),
      page: {
        overrides: config.overrides,
        scope: config.scope,
        ...(config.grafanaUrl !== undefined ? { grafanaUrl: config.grafanaUrl } : {}),
      },
      // The charts reach back as far as the history does (Prometheus keeps more than they show).
      series: createQueueSeries({
        backend: runtime.source.backend,
        windowMs:
          config.source.kind === 'prometheus'
            ? DEFAULT_SERIES_WINDOW_MS
            : Math.min(DEFAULT_SERIES_WINDOW_MS, config.scrape.retentionMs),
      }),
      metrics: runtime.metrics.registry,
      ...(runtime.apiToken !== undefined ? { apiToken: runtime.apiToken } : {}),
      trustProxy: TRUSTED_PROXIES,
      secureCookie: config.secureCookie,
      logger,
      evaluationIntervalMs: config.evaluation.intervalMs,
      version: packageVersion(),
      ...(budget !== undefined ? { answerCache: budget.limits.answerCache } : {}),
    });
    await options.beforeStart?.(runtime);
    // Listen first: /healthz answers and /readyz says 503 while the first scrape round (bounded by the
    // scrape timeout) and the first evaluation run.
    const address = await listen(app, config);
    await runtime.start();
    const shownHost = address.host === '0.0.0.0' || address.host === '::' ? '127.0.0.1' : address.host;
    const origin = `http://${formatListenAddress({ host: shownHost, port: address.port })}`;
    logger.info(
      {
        listen: formatListenAddress(address),
        mode: config.source.kind,
        auth: runtime.apiToken !== undefined,
        page: `${origin}/`,
      },
      'listening',
    );
    if (config.source.kind === 'demo') {
      const line = `workqueue-doctor demo: open ${origin}/ (JSON at ${API_PREFIX}/diagnosis, API docs at ${DOCS_PREFIX})`;
      (options.announce ?? ((text: string) => process.stderr.write(`${text}\n`)))(line);
    }
    let closing: Promise<void> | undefined;
    const running = app;
    return {
      origin,
      runtime,
      close() {
        closing ??= (async () => {
          await runtime.close();
          await running.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await runtime.close();
    await app?.close();
    throw error;
  }
}

/**
 * Warns once when the scraped history keeps less than some enabled rule reads: those rules are reported unknown
 * (unless their condition holds) for as long as the service runs, where Prometheus, keeping more, judges them.
 */
function warnOfShortRetention(logger: Logger, config: ServiceConfig): void {
  if (config.source.kind === 'prometheus') return;
  const rules = rulesBeyondKept(ruleSettings(config.overrides), config.scrape.retentionMs);
  if (rules.length === 0) return;
  logger.warn(
    { retention: formatDuration(config.scrape.retentionMs), rules },
    'scrape.retention is shorter than the range these rules read: they stay unknown unless their condition holds',
  );
}

/** Logs the memory budget once: the limit, where it came from, and the limits in force (given or derived). */
function logBudget(logger: Logger, config: ServiceConfig, budget: MemoryBudget | undefined): void {
  const s = config.scrape;
  const count = (n: number): number | string => (Number.isFinite(n) ? n : 'none');
  const limits = {
    maxBytes: s.maxBytes,
    seriesLimit: s.seriesLimit,
    heldSeriesLimit: s.heldSeriesLimit,
    queueLimit: s.queueLimit,
    totalSeriesLimit: count(s.totalSeriesLimit),
    totalQueueLimit: count(s.totalQueueLimit),
    labelValueLimit: s.labelValueLimit,
    labelSetLengthLimit: count(s.labelSetLengthLimit),
    answerCacheBytes:
      budget === undefined
        ? undefined
        : budget.limits.answerCache.reports.maxBytes +
          budget.limits.answerCache.queues.maxBytes +
          budget.limits.answerCache.series.maxBytes,
  };
  if (budget === undefined) {
    logger.info({ memoryLimit: null, limits }, "no memory limit (memory.limit or the container's): the fixed limits");
    return;
  }
  logger.info(
    { memoryLimit: formatMiB(budget.limitBytes), from: budget.from, limits },
    'memory budget: the limits not given are sized for it',
  );
}

/** Listens on the configured address; the demo's default port falls back to a free one when taken. */
async function listen(
  app: Awaited<ReturnType<typeof buildApp>>,
  config: ServiceConfig,
): Promise<{ host: string; port: number }> {
  const { host, port } = config.listen;
  try {
    await app.listen({ host, port });
  } catch (error) {
    const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
    if (!(inUse && config.source.kind === 'demo' && !config.listenGiven)) {
      if (inUse) throw new UsageError(`${config.origins.listen ?? 'listen'}: ${host}:${port} is already in use`);
      throw error;
    }
    app.log.warn({ port }, 'demo port in use; listening on a free port');
    await app.listen({ host, port: 0 });
  }
  const address = app.server.address();
  if (address === null || typeof address === 'string') return { host, port };
  return { host: address.address, port: address.port };
}
