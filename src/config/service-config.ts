/**
 * The configuration of `serve`: one table of settings, each readable from a YAML file, a `WQD_`
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
 * - The format is documented, with every key, in `deploy/config-example.yaml`.
 */
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import type { RuleOverrides } from '../diagnosis/catalog.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../diagnosis/runbook.js';
import { ParseError, parseDuration } from '../util/duration.js';
import { ConfigError, describeValue } from './config-error.js';
import { parseOverrideSections } from './queue-overrides.js';

export const DEFAULT_LISTEN = '0.0.0.0:9808';
/** The demo listens on loopback only, and falls back to a free port when this one is taken. */
export const DEFAULT_DEMO_LISTEN = '127.0.0.1:9808';
/** The sidecar default: the controller's metrics port in the same pod. */
export const DEFAULT_TARGET = 'http://127.0.0.1:8080/metrics';
export const DEFAULT_SCRAPE_INTERVAL = '15s';
export const DEFAULT_EVALUATION_INTERVAL = '15s';
export const DEFAULT_RETENTION = '30m';
export const DEFAULT_PROMETHEUS_TIMEOUT = '30s';
export const DEMO_SCENARIO = 'mixed';
export const ENV_PREFIX = 'WQD_';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type ListenAddress = { readonly host: string; readonly port: number };

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
  readonly runbookBaseUrl: string;
  readonly source: SourceConfig;
  readonly scrape: {
    readonly intervalMs: number;
    /** Unset: the scrape source's default, min(10 s, 0.8 × interval). */
    readonly timeoutMs?: number;
    readonly maxBytes?: number;
    readonly concurrency?: number;
    readonly retentionMs: number;
    readonly bearerTokenFile?: string;
    readonly caFile?: string;
    readonly insecureSkipVerify: boolean;
  };
  readonly evaluation: { readonly intervalMs: number };
  readonly overrides: RuleOverrides;
  /** Where each setting that was given came from (`--scrape-interval`, `WQD_LISTEN`, `f.yaml: listen`), by key. */
  readonly origins: Readonly<Record<string, string>>;
};

type Kind =
  | 'string'
  | 'duration'
  | 'boolean'
  | 'list'
  | 'urls'
  | 'integer'
  | 'port'
  | 'url'
  | 'listen'
  | 'logLevel'
  | 'headers'
  | 'scheme';

