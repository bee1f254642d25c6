/**
 * The in-memory history: per target and series, a bounded window of samples, queried with
 * Prometheus 2.x semantics.
 *
 * Contract:
 * - Times are unix milliseconds (integers); windows are milliseconds.
 * - A target is `{ id, labels }`. Its labels (e.g. `job`, `instance`) are attached to every series
 *   scraped from it and always win over scraped labels of the same name, which are kept as
 *   `exported_<name>` (Prometheus `honor_labels: false`). A target's labels are fixed at its first
 *   append; appending with different labels throws.
 * - `append(target, page, t)` adds one scrape. Samples without a timestamp get `t`; samples with one
 *   keep it (`honorTimestamps`, default true) and are then left out of staleness tracking, as in
 *   Prometheus. A series that was in the target's previous scrape and is missing from this one
 *   gets a stale marker at `t`; `markStale(target, t)` does it for every series of a target
 *   (scrape failed, target gone). After a stale marker an instant lookup finds nothing until the
 *   series has a newer sample; selections leave stale markers out.
 * - Every scrape is also logged per target, as Prometheus's `up` series: 1 at `t` for an appended scrape, 0 at
 *   the time of `markStale` (`scrapes(target)`, kept as long as samples are). A recording of the history
 *   writes the log as `up`, `recordScrapes` reads it back, and `appendSamples` with the target's scrape
 *   times puts the stale markers back on replay.
 * - Per series, samples are kept in time order; an older sample is dropped and counted as
 *   out-of-order, one with the newest timestamp and another value as a duplicate, an identical
 *   repeat is ignored. A scrape older than the target's previous one is rejected whole.
 * - Retention: samples older than the series' newest point minus `retentionMs` go, and at most
 *   `maxSamplesPerSeries` are kept. A series with nothing left is forgotten.
 * - The store offers selection only (series-selection.ts); range functions are applied by src/promql.
 *   Queries see series in Prometheus's storage order (sorted by label set, `__name__` included),
 *   so sums add in the same order as Prometheus's.
 * - Selection windows `[startMs, endMs]` include both ends, so a range window `[t - w, t]` is as in
 *   Prometheus 2.x (Prometheus 3 made the start exclusive). Instant lookups take the newest sample in
 *   `[t - lookbackDeltaMs, t]` unless a newer stale marker hides it.
 * - `SeriesView` arrays are views into the store: valid until the next append; copy to keep.
 * - `changes()` makes a reader of the earliest sample time written since it last asked (change-watermarks.ts),
 *   for callers that keep what they computed from older data.
 * - Held limits (held-limits.ts): `append` and `appendInChunks` given `held` bound the series and work queues the
 *   target, and every target together, hold over time: the target's stale series are evicted first, oldest first,
 *   and a page that would not fit even then is refused whole (`HeldLimitError`, nothing stored or evicted).
 * - `heldSeries` and `restoreSeries` carry a target's series out and back in under the keys they were scraped
 *   with (a history saved across restarts, state-file.ts), so that the scrapes after a restart continue them.
 *
 * Per-target bookkeeping is in target-state.ts, how a series' key as scraped is held (mostly not as a string) in
 * page-key.ts, the shared strings in string-table.ts, the sliced appends' scheduling in event-loop-slices.ts.
 */
import {
  keyLabels,
  keyMetricName,
  type LabelMatcher,
  type Labels,
  makeLabels,
  seriesKey,
  setLabel,
} from '../exposition/labels.js';
import type { ParsedPage } from '../exposition/parsed-page.js';
import { detachString } from '../exposition/series-table.js';
import { DEFAULT_RETENTION_MS, DEFAULT_SCRAPE_INTERVAL_MS } from '../scrape/scrape-settings.js';
import { type AppendCounts, type AppendReport, countAppend, newAppendCounts } from './append-report.js';
import { type ChangeReader, ChangeWatermarks } from './change-watermarks.js';
import { eachInSlices, rangeInSlices, type Slicing } from './event-loop-slices.js';
import { type HeldLimits, type HeldPlan, type HistoryTotals, planHeldLimits, queuesHeld } from './held-limits.js';
import { isPageSeries, keptPageKey, pageKeyOf } from './page-key.js';
import { type BufferSpace, SeriesBuffer } from './series-buffer.js';
import {
  hasSampleIn,
  type InstantSample,
  instantSample,
  labelsWithName,
  MergedNameLists,
  type SeriesQueries,
  type SeriesSelector,
  type SeriesView,
  selectorOf,
  selectSeries,
  seriesView,
  WindowPoints,
} from './series-selection.js';
import { StringTable } from './string-table.js';
import { applyTargetLabels } from './target-labels.js';
import { pageKeyHash, type SeriesRecord, TargetState } from './target-state.js';
import { WordArena } from './word-arena.js';

