/**
 * The settings of scraping, for every command that scrapes (`serve`, `diagnose --target`): one type, each
 * default written once, and the range each duration may take. The configuration table (config/service-settings.ts)
 * reads its ranges and defaults from here, the scrape source (sources/scrape-source.ts) and the history
 * (store/history.ts) their defaults.
 *
 * Contract: durations are milliseconds; `timeoutMs` unset means `defaultScrapeTimeoutMs(intervalMs)`. The
 * defaults' text forms (`15s`) are what help texts and error messages quote.
 */
import { parseDuration } from '../util/duration.js';

export type ScrapeSettings = {
  readonly intervalMs: number;
  /** Bound on one fetch, below the interval; unset: `defaultScrapeTimeoutMs(intervalMs)`. */
  readonly timeoutMs?: number;
  /** Bound on the uncompressed page, in bytes. */
  readonly maxBytes: number;
  /** Scrapes running at once. */
  readonly concurrency: number;
  /** Distinct series of the diagnostic families per target's page (like Prometheus's `sample_limit`). */
  readonly seriesLimit: number;
  /** Longest label value of a kept series, in characters (like `label_value_length_limit`). */
  readonly labelValueLimit: number;
  /** Most labels on a kept series (like `label_limit`). */
  readonly labelLimit: number;
  /** Most characters of a kept series' label names and values together; `Infinity`: no limit. */
  readonly labelSetLengthLimit: number;
  /** Most work queues per target: on its page, and held over the retention. */
  readonly queueLimit: number;
  /** Most series one target holds over the retention (its page's and those that left it). */
  readonly heldSeriesLimit: number;
  /** Most series every target together holds; `Infinity`: no limit. */
  readonly totalSeriesLimit: number;
  /** Most work queues every target together holds; `Infinity`: no limit. */
  readonly totalQueueLimit: number;
  /** History kept per series. */
  readonly retentionMs: number;
  readonly bearerTokenFile?: string;
  readonly caFile?: string;
  readonly insecureSkipVerify: boolean;
};

/** Prometheus's default scrape interval: the service's, the simulator's recordings' and the store's sizing default. */
export const DEFAULT_SCRAPE_INTERVAL = '15s';
/**
 * `diagnose --target`'s interval: a one-shot window of a couple of minutes needs more samples than a service
 * that keeps scraping.
 */
export const DEFAULT_DIAGNOSE_SCRAPE_INTERVAL = '5s';
/**
 * History kept per series: as long as the longest range a rule reads (Backlog's half hour). A rule whose range the
 * history does not keep is reported unknown unless its condition holds (diagnosis/judgement.ts).
 */
export const DEFAULT_RETENTION = '30m';

export const DEFAULT_SCRAPE_INTERVAL_MS = parseDuration(DEFAULT_SCRAPE_INTERVAL);
export const DEFAULT_RETENTION_MS = parseDuration(DEFAULT_RETENTION);
/** The default timeout is 0.8 × the interval, at most this. */
export const MAX_DEFAULT_SCRAPE_TIMEOUT_MS = 10_000;
export const DEFAULT_SCRAPE_MAX_BYTES = 32 * 1024 * 1024;
export const DEFAULT_SCRAPE_CONCURRENCY = 8;
/**
 * Distinct series of the diagnostic families one target's page may hold, like Prometheus's `sample_limit`. Each
 * series held for the 30-minute retention costs about 3 KiB (121 samples of 16 bytes, its record and labels):
 * 10,000 series are about 30 MiB, within the sidecar's memory limit (192 MiB) beside the service's own ~75 MiB
 * and an evaluation's working set. A controller process with 200 controllers exposes about 9,500; a larger
 * manager is diagnosed by the standalone service with a raised limit.
 */
export const DEFAULT_SCRAPE_SERIES_LIMIT = 10_000;
/**
 * Longest label value accepted in a kept series, in characters, like Prometheus's `label_value_length_limit`:
 * queue, controller and target names are short; a huge value would be stored in every sample's series and
 * carried into ids and reports.
 */