type Setting = {
  /** Dotted path in the file; also the key errors name. */
  readonly key: string;
  readonly kind: Kind;
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
const OVERRIDE_SECTIONS = ['rules', 'queues'] as const;
/** Settings that name a source; the highest layer naming any of them chooses the source. */
const SOURCE_KEYS = ['demo', 'targets', 'kubernetes.enabled', 'prometheus.url'] as const;

export type ConfigInputs = {
  /** Parsed command-line options (commander's camelCase attributes); unset options absent or undefined. */
  readonly flags: Readonly<Record<string, unknown>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The configuration file's name (as given) and text. */
  readonly file?: { readonly path: string; readonly text: string };
};

/** The flag of a setting as typed: `scrapeInterval` → `--scrape-interval`. */
export function flagName(attribute: string): string {
  return `--${attribute.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** Reads the configuration file named by `--config` or `WQD_CONFIG` (if any), then resolves. */
export async function loadServiceConfig(
  flags: ConfigInputs['flags'],
  env: ConfigInputs['env'],
): Promise<ServiceConfig> {
  const fromFlag = flags.config;
  const fromEnv = env[`${ENV_PREFIX}CONFIG`];
  const path = typeof fromFlag === 'string' ? fromFlag : fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
  if (path === undefined) return resolveServiceConfig({ flags, env });
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const where = typeof fromFlag === 'string' ? '--config' : `${ENV_PREFIX}CONFIG`;
    throw new ConfigError(`${where}: cannot read ${JSON.stringify(path)}: ${(error as Error).message}`);
  }
  return resolveServiceConfig({ flags, env, file: { path, text } });
}

type Layer = { readonly name: 'flags' | 'env' | 'file'; readonly values: Map<string, { raw: unknown; where: string }> };

/** Merges and checks the three layers (see the module contract). */
export function resolveServiceConfig(inputs: ConfigInputs): ServiceConfig {
  const fileRoot = inputs.file === undefined ? undefined : parseFile(inputs.file.text, inputs.file.path);
  const layers: Layer[] = [flagLayer(inputs.flags), envLayer(inputs.env)];
  if (inputs.file !== undefined && fileRoot !== undefined) layers.push(fileLayer(fileRoot, inputs.file.path));

  // Every given value is checked, also one a higher layer overrides: a broken file is reported, not hidden.
  for (const layer of layers) {
    for (const [key, found] of layer.values) {
      const s = SETTINGS.find((x) => x.key === key);
      if (s !== undefined) parseValue(s.kind, found.raw, found.where);
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
    value(key, (raw, where) => parseValue(setting(key).kind, raw, where) as T);

  const listenGivenAddress = get<ListenAddress>('listen');
  const source = resolveSource(layers, get, origins);
  const scrapeIntervalMs = positive(
    get<number>('scrape.interval') ?? parseDuration(DEFAULT_SCRAPE_INTERVAL),
    'scrape.interval',
    origins,
  );
  const scrapeTimeoutMs = get<number>('scrape.timeout');
  if (scrapeTimeoutMs !== undefined) {
    positive(scrapeTimeoutMs, 'scrape.timeout', origins);
    if (scrapeTimeoutMs >= scrapeIntervalMs) {
      throw new ConfigError(
        `${origins['scrape.timeout']}: the scrape timeout must be below the scrape interval (${origins['scrape.interval'] ?? `default ${DEFAULT_SCRAPE_INTERVAL}`})`,
      );
    }
  }
  const retentionMs = get<number>('scrape.retention') ?? parseDuration(DEFAULT_RETENTION);
  if (retentionMs < 2 * scrapeIntervalMs) {
    throw new ConfigError(
      `${origins['scrape.retention'] ?? 'scrape.retention'}: the history must hold at least two scrape intervals`,
    );
  }
  const evaluationIntervalMs = positive(
    get<number>('evaluation.interval') ?? parseDuration(DEFAULT_EVALUATION_INTERVAL),
    'evaluation.interval',
    origins,
  );
  const maxBytes = get<number>('scrape.maxBytes');
  const concurrency = get<number>('scrape.concurrency');
  const apiTokenFile = get<string>('api.tokenFile');
  const bearerTokenFile = get<string>('scrape.bearerTokenFile');
  const caFile = get<string>('scrape.caFile');

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
    runbookBaseUrl: get<string>('runbookBaseUrl') ?? DEFAULT_RUNBOOK_BASE_URL,
    source,
    scrape: {
      intervalMs: scrapeIntervalMs,
      ...(scrapeTimeoutMs !== undefined ? { timeoutMs: scrapeTimeoutMs } : {}),
      ...(maxBytes !== undefined ? { maxBytes } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      retentionMs,
      ...(bearerTokenFile !== undefined ? { bearerTokenFile } : {}),
      ...(caFile !== undefined ? { caFile } : {}),
      insecureSkipVerify: get<boolean>('scrape.insecureSkipVerify') ?? false,
    },
    evaluation: { intervalMs: evaluationIntervalMs },
    overrides,
    origins,
  };
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
      positive(timeoutMs, 'prometheus.timeout', origins);
      return {
        kind: 'prometheus',
        url,
        timeoutMs,
        headers: get<Record<string, string>>('prometheus.headers') ?? {},
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

function positive(ms: number, key: string, origins: Record<string, string>): number {
  if (!(ms > 0)) throw new ConfigError(`${origins[key] ?? key}: must be longer than 0`);
  return ms;
}

// ---- layers ----

function flagLayer(flags: ConfigInputs['flags']): Layer {
  const values = new Map<string, { raw: unknown; where: string }>();
  for (const s of SETTINGS) {
    if (s.flag === undefined) continue;
    const raw = flags[s.flag];
    if (raw === undefined) continue;
    values.set(s.key, { raw, where: flagName(s.flag) });
  }
  return { name: 'flags', values };
}

function envLayer(env: ConfigInputs['env']): Layer {
  const values = new Map<string, { raw: unknown; where: string }>();
  for (const s of SETTINGS) {
    if (s.env === undefined) continue;
    const raw = env[s.env];
    // An empty variable is unset (a manifest that templates it away).
    if (raw === undefined || raw === '') continue;
    values.set(s.key, { raw, where: s.env });
  }
  return { name: 'env', values };
}

function fileLayer(root: Record<string, unknown>, path: string): Layer {
  const values = new Map<string, { raw: unknown; where: string }>();
  for (const s of SETTINGS) {
    if (s.flagOnly === true) continue;
    const raw = lookup(root, s.key, path);
    if (raw === undefined || raw === null) continue;
    values.set(s.key, { raw, where: `${path}: ${s.key}` });
  }
  return { name: 'file', values };
}

function parseFile(text: string, path: string): Record<string, unknown> {
  const document = parseDocument(text, { prettyErrors: false });
  const firstError = document.errors[0];
  if (firstError !== undefined) throw new ConfigError(`${path}: not valid YAML: ${firstError.message}`);
  const root: unknown = document.toJS();
  if (root === null || root === undefined) return {};
  if (!isMapping(root)) throw new ConfigError(`${path}: expected a mapping at the top, got ${describeValue(root)}`);
  checkKeys(root, '', path);
  return root;
}

/** Rejects keys the table does not know, naming the first one with its dotted path. */
function checkKeys(mapping: Record<string, unknown>, prefix: string, path: string): void {
  const children = new Set<string>();
  for (const s of SETTINGS) {
    if (s.flagOnly === true || !s.key.startsWith(prefix)) continue;
    children.add(s.key.slice(prefix.length).split('.')[0] as string);
  }
  if (prefix === '') for (const section of OVERRIDE_SECTIONS) children.add(section);
  for (const [key, value] of Object.entries(mapping)) {
    if (!children.has(key)) {
      throw new ConfigError(`${path}: ${prefix}${key}: unknown key; expected one of ${[...children].join(', ')}`);
    }
    const isSection = SETTINGS.some((s) => s.key.startsWith(`${prefix}${key}.`));
    if (!isSection || value === null || value === undefined) continue;
    if (!isMapping(value))
      throw new ConfigError(`${path}: ${prefix}${key}: expected a mapping, got ${describeValue(value)}`);
    checkKeys(value, `${prefix}${key}.`, path);
  }
}

function lookup(root: Record<string, unknown>, key: string, path: string): unknown {
  let at: unknown = root;
  const parts = key.split('.');
  for (const [i, part] of parts.entries()) {
    if (at === undefined || at === null) return undefined;
    if (!isMapping(at)) {
      throw new ConfigError(`${path}: ${parts.slice(0, i).join('.')}: expected a mapping, got ${describeValue(at)}`);
    }
    at = at[part];
  }
  return at;
}

// ---- values ----

function parseValue(kind: Kind, raw: unknown, where: string): unknown {
  switch (kind) {
    case 'string':
      return nonEmptyString(raw, where);
    case 'duration': {
      const text = typeof raw === 'number' ? String(raw) : nonEmptyString(raw, where);
      try {
        return parseDuration(text);
      } catch (error) {
        if (error instanceof ParseError) throw new ConfigError(`${where}: ${error.message}`);
        throw error;
      }
    }
    case 'boolean':
      return parseBoolean(raw, where);
    case 'list':
      return parseList(raw, where);
    case 'urls': {
      const urls = parseList(raw, where);
      for (const url of urls) httpUrl(url, where, 'target URL');
      return urls;
    }
    case 'integer':
      return parseInteger(raw, where, 1, Number.MAX_SAFE_INTEGER);
    case 'port':
      return parseInteger(raw, where, 1, 65_535);
    case 'url':
      return httpUrl(nonEmptyString(raw, where), where, 'URL');
    case 'listen':
      return parseListenAddress(nonEmptyString(raw, where), where);
    case 'logLevel': {
      const level = nonEmptyString(raw, where);
      if (!(LOG_LEVELS as readonly string[]).includes(level)) {
        throw new ConfigError(
          `${where}: invalid log level ${JSON.stringify(level)}; expected one of ${LOG_LEVELS.join(', ')}`,
        );
      }
      return level;
    }
    case 'scheme': {
      const scheme = nonEmptyString(raw, where);
      if (scheme !== 'http' && scheme !== 'https') {
        throw new ConfigError(`${where}: invalid scheme ${JSON.stringify(scheme)}; expected http or https`);
      }
      return scheme;
    }
    case 'headers':
      return parseHeaders(raw, where);
  }
}

function nonEmptyString(raw: unknown, where: string): string {
  if (typeof raw !== 'string' || raw.trim() === '')
    throw new ConfigError(`${where}: expected a non-empty string, got ${describeValue(raw)}`);
  return raw.trim();
}

function parseBoolean(raw: unknown, where: string): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'string') {
    const text = raw.trim().toLowerCase();
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
  }
  throw new ConfigError(`${where}: expected true or false, got ${describeValue(raw)}`);
}

function parseList(raw: unknown, where: string): string[] {
  const items = typeof raw === 'string' ? raw.split(',') : Array.isArray(raw) ? raw : undefined;
  if (items === undefined) throw new ConfigError(`${where}: expected a list, got ${describeValue(raw)}`);
  const out: string[] = [];
  for (const [i, item] of items.entries()) {
    if (typeof item !== 'string')
      throw new ConfigError(`${where}[${i}]: expected a string, got ${describeValue(item)}`);
    const text = item.trim();
    if (text !== '') out.push(text);
  }
  return out;
}

function parseInteger(raw: unknown, where: string, min: number, max: number): number {
  const n =
    typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${where}: expected an integer from ${min} to ${max}, got ${describeValue(raw)}`);
  }
  return n;
}