export type { Eviction, HeldLimitName, HeldLimits, QueueKeying } from './held-limits.js';
export { HeldLimitError } from './held-limits.js';
export type { AppendReport, InstantSample, SeriesQueries, SeriesSelector, SeriesView };

/** Options of one scrape's append. */
export interface AppendOptions {
  /** Bounds on what the target and the history hold over time (held-limits.ts); unset: none. */
  readonly held?: HeldLimits;
}

export { DEFAULT_RETENTION_MS, DEFAULT_SCRAPE_INTERVAL_MS };
/** 30 minutes at 15 s, both ends included. */
export const DEFAULT_MAX_SAMPLES_PER_SERIES = DEFAULT_RETENTION_MS / DEFAULT_SCRAPE_INTERVAL_MS + 1;
export const DEFAULT_LOOKBACK_DELTA_MS = 5 * 60_000;

export interface HistoryOptions {
  /** Default 30 minutes; `Infinity` keeps everything. */
  readonly retentionMs?: number;
  /** Default 121 (30 minutes at 15 s); `Infinity` for no limit. */
  readonly maxSamplesPerSeries?: number;
  /** Instant-selector lookback; default 5 minutes, as Prometheus. */
  readonly lookbackDeltaMs?: number;
  /** Use timestamps the page gives; default true, as Prometheus's `honor_timestamps`. */
  readonly honorTimestamps?: boolean;
}

export interface ScrapeTarget {
  /** Stable identity, e.g. the scrape URL or `job/instance`. */
  readonly id: string;
  /** Attached to every series of the target; empty values are ignored. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** A series as a target holds it: its key as scraped (before target labels) and its final labels. */
export interface HeldSeries {
  readonly key: string;
  /** Target labels included, without `__name__`. */
  readonly labels: Labels;
}

export interface HeldSeriesView extends HeldSeries {
  readonly t: Float64Array;
  readonly v: Float64Array;
}

export interface TargetInfo {
  readonly id: string;
  readonly labels: Labels;
  readonly series: number;
  /** Oldest and newest sample time held, `undefined` when the target holds none. */
  readonly firstMs: number | undefined;
  readonly lastMs: number | undefined;
  /**
   * Oldest sample time held of the series stamped with their scrape's time (not with timestamps of their own):
   * since when the target has been scraped, as far as the history holds. `undefined` when it holds none.
   */
  readonly firstScrapedMs: number | undefined;
  /** Time of the last `append`, `undefined` when samples only came through `appendSamples`. */
  readonly lastScrapeMs: number | undefined;
}

export class History {
  readonly retentionMs: number;
  readonly maxSamplesPerSeries: number;
  readonly lookbackDeltaMs: number;
  readonly honorTimestamps: boolean;
  readonly #targets = new Map<string, TargetState>();
  /** The buffers' limits and the arena of their words (given back when a series or target is forgotten). */
  readonly #bufferSpace: BufferSpace;
  readonly #strings = new StringTable();
  readonly #watermarks = new ChangeWatermarks();
  /** Every target's series by metric, in storage order; reset whenever a series comes or goes. */
  readonly #merged = new MergedNameLists();
  #seriesCount = 0;
  /** The `serial` of the next new series. */
  #nextSerial = 0;

  constructor(options: HistoryOptions = {}) {
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.maxSamplesPerSeries = options.maxSamplesPerSeries ?? DEFAULT_MAX_SAMPLES_PER_SERIES;
    this.lookbackDeltaMs = options.lookbackDeltaMs ?? DEFAULT_LOOKBACK_DELTA_MS;
    this.honorTimestamps = options.honorTimestamps ?? true;
    if (!(this.maxSamplesPerSeries >= 2)) throw new RangeError('maxSamplesPerSeries must be at least 2');
    if (!(this.retentionMs > 0)) throw new RangeError('retentionMs must be positive');
    this.#bufferSpace = { maxSamples: this.maxSamplesPerSeries, retentionMs: this.retentionMs, arena: new WordArena() };
  }

