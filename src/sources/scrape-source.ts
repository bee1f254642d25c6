/**
 * The `scrape` source: live targets scraped into the in-process history (the sidecar default).
 *
 * Contract:
 * - Targets come from a `TargetProvider` (a fixed list, or a provider with `targets()` and
 *   `on('change')` such as the pod discovery). Each target is stored under its own labels with `job`
 *   and `instance` filled in (`scrapeLabels`); scraped labels never override them (the history keeps
 *   a clashing scraped label as `exported_<name>`).
 * - One scrape: fetch the page (`timeoutMs`, `maxBytes`, token, TLS), parse only
 *   `DIAGNOSTIC_FAMILIES` (other families are skipped without being tokenized), remove the target's own
 *   credentials (the bearer token, the URL's password) from label values (label-credentials.ts), append to the
 *   history at the scrape's start time (`clock.now()`), record health. Scrapes run at most `concurrency` at
 *   once and never twice at once for one target; a tick that finds a target still busy skips it and
 *   counts it in `skippedScrapes`.
 * - A failed scrape (fetch error, malformed page: `parse_error` naming the line and column, or saying that
 *   the page is HTML, with a one-line excerpt, instead of a metrics page; a page over one of the target's limits
 *   (page-limits.ts): `series_limit`, `label_limit`, `queue_limit`; a page that would bring the history past a held
 *   limit even with the target's stale series evicted (store/held-limits.ts): `held_series_limit`, `queue_limit`)
 *   records
 *   the error in the target's health and puts stale markers on the target's series at the scrape
 *   time, as Prometheus does; samples already held are kept, so a malformed page loses nothing.
 *   Scraping never throws.
 * - Work queues are counted as the engine finds them (`queueKeying`: the engine's queue families and key), on the
 *   page (`queueLimit`) and in what the history holds over time (`queueLimit`, `totalQueueLimit`), like series
 *   (`heldSeriesLimit`, `totalSeriesLimit`): to stay within those, the target's oldest stale series are evicted
 *   before its scrape is stored, and the target's health says so (`lastWarning`, naming the setting).
 * - A target that leaves the provider is dropped from `health()` and `targets()` at once, its
 *   in-flight scrape is aborted and its series are marked stale at once. Its data stays queryable
 *   until `removeAfterMs` (default: the history's retention, when the data has aged out anyway) has
 *   passed; the target is then removed from the history. A target whose labels change (same key) is
 *   treated the same way: the old label set retires, the new one starts fresh.
 * - Targets the history already holds when the source is made (a history saved across a restart, the demo's
 *   warm-up) are continued by a target with the same labels, under their id; the others retire at once.
 * - `targets()` reports a scrape error for a target only when its last scrape failed and it has no
 *   fresh data: it never scraped successfully, or its last success is at least 1.5 intervals older
 *   than its last failure (two scheduled scrapes in a row failed). A single failed scrape of a target
 *   that otherwise answers (flapping) is visible in `health()`, not as a target error.
 * - `stop()` stops the interval, aborts in-flight scrapes (their results are discarded) and waits for
 *   them; `start()` may be called again. `close()` also stops following the provider and closes the
 *   source's HTTP agents; it is final and idempotent.
 */
