/**
 * One memory budget for the service: the memory it may use (`memory.limit`, else its container's limit,
 * container-memory.ts) sizes every limit that is not given, so that the worst input inside the limits fits.
 *
 * Contract:
 * - `deriveLimits(limitBytes, shape)` returns limits for which the service's peak resident memory, as `MEMORY_COSTS`
 *   charges it, stays within `limitBytes` whatever the targets send within them:
 *
 *       serviceBytes                                                    the service itself
 *     + maxBytes × (parse + read × (pages in flight − 1))               one page parsed, the others read
 *     + totalSeriesLimit × (seriesBytes + sampleBytes × samples a series holds
 *                           + labelCharBytes × (labelSetLengthLimit + target label characters))
 *     + totalQueueLimit × queueBytes
 *     + the answer caches' bytes
 *     ≤ limitBytes
 *
 *   What is left over the service (`limitBytes − serviceBytes`) is shared out: a sixth to the pages being read and
 *   parsed, a twelfth to the answer caches, the rest to the history: a fifth of it to queues, the rest to series. A
 *   target's limits are the totals divided among the targets when their number is fixed (static targets, the demo;
 *   with discovery, half of them), and never more than the fixed defaults (scrape/scrape-settings.ts,
 *   server/answer-budget.ts): a larger budget raises the totals, not what one target may send. Every limit is
 *   non-decreasing in `limitBytes`.
 * - A budget too small for a page of `MIN_PAGE_BYTES` is a `RangeError` naming the smallest that fits.
 * - `applyMemoryBudget(config, container)` takes the budget from `memory.limit` (when given; `max` is none), else from
 *   the container's limit, and returns the configuration with every scrape limit that was not given (no flag,
 *   variable or file key: `config.origins`) replaced by its derived value: explicit settings always win. A derived
 *   limit that depends on an explicit one follows it (a held series limit is never below a given series limit, a
 *   total never below a given per-target limit). Without a budget the configuration is returned as it is, with the
 *   fixed defaults.
 */
import { ConfigError } from '../config/config-error.js';
import type { ServiceConfig } from '../config/service-config.js';
import { DEFAULT_SCRAPE_SETTINGS, historySizing, type ScrapeSettings } from '../scrape/scrape-settings.js';
import { formatMiB } from '../util/memory-quantity.js';
import { type AnswerCacheLimits, DEFAULT_ANSWER_CACHE } from './answer-budget.js';
import type { ContainerMemoryLimit } from './container-memory.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Peak resident bytes the service costs, measured on the built service by `bench/memory-costs.ts` (scraping every
 * second, evaluating every 2 s: the cadence of the hostile-target benchmark, which leaves the most garbage; at the
 * default 15 s the same history peaks about a fifth lower), rounded up. docs/deployment.md (Resources) has the figures.
 */
export const MEMORY_COSTS = {
  /**
   * The service holding one small queue: Node, the modules, the HTTP server, the parse worker (measured 93 MiB;
   * 121 MiB in a later run, whose other costs came well under theirs: docs/deployment.md), and the encoders of the
   * answers' compressions running at once (about 10 MiB, `COMPRESSION_SLOTS`).
   */
  serviceBytes: 104 * MiB,
  /** A held series, its samples and labels aside: its record and index, and its share of an evaluation (14.2 KiB). */
  seriesBytes: 15 * KiB,
  /** A sample held (16 bytes of time and value; measured 21 with the buffers' room to grow). */
  sampleBytes: 24,
  /** A character of a series' labels: held, and copied into the evaluation's label sets and keys (measured 39). */
  labelCharBytes: 40,
  /**
   * A work queue, its series aside: its part of an evaluation and of the report (measured 103 KiB), and the steps of its
   * depth's slopes kept between evaluations (8 bytes each, every 5 s for half an hour: 2.9 KiB, which the benchmark's
   * retention of minutes does not hold).
   */
  queueBytes: 107 * KiB,
  /** A queue's part of the serialized report, what a cached answer holds of it (measured 4.5 KiB). */
  reportBytesPerQueue: 5 * KiB,
  /**
   * A page being parsed, per byte of it, and a page being read or waiting for the parse worker (docs/reliability.md,
   * hostile targets: a 30 MB page parsed to the series limit peaked 145 MiB over the service, 32 MiB of gzip 82 MiB).
   */
  parseBytesPerPageByte: 5,
  readBytesPerPageByte: 2.5,
} as const;

/** Shares of what is left over the service. */
const PAGE_SHARE = 1 / 6;
const ANSWER_SHARE = 1 / 12;
/** Of the history's share (the rest): queues; series take the remainder. */
const QUEUE_SHARE = 1 / 5;
/**
 * Characters of the labels a series carries for its target beyond the `job` and `instance` of the measurement
 * (discovery adds `namespace`, `pod`, `container`).
 */
export const TARGET_LABEL_CHARS = 96;
/**
 * The longest label set a series may have under a budget, names and values: a work-queue series carries its queue's
 * and controller's names and a bucket bound, a few dozen characters (a label costs 40 bytes a character).
 */
