/**
 * The configuration of every command (`serve`, `diagnose`, `calibrate`, `generate`; one file serves them all):
 * one table of settings, each readable from a YAML file, a `WQD_`
 * environment variable and a command-line flag, with the precedence flags > environment > file >
 * default. Read and checked once, at start; the result is trusted from then on.
 *
 * Contract:
 * - Every bad value fails with a `ConfigError` whose message starts with where the value came from and
 *   its key: `config.yaml: scrape.interval: invalid duration "5x" ...`, `WQD_SCRAPE_INTERVAL: ...`,
 *   `--scrape-interval: ...`. Unknown keys in the file are errors; unknown `WQD_` variables are ignored
 *   (Kubernetes injects `<SERVICE>_PORT`-style variables, so a Service named `wqd` must not break the pod).
 * - The source of the numbers (static targets, Kubernetes discovery, Prometheus, the demo) is chosen
 *   as a whole: the highest layer that names any source decides, and one layer naming two sources is an
 *   error. With no source anywhere, the sidecar default `http://127.0.0.1:8080/metrics` is scraped.
 * - The file's `rules:` and `queues:` sections are the catalog's overrides (`parseRuleOverrides`,
 *   `parseQueueOverrides`); they come only from the file.
 * - The fleet (`selector`, `clusterLabel`, `namespaceLabel`) is the `scope` of Prometheus-mode queries and of
 *   the generated rules and dashboards; `clusterLabel` and `namespaceLabel` must differ and must not be a label
 *   that identifies a queue.
 * - The format is documented, with every key, in `deploy/config-example.yaml`.
 *
 * The settings table is in service-settings.ts, the defaults in service-defaults.ts, reading the three
 * layers in config-layers.ts and checking values in setting-values.ts; this module merges them.
 */
import type { RuleOverrides } from '../diagnosis/catalog.js';
import { identityLabels } from '../diagnosis/identity.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../diagnosis/runbook.js';
import type { PrometheusEngine } from '../prometheus/prometheus-backend.js';
import type { RecordedSeriesMode } from '../prometheus/recorded-series.js';
import type { LabelMatcher } from '../promql/expr.js';
import type { QueryScope } from '../promql/query-scope.js';
import { DEFAULT_SCRAPE_SETTINGS, defaultHeldSeriesLimit, type ScrapeSettings } from '../scrape/scrape-settings.js';
import { parseDuration } from '../util/duration.js';
import { ConfigError } from './config-error.js';
import { envLayer, fileLayer, flagLayer, type Layer, parseConfigFile } from './config-layers.js';
import { parseOverrideSections } from './queue-overrides.js';
import { readConfigFile } from './read-config-file.js';
import {
  DEFAULT_DEMO_LISTEN,
  DEFAULT_EVALUATION_INTERVAL,
  DEFAULT_LISTEN,
  DEFAULT_PROMETHEUS_MAX_SAMPLE_DELAY,
  DEFAULT_PROMETHEUS_SERIES_REFRESH,
  DEFAULT_PROMETHEUS_TIMEOUT,
  DEFAULT_SCRAPE_INTERVAL,
  DEFAULT_TARGET,
  DEMO_SCENARIO,
} from './service-defaults.js';
import { ENV_PREFIX, parseSetting, SETTINGS, type Setting, SOURCE_KEYS, type SourceKind } from './service-settings.js';
import { type ListenAddress, type LogLevel, parseListenAddress } from './setting-values.js';

export type { ListenAddress, LogLevel, QueryScope, ScrapeSettings };

export type SourceConfig =
  | { readonly kind: 'targets'; readonly urls: readonly string[] }
  | {
      readonly kind: 'kubernetes';
      /** Empty: every namespace. */
      readonly namespaces: readonly string[];
      readonly selector?: string;
      /** Unset: the in-cluster service account. */
      readonly kubeconfig?: string;
      readonly port?: number;
      readonly path?: string;
      readonly scheme?: 'http' | 'https';
      readonly job?: string;
    }
  | {
      readonly kind: 'prometheus';
      readonly url: string;
      readonly timeoutMs: number;
      readonly headers: Readonly<Record<string, string>>;
      /** The server's query engine; `auto` detects it. */
      readonly engine: PrometheusEngine;
      /** How late samples may reach the server: steps older than that are kept between evaluations. */
      readonly maxSampleDelayMs: number;
      /** How long a series lookup stands for the next evaluations (shorter than their interval: none is kept). */
      readonly seriesRefreshMs: number;
      /** Whether signals are read from the recording rules' series; `auto` where the server holds them. */
      readonly recordedSeries: RecordedSeriesMode;
      readonly basicAuth?: { readonly username: string; readonly passwordFile: string };
    }
  | { readonly kind: 'demo'; readonly scenario: string };

