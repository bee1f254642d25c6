/**
 * The table of the configuration's settings, one file for every command (`serve`, `diagnose`, `calibrate`,
 * `generate`): each setting's key in the configuration file, the kind of value it takes, and its command-line
 * flag and `WQD_` environment variable, if any. Each command reads the settings it uses and accepts the others
 * in the file; the `rules:` and `queues:` sections are read by rule-overrides.ts and queue-overrides.ts.
 *
 * Contract:
 * - Keys are dotted paths in the file (`scrape.interval`) and are what error messages name.
 * - A flag is given as its commander attribute (camelCase); `flagName` spells it as typed.
 * - `flagOnly` settings (e.g. `--demo`) are not read from the file.
 */

import { SCRAPE_DURATION_RANGES } from '../scrape/scrape-settings.js';
import { formatDuration, parseDuration } from '../util/duration.js';
import { ConfigError } from './config-error.js';
import { parseSettingValue, type SettingKind } from './setting-values.js';

export const ENV_PREFIX = 'WQD_';

export type Setting = {
  /** Dotted path in the file; also the key errors name. */
  readonly key: string;
  readonly kind: SettingKind;
  /** The commander attribute (camelCase); the flag is its kebab-case form. */
  readonly flag?: string;
  readonly env?: string;
  /** Only on the command line (e.g. `--demo`). */
  readonly flagOnly?: boolean;
  /** For a duration: the shortest and longest accepted, as Prometheus durations. */
  readonly range?: { readonly min: string; readonly max: string };
  /** The sources it applies to; unset: every source. Given with another source it is a usage error. */
  readonly sources?: readonly SourceKind[];
};

/** What the service reads its metrics from: static targets, Kubernetes pods, a Prometheus, the demo. */
export type SourceKind = 'targets' | 'kubernetes' | 'prometheus' | 'demo';

const SCRAPING: readonly SourceKind[] = ['targets', 'kubernetes', 'demo'];
const DISCOVERY: readonly SourceKind[] = ['kubernetes'];
const PROMETHEUS: readonly SourceKind[] = ['prometheus'];
/** Scraping real targets: the demo's simulated history is made anew at every start. */
const LIVE_TARGETS: readonly SourceKind[] = ['targets', 'kubernetes'];

