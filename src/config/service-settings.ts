/**
 * The table of `serve`'s settings: each setting's key in the configuration file, the kind of value it
 * takes, and its command-line flag and `WQD_` environment variable, if any.
 *
 * Contract:
 * - Keys are dotted paths in the file (`scrape.interval`) and are what error messages name.
 * - A flag is given as its commander attribute (camelCase); `flagName` spells it as typed.
 * - `flagOnly` settings (e.g. `--demo`) are not read from the file.
 */
import type { SettingKind } from './setting-values.js';

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
};

/** Every setting. The order is the order of `deploy/config-example.yaml`. */
export const SETTINGS: readonly Setting[] = [
  { key: 'listen', kind: 'listen', flag: 'listen', env: 'WQD_LISTEN' },
  { key: 'logLevel', kind: 'logLevel', flag: 'logLevel', env: 'WQD_LOG_LEVEL' },
  { key: 'api.tokenFile', kind: 'string', flag: 'apiTokenFile', env: 'WQD_API_TOKEN_FILE' },
  { key: 'runbookBaseUrl', kind: 'url', flag: 'runbookBaseUrl', env: 'WQD_RUNBOOK_BASE_URL' },
  { key: 'targets', kind: 'urls', flag: 'target', env: 'WQD_TARGETS' },
  { key: 'kubernetes.enabled', kind: 'boolean', flag: 'kubernetes', env: 'WQD_KUBERNETES' },
  { key: 'kubernetes.namespaces', kind: 'list', flag: 'namespace', env: 'WQD_NAMESPACES' },
  { key: 'kubernetes.selector', kind: 'string', flag: 'selector', env: 'WQD_SELECTOR' },
  { key: 'kubernetes.kubeconfig', kind: 'string', flag: 'kubeconfig', env: 'WQD_KUBECONFIG' },
  { key: 'kubernetes.port', kind: 'port', flag: 'podPort', env: 'WQD_POD_PORT' },
  { key: 'kubernetes.path', kind: 'string' },
  { key: 'kubernetes.scheme', kind: 'scheme' },
  { key: 'kubernetes.job', kind: 'string' },
  { key: 'prometheus.url', kind: 'url', flag: 'prometheusUrl', env: 'WQD_PROMETHEUS_URL' },
  { key: 'prometheus.timeout', kind: 'duration', flag: 'prometheusTimeout', env: 'WQD_PROMETHEUS_TIMEOUT' },
  { key: 'prometheus.headers', kind: 'headers', flag: 'header' },
  { key: 'prometheus.basicAuth.username', kind: 'string', flag: 'basicAuthUser', env: 'WQD_BASIC_AUTH_USER' },
  {
    key: 'prometheus.basicAuth.passwordFile',
    kind: 'string',
    flag: 'basicAuthPasswordFile',
    env: 'WQD_BASIC_AUTH_PASSWORD_FILE',
  },
  { key: 'scrape.interval', kind: 'duration', flag: 'scrapeInterval', env: 'WQD_SCRAPE_INTERVAL' },
  { key: 'scrape.timeout', kind: 'duration', flag: 'scrapeTimeout', env: 'WQD_SCRAPE_TIMEOUT' },
  { key: 'scrape.maxBytes', kind: 'integer', env: 'WQD_SCRAPE_MAX_BYTES' },
  { key: 'scrape.concurrency', kind: 'integer', env: 'WQD_SCRAPE_CONCURRENCY' },
  { key: 'scrape.retention', kind: 'duration', flag: 'retention', env: 'WQD_RETENTION' },
  { key: 'scrape.bearerTokenFile', kind: 'string', flag: 'bearerTokenFile', env: 'WQD_BEARER_TOKEN_FILE' },
  { key: 'scrape.caFile', kind: 'string', flag: 'caFile', env: 'WQD_CA_FILE' },
  { key: 'scrape.insecureSkipVerify', kind: 'boolean', flag: 'insecureSkipVerify', env: 'WQD_INSECURE_SKIP_VERIFY' },
  { key: 'evaluation.interval', kind: 'duration', flag: 'evaluationInterval', env: 'WQD_EVALUATION_INTERVAL' },
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