export type ServiceConfig = {
  /** The configuration file read, if any. */
  readonly configFile?: string;
  readonly listen: ListenAddress;
  /** Whether the listen address was given (the demo falls back to a free port only when it was not). */
  readonly listenGiven: boolean;
  readonly logLevel: LogLevel;
  readonly apiTokenFile?: string;
  /**
   * Whether the sign-in's session cookie is always `Secure`: for a TLS proxy the service does not trust (an Ingress
   * outside the pod). Without it the cookie is `Secure` when the request arrived over TLS as the service sees it.
   */
  readonly secureCookie: boolean;
  readonly runbookBaseUrl: string;
  /** The Grafana the page links each queue's detail dashboard in (`grafana.url`); unset: no links. */
  readonly grafanaUrl?: string;
  readonly source: SourceConfig;
  /**
   * The memory the service may use (`memory.limit`), in bytes; `Infinity` for `max`; unset: the container's limit,
   * if any, read at start (service/memory-budget.ts sizes the limits not given from it).
   */
  readonly memoryLimit?: number;
  /**
   * Every scrape setting, each unset one at its fixed default (scrape/scrape-settings.ts; `serve` sizes them from its
   * memory budget instead, service/memory-budget.ts); `origins` says which were given.
   */
  readonly scrape: ScrapeSettings;
  readonly evaluation: { readonly intervalMs: number };
  /** Where the scraped history is kept across restarts (`state.dir`); unset (or the source is not live targets): nowhere. */
  readonly stateDir?: string;
  readonly overrides: RuleOverrides;
  /** The fleet selector and the cluster and namespace labels (`selector`, `clusterLabel`, `namespaceLabel`). */
  readonly scope: QueryScope;
  /** `generate`: whether the dashboards read the recorded series; unset: the generator's default. */
  readonly dashboardsReadRecordings?: boolean;
  /** Where each setting that was given came from (`--scrape-interval`, `WQD_LISTEN`, `f.yaml: listen`), by key. */
  readonly origins: Readonly<Record<string, string>>;
};

export type ConfigInputs = {
  /** Parsed command-line options (commander's camelCase attributes); unset options absent or undefined. */
  readonly flags: Readonly<Record<string, unknown>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The configuration file's name (as given) and text. */
  readonly file?: { readonly path: string; readonly text: string };
};

/** What differs between the commands that resolve a configuration. */
export type ResolveOptions = {
  /** The scrape interval when none is given; default `DEFAULT_SCRAPE_INTERVAL` (`diagnose`: its own). */
  readonly scrapeIntervalDefault?: string;
  /**
   * Set when the command reads none of the configured sources (`diagnose --recording`): what it reads instead,
   * e.g. `the recording (--recording)`. Every source-specific flag is then idle, and named with it.
   */
  readonly otherSource?: string;
};