/** Every setting. The order is the order of `deploy/config-example.yaml`. */
export const SETTINGS: readonly Setting[] = [
  { key: 'listen', kind: 'listen', flag: 'listen', env: 'WQD_LISTEN' },
  { key: 'logLevel', kind: 'logLevel', flag: 'logLevel', env: 'WQD_LOG_LEVEL' },
  { key: 'api.tokenFile', kind: 'string', flag: 'apiTokenFile', env: 'WQD_API_TOKEN_FILE' },
  { key: 'api.secureCookie', kind: 'boolean', flag: 'secureCookie', env: 'WQD_SECURE_COOKIE' },
  { key: 'runbookBaseUrl', kind: 'url', flag: 'runbookBaseUrl', env: 'WQD_RUNBOOK_BASE_URL' },
  // The page links each queue to the generated detail dashboard in this Grafana.
  { key: 'grafana.url', kind: 'url', flag: 'grafanaUrl', env: 'WQD_GRAFANA_URL' },
  // The fleet: which series every query reads (Prometheus mode, generated rules and dashboards), and where.
  { key: 'selector', kind: 'selector', flag: 'fleetSelector', env: 'WQD_FLEET_SELECTOR', sources: PROMETHEUS },
  { key: 'clusterLabel', kind: 'labelName' },
  { key: 'namespaceLabel', kind: 'labelName' },
  { key: 'dashboardsReadRecordings', kind: 'boolean' },
  { key: 'targets', kind: 'urls', flag: 'target', env: 'WQD_TARGETS' },
  { key: 'kubernetes.enabled', kind: 'boolean', flag: 'kubernetes', env: 'WQD_KUBERNETES' },
  { key: 'kubernetes.namespaces', kind: 'list', flag: 'namespace', env: 'WQD_NAMESPACES', sources: DISCOVERY },
  { key: 'kubernetes.selector', kind: 'string', flag: 'selector', env: 'WQD_SELECTOR', sources: DISCOVERY },
  { key: 'kubernetes.kubeconfig', kind: 'string', flag: 'kubeconfig', env: 'WQD_KUBECONFIG', sources: DISCOVERY },
  { key: 'kubernetes.port', kind: 'port', flag: 'podPort', env: 'WQD_POD_PORT', sources: DISCOVERY },
  { key: 'kubernetes.path', kind: 'string', sources: DISCOVERY },
  { key: 'kubernetes.scheme', kind: 'scheme', sources: DISCOVERY },
  { key: 'kubernetes.job', kind: 'string', sources: DISCOVERY },
  { key: 'prometheus.url', kind: 'url', flag: 'prometheusUrl', env: 'WQD_PROMETHEUS_URL' },
  {
    key: 'prometheus.timeout',
    kind: 'duration',
    flag: 'prometheusTimeout',
    env: 'WQD_PROMETHEUS_TIMEOUT',
    range: { min: '1s', max: '10m' },
    sources: PROMETHEUS,
  },
  { key: 'prometheus.headers', kind: 'headers', flag: 'header', sources: PROMETHEUS },
  // PromQL or MetricsQL (VictoriaMetrics); `auto` asks the server (prometheus-backend.ts).
  {
    key: 'prometheus.engine',
    kind: 'prometheusEngine',
    flag: 'prometheusEngine',
    env: 'WQD_PROMETHEUS_ENGINE',
    sources: PROMETHEUS,
  },
  // How late samples reach the server: older steps are kept between evaluations (prometheus-backend.ts).
  {
    key: 'prometheus.maxSampleDelay',
    kind: 'duration',
    flag: 'prometheusMaxSampleDelay',
    env: 'WQD_PROMETHEUS_MAX_SAMPLE_DELAY',
    range: { min: '1s', max: '1h' },
    sources: PROMETHEUS,
  },
  // How long a series lookup stands for the next evaluations (prometheus-backend.ts); under the evaluation interval,
  // every evaluation lists the series.
  {
    key: 'prometheus.seriesRefresh',
    kind: 'duration',
    flag: 'prometheusSeriesRefresh',
    env: 'WQD_PROMETHEUS_SERIES_REFRESH',
    range: { min: '1s', max: '1h' },
    sources: PROMETHEUS,
  },
  // Signals read from the recording rules' series where the server holds them (recorded-series.ts).
  {
    key: 'prometheus.recordedSeries',
    kind: 'recordedSeriesMode',
    flag: 'prometheusRecordedSeries',
    env: 'WQD_PROMETHEUS_RECORDED_SERIES',
    sources: PROMETHEUS,
  },
  {
    key: 'prometheus.basicAuth.username',
    kind: 'string',
    flag: 'basicAuthUser',
    env: 'WQD_BASIC_AUTH_USER',
    sources: PROMETHEUS,
  },
  {
    key: 'prometheus.basicAuth.passwordFile',
    kind: 'string',
    flag: 'basicAuthPasswordFile',
    env: 'WQD_BASIC_AUTH_PASSWORD_FILE',
    sources: PROMETHEUS,
  },
  // The memory budget every limit below that is not given is sized from (service/memory-budget.ts).
  { key: 'memory.limit', kind: 'memory', flag: 'memoryLimit', env: 'WQD_MEMORY_LIMIT' },
  {
    key: 'scrape.interval',
    kind: 'duration',
    flag: 'scrapeInterval',
    env: 'WQD_SCRAPE_INTERVAL',
    range: SCRAPE_DURATION_RANGES.interval,
    sources: SCRAPING,
  },
  {
    key: 'scrape.timeout',
    kind: 'duration',
    flag: 'scrapeTimeout',
    env: 'WQD_SCRAPE_TIMEOUT',
    range: SCRAPE_DURATION_RANGES.timeout,
    sources: SCRAPING,
  },
  { key: 'scrape.maxBytes', kind: 'integer', flag: 'scrapeMaxBytes', env: 'WQD_SCRAPE_MAX_BYTES', sources: SCRAPING },
  {
    key: 'scrape.concurrency',
    kind: 'integer',
    flag: 'scrapeConcurrency',
    env: 'WQD_SCRAPE_CONCURRENCY',
    sources: SCRAPING,
  },
  {
    key: 'scrape.seriesLimit',
    kind: 'integer',
    flag: 'scrapeSeriesLimit',
    env: 'WQD_SCRAPE_SERIES_LIMIT',
    sources: SCRAPING,
  },
  {
    key: 'scrape.labelValueLimit',
    kind: 'integer',
    flag: 'scrapeLabelValueLimit',
    env: 'WQD_SCRAPE_LABEL_VALUE_LIMIT',
    sources: SCRAPING,
  },
  {
    key: 'scrape.labelLimit',
    kind: 'integer',
    flag: 'scrapeLabelLimit',
    env: 'WQD_SCRAPE_LABEL_LIMIT',
    sources: SCRAPING,
  },
  {
    key: 'scrape.labelSetLengthLimit',
    kind: 'integer',
    flag: 'scrapeLabelSetLengthLimit',
    env: 'WQD_SCRAPE_LABEL_SET_LENGTH_LIMIT',
    sources: SCRAPING,
  },
  {
    key: 'scrape.queueLimit',
    kind: 'integer',
    flag: 'scrapeQueueLimit',
    env: 'WQD_SCRAPE_QUEUE_LIMIT',
    sources: SCRAPING,
  },
  {
    key: 'scrape.heldSeriesLimit',
    kind: 'integer',
    flag: 'scrapeHeldSeriesLimit',
    env: 'WQD_SCRAPE_HELD_SERIES_LIMIT',
    sources: SCRAPING,
  },
  {
    key: 'scrape.totalSeriesLimit',
    kind: 'integer',
    flag: 'scrapeTotalSeriesLimit',
    env: 'WQD_SCRAPE_TOTAL_SERIES_LIMIT',
    sources: SCRAPING,
  },
  {
    key: 'scrape.totalQueueLimit',
    kind: 'integer',
    flag: 'scrapeTotalQueueLimit',
    env: 'WQD_SCRAPE_TOTAL_QUEUE_LIMIT',
    sources: SCRAPING,
  },
  {
    key: 'scrape.retention',
    kind: 'duration',
    flag: 'retention',
    env: 'WQD_RETENTION',
    range: SCRAPE_DURATION_RANGES.retention,
    sources: SCRAPING,
  },
  { key: 'scrape.bearerTokenFile', kind: 'string', flag: 'bearerTokenFile', env: 'WQD_BEARER_TOKEN_FILE' },
  { key: 'scrape.caFile', kind: 'string', flag: 'caFile', env: 'WQD_CA_FILE' },
  { key: 'scrape.insecureSkipVerify', kind: 'boolean', flag: 'insecureSkipVerify', env: 'WQD_INSECURE_SKIP_VERIFY' },
  {
    key: 'evaluation.interval',
    kind: 'duration',
    flag: 'evaluationInterval',
    env: 'WQD_EVALUATION_INTERVAL',
    range: { min: '1s', max: '1h' },
  },
  { key: 'state.dir', kind: 'string', flag: 'stateDir', env: 'WQD_STATE_DIR', sources: LIVE_TARGETS },
  { key: 'demo', kind: 'boolean', flag: 'demo', flagOnly: true },
];

/** Sections of the file that are not settings of the table. */
export const OVERRIDE_SECTIONS = ['rules', 'queues'] as const;
/** Settings that name a source; the highest layer naming any of them chooses the source. */
export const SOURCE_KEYS = ['demo', 'targets', 'kubernetes.enabled', 'prometheus.url'] as const;

/** The flag of a setting as typed: `scrapeInterval` → `--scrape-interval`. */
export function flagName(attribute: string): string {
  return `--${attribute.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/**
 * A setting's value from one layer, in its final form: `parseSettingValue`, then the setting's range. A
 * duration beyond its range is a usage error naming where it came from and the range (timers beyond about 24
 * days would not even fire when asked).
 */
export function parseSetting(setting: Setting, raw: unknown, where: string): unknown {
  const value = parseSettingValue(setting.kind, raw, where);
  if (setting.range !== undefined && typeof value === 'number') {
    const min = parseDuration(setting.range.min);
    const max = parseDuration(setting.range.max);
    if (value < min || value > max) {
      throw new ConfigError(
        `${where}: ${typeof raw === 'string' ? raw.trim() : formatDuration(value)} is outside the accepted range, ${setting.range.min} to ${setting.range.max}`,
      );
    }
  }
  return value;
}
