/**
 * The defaults of `serve`'s settings: what a setting is when no flag, `WQD_` variable or file key
 * gives it. Durations are written as in the configuration (`15s`), so that help texts and error
 * messages can quote them; `resolveServiceConfig` parses them like given values.
 */
export const DEFAULT_LISTEN = '0.0.0.0:9808';
/** The demo listens on loopback only, and falls back to a free port when this one is taken. */
export const DEFAULT_DEMO_LISTEN = '127.0.0.1:9808';
/** The sidecar default: the controller's metrics port in the same pod. */
export const DEFAULT_TARGET = 'http://127.0.0.1:8080/metrics';
/** Scraping's defaults are the scrape layer's (scrape/scrape-settings.ts). */
export { DEFAULT_RETENTION, DEFAULT_SCRAPE_INTERVAL } from '../scrape/scrape-settings.js';
export const DEFAULT_EVALUATION_INTERVAL = '15s';
export const DEFAULT_PROMETHEUS_TIMEOUT = '30s';
/**
 * How late samples may reach a Prometheus (`prometheus.maxSampleDelay`): a scrape or a rule evaluation writes
 * within seconds; remote write from a backlogged sender, minutes.
 */
export const DEFAULT_PROMETHEUS_MAX_SAMPLE_DELAY = '2m';
/**
 * How long a series lookup stands for a service's next evaluations (`prometheus.seriesRefresh`): controllers come
 * and go over minutes, and a new queue's findings wait for a `for` of five minutes or more anyway.
 */
export const DEFAULT_PROMETHEUS_SERIES_REFRESH = '5m';
export const DEMO_SCENARIO = 'mixed';