function httpUrl(text: string, where: string, what: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${where}: invalid ${what} ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${where}: invalid ${what} ${JSON.stringify(text)}: expected http or https`);
  }
  return text;
}

function parseHeaders(raw: unknown, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(raw)) {
    for (const item of raw) {
      const colon = typeof item === 'string' ? item.indexOf(':') : -1;
      if (typeof item !== 'string' || colon <= 0) {
        throw new ConfigError(`${where}: expected "Name: value", got ${describeValue(item)}`);
      }
      out[item.slice(0, colon).trim()] = item.slice(colon + 1).trim();
    }
    return out;
  }
  if (!isMapping(raw))
    throw new ConfigError(`${where}: expected a mapping of header names to values, got ${describeValue(raw)}`);
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== 'string')
      throw new ConfigError(`${where}.${name}: expected a string, got ${describeValue(value)}`);
    out[name] = value;
  }
  return out;
}

/** `host:port`, `[v6]:port` or `:port` (all interfaces); port 0 picks a free one. */
export function parseListenAddress(text: string, where: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  const port = match === null ? Number.NaN : Number(match[3]);
  if (match === null || !(port >= 0 && port <= 65_535)) {
    throw new ConfigError(
      `${where}: invalid listen address ${JSON.stringify(text)}: expected host:port, e.g. 0.0.0.0:9808`,
    );
  }
  const host = match[1] ?? match[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/** `host:port` as typed in a URL (IPv6 in brackets). */
export function formatListenAddress(address: ListenAddress): string {
  return `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
