/**
 * The one place a configuration becomes a live source of metrics, for every command that reads one (`serve`,
 * `diagnose --target`, `diagnose --prometheus-url`): a scrape source with the configuration's `ScrapeSettings`
 * as they are (each default is the scrape layer's, scrape/scrape-settings.ts), or a Prometheus source with the
 * connection settings and the fleet selector (`selector:`), which restricts every query.
 *
 * Contract: a secret file (`prometheus.basicAuth.passwordFile`, `api.tokenFile`) that cannot be read or is
 * empty is a `ConfigError` naming where the setting came from; a scrape setting the scrape source refuses is a
 * `ConfigError` naming `scrape`.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../config/config-error.js';
import type { ServiceConfig } from '../config/service-config.js';
import { ruleAnalyses } from '../generate/condition-analysis.js';
import { recordedSignals, recordingPlan } from '../generate/recording-rules.js';
import type { PrometheusClientOptions } from '../prometheus/prometheus-api.js';
import { createPrometheusSource } from '../sources/prometheus-source.js';
import { createScrapeSource, type ScrapeSource, type ScrapeSourceOptions } from '../sources/scrape-source.js';
import type { MetricsSource } from '../sources/source.js';
import { ENGINE_QUEUE_KEYING } from './queue-keying.js';

type PrometheusSourceConfig = Extract<ServiceConfig['source'], { kind: 'prometheus' }>;

/** What a scrape source is wired to besides its settings: the targets, and optionally a history and hooks. */
export type ScrapeWiring = Pick<ScrapeSourceOptions, 'targets' | 'history' | 'clock' | 'removeAfterMs' | 'onScrape'>;

/** A scrape source with `config.scrape`, wired to `wiring`, counting queues as the engine finds them. */
export function scrapeSourceFor(config: Pick<ServiceConfig, 'scrape'>, wiring: ScrapeWiring): ScrapeSource {
  try {
    return createScrapeSource({ ...config.scrape, ...wiring, queueKeying: ENGINE_QUEUE_KEYING });
  } catch (error) {
    if (error instanceof RangeError) throw new ConfigError(`scrape: ${error.message}`);
    throw error;
  }
}

/** How to reach the Prometheus of `config.source`: its URL, timeout, headers and credentials, and TLS. */
export async function prometheusClientOptions(
  config: Pick<ServiceConfig, 'scrape' | 'origins'>,
  source: PrometheusSourceConfig,
): Promise<PrometheusClientOptions> {
  const { bearerTokenFile, caFile, insecureSkipVerify } = config.scrape;
  return {
    url: source.url,
    timeoutMs: source.timeoutMs,
    headers: source.headers,
    ...(bearerTokenFile !== undefined ? { bearerTokenFile } : {}),
    ...(caFile !== undefined ? { caFile } : {}),
    ...(insecureSkipVerify ? { insecureSkipVerify: true } : {}),
    ...(source.basicAuth !== undefined
      ? {
          basicAuth: {
            username: source.basicAuth.username,
            password: await readSecret(config, 'prometheus.basicAuth.passwordFile', source.basicAuth.passwordFile),
          },
        }
      : {}),
  };
}

/**
 * The Prometheus source of `config.source`: its queries restricted by the fleet selector, in its engine's language,
 * reading the series of the recording rules `generate` makes from this configuration where the server holds them
 * (as `source.recordedSeries` says), and telling the steps a service may keep by how late samples arrive.
 */
export function prometheusSourceFor(
  config: Pick<ServiceConfig, 'scope' | 'overrides'>,
  clientOptions: PrometheusClientOptions,
  source: Pick<PrometheusSourceConfig, 'engine' | 'recordedSeries' | 'maxSampleDelayMs' | 'seriesRefreshMs'>,
): MetricsSource {
  const plan = recordingPlan(ruleAnalyses(config.overrides), config.scope, config.overrides);
  return createPrometheusSource(clientOptions, {
    selector: config.scope.selector ?? [],
    engine: source.engine,
    maxSampleDelayMs: source.maxSampleDelayMs,
    seriesRefreshMs: source.seriesRefreshMs,
    recorded: { mode: source.recordedSeries, signals: recordedSignals(plan) },
  });
}

/** Reads a token or password file; an unreadable or empty file is a configuration error naming its key. */
export async function readSecret(config: Pick<ServiceConfig, 'origins'>, key: string, file: string): Promise<string> {
  const where = config.origins[key] ?? key;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `${where}: cannot read ${JSON.stringify(file)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const secret = text.trim();
  if (secret === '') throw new ConfigError(`${where}: ${JSON.stringify(file)} is empty`);
  return secret;
}