export const DEFAULT_SCRAPE_LABEL_VALUE_LIMIT = 1024;
/**
 * Most labels on one kept series (before the target's own are added), like Prometheus's `label_limit`: the
 * work-queue, controller-runtime and REST-client series carry one to five.
 */
export const DEFAULT_SCRAPE_LABEL_LIMIT = 30;
/**
 * Most work queues on one target, on its page and held over the retention: a controller process runs one queue
 * per controller, a few dozen even in kube-controller-manager; 250 queues and their series (about 35 each, 47 with
 * controller-runtime's) fit the default series limit.
 */
export const DEFAULT_SCRAPE_QUEUE_LIMIT = 250;

/**
 * Series one target holds over the retention, per series its page may hold: a page at the series limit, and as
 * many series again that left it within the retention (a restart that renamed every series, a rollout). A target
 * bringing new series at every scrape (a label holding an id, a timestamp) has its stale series evicted, oldest
 * first, instead of growing the history by a page a scrape for the whole retention.
 */
export const HELD_SERIES_PER_PAGE_SERIES = 2;
export const DEFAULT_SCRAPE_HELD_SERIES_LIMIT = HELD_SERIES_PER_PAGE_SERIES * DEFAULT_SCRAPE_SERIES_LIMIT;
/** The held series limit when none is given: `HELD_SERIES_PER_PAGE_SERIES` times the series limit in force. */
export function defaultHeldSeriesLimit(seriesLimit: number): number {
  return HELD_SERIES_PER_PAGE_SERIES * seriesLimit;
}

/**
 * Every default; `timeoutMs` follows the interval (`defaultScrapeTimeoutMs`). Without a memory limit (the
 * container's or `memory.limit`) these are in force; with one, service/memory-budget.ts sizes each limit that is
 * not given.
 */
export const DEFAULT_SCRAPE_SETTINGS: ScrapeSettings = {
  intervalMs: DEFAULT_SCRAPE_INTERVAL_MS,
  maxBytes: DEFAULT_SCRAPE_MAX_BYTES,
  concurrency: DEFAULT_SCRAPE_CONCURRENCY,
  seriesLimit: DEFAULT_SCRAPE_SERIES_LIMIT,
  labelValueLimit: DEFAULT_SCRAPE_LABEL_VALUE_LIMIT,
  labelLimit: DEFAULT_SCRAPE_LABEL_LIMIT,
  labelSetLengthLimit: Number.POSITIVE_INFINITY,
  queueLimit: DEFAULT_SCRAPE_QUEUE_LIMIT,
  heldSeriesLimit: DEFAULT_SCRAPE_HELD_SERIES_LIMIT,
  totalSeriesLimit: Number.POSITIVE_INFINITY,
  totalQueueLimit: Number.POSITIVE_INFINITY,
  retentionMs: DEFAULT_RETENTION_MS,
  insecureSkipVerify: false,
};

/** The accepted range of each duration setting, as Prometheus durations (timers beyond ~24 days never fire). */
export const SCRAPE_DURATION_RANGES = {
  interval: { min: '1s', max: '1h' },
  timeout: { min: '100ms', max: '1h' },
  retention: { min: '1m', max: '1d' },
} as const;

/** min(10 s, 0.8 × interval). */
export function defaultScrapeTimeoutMs(intervalMs: number): number {
  return Math.min(MAX_DEFAULT_SCRAPE_TIMEOUT_MS, 0.8 * intervalMs);
}

/** How a history holding `retentionMs` of scrapes every `intervalMs` is sized: both ends included. */
export function historySizing(settings: Pick<ScrapeSettings, 'intervalMs' | 'retentionMs'>): {
  readonly retentionMs: number;
  readonly maxSamplesPerSeries: number;
} {
  return {
    retentionMs: settings.retentionMs,
    maxSamplesPerSeries: Math.ceil(settings.retentionMs / settings.intervalMs) + 1,
  };
}