export const BUDGETED_LABEL_SET_LENGTH = 256;
/**
 * With discovery, the number of targets is not known: a target may hold this fraction of the totals, so that one
 * sending its worst leaves room for as many others at theirs (a target past the total is refused, not evicting
 * another's series).
 */
export const DISCOVERED_TARGETS_PER_TOTAL = 2;
/** The smallest page limit a budget may give. */
export const MIN_PAGE_BYTES = 1 * MiB;

/** What the budget depends on besides the memory. */
export type BudgetShape = {
  /** How many targets are scraped when that is fixed (static targets, the demo); undefined with discovery. */
  readonly targets: number | undefined;
  readonly concurrency: number;
  readonly intervalMs: number;
  readonly retentionMs: number;
};

/** The limits a budget gives. */
export type DerivedLimits = Pick<
  ScrapeSettings,
  | 'maxBytes'
  | 'seriesLimit'
  | 'heldSeriesLimit'
  | 'queueLimit'
  | 'totalSeriesLimit'
  | 'totalQueueLimit'
  | 'labelValueLimit'
  | 'labelSetLengthLimit'
> & { readonly answerCache: AnswerCacheLimits };

/** What each part of the budget is given, in bytes (the arithmetic of the module contract). */
export type BudgetParts = {
  readonly service: number;
  readonly pages: number;
  readonly answers: number;
  readonly queues: number;
  readonly series: number;
  /** Bytes one series is charged with its samples and labels at their longest. */
  readonly perSeries: number;
};

export function deriveLimits(
  limitBytes: number,
  shape: BudgetShape,
): { readonly limits: DerivedLimits; readonly parts: BudgetParts } {
  const costs = MEMORY_COSTS;
  const defaults = DEFAULT_SCRAPE_SETTINGS;
  const spare = limitBytes - costs.serviceBytes;
  const pagesInFlight = Math.max(1, Math.min(shape.concurrency, shape.targets ?? shape.concurrency));
  const perPageByte = costs.parseBytesPerPageByte + costs.readBytesPerPageByte * (pagesInFlight - 1);
  const smallest = Math.ceil((costs.serviceBytes + (MIN_PAGE_BYTES * perPageByte) / PAGE_SHARE) / MiB) * MiB;
  if (!(limitBytes >= smallest)) {
    throw new RangeError(
      `${formatMiB(limitBytes)} is too little memory: the service needs ${formatMiB(costs.serviceBytes)} itself, and at least ${formatMiB(smallest)} to read ${pagesInFlight === 1 ? 'a page' : `${pagesInFlight} pages at once`} of ${formatMiB(MIN_PAGE_BYTES)}`,
    );
  }
  const pages = spare * PAGE_SHARE;
  const answers = spare * ANSWER_SHARE;
  const history = spare - pages - answers;
  const queues = history * QUEUE_SHARE;
  const series = history - queues;

  const labelSetLengthLimit = BUDGETED_LABEL_SET_LENGTH;
  const { maxSamplesPerSeries } = historySizing(shape);
  const perSeries =
    costs.seriesBytes +
    costs.sampleBytes * maxSamplesPerSeries +
    costs.labelCharBytes * (labelSetLengthLimit + TARGET_LABEL_CHARS);
  const totalSeriesLimit = roundDown(series / perSeries);
  const totalQueueLimit = roundDown(queues / costs.queueBytes);
  const perTarget = (total: number): number =>
    Math.max(1, roundDown(total / (shape.targets ?? DISCOVERED_TARGETS_PER_TOTAL)));
  const heldSeriesLimit = Math.min(defaults.heldSeriesLimit, perTarget(totalSeriesLimit));
  const answerBytes = (share: number, fixed: number): number => Math.min(fixed, Math.floor(answers * share));

  return {
    limits: {
      maxBytes: Math.min(defaults.maxBytes, Math.max(MIN_PAGE_BYTES, Math.floor(pages / perPageByte / MiB) * MiB)),
      seriesLimit: Math.min(defaults.seriesLimit, heldSeriesLimit),
      heldSeriesLimit,
      queueLimit: Math.min(defaults.queueLimit, perTarget(totalQueueLimit)),
      totalSeriesLimit,
      totalQueueLimit,
      labelValueLimit: Math.min(defaults.labelValueLimit, labelSetLengthLimit),
      labelSetLengthLimit,
      answerCache: {
        reports: {
          ...DEFAULT_ANSWER_CACHE.reports,
          maxBytes: answerBytes(1 / 2, DEFAULT_ANSWER_CACHE.reports.maxBytes),
        },
        queues: { ...DEFAULT_ANSWER_CACHE.queues, maxBytes: answerBytes(1 / 4, DEFAULT_ANSWER_CACHE.queues.maxBytes) },
        series: { ...DEFAULT_ANSWER_CACHE.series, maxBytes: answerBytes(1 / 4, DEFAULT_ANSWER_CACHE.series.maxBytes) },
      },
    },
    parts: { service: costs.serviceBytes, pages, answers, queues, series, perSeries },
  };
}