  /** A reader of the earliest sample time written from now on (see change-watermarks.ts). */
  changes(): ChangeReader {
    return this.#watermarks.reader();
  }

  // ---- writing --------------------------------------------------------------------------------

  /** Adds one scrape of `target` taken at `scrapeTimeMs` (see the module contract). */
  append(target: ScrapeTarget, page: ParsedPage, scrapeTimeMs: number, options: AppendOptions = {}): AppendReport {
    const st = this.#target(target);
    const counts = newAppendCounts();
    if (this.#outOfOrder(st, page, scrapeTimeMs, counts)) return counts;
    const map = new Array<SeriesRecord | undefined>(page.series.count);
    const plan = options.held === undefined ? undefined : this.#classifyAndPlan(st, page, map, options.held);
    this.#beginScrape(st, scrapeTimeMs);
    if (plan !== undefined) this.#evict(plan, counts);
    this.#appendRange(st, page, scrapeTimeMs, map, plan !== undefined, 0, page.samples.count, counts);
    st.lastHashes = page.series.hashes;
    st.lastRecs = map;
    this.#finishScrape(st, scrapeTimeMs, counts);
    return counts;
  }

  /**
   * `append` in slices, yielding to the event loop (setImmediate) between them so that a large page
   * does not stall a server: slices of `chunkSize` samples when given, otherwise slices of about
   * `sliceMs` milliseconds (default 1). Appends to one target run one at a time, in call order.
   * Queries made meanwhile see part of the scrape.
   */
  appendInChunks(
    target: ScrapeTarget,
    page: ParsedPage,
    scrapeTimeMs: number,
    options: AppendOptions & { readonly chunkSize?: number; readonly sliceMs?: number } = {},
  ): Promise<AppendReport> {
    const st = this.#target(target);
    const slicing: Slicing = {
      chunkSize: options.chunkSize !== undefined ? Math.max(1, options.chunkSize) : undefined,
      sliceMs: options.sliceMs ?? 1,
    };
    const held = options.held;
    const run = async (): Promise<AppendReport> => {
      const counts = newAppendCounts();
      if (this.#outOfOrder(st, page, scrapeTimeMs, counts)) return counts;
      const map = new Array<SeriesRecord | undefined>(page.series.count);
      let plan: HeldPlan | undefined;
      if (held !== undefined) {
        await rangeInSlices(page.series.count, (from, to) => this.#classify(st, page, map, from, to), slicing);
        plan = planHeldLimits(st, page, map, held, this.#totals(held));
      }
      this.#beginScrape(st, scrapeTimeMs);
      if (plan !== undefined) this.#evict(plan, counts);
      const classified = plan !== undefined;
      await rangeInSlices(
        page.samples.count,
        (from, to) => this.#appendRange(st, page, scrapeTimeMs, map, classified, from, to, counts),
        slicing,
      );
      st.lastHashes = page.series.hashes;
      st.lastRecs = map;
      // Stale markers and expiry, walking the target's series in slices too.
      await eachInSlices(st.liveSeries(), (rec) => this.#finishOne(st, rec, scrapeTimeMs, counts), slicing);
      this.#afterScrape();
      return counts;
    };
    const result = st.queue.then(run, run);
    st.queue = result.catch(() => undefined);
    return result;
  }

  /**
   * Adds samples of one series with their own times (a recording). `labels` are final: the
   * target's labels are not applied. Times must ascend; others are counted as out-of-order.
   * Without `scrapeTimes`, no staleness tracking. With the target's scrape times (ascending; a recording's
   * `up` samples), the series is tracked as a scraped one: a stale marker at every scrape after its first
   * sample that has no sample of it, as the live history marked a series that left with a scrape.
   */
  appendSamples(
    target: ScrapeTarget,
    name: string,
    labels: Labels,
    times: ArrayLike<number>,
    values: ArrayLike<number>,
    scrapeTimes?: ArrayLike<number>,
  ): AppendReport {
    const st = this.#target(target);
    const counts = newAppendCounts();
    const key = seriesKey(name, labels);
    let rec = st.findByKey(key);
    if (rec === undefined) {
      rec = this.#newSeries(st, key, name, makeLabels(Object.entries(labels)), Math.min(times.length, 1024));
      counts.newSeries++;
    }
    rec.explicitTs = scrapeTimes === undefined;
    if (times.length > 0) this.#watermarks.written(Math.min(times[0] as number, times[times.length - 1] as number));
    let scrape = 0;
    for (let i = 0; i < times.length; i++) {
      const t = times[i] as number;
      // Scrapes between the previous sample and this one that left the series out: stale from the first.
      while (scrapeTimes !== undefined && scrape < scrapeTimes.length && (scrapeTimes[scrape] as number) <= t) {
        const at = scrapeTimes[scrape++] as number;
        if (at < t && rec.buf.markStale(at)) counts.staleMarked++;
      }
      countAppend(rec.buf.append(t, values[i] as number), counts);
    }
    if (scrapeTimes !== undefined && times.length > 0) {
      for (; scrape < scrapeTimes.length; scrape++) {
        if (rec.buf.markStale(scrapeTimes[scrape] as number)) counts.staleMarked++;
      }
    }
    return counts;
  }

  /**
   * Puts back a series `heldSeries` gave (a saved history read at start): `key` and `labels` as held, times
   * ascending (others are counted as out-of-order). The series is the one a later scrape of the target with
   * that key continues, staleness tracking included; the target's scrape time is left as it was.
   */
  restoreSeries(
    target: ScrapeTarget,
    series: HeldSeries,
    times: ArrayLike<number>,
    values: ArrayLike<number>,
  ): AppendReport {
    const st = this.#target(target);
    const counts = newAppendCounts();
    let rec = st.findByKey(series.key);
    if (rec === undefined) {
      const labels = makeLabels(Object.entries(series.labels));
      rec = this.#newSeries(st, series.key, keyMetricName(series.key), labels, Math.min(times.length, 1024));
      counts.newSeries++;
    }
    if (times.length > 0) this.#watermarks.written(times[0] as number);
    for (let i = 0; i < times.length; i++) countAppend(rec.buf.append(times[i] as number, values[i] as number), counts);
    return counts;
  }

  /**
   * Logs scrapes of a target read from elsewhere (a recording's `up`): times ascending, 1 for a scrape, 0 for
   * a failure. Times not after the newest logged one are ignored.
   */
  recordScrapes(target: ScrapeTarget, times: ArrayLike<number>, up: ArrayLike<number>): void {
    const st = this.#target(target);
    for (let i = 0; i < times.length; i++) st.scrapes.append(times[i] as number, up[i] as number);
  }

  /** A target's scrape log, oldest first: times and `up` (1 scraped, 0 failed); empty for an unknown target. */
  scrapes(targetId: string): { readonly times: Float64Array; readonly up: Float64Array } {
    const buf = this.#targets.get(targetId)?.scrapes;
    if (buf === undefined) return { times: new Float64Array(0), up: new Float64Array(0) };
    const { t, v } = buf.views(buf.start, buf.end);
    return { times: t.slice(), up: v.slice() };
  }

  /** Puts a stale marker on every live series of a target (its scrape failed or it went away). Returns how many. */
  markStale(targetId: string, atMs: number): number {
    const st = this.#targets.get(targetId);
    if (st === undefined) return 0;
    let marked = 0;
    for (const rec of st.liveSeries()) {
      if (!rec.explicitTs && rec.buf.markStale(atMs)) marked++;
    }
    st.epoch++;
    if (atMs > st.lastScrapeMs) st.lastScrapeMs = atMs;
    st.scrapes.append(atMs, 0);
    if (marked > 0) this.#watermarks.written(atMs);
    return marked;
  }

  removeTarget(targetId: string): boolean {
    const st = this.#targets.get(targetId);
    if (st === undefined) return false;
    this.#seriesCount -= st.seriesCount;
    this.#watermarks.everything();
    this.#merged.changed();
    this.#targets.delete(targetId);
    // After the appends to the target still running (appendInChunks), which would otherwise write to buffers
    // given back.
    const release = (): void => {
      for (const rec of st.liveSeries()) rec.buf.release();
      st.scrapes.release();
    };
    st.queue = st.queue.then(release, release);
    return true;
  }

  /** Drops samples older than `nowMs - retentionMs` everywhere, and series left empty. */
  prune(nowMs: number): void {
    for (const st of this.#targets.values()) {
      for (const rec of [...st.liveSeries()]) {
        rec.buf.expire(nowMs);
        if (rec.buf.isEmpty()) this.#forget(rec);
      }
    }
    this.#compactStrings();
  }

  // ---- reading --------------------------------------------------------------------------------

  targets(): TargetInfo[] {
    const out: TargetInfo[] = [];
    for (const st of this.#targets.values()) {
      let first = Number.POSITIVE_INFINITY;
      let firstScraped = Number.POSITIVE_INFINITY;
      let last = Number.NEGATIVE_INFINITY;
      for (const rec of st.liveSeries()) {
        const b = rec.buf;
        if (b.end > b.start) {
          first = Math.min(first, b.time(b.start));
          if (!rec.explicitTs) firstScraped = Math.min(firstScraped, b.time(b.start));
          last = Math.max(last, b.time(b.end - 1));
        }
      }
      out.push({
        id: st.id,
        labels: st.labels,
        series: st.seriesCount,
        firstMs: Number.isFinite(first) ? first : undefined,
        lastMs: Number.isFinite(last) ? last : undefined,
        firstScrapedMs: Number.isFinite(firstScraped) ? firstScraped : undefined,
        lastScrapeMs: Number.isFinite(st.lastScrapeMs) ? st.lastScrapeMs : undefined,
      });
    }
    return out;
  }

  /** Names of the metrics a target (or every target) holds, sorted. */
  metricNames(targetId?: string): string[] {
    const names = new Set<string>();
    for (const st of this.#targetsOf(targetId)) for (const n of st.byName.keys()) names.add(n);
    return [...names].sort();
  }

  /**
   * Series matching the selector, with their samples in `[startMs, endMs]` (default: all held),
   * stale markers excluded, in storage order. Series with no sample in the window are included
   * with empty arrays.
   */
  select(selector: SeriesSelector, startMs = Number.NEGATIVE_INFINITY, endMs = Number.POSITIVE_INFINITY): SeriesView[] {
    return this.#selectRecs(selector).map((rec) => seriesView(rec, startMs, endMs));
  }

  /**
   * What `select` gives, as the evaluator reads it: labels and samples of one series at a time, in arrays reused
   * from one series to the next (valid until the iteration moves on), so a selection allocates no arrays per series.
   */
  selectWindows(selector: SeriesSelector, startMs: number, endMs: number): WindowPoints {
    return new WindowPoints(this.#selectRecs(selector), startMs, endMs);
  }

  /**
   * Label sets (with `__name__`) of the series of `metric` holding a sample in `[startMs, endMs]`; each series'
   * set is the same object every time, so what callers derive from it can be remembered.
   */
  seriesLabels(metric: string, startMs: number, endMs: number): Labels[] {
    return this.#selectRecs({ metric })
      .filter((rec) => hasSampleIn(rec, startMs, endMs))
      .map(labelsWithName);
  }

  /**
   * An instant selector at `atMs`: per series, the newest sample in `[atMs - lookback, atMs]`
   * unless a stale marker came after it. Labels include `__name__`.
   */
  instant(metric: string, matchers: readonly LabelMatcher[], atMs: number, targetId?: string): InstantSample[] {
    const out: InstantSample[] = [];
    for (const rec of this.#selectRecs(selectorOf(metric, matchers, targetId))) {
      const sample = instantSample(rec, atMs, this.lookbackDeltaMs);
      if (sample !== undefined) out.push(sample);
    }
    return out;
  }

  /**
   * The series of one metric a target holds, with the key each was scraped under (what `restoreSeries` takes
   * back) and its samples (stale markers left out) as views, valid until the next append: copy to keep.
   */
  heldSeries(targetId: string, metric: string): HeldSeriesView[] {
    return this.#selectRecs({ metric, target: targetId }).map((rec) => {
      const b = rec.buf;
      const { t, v } = b.views(b.start, b.end);
      return { key: pageKeyOf(rec), labels: rec.labels, t, v };
    });
  }

  /** The queries restricted to one target. */
  forTarget(targetId: string): SeriesQueries {
    return {
      instant: (metric, matchers, atMs) => this.instant(metric, matchers, atMs, targetId),
      select: (metric, matchers, startMs, endMs) => this.select(selectorOf(metric, matchers, targetId), startMs, endMs),
    };
  }

  stats(): { targets: number; series: number; samples: number; bytes: number } {
    let samples = 0;
    let bytes = 0;
    for (const st of this.#targets.values()) {
      for (const rec of st.liveSeries()) {
        samples += rec.buf.length;
        bytes += rec.buf.bytes();
      }
    }
    return { targets: this.#targets.size, series: this.#seriesCount, samples, bytes };
  }

  // ---- internals ------------------------------------------------------------------------------

  *#targetsOf(targetId: string | undefined): Iterable<TargetState> {
    if (targetId === undefined) {
      yield* this.#targets.values();
    } else {
      const st = this.#targets.get(targetId);
      if (st !== undefined) yield st;
    }
  }

  #selectRecs(selector: SeriesSelector): readonly SeriesRecord[] {
    return selectSeries(
      this.#targetsOf(selector.target),
      selector,
      selector.target === undefined && this.#targets.size > 1 ? this.#merged : undefined,
    );
  }

  #target(target: ScrapeTarget): TargetState {
    let st = this.#targets.get(target.id);
    const labels = makeLabels(
      Object.entries(target.labels ?? {}).map(([k, v]) => [this.#strings.intern(k), this.#strings.intern(v)]),
    );
    if (st === undefined) {
      st = new TargetState(detachString(target.id), labels, new SeriesBuffer(this.#bufferSpace));
      this.#targets.set(st.id, st);
    } else if (seriesKey('', st.labels) !== seriesKey('', labels)) {
      throw new Error(`target ${JSON.stringify(target.id)} was first seen with other labels`);
    }
    return st;
  }

  /** A scrape not after the target's previous one is rejected whole: every sample counted out of order. */
  #outOfOrder(st: TargetState, page: ParsedPage, timeMs: number, counts: AppendCounts): boolean {
    if (timeMs > st.lastScrapeMs) return false;
    counts.outOfOrder = page.samples.count;
    return true;
  }

  #beginScrape(st: TargetState, timeMs: number): void {
    st.lastScrapeMs = timeMs;
    st.epoch++;
    // Samples without a timestamp and stale markers are written at the scrape's time.
    this.#watermarks.written(timeMs);
    st.scrapes.append(timeMs, 1);
  }

  /** The target's live series with the key of page series `id`: the previous scrape's at that id first. */
  #lookup(st: TargetState, page: ParsedPage, id: number): SeriesRecord | undefined {
    const guess =
      st.lastHashes !== undefined && st.lastHashes[id] === page.series.hashes[id] ? st.lastRecs[id] : undefined;
    return guess !== undefined && !guess.dead && isPageSeries(guess, page.series, id) ? guess : st.findInPage(page, id);
  }

  /** Fills `map` with the live series of page series `[from, to)` (undefined for the new ones). */
  #classify(st: TargetState, page: ParsedPage, map: (SeriesRecord | undefined)[], from: number, to: number): void {
    for (let id = from; id < to; id++) map[id] = this.#lookup(st, page, id);
  }

  #classifyAndPlan(st: TargetState, page: ParsedPage, map: (SeriesRecord | undefined)[], held: HeldLimits): HeldPlan {
    this.#classify(st, page, map, 0, page.series.count);
    return planHeldLimits(st, page, map, held, this.#totals(held));
  }

  /** Every target's series, and (counted when asked) queues. */
  #totals(held: HeldLimits): HistoryTotals {
    return {
      series: this.#seriesCount,
      queues: () => {
        let queues = 0;
        for (const st of this.#targets.values()) queues += queuesHeld(st, held.queues).size;
        return queues;
      },
    };
  }

  /** Forgets the series a plan evicts; what evaluations computed from their samples no longer holds. */
  #evict(plan: HeldPlan, counts: AppendCounts): void {
    if (plan.eviction === undefined) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const rec of plan.evict) {
      if (rec.buf.end > rec.buf.start) earliest = Math.min(earliest, rec.buf.time(rec.buf.start));
      this.#forget(rec);
    }
    if (earliest < Number.POSITIVE_INFINITY) this.#watermarks.written(earliest);
    counts.eviction = plan.eviction;
  }

  #appendRange(
    st: TargetState,
    page: ParsedPage,
    scrapeTimeMs: number,
    map: (SeriesRecord | undefined)[],
    classified: boolean,
    from: number,
    to: number,
    counts: AppendCounts,
  ): void {
    const { series, values, timestamps } = page.samples;
    const epoch = st.epoch;
    const honor = this.honorTimestamps;
    let earliestExplicit = Number.POSITIVE_INFINITY;
    for (let i = from; i < to; i++) {
      const id = series[i] as number;
      let rec = map[id];
      if (rec === undefined) {
        // Classified: the page series is new (a series evicted meanwhile was not on the page).
        if (!classified) rec = this.#lookup(st, page, id);
        if (rec === undefined) {
          const key = page.series.key(id);
          rec = this.#newSeries(st, key, keyMetricName(key), applyTargetLabels(keyLabels(key), st.labels));
          counts.newSeries++;
        }
        map[id] = rec;
      }
      const ts = timestamps[i] as number;
      const explicit = honor && !Number.isNaN(ts);
      rec.explicitTs = explicit;
      rec.seenEpoch = epoch;
      if (explicit && ts < earliestExplicit) earliestExplicit = ts;
      countAppend(rec.buf.append(explicit ? ts : scrapeTimeMs, values[i] as number), counts);
    }
    if (earliestExplicit < scrapeTimeMs) this.#watermarks.written(earliestExplicit);
  }