import { performance } from 'node:perf_hooks';
import type { Target } from '../discovery/target.js';
import { isExpositionError } from '../exposition/exposition-error.js';
import { type Labels, labelsOf } from '../exposition/labels.js';
import { parsePage } from '../exposition/parse-off-thread.js';
import type { ExpositionFormat, ParsedPage } from '../exposition/parsed-page.js';
import { isLabelLimitError, isSeriesLimitError } from '../exposition/parser.js';
import { DIAGNOSTIC_FAMILIES } from '../metrics/names.js';
import { createStoreBackend, historyStore } from '../promql/history-backend.js';
import { readTokenFile } from '../scrape/file-cache.js';
import { fetchMetricsPage, isScrapeError } from '../scrape/http-fetch.js';
import { createHttpAgents } from '../scrape/http-transport.js';
import type { ScrapeErrorCode } from '../scrape/scrape-error.js';
import { redactUrl, urlCredentials, urlSecrets, withoutCredentials } from '../scrape/scrape-error.js';
import { createScrapeScheduler } from '../scrape/scrape-scheduler.js';
import {
  DEFAULT_SCRAPE_CONCURRENCY,
  DEFAULT_SCRAPE_INTERVAL_MS,
  DEFAULT_SCRAPE_LABEL_LIMIT,
  DEFAULT_SCRAPE_LABEL_VALUE_LIMIT,
  DEFAULT_SCRAPE_MAX_BYTES,
  DEFAULT_SCRAPE_QUEUE_LIMIT,
  DEFAULT_SCRAPE_SERIES_LIMIT,
  DEFAULT_SCRAPE_SETTINGS,
  defaultHeldSeriesLimit,
  defaultScrapeTimeoutMs,
  historySizing,
  type ScrapeSettings,
} from '../scrape/scrape-settings.js';
import {
  newTargetHealth,
  recordScrapeFailure,
  recordScrapeSuccess,
  recordSkippedScrape,
  type TargetHealth,
} from '../scrape/target-health.js';
import {
  type Eviction,
  HeldLimitError,
  type HeldLimitName,
  type HeldLimits,
  History,
  type QueueKeying,
} from '../store/history.js';
import { withoutCredentialsInLabels } from './label-credentials.js';
import { SCRAPE_LIMIT_SETTINGS } from './limit-settings.js';
import { labelLimitDetail, type PageLimits, queueLimitViolation } from './page-limits.js';
import type { DataRange, MetricsSource } from './source.js';
import { isDynamicProvider, labelSignature, scrapeLabels, type TargetProvider } from './target-provider.js';
import { type TargetState, targetName } from './target-state.js';

export type { DynamicTargetProvider, TargetProvider } from './target-provider.js';

/** A target's last success must be this many intervals older than its last failure to count as down. */
const ERROR_AFTER_INTERVALS = 1.5;
/** `History.prune` runs at most this often. */
const PRUNE_EVERY_MS = 60_000;

/** Failure codes beyond the fetch's own. */
export type ScrapeSourceErrorCode =
  | ScrapeErrorCode
  /** The page is not valid exposition text; the message names the line and column. */
  | 'parse_error'
  /** The page holds more distinct series of the diagnostic families than the target's limit. */
  | 'series_limit'
  /** A kept series has more labels than the limit, or a label value longer than the limit. */
  | 'label_limit'
  /** The page has more work queues than the target's limit, or would bring the history past its queue limits. */
  | 'queue_limit'
  /** The page's new series would bring the history past its held series limits, even with stale series evicted. */
  | 'held_series_limit'
  /** The clock went backwards: the scrape time is not after the target's previous one. */
  | 'out_of_order'
  /** Anything else (e.g. the parse worker died, or a history shared with other writers refused the page). */
  | 'internal';

/** Reported to `onScrape` after every scrape that ran (not after skipped or discarded ones). */
export interface ScrapeEvent {
  readonly target: Target;
  /** Fetch, parse and append, in milliseconds of real time. */
  readonly durationMs: number;
  readonly ok: boolean;
  readonly errorCode?: ScrapeSourceErrorCode;
  /** Samples kept from the page (diagnostic families only); 0 on failure. */
  readonly samples: number;
  /** Uncompressed bytes read (on failure: as far as the fetch got, when known). */
  readonly bytes: number;
}

/**
 * The scrape settings (each unset one at its default in scrape/scrape-settings.ts: `ScrapeSettings` spreads in
 * as it is) and what the source is wired to.
 */
export interface ScrapeSourceOptions extends Partial<ScrapeSettings> {
  readonly targets: TargetProvider;
  /** How the engine finds work queues in series: what the queue limits count. */
  readonly queueKeying: QueueKeying;
  /** Default: a new `History` holding `retentionMs` (default 30 minutes) of scrapes every `intervalMs`. */
  readonly history?: History;
  /** Scrape times come from here (default `Date.now`); durations are always real time. */
  readonly clock?: { now(): number };
  /** How long a vanished target's data stays before the target is removed. Default: the history's retention. */
  readonly removeAfterMs?: number;
  /** Called after every scrape, e.g. for the service's own metrics. Exceptions are ignored. */
  readonly onScrape?: (event: ScrapeEvent) => void;
}

export interface ScrapeSource extends MetricsSource {
  readonly kind: 'scrape';
  readonly history: History;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  /** Scrapes every current target once and resolves when all are done. Never rejects. */
  scrapeOnce(): Promise<void>;
  /** Scrapes at once, then every `intervalMs` (the timer does not keep the process alive). Idempotent. */
  start(): void;
  /** Stops the timer, aborts in-flight scrapes and waits for them. */
  stop(): Promise<void>;
  /** Scrape health of the current targets, by key. */
  health(): TargetHealth[];
}