/** The bytes the worst input inside `limits` is charged (the left side of the module contract's inequality). */
export function chargedBytes(limits: DerivedLimits, shape: BudgetShape): number {
  const costs = MEMORY_COSTS;
  const pagesInFlight = Math.max(1, Math.min(shape.concurrency, shape.targets ?? shape.concurrency));
  const { maxSamplesPerSeries } = historySizing(shape);
  const perSeries =
    costs.seriesBytes +
    costs.sampleBytes * maxSamplesPerSeries +
    costs.labelCharBytes * (limits.labelSetLengthLimit + TARGET_LABEL_CHARS);
  const cache = limits.answerCache;
  return (
    costs.serviceBytes +
    limits.maxBytes * (costs.parseBytesPerPageByte + costs.readBytesPerPageByte * (pagesInFlight - 1)) +
    limits.totalSeriesLimit * perSeries +
    limits.totalQueueLimit * costs.queueBytes +
    cache.reports.maxBytes +
    cache.queues.maxBytes +
    cache.series.maxBytes
  );
}

/** A budget in force: how much, where it came from, and what it gives. */
export type MemoryBudget = {
  readonly limitBytes: number;
  /** `--memory-limit`, `WQD_MEMORY_LIMIT`, `<file>: memory.limit`, or the cgroup file. */
  readonly from: string;
  readonly limits: DerivedLimits;
  readonly parts: BudgetParts;
};

/** The scrape limits a budget sizes; each one's configuration key is `scrape.<name>`. */
const SIZED = [
  'maxBytes',
  'seriesLimit',
  'heldSeriesLimit',
  'queueLimit',
  'totalSeriesLimit',
  'totalQueueLimit',
  'labelValueLimit',
  'labelSetLengthLimit',
] as const satisfies ReadonlyArray<keyof DerivedLimits & keyof ScrapeSettings>;

/** See the module contract. */
export function applyMemoryBudget(
  config: ServiceConfig,
  container: ContainerMemoryLimit | undefined,
): { readonly config: ServiceConfig; readonly budget: MemoryBudget | undefined } {
  const given = config.memoryLimit;
  const source =
    given !== undefined
      ? { bytes: given, from: config.origins['memory.limit'] ?? 'memory.limit' }
      : container !== undefined
        ? { bytes: container.bytes, from: container.from }
        : undefined;
  if (source === undefined || source.bytes === Number.POSITIVE_INFINITY) return { config, budget: undefined };
  const shape: BudgetShape = {
    // Prometheus mode scrapes nothing: one target's worth is what the budget keeps for it.
    targets:
      config.source.kind === 'targets'
        ? config.source.urls.length
        : config.source.kind === 'kubernetes'
          ? undefined
          : 1,
    concurrency: config.scrape.concurrency,
    intervalMs: config.scrape.intervalMs,
    retentionMs: config.scrape.retentionMs,
  };
  let derived: ReturnType<typeof deriveLimits>;
  try {
    derived = deriveLimits(source.bytes, shape);
  } catch (error) {
    if (error instanceof RangeError) throw new ConfigError(`${source.from}: ${error.message}`);
    throw error;
  }
  const budget = { limitBytes: source.bytes, from: source.from, limits: derived.limits, parts: derived.parts };
  return { config: { ...config, scrape: sizedScrape(config, derived.limits) }, budget };
}

/** `config.scrape` with every limit not given at its derived value, each derived one following the given ones. */
function sizedScrape(config: ServiceConfig, derived: DerivedLimits): ScrapeSettings {
  const given = (key: string): boolean => config.origins[`scrape.${key}`] !== undefined;
  const s: Record<string, number> = {};
  for (const name of SIZED) s[name] = given(name) ? config.scrape[name] : derived[name];
  const follow = (name: (typeof SIZED)[number], value: number): void => {
    if (!given(name)) s[name] = value;
  };
  const at = (name: (typeof SIZED)[number]): number => s[name] as number;
  follow('heldSeriesLimit', Math.max(at('heldSeriesLimit'), at('seriesLimit')));
  follow('seriesLimit', Math.min(at('seriesLimit'), at('heldSeriesLimit')));
  follow('totalSeriesLimit', Math.max(at('totalSeriesLimit'), at('heldSeriesLimit')));
  follow('totalQueueLimit', Math.max(at('totalQueueLimit'), at('queueLimit')));
  follow('labelSetLengthLimit', Math.max(at('labelSetLengthLimit'), at('labelValueLimit')));
  return { ...config.scrape, ...(s as Pick<ScrapeSettings, (typeof SIZED)[number]>) };
}

/** Rounded down to two significant digits (3,437 → 3,400), so that the limits read as chosen, not computed. */
function roundDown(value: number): number {
  if (!(value >= 100)) return Math.max(0, Math.floor(value));
  const unit = 10 ** (Math.floor(Math.log10(value)) - 1);
  return Math.floor(value / unit) * unit;
}