  #finishScrape(st: TargetState, timeMs: number, counts: AppendCounts): void {
    for (const rec of st.liveSeries()) this.#finishOne(st, rec, timeMs, counts);
    this.#afterScrape();
  }

  /**
   * After a scrape: a stale marker if the series left with it, expiry if it was not in it.
   * (Forgetting the series being visited while iterating `liveSeries()` is safe; see target-state.ts.)
   */
  #finishOne(st: TargetState, rec: SeriesRecord, timeMs: number, counts: AppendCounts): void {
    if (rec.seenEpoch === st.epoch) return;
    if (rec.seenEpoch === st.epoch - 1 && !rec.explicitTs && rec.buf.markStale(timeMs)) counts.staleMarked++;
    rec.buf.expire(timeMs);
    if (rec.buf.isEmpty()) this.#forget(rec);
  }

  #afterScrape(): void {
    if (this.#strings.size > 4 * this.#seriesCount + 4096) this.#compactStrings();
  }

  /** A new series; `labels` (final: target labels applied) must be in canonical order. */
  #newSeries(st: TargetState, key: string, name: string, labels: Labels, initialCapacity?: number): SeriesRecord {
    const internedName = this.#strings.intern(name);
    const finalLabels: Record<string, string> = {};
    for (const k of Object.keys(labels))
      setLabel(finalLabels, this.#strings.intern(k), this.#strings.intern(labels[k] as string));
    const kept = keptPageKey(key, internedName, finalLabels, st.labels);
    const rec: SeriesRecord = {
      target: st,
      name: internedName,
      labels: finalLabels,
      keptPageKey: kept === undefined ? undefined : detachString(kept),
      hash: pageKeyHash(key),
      buf: new SeriesBuffer(this.#bufferSpace, initialCapacity),
      withName: undefined,
      seenEpoch: -1,
      explicitTs: false,
      dead: false,
      queueKey: undefined,
      serial: this.#nextSerial++,
    };
    st.add(rec);
    this.#seriesCount++;
    this.#merged.changed();
    return rec;
  }

  /** Forgets a live series and gives its buffer's words back. */
  #forget(rec: SeriesRecord): void {
    if (rec.target.remove(rec)) {
      this.#seriesCount--;
      rec.buf.release();
    }
    this.#merged.changed();
  }

  /** Rebuilds the string table from live series so that strings of forgotten series can be collected. */
  #compactStrings(): void {
    this.#strings.rebuild((keep) => {
      for (const st of this.#targets.values()) {
        for (const [k, v] of Object.entries(st.labels)) {
          keep(k);
          keep(v);
        }
        for (const rec of st.liveSeries()) {
          keep(rec.name);
          for (const k of Object.keys(rec.labels)) {
            keep(k);
            keep(rec.labels[k] as string);
          }
        }
      }
    });
  }
}