interface Entry {
  target: Target;
  labels: Record<string, string>;
  /** `labels` as the history attaches them. */
  targetLabels: Labels;
  labelSig: string;
  historyId: string;
  health: TargetHealth;
  lastSuccessAt: number | undefined;
  lastFailureAt: number | undefined;
  lastFailed: boolean;
  /** Set while a scrape of this entry runs; `done` settles when it has finished with the history. */
  inFlight: { controller: AbortController; done: Promise<void> } | undefined;
  retired: boolean;
}

class ScrapeFailure extends Error {
  readonly code: ScrapeSourceErrorCode;
  readonly bytes: number | undefined;
  constructor(code: ScrapeSourceErrorCode, message: string, options: { cause?: unknown; bytes?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ScrapeFailure';
    this.code = code;
    this.bytes = options.bytes;
  }
}

export function createScrapeSource(options: ScrapeSourceOptions): ScrapeSource {
  const intervalMs = options.intervalMs ?? DEFAULT_SCRAPE_INTERVAL_MS;
  if (!(Number.isFinite(intervalMs) && intervalMs > 0)) {
    throw new RangeError(`scrape interval must be a positive number of milliseconds, got ${intervalMs}`);
  }
  const timeoutMs = options.timeoutMs ?? defaultScrapeTimeoutMs(intervalMs);
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new RangeError(`scrape timeout must be a positive number of milliseconds, got ${timeoutMs}`);
  }
  if (timeoutMs >= intervalMs) {
    throw new RangeError(`scrape timeout (${timeoutMs} ms) must be below the scrape interval (${intervalMs} ms)`);
  }
  const seriesLimit = positiveInteger(options.seriesLimit ?? DEFAULT_SCRAPE_SERIES_LIMIT, 'scrape series limit');
  const pageLimits: PageLimits = {
    labelValueLimit: positiveInteger(
      options.labelValueLimit ?? DEFAULT_SCRAPE_LABEL_VALUE_LIMIT,
      'scrape label value limit',
    ),
    labelLimit: positiveInteger(options.labelLimit ?? DEFAULT_SCRAPE_LABEL_LIMIT, 'scrape label limit'),
    labelSetLengthLimit: bound(
      options.labelSetLengthLimit ?? DEFAULT_SCRAPE_SETTINGS.labelSetLengthLimit,
      'scrape label set length limit',
    ),
    queueLimit: positiveInteger(options.queueLimit ?? DEFAULT_SCRAPE_QUEUE_LIMIT, 'scrape queue limit'),
  };
  const held: HeldLimits = {
    maxSeries: positiveInteger(
      options.heldSeriesLimit ?? defaultHeldSeriesLimit(seriesLimit),
      'scrape held series limit',
    ),
    maxQueues: pageLimits.queueLimit,
    maxTotalSeries: bound(
      options.totalSeriesLimit ?? DEFAULT_SCRAPE_SETTINGS.totalSeriesLimit,
      'scrape total series limit',
    ),
    maxTotalQueues: bound(
      options.totalQueueLimit ?? DEFAULT_SCRAPE_SETTINGS.totalQueueLimit,
      'scrape total queue limit',
    ),
    queues: options.queueKeying,
  };
  const maxBytes = positiveInteger(
    options.maxBytes ?? DEFAULT_SCRAPE_MAX_BYTES,
    'scrape size limit',
    'a positive integer number of bytes',
  );
  const bearerTokenFile = options.bearerTokenFile;
  const secrets = async (): Promise<readonly string[]> =>
    bearerTokenFile === undefined ? [] : [await readTokenFile(bearerTokenFile).catch(() => '')];
  const concurrency = options.concurrency ?? DEFAULT_SCRAPE_CONCURRENCY;
  const scheduler = createScrapeScheduler({ concurrency });
  const history =
    options.history ??
    (options.retentionMs === undefined
      ? new History()
      : new History(historySizing({ intervalMs, retentionMs: options.retentionMs })));
  const clock = options.clock ?? { now: Date.now };
  const removeAfterMs = options.removeAfterMs ?? history.retentionMs;
  if (!(removeAfterMs >= 0)) throw new RangeError(`removeAfterMs must not be negative, got ${removeAfterMs}`);
  const agents = createHttpAgents();
  const provider = options.targets;