/** The flag of a setting as typed: `scrapeInterval` → `--scrape-interval`. */
export function flagName(attribute: string): string {
  return `--${attribute.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** Reads the configuration file named by `--config` or `WQD_CONFIG` (if any; read-config-file.ts), then resolves. */
export async function loadServiceConfig(
  flags: ConfigInputs['flags'],
  env: ConfigInputs['env'],
  options: ResolveOptions = {},
): Promise<ServiceConfig> {
  const fromFlag = flags.config;
  const fromEnv = env[`${ENV_PREFIX}CONFIG`];
  const path = typeof fromFlag === 'string' ? fromFlag : fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
  if (path === undefined) return resolveServiceConfig({ flags, env }, options);
  const text = await readConfigFile(path, typeof fromFlag === 'string' ? '--config' : `${ENV_PREFIX}CONFIG`);
  return resolveServiceConfig({ flags, env, file: { path, text } }, options);
}

/** Merges and checks the three layers (see the module contract). */
export function resolveServiceConfig(inputs: ConfigInputs, options: ResolveOptions = {}): ServiceConfig {
  const fileRoot = inputs.file === undefined ? undefined : parseConfigFile(inputs.file.text, inputs.file.path);
  const layers: Layer[] = [flagLayer(inputs.flags), envLayer(inputs.env)];
  if (inputs.file !== undefined && fileRoot !== undefined) layers.push(fileLayer(fileRoot, inputs.file.path));

  // Every given value is checked, also one a higher layer overrides: a broken file is reported, not hidden.
  for (const layer of layers) {
    for (const [key, found] of layer.values) {
      const s = SETTINGS.find((x) => x.key === key);
      if (s !== undefined) parseSetting(s, found.raw, found.where);
    }
  }

  const origins: Record<string, string> = {};
  const value = <T>(key: string, parse: (raw: unknown, where: string) => T): T | undefined => {
    for (const layer of layers) {
      const found = layer.values.get(key);
      if (found === undefined) continue;
      origins[key] = found.where;
      return parse(found.raw, found.where);
    }
    return undefined;
  };
  const setting = (key: string): Setting => {
    const s = SETTINGS.find((x) => x.key === key);
    if (s === undefined) throw new Error(`no setting ${key}`);
    return s;
  };
  const get = <T>(key: string): T | undefined =>
    value(key, (raw, where) => parseSetting(setting(key), raw, where) as T);

  const listenGivenAddress = get<ListenAddress>('listen');
  const source = resolveSource(layers, get, origins);
  rejectIdleSettings(layers, source.kind, options.otherSource);
  // Durations are inside their settings' ranges (parseSetting), so all are positive here.
  const intervalDefault = options.scrapeIntervalDefault ?? DEFAULT_SCRAPE_INTERVAL;
  const scrapeIntervalMs = get<number>('scrape.interval') ?? parseDuration(intervalDefault);
  const scrapeTimeoutMs = get<number>('scrape.timeout');
  if (scrapeTimeoutMs !== undefined && scrapeTimeoutMs >= scrapeIntervalMs) {
    throw new ConfigError(
      `${origins['scrape.timeout']}: the scrape timeout must be below the scrape interval (${origins['scrape.interval'] ?? `default ${intervalDefault}`})`,
    );
  }
  const retentionMs = get<number>('scrape.retention') ?? DEFAULT_SCRAPE_SETTINGS.retentionMs;
  if (retentionMs < 2 * scrapeIntervalMs) {
    throw new ConfigError(
      `${origins['scrape.retention'] ?? 'scrape.retention'}: the history must hold at least two scrape intervals`,
    );
  }
  const evaluationIntervalMs = get<number>('evaluation.interval') ?? parseDuration(DEFAULT_EVALUATION_INTERVAL);
  const apiTokenFile = get<string>('api.tokenFile');
  const grafanaUrl = get<string>('grafana.url');
  const bearerTokenFile = get<string>('scrape.bearerTokenFile');
  const caFile = get<string>('scrape.caFile');
  // Only read where it applies: the file may hold it for a deployment with another source.
  const dashboardsReadRecordings = get<boolean>('dashboardsReadRecordings');
  const stateDir = setting('state.dir').sources?.includes(source.kind) ? get<string>('state.dir') : undefined;
  const memoryLimit = get<number>('memory.limit');
  const seriesLimit = get<number>('scrape.seriesLimit') ?? DEFAULT_SCRAPE_SETTINGS.seriesLimit;

  const overrides =
    fileRoot === undefined || inputs.file === undefined
      ? {}
      : parseOverrideSections(fileRoot.rules, fileRoot.queues, `${inputs.file.path}: `);

  return {
    ...(inputs.file !== undefined ? { configFile: inputs.file.path } : {}),
    listen:
      listenGivenAddress ??
      parseListenAddress(source.kind === 'demo' ? DEFAULT_DEMO_LISTEN : DEFAULT_LISTEN, 'default'),
    listenGiven: listenGivenAddress !== undefined,
    logLevel: get<LogLevel>('logLevel') ?? 'info',
    ...(apiTokenFile !== undefined ? { apiTokenFile } : {}),
    secureCookie: get<boolean>('api.secureCookie') ?? false,
    runbookBaseUrl: get<string>('runbookBaseUrl') ?? DEFAULT_RUNBOOK_BASE_URL,
    ...(grafanaUrl !== undefined ? { grafanaUrl } : {}),
    source,
    ...(memoryLimit !== undefined ? { memoryLimit } : {}),
    scrape: {
      intervalMs: scrapeIntervalMs,
      ...(scrapeTimeoutMs !== undefined ? { timeoutMs: scrapeTimeoutMs } : {}),
      maxBytes: get<number>('scrape.maxBytes') ?? DEFAULT_SCRAPE_SETTINGS.maxBytes,
      concurrency: get<number>('scrape.concurrency') ?? DEFAULT_SCRAPE_SETTINGS.concurrency,
      seriesLimit,
      labelValueLimit: get<number>('scrape.labelValueLimit') ?? DEFAULT_SCRAPE_SETTINGS.labelValueLimit,
      labelLimit: get<number>('scrape.labelLimit') ?? DEFAULT_SCRAPE_SETTINGS.labelLimit,
      labelSetLengthLimit: get<number>('scrape.labelSetLengthLimit') ?? DEFAULT_SCRAPE_SETTINGS.labelSetLengthLimit,
      queueLimit: get<number>('scrape.queueLimit') ?? DEFAULT_SCRAPE_SETTINGS.queueLimit,
      heldSeriesLimit: get<number>('scrape.heldSeriesLimit') ?? defaultHeldSeriesLimit(seriesLimit),
      totalSeriesLimit: get<number>('scrape.totalSeriesLimit') ?? DEFAULT_SCRAPE_SETTINGS.totalSeriesLimit,
      totalQueueLimit: get<number>('scrape.totalQueueLimit') ?? DEFAULT_SCRAPE_SETTINGS.totalQueueLimit,
      retentionMs,
      ...(bearerTokenFile !== undefined ? { bearerTokenFile } : {}),
      ...(caFile !== undefined ? { caFile } : {}),
      insecureSkipVerify: get<boolean>('scrape.insecureSkipVerify') ?? DEFAULT_SCRAPE_SETTINGS.insecureSkipVerify,
    },
    evaluation: { intervalMs: evaluationIntervalMs },
    ...(stateDir !== undefined ? { stateDir } : {}),
    overrides,
    scope: resolveScope(get, origins),
    ...(dashboardsReadRecordings !== undefined ? { dashboardsReadRecordings } : {}),
    origins,
  };
}

/** The fleet: the selector's matchers, and placement labels that are neither a queue's nor each other. */
function resolveScope(get: <T>(key: string) => T | undefined, origins: Record<string, string>): QueryScope {
  const selector = get<LabelMatcher[]>('selector');
  const reserved = identityLabels('queue');
  const labels: { clusterLabel?: string; namespaceLabel?: string } = {};
  for (const key of ['clusterLabel', 'namespaceLabel'] as const) {
    const label = get<string>(key);
    if (label === undefined) continue;
    if (reserved.includes(label)) {
      throw new ConfigError(`${origins[key]}: ${label} already identifies a queue (${reserved.join(', ')})`);
    }
    labels[key] = label;
  }
  if (labels.clusterLabel !== undefined && labels.clusterLabel === labels.namespaceLabel) {
    throw new ConfigError(`${origins.namespaceLabel}: the same label as clusterLabel (${labels.clusterLabel})`);
  }
  return { ...(selector !== undefined && selector.length > 0 ? { selector } : {}), ...labels };
}

function resolveSource(
  layers: readonly Layer[],
  get: <T>(key: string) => T | undefined,
  origins: Record<string, string>,
): SourceConfig {
  let chosen: string | undefined;
  for (const layer of layers) {
    const named = SOURCE_KEYS.filter((key) => {
      const found = layer.values.get(key);
      // `kubernetes.enabled: false` and `--demo` unset name no source.
      return found !== undefined && !(found.raw === false || found.raw === 'false' || found.raw === '0');
    });
    if (named.length > 1) {
      const where = named.map((key) => layer.values.get(key)?.where ?? key);
      throw new ConfigError(
        `${where.join(' and ')}: give only one source of metrics (targets, Kubernetes, Prometheus or the demo)`,
      );
    }
    if (named.length === 1) {
      chosen = named[0];
      break;
    }
  }
  switch (chosen) {
    case 'demo':
      get<boolean>('demo');
      return { kind: 'demo', scenario: DEMO_SCENARIO };
    case 'prometheus.url': {
      const url = get<string>('prometheus.url') as string;
      const username = get<string>('prometheus.basicAuth.username');
      const passwordFile = get<string>('prometheus.basicAuth.passwordFile');
      if ((username === undefined) !== (passwordFile === undefined)) {
        const given = origins['prometheus.basicAuth.username'] ?? origins['prometheus.basicAuth.passwordFile'];
        throw new ConfigError(`${given}: basic auth needs both a user and a password file`);
      }
      const timeoutMs = get<number>('prometheus.timeout') ?? parseDuration(DEFAULT_PROMETHEUS_TIMEOUT);
      return {
        kind: 'prometheus',
        url,
        timeoutMs,
        headers: get<Record<string, string>>('prometheus.headers') ?? {},
        engine: get<PrometheusEngine>('prometheus.engine') ?? 'auto',
        maxSampleDelayMs:
          get<number>('prometheus.maxSampleDelay') ?? parseDuration(DEFAULT_PROMETHEUS_MAX_SAMPLE_DELAY),
        seriesRefreshMs: get<number>('prometheus.seriesRefresh') ?? parseDuration(DEFAULT_PROMETHEUS_SERIES_REFRESH),
        recordedSeries: get<RecordedSeriesMode>('prometheus.recordedSeries') ?? 'auto',
        ...(username !== undefined && passwordFile !== undefined ? { basicAuth: { username, passwordFile } } : {}),
      };
    }
    case 'kubernetes.enabled': {
      get<boolean>('kubernetes.enabled');
      const selector = get<string>('kubernetes.selector');
      const kubeconfig = get<string>('kubernetes.kubeconfig');
      const port = get<number>('kubernetes.port');
      const path = get<string>('kubernetes.path');
      const scheme = get<'http' | 'https'>('kubernetes.scheme');
      const job = get<string>('kubernetes.job');
      return {
        kind: 'kubernetes',
        namespaces: get<string[]>('kubernetes.namespaces') ?? [],
        ...(selector !== undefined ? { selector } : {}),
        ...(kubeconfig !== undefined ? { kubeconfig } : {}),
        ...(port !== undefined ? { port } : {}),
        ...(path !== undefined ? { path } : {}),
        ...(scheme !== undefined ? { scheme } : {}),
        ...(job !== undefined ? { job } : {}),
      };
    }
    case 'targets': {
      const urls = get<string[]>('targets') as string[];
      if (urls.length === 0) throw new ConfigError(`${origins.targets}: give at least one target URL`);
      return { kind: 'targets', urls };
    }
    default:
      return { kind: 'targets', urls: [DEFAULT_TARGET] };
  }
}

const SOURCE_NAMES: Readonly<Record<SourceKind, string>> = {
  targets: 'static targets (--target)',
  kubernetes: 'Kubernetes discovery (--kubernetes)',
  prometheus: 'Prometheus mode (--prometheus-url)',
  demo: 'the demo (--demo)',
};

/**
 * A flag or variable that does nothing with the chosen source is a usage error: the user meant something it
 * will not do. The file may hold sections for every source (one file for several deployments, as the example).
 */
function rejectIdleSettings(layers: readonly Layer[], kind: SourceKind, otherSource: string | undefined): void {
  for (const layer of layers) {
    if (layer.name === 'file') continue;
    for (const [key, found] of layer.values) {
      const sources = SETTINGS.find((s) => s.key === key)?.sources;
      if (sources === undefined || (otherSource === undefined && sources.includes(kind))) continue;
      throw new ConfigError(
        `${found.where}: applies only with ${sources.map((k) => SOURCE_NAMES[k]).join(', ')}; the source here is ${otherSource ?? SOURCE_NAMES[kind]}`,
      );
    }
  }
}