  /** Current targets by key. */
  const entries = new Map<string, Entry>();
  /** Label signatures of the history ids this source writes. */
  const historyIds = new Map<string, string>();
  /** Newest time written (sample or stale marker) per history id. */
  const lastWriteMs = new Map<string, number>();
  /** Retired history ids and when they retired. */
  const retiredAt = new Map<string, number>();
  const rounds = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  /** Aborted by `stop()`: scrapes started under it (or waiting for a slot) are abandoned. */
  let lifetime = new AbortController();
  let lastPruneMs = Number.NEGATIVE_INFINITY;
  let closed = false;

  /** Targets the history held before this source, by label signature (see the module contract). */
  const heldBefore = new Map<string, string>();
  for (const held of history.targets()) {
    const sig = labelSignature(held.labels);
    historyIds.set(held.id, sig);
    retiredAt.set(held.id, clock.now());
    if (!heldBefore.has(sig)) heldBefore.set(sig, held.id);
  }

  const allocateHistoryId = (key: string, sig: string): string => {
    const inUse = new Set<string>();
    for (const e of entries.values()) inUse.add(e.historyId);
    const held = heldBefore.get(sig);
    if (held !== undefined && !inUse.has(held)) {
      retiredAt.delete(held);
      return held;
    }
    for (let n = 1; ; n++) {
      const id = n === 1 ? key : `${key}#${n}`;
      const known = historyIds.get(id);
      if (known === undefined || (known === sig && !inUse.has(id))) {
        historyIds.set(id, sig);
        retiredAt.delete(id);
        return id;
      }
    }
  };

  const markStale = (historyId: string, atMs: number): void => {
    const last = lastWriteMs.get(historyId) ?? Number.NEGATIVE_INFINITY;
    const at = Math.max(atMs, last);
    history.markStale(historyId, at);
    lastWriteMs.set(historyId, at);
  };

  /** Stops scraping an entry's history id: aborts its scrape, then marks its series stale. */
  const retire = (entry: Entry): void => {
    entry.retired = true;
    const id = entry.historyId;
    const finish = (): void => {
      // Revived in the meantime (same key and labels came back): nothing to retire.
      if ([...entries.values()].some((e) => e.historyId === id && !e.retired)) return;
      const now = clock.now();
      markStale(id, now);
      retiredAt.set(id, now);
    };
    const inFlight = entry.inFlight;
    if (inFlight === undefined) {
      finish();
    } else {
      inFlight.controller.abort();
      void inFlight.done.then(finish);
    }
  };

  const syncTargets = (list: readonly Target[]): void => {
    if (closed) return;
    const next = new Map<string, Target>();
    for (const t of list) next.set(t.key, t);
    for (const [key, entry] of [...entries]) {
      if (next.has(key)) continue;
      entries.delete(key);
      retire(entry);
    }
    for (const [key, target] of next) {
      const labels = scrapeLabels(target);
      const sig = labelSignature(labels);
      const entry = entries.get(key);
      if (entry !== undefined && entry.labelSig === sig) {
        if (entry.target.url !== target.url) entry.health = { ...entry.health, url: target.url };
        entry.target = target;
        continue;
      }
      if (entry !== undefined) {
        entries.delete(key);
        retire(entry);
      }
      entries.set(key, {
        target,
        labels,
        targetLabels: labelsOf(labels),
        labelSig: sig,
        historyId: allocateHistoryId(key, sig),
        health: entry === undefined ? newTargetHealth(key, target.url) : { ...entry.health, url: target.url },
        lastSuccessAt: undefined,
        lastFailureAt: undefined,
        lastFailed: false,
        inFlight: undefined,
        retired: false,
      });
    }
  };

  const unsubscribe = isDynamicProvider(provider) ? provider.on('change', (list) => syncTargets(list)) : undefined;
  const currentTargets = (): readonly Target[] => (isDynamicProvider(provider) ? provider.targets() : provider);
  syncTargets(currentTargets());

  const report = (event: ScrapeEvent): void => {
    if (options.onScrape === undefined) return;
    try {
      options.onScrape(event);
    } catch {
      // the hook must not break scraping
    }
  };

  const scrapeEntry = async (entry: Entry): Promise<void> => {
    const controller = new AbortController();
    const signal = AbortSignal.any([controller.signal, lifetime.signal]);
    // Retired while waiting for a slot, or stopped.
    if (signal.aborted || entry.retired) return;
    let finished!: () => void;
    entry.inFlight = { controller, done: new Promise<void>((resolve) => (finished = resolve)) };
    const { historyId, labels } = entry;
    const url = entry.target.url;
    const target: Target = { key: entry.target.key, url, labels: { ...labels } };
    const atMs = clock.now();
    const started = performance.now();
    let bytes = 0;
    try {
      const previous = lastWriteMs.get(historyId);
      if (previous !== undefined && !(atMs > previous)) {
        throw new ScrapeFailure(
          'out_of_order',
          `${redactUrl(url)}: scrape time ${new Date(atMs).toISOString()} is not after the previous one (${new Date(previous).toISOString()}); did the clock go backwards?`,
        );
      }
      const fetched = await fetchMetricsPage(
        { url },
        {
          timeoutMs,
          maxBytes,
          signal,
          agents,
          ...(options.bearerTokenFile !== undefined ? { bearerTokenFile: options.bearerTokenFile } : {}),
          ...(options.caFile !== undefined ? { caFile: options.caFile } : {}),
          ...(options.insecureSkipVerify !== undefined ? { insecureSkipVerify: options.insecureSkipVerify } : {}),
        },
      );
      bytes = fetched.bytes;
      if (signal.aborted) return;
      const parsed = await parse(fetched.raw, fetched.format, url, { maxBytes, seriesLimit, pageLimits, secrets });
      const page = withoutCredentialsInLabels(parsed, [...urlSecrets(url), ...(await secrets())]);
      const violation = queueLimitViolation(page, pageLimits.queueLimit, options.queueKeying, entry.targetLabels);
      if (violation !== undefined) {
        throw new ScrapeFailure(violation.code, `${redactUrl(url)}: ${violation.message}; the page was not stored`);
      }
      if (signal.aborted) return;
      let eviction: Eviction | undefined;
      try {
        eviction = (await history.appendInChunks({ id: historyId, labels }, page, atMs, { held })).eviction;
      } catch (err) {
        if (err instanceof HeldLimitError) {
          throw new ScrapeFailure(
            err.code,
            `${redactUrl(url)}: ${err.message} (${heldLimitText(err.limit)}); the page was not stored`,
            { cause: err },
          );
        }
        throw new ScrapeFailure('internal', `${redactUrl(url)}: cannot store the page: ${errorMessage(err)}`, {
          cause: err,
        });
      }
      lastWriteMs.set(historyId, atMs);
      const durationMs = performance.now() - started;
      entry.health = recordScrapeSuccess(entry.health, {
        at: clock.now(),
        durationMs,
        bytes,
        samples: page.samples.count,
        ...(eviction !== undefined ? { warning: evictionWarning(eviction, held) } : {}),
      });
      entry.lastSuccessAt = atMs;
      entry.lastFailed = false;
      report({ target, durationMs, ok: true, samples: page.samples.count, bytes });
    } catch (err) {
      if (signal.aborted) return;
      const failure = toFailure(err, url);
      const durationMs = performance.now() - started;
      entry.health = recordScrapeFailure(entry.health, { at: clock.now(), durationMs, error: failure });
      entry.lastFailureAt = atMs;
      entry.lastFailed = true;
      if (failure.code !== 'out_of_order') markStale(historyId, atMs);
      report({ target, durationMs, ok: false, errorCode: failure.code, samples: 0, bytes: failure.bytes ?? bytes });
    } finally {
      entry.inFlight = undefined;
      finished();
    }
  };

  const housekeeping = (): void => {
    const now = clock.now();
    for (const [id, at] of [...retiredAt]) {
      if (now - at < removeAfterMs) continue;
      history.removeTarget(id);
      retiredAt.delete(id);
      const sig = historyIds.get(id);
      if (sig !== undefined && heldBefore.get(sig) === id) heldBefore.delete(sig);
      historyIds.delete(id);
      lastWriteMs.delete(id);
    }
    if (Number.isFinite(history.retentionMs) && now - lastPruneMs >= Math.min(PRUNE_EVERY_MS, history.retentionMs)) {
      history.prune(now);
      lastPruneMs = now;
    }
  };

  const round = async (): Promise<void> => {
    if (closed) return;
    syncTargets(currentTargets());
    await Promise.all(
      [...entries.values()].map(async (entry) => {
        try {
          const run = await scheduler.run(entry.target.key, () => scrapeEntry(entry));
          if (!run.ran) entry.health = recordSkippedScrape(entry.health);
        } catch {
          // scrapeEntry records its own failures
        }
      }),
    );
    try {
      housekeeping();
    } catch {
      // nothing here may break the next round
    }
  };

  const tracked = (): Promise<void> => {
    const p = round();
    rounds.add(p);
    void p.finally(() => rounds.delete(p));
    return p;
  };

  const stop = async (): Promise<void> => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    lifetime.abort();
    await Promise.all([...rounds]);
    await scheduler.idle();
    if (!closed) lifetime = new AbortController();
  };

  /**
   * From the oldest sample stamped at a scrape's time (timestamps a page sets itself do not count: one target
   * exposing an old timestamp must not stretch every rule's `for` beyond the history the others have) to the
   * newest sample, and the history's retention: what it keeps behind the newest sample.
   */
  const dataRange = (): DataRange | undefined => {
    let start = Number.POSITIVE_INFINITY;
    let end = Number.NEGATIVE_INFINITY;
    for (const t of history.targets()) {
      if (t.firstScrapedMs !== undefined) start = Math.min(start, t.firstScrapedMs);
      if (t.lastMs !== undefined) end = Math.max(end, t.lastMs);
    }
    if (!Number.isFinite(start) || !Number.isFinite(end)) return undefined;
    return {
      startMs: start,
      endMs: end,
      ...(Number.isFinite(history.retentionMs) ? { keptMs: history.retentionMs } : {}),
    };
  };

  const sortedEntries = (): Entry[] => [...entries.values()].sort((a, b) => compare(a.target.key, b.target.key));

  return {
    kind: 'scrape',
    history,
    intervalMs,
    timeoutMs,
    backend: createStoreBackend(historyStore(history)),
    scrapeOnce: () => tracked(),
    start() {
      if (closed) throw new Error('the scrape source is closed');
      if (timer !== undefined) return;
      timer = setInterval(() => void tracked(), intervalMs);
      timer.unref();
      void tracked();
    },
    stop,
    health: () => sortedEntries().map((e) => e.health),
    targets: (): TargetState[] =>
      sortedEntries().map((e) => {
        const labels = labelsOf(e.labels);
        const state = { name: targetName(labels), labels };
        const err = e.health.lastError;
        return hasNoFreshData(e, intervalMs) && err !== null
          ? { ...state, error: { code: err.code, message: err.message } }
          : state;
      }),
    dataRange,
    async close() {
      if (closed) return;
      closed = true;
      unsubscribe?.();
      await stop();
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** `value`, or a RangeError naming `what` when it is neither a positive integer nor `Infinity` (no limit). */
function bound(value: number, what: string): number {
  return value === Number.POSITIVE_INFINITY ? value : positiveInteger(value, what);
}

/** Each held limit as its setting names it. */
const HELD_LIMIT_SETTINGS: Readonly<Record<HeldLimitName, { readonly what: string; readonly setting: string }>> = {
  maxSeries: { what: "the target's held series limit", setting: SCRAPE_LIMIT_SETTINGS.heldSeriesLimit },
  maxQueues: { what: "the target's queue limit", setting: SCRAPE_LIMIT_SETTINGS.queueLimit },
  maxTotalSeries: { what: 'the total series limit of all targets', setting: SCRAPE_LIMIT_SETTINGS.totalSeriesLimit },
  maxTotalQueues: { what: 'the total queue limit of all targets', setting: SCRAPE_LIMIT_SETTINGS.totalQueueLimit },
};

function heldLimitText(limit: HeldLimitName): string {
  const { what, setting } = HELD_LIMIT_SETTINGS[limit];
  return `${what}, ${setting}`;
}

/** The warning of a scrape stored after its target's stale series were evicted. */
function evictionWarning(eviction: Eviction, held: HeldLimits): { code: string; message: string } {
  const limits = eviction.limits.map((limit) => `${held[limit]} (${heldLimitText(limit)})`).join('; ');
  const queues = eviction.queues > 0 ? `, the last of ${eviction.queues} stale work queues among them,` : '';
  return {
    code: eviction.limits.some((limit) => limit === 'maxQueues' || limit === 'maxTotalQueues')
      ? 'queue_limit'
      : 'held_series_limit',
    message: `${eviction.series} stale series (no sample in the latest scrape)${queues} evicted, oldest first, to stay within ${limits}`,
  };
}

/** `value`, or a RangeError naming `what` when it is not a positive integer. */
function positiveInteger(value: number, what: string, expected = 'a positive integer'): number {
  if (!(Number.isInteger(value) && value > 0)) throw new RangeError(`${what} must be ${expected}, got ${value}`);
  return value;
}

/** The rule for reporting a target error (see the module comment). */
function hasNoFreshData(entry: Entry, intervalMs: number): boolean {
  if (!entry.lastFailed || entry.lastFailureAt === undefined) return false;
  if (entry.lastSuccessAt === undefined) return true;
  return entry.lastFailureAt - entry.lastSuccessAt >= ERROR_AFTER_INTERVALS * intervalMs;
}

/**
 * Parses a page from its bytes: a large one moves to the parse worker undecoded (decoding and copying a page of
 * tens of megabytes would hold the event loop); only its start is decoded here, for what an error quotes.
 */
async function parse(
  raw: Buffer,
  format: ExpositionFormat,
  url: string,
  limits: {
    readonly maxBytes: number;
    readonly seriesLimit: number;
    readonly pageLimits: PageLimits;
    /** Credentials an answer may echo (the bearer token), removed from what an error quotes of it. */
    readonly secrets: () => Promise<readonly string[]>;
  },
): Promise<ParsedPage> {
  const { maxBytes, seriesLimit } = limits;
  const head = new TextDecoder('utf-8').decode(raw.subarray(0, PAGE_HEAD_BYTES));
  try {
    return await parsePage(raw, {
      format,
      keepFamilies: DIAGNOSTIC_FAMILIES,
      maxBytes,
      maxSeries: seriesLimit,
      // Checked while parsing, so a page of huge label values is refused before its series keys are made.
      maxLabels: limits.pageLimits.labelLimit,
      maxLabelValueLength: limits.pageLimits.labelValueLimit,
      maxLabelSetLength: limits.pageLimits.labelSetLengthLimit,
      source: redactUrl(url),
      transferInput: true,
    });
  } catch (err) {
    if (isExpositionError(err) && isSeriesLimitError(err)) {
      throw new ScrapeFailure(
        'series_limit',
        `${redactUrl(url)}: more than ${seriesLimit} series of the work-queue, controller and REST client families (the target's series limit, ${SCRAPE_LIMIT_SETTINGS.seriesLimit}); the page was not stored`,
        { cause: err },
      );
    }
    if (isExpositionError(err) && isLabelLimitError(err)) {
      throw new ScrapeFailure('label_limit', `${redactUrl(url)}: line ${err.line}: ${labelLimitDetail(err.reason)}`, {
        cause: err,
      });
    }
    if (isExpositionError(err) && looksLikeHtml(head)) {
      const shown = withoutCredentials(head, [...urlCredentials(url), ...(await limits.secrets())]);
      throw new ScrapeFailure('parse_error', `${redactUrl(url)}: not a metrics page (HTML): ${excerpt(shown)}`, {
        cause: err,
      });
    }
    if (isExpositionError(err)) throw new ScrapeFailure('parse_error', err.message, { cause: err });
    throw new ScrapeFailure('internal', `${redactUrl(url)}: cannot parse the page: ${errorMessage(err)}`, {
      cause: err,
    });
  }
}

/** How much of a page's start is decoded for an error to quote. */
const PAGE_HEAD_BYTES = 512;

/** A page that starts like an HTML document (a login page, a UI, an error page of a proxy). */
function looksLikeHtml(head: string): boolean {
  return /^\s*<(!doctype\s+html|html|head|body|\?xml|!--)/i.test(head);
}

/** The start of a page on one line, quoted, at most 60 characters. */
function excerpt(head: string): string {
  const flat = head.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length <= 60 ? flat : `${flat.slice(0, 59)}…`);
}

function toFailure(err: unknown, url: string): ScrapeFailure {
  if (err instanceof ScrapeFailure) return err;
  if (isScrapeError(err)) {
    const options = err.bytes === undefined ? { cause: err } : { cause: err, bytes: err.bytes };
    return new ScrapeFailure(err.code, err.message, options);
  }
  return new ScrapeFailure('internal', `${redactUrl(url)}: ${errorMessage(err)}`, { cause: err });
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
