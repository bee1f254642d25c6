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
 *   series has a newer sample; range functions skip stale markers.
 * - Per series, samples are kept in time order; an older sample is dropped and counted as
 *   out-of-order, one with the newest timestamp and another value as a duplicate, an identical
 *   repeat is ignored. A scrape older than the target's previous one is rejected whole.
 * - Retention: samples older than the series' newest point minus `retentionMs` go, and at most
 *   `maxSamplesPerSeries` are kept. A series with nothing left is forgotten.
 * - Queries see series in Prometheus's storage order (sorted by label set, `__name__` included),
 *   so sums add in the same order as Prometheus's.
 * - Range windows are `[t - w, t]`, both ends inclusive, as in Prometheus 2.x (Prometheus 3 made
 *   the start exclusive). Instant lookups take the newest sample in `[t - lookbackDeltaMs, t]`
 *   unless a newer stale marker hides it.
 * - `SeriesView` arrays are views into the store: valid until the next append; copy to keep.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import {
  compileMatchers,
  keyLabels,
  keyMetricName,
  type LabelMatcher,
  type Labels,
  makeLabels,
  seriesKey,
  setLabel,
} from '../exposition/labels.js';
import type { ParsedPage } from '../exposition/parsed-page.js';
import { hashRange } from '../exposition/series-index.js';
import { detachString } from '../exposition/series-table.js';
import { LABEL } from '../metrics/names.js';
import {
  type Points,
  type RangeFunctionName,
  type RangeResult,
  rangeOverSeries,
  type VectorSample,
} from '../promql/functions.js';
import { AppendOutcome, SeriesBuffer } from './series-buffer.js';
import { applyTargetLabels } from './target-labels.js';

export const DEFAULT_RETENTION_MS = 30 * 60_000;
/** Prometheus's default scrape interval: the scraper's, the simulator's recordings' and the store's sizing default. */
export const DEFAULT_SCRAPE_INTERVAL_MS = 15_000;
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

export interface AppendReport {
  readonly appended: number;
  readonly outOfOrder: number;
  readonly duplicates: number;
  readonly newSeries: number;
  readonly staleMarked: number;
}

export interface TargetInfo {
  readonly id: string;
  readonly labels: Labels;
  readonly series: number;
  /** Oldest and newest sample time held, `undefined` when the target holds none. */
  readonly firstMs: number | undefined;
  readonly lastMs: number | undefined;
  /** Time of the last `append`, `undefined` when samples only came through `appendSamples`. */
  readonly lastScrapeMs: number | undefined;
}

export interface SeriesSelector {
  readonly metric: string;
  readonly matchers?: readonly LabelMatcher[];
  /** Restrict to one target id. */
  readonly target?: string;
}

export interface SeriesView extends Points {
  readonly target: string;
  readonly name: string;
  /** Final labels (target labels included), without `__name__`. */
  readonly labels: Labels;
  readonly t: Float64Array;
  readonly v: Float64Array;
}

/** An instant-vector sample from `instant`: labels include `__name__`; `timestampMs` is the sample's own time. */
export interface InstantSample extends VectorSample {
  readonly timestampMs: number;
}

export type { RangeResult };

/**
 * The queries of one target (`forTarget`), in the shape the PromQL evaluator reads (structurally its
 * `SeriesStore`): instant lookups and series selection. Range functions are applied by the evaluator.
 */
export interface SeriesQueries {
  instant(metric: string, matchers: readonly LabelMatcher[], atMs: number): InstantSample[];
  /** The selected series with their samples in `[startMs, endMs]`; see `History.select`. */
  select(metric: string, matchers: readonly LabelMatcher[], startMs: number, endMs: number): SeriesView[];
}

interface SeriesRec {
  readonly target: TargetState;
  readonly name: string;
  readonly labels: Labels;
  /** See `sortKeyOf`; made when first needed. */
  sortKey: string | undefined;
  /** Series key as scraped (before target labels) and its `hashRange`. */
  readonly pageKey: string;
  readonly hash: number;
  readonly buf: SeriesBuffer;
  withName: Labels | undefined;
  /** Epoch of the last scrape that contained this series; -1 when never scraped. */
  seenEpoch: number;
  /** The series' samples carry their own timestamps: no staleness tracking. */
  explicitTs: boolean;
  /** Forgotten (its name list drops it when next queried). */
  dead: boolean;
}

/** The series of one metric name in one target; sorted and compacted when queried. */
interface NameList {
  recs: SeriesRec[];
  /** `recs` is in storage order. */
  sorted: boolean;
  /** Forgotten series still in `recs`. */
  dead: number;
}

class TargetState {
  readonly id: string;
  readonly labels: Labels;
  /** Every live series. */
  readonly series = new Set<SeriesRec>();
  /** Live series by the hash of their page key (a list on collision). */
  readonly byHash = new Map<number, SeriesRec | SeriesRec[]>();
  readonly byName = new Map<string, NameList>();
  epoch = 0;
  lastScrapeMs = Number.NEGATIVE_INFINITY;
  /**
   * Series of the previous scrape by page series id, with their key hashes: a target's pages
   * usually list the same series in the same order, so this is the first guess for each one.
   */
  lastHashes: Int32Array | undefined;
  lastRecs: (SeriesRec | undefined)[] = [];
  queue: Promise<unknown> = Promise.resolve();

  constructor(id: string, labels: Labels) {
    this.id = id;
    this.labels = labels;
  }
}

interface Counts {
  appended: number;
  outOfOrder: number;
  duplicates: number;
  newSeries: number;
  staleMarked: number;
}

export class History {
  readonly retentionMs: number;
  readonly maxSamplesPerSeries: number;
  readonly lookbackDeltaMs: number;
  readonly honorTimestamps: boolean;
  readonly #targets = new Map<string, TargetState>();
  readonly #limits: { readonly maxSamples: number; readonly retentionMs: number };
  readonly #strings = new Map<string, string>();
  #seriesCount = 0;

  constructor(options: HistoryOptions = {}) {
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.maxSamplesPerSeries = options.maxSamplesPerSeries ?? DEFAULT_MAX_SAMPLES_PER_SERIES;
    this.lookbackDeltaMs = options.lookbackDeltaMs ?? DEFAULT_LOOKBACK_DELTA_MS;
    this.honorTimestamps = options.honorTimestamps ?? true;
    if (!(this.maxSamplesPerSeries >= 2)) throw new RangeError('maxSamplesPerSeries must be at least 2');
    if (!(this.retentionMs > 0)) throw new RangeError('retentionMs must be positive');
    this.#limits = { maxSamples: this.maxSamplesPerSeries, retentionMs: this.retentionMs };
  }

  // ---- writing --------------------------------------------------------------------------------

  /** Adds one scrape of `target` taken at `scrapeTimeMs` (see the module contract). */
  append(target: ScrapeTarget, page: ParsedPage, scrapeTimeMs: number): AppendReport {
    const st = this.#target(target);
    const counts = newCounts();
    if (!this.#beginScrape(st, page, scrapeTimeMs, counts)) return counts;
    const map = new Array<SeriesRec | undefined>(page.series.count);
    this.#appendRange(st, page, scrapeTimeMs, map, 0, page.samples.count, counts);
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
    options: { readonly chunkSize?: number; readonly sliceMs?: number } = {},
  ): Promise<AppendReport> {
    const st = this.#target(target);
    const fixed = options.chunkSize !== undefined ? Math.max(1, options.chunkSize) : undefined;
    const sliceMs = options.sliceMs ?? 1;
    /** Runs `step(from, to)` over `[0, n)` in slices; yields between slices. */
    const sliced = async (n: number, step: (from: number, to: number) => void): Promise<void> => {
      let from = 0;
      while (from < n) {
        if (fixed !== undefined) {
          const to = Math.min(n, from + fixed);
          step(from, to);
          from = to;
        } else {
          const started = performance.now();
          do {
            const to = Math.min(n, from + 256);
            step(from, to);
            from = to;
          } while (from < n && performance.now() - started < sliceMs);
        }
        if (from < n) await yieldToEventLoop();
      }
    };
    const run = async (): Promise<AppendReport> => {
      const counts = newCounts();
      if (!this.#beginScrape(st, page, scrapeTimeMs, counts)) return counts;
      const map = new Array<SeriesRec | undefined>(page.series.count);
      await sliced(page.samples.count, (from, to) => this.#appendRange(st, page, scrapeTimeMs, map, from, to, counts));
      st.lastHashes = page.series.hashes;
      st.lastRecs = map;
      // Stale markers and expiry, walking the target's series in slices too.
      const it = st.series.values();
      for (let done = false; !done; ) {
        await yieldToEventLoop();
        const started = performance.now();
        for (let k = 1; ; k++) {
          const next = it.next();
          if (next.done === true) {
            done = true;
            break;
          }
          this.#finishOne(st, next.value, scrapeTimeMs, counts);
          if ((k & 255) === 0 && (fixed !== undefined ? k >= fixed : performance.now() - started >= sliceMs)) break;
        }
      }
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
   * No staleness tracking.
   */
  appendSamples(
    target: ScrapeTarget,
    name: string,
    labels: Labels,
    times: ArrayLike<number>,
    values: ArrayLike<number>,
  ): AppendReport {
    const st = this.#target(target);
    const counts = newCounts();
    const key = seriesKey(name, labels);
    let rec = findByKey(st, key);
    if (rec === undefined) {
      rec = this.#newSeries(st, key, name, makeLabels(Object.entries(labels)), Math.min(times.length, 1024));
      counts.newSeries++;
    }
    rec.explicitTs = true;
    for (let i = 0; i < times.length; i++) count(rec.buf.append(times[i] as number, values[i] as number), counts);
    return counts;
  }

  /** Puts a stale marker on every live series of a target (its scrape failed or it went away). Returns how many. */
  markStale(targetId: string, atMs: number): number {
    const st = this.#targets.get(targetId);
    if (st === undefined) return 0;
    let marked = 0;
    for (const rec of st.series) {
      if (!rec.explicitTs && rec.buf.markStale(atMs)) marked++;
    }
    st.epoch++;
    if (atMs > st.lastScrapeMs) st.lastScrapeMs = atMs;
    return marked;
  }

  removeTarget(targetId: string): boolean {
    const st = this.#targets.get(targetId);
    if (st === undefined) return false;
    this.#seriesCount -= st.series.size;
    return this.#targets.delete(targetId);
  }

  /** Drops samples older than `nowMs - retentionMs` everywhere, and series left empty. */
  prune(nowMs: number): void {
    for (const st of this.#targets.values()) {
      for (const rec of [...st.series]) {
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
      let last = Number.NEGATIVE_INFINITY;
      for (const rec of st.series) {
        const b = rec.buf;
        if (b.end > b.start) {
          first = Math.min(first, b.time(b.start));
          last = Math.max(last, b.time(b.end - 1));
        }
      }
      out.push({
        id: st.id,
        labels: st.labels,
        series: st.series.size,
        firstMs: Number.isFinite(first) ? first : undefined,
        lastMs: Number.isFinite(last) ? last : undefined,
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
    return this.#selectRecs(selector).map((rec) => {
      const b = rec.buf;
      const { t, v } = b.views(b.lowerBound(startMs), b.upperBound(endMs));
      return { target: rec.target.id, name: rec.name, labels: rec.labels, t, v };
    });
  }

  /**
   * An instant selector at `atMs`: per series, the newest sample in `[atMs - lookback, atMs]`
   * unless a stale marker came after it. Labels include `__name__`.
   */
  instant(metric: string, matchers: readonly LabelMatcher[], atMs: number, targetId?: string): InstantSample[] {
    const out: InstantSample[] = [];
    for (const rec of this.#selectRecs(selectorOf(metric, matchers, targetId))) {
      const b = rec.buf;
      const j = b.upperBound(atMs) - 1;
      const stale = b.staleAtOrBefore(atMs);
      if (j < b.start) continue;
      const t = b.time(j);
      if (stale > t || t < atMs - this.lookbackDeltaMs) continue;
      rec.withName ??= makeLabels([[LABEL.metricName, rec.name], ...Object.entries(rec.labels)]);
      out.push({ labels: rec.withName, value: b.value(j), timestampMs: t });
    }
    return out;
  }

  /**
   * A range function over `metric[windowMs]` at `atMs`; series without enough points are left out.
   * A convenience over `select` and the PromQL functions (the evaluator does the same itself).
   */
  range(
    fn: RangeFunctionName,
    metric: string,
    matchers: readonly LabelMatcher[],
    atMs: number,
    windowMs: number,
    targetId?: string,
  ): VectorSample[] {
    return this.rangeDetailed(fn, selectorOf(metric, matchers, targetId), atMs, windowMs).samples;
  }

  /** Like `range`, and names the series that had too few points. */
  rangeDetailed(fn: RangeFunctionName, selector: SeriesSelector, atMs: number, windowMs: number): RangeResult {
    return rangeOverSeries(fn, this.select(selector, atMs - windowMs, atMs), atMs, windowMs);
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
      for (const rec of st.series) {
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

  #selectRecs(selector: SeriesSelector): SeriesRec[] {
    const match = compileMatchers(selector.matchers ?? []);
    const out: SeriesRec[] = [];
    for (const st of this.#targetsOf(selector.target)) {
      const list = st.byName.get(selector.metric);
      if (list === undefined) continue;
      for (const rec of ordered(list)) if (match(rec.labels)) out.push(rec);
    }
    if (selector.target === undefined && this.#targets.size > 1) out.sort(byStorageOrder);
    return out;
  }

  #target(target: ScrapeTarget): TargetState {
    let st = this.#targets.get(target.id);
    const labels = makeLabels(Object.entries(target.labels ?? {}).map(([k, v]) => [this.#intern(k), this.#intern(v)]));
    if (st === undefined) {
      st = new TargetState(detachString(target.id), labels);
      this.#targets.set(st.id, st);
    } else if (seriesKey('', st.labels) !== seriesKey('', labels)) {
      throw new Error(`target ${JSON.stringify(target.id)} was first seen with other labels`);
    }
    return st;
  }

  #beginScrape(st: TargetState, page: ParsedPage, timeMs: number, counts: Counts): boolean {
    if (!(timeMs > st.lastScrapeMs)) {
      counts.outOfOrder = page.samples.count;
      return false;
    }
    st.lastScrapeMs = timeMs;
    st.epoch++;
    return true;
  }

  #appendRange(
    st: TargetState,
    page: ParsedPage,
    scrapeTimeMs: number,
    map: (SeriesRec | undefined)[],
    from: number,
    to: number,
    counts: Counts,
  ): void {
    const { series, values, timestamps } = page.samples;
    const epoch = st.epoch;
    const honor = this.honorTimestamps;
    const hashes = page.series.hashes;
    const lastHashes = st.lastHashes;
    const lastRecs = st.lastRecs;
    for (let i = from; i < to; i++) {
      const id = series[i] as number;
      let rec = map[id];
      if (rec === undefined) {
        const guess = lastHashes !== undefined && lastHashes[id] === hashes[id] ? lastRecs[id] : undefined;
        rec =
          guess !== undefined && !guess.dead && page.series.keyEquals(id, guess.pageKey)
            ? guess
            : findInPage(st, page, id);
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
      count(rec.buf.append(explicit ? ts : scrapeTimeMs, values[i] as number), counts);
    }
  }

  #finishScrape(st: TargetState, timeMs: number, counts: Counts): void {
    for (const rec of st.series) this.#finishOne(st, rec, timeMs, counts);
    this.#afterScrape();
  }

  /**
   * After a scrape: a stale marker if the series left with it, expiry if it was not in it.
   * (Deleting from a Set while iterating it is safe; the deleted entry is not visited again.)
   */
  #finishOne(st: TargetState, rec: SeriesRec, timeMs: number, counts: Counts): void {
    if (rec.seenEpoch === st.epoch) return;
    if (rec.seenEpoch === st.epoch - 1 && !rec.explicitTs && rec.buf.markStale(timeMs)) counts.staleMarked++;
    rec.buf.expire(timeMs);
    if (rec.buf.isEmpty()) this.#forget(rec);
  }

  #afterScrape(): void {
    if (this.#strings.size > 4 * this.#seriesCount + 4096) this.#compactStrings();
  }

  /** A new series; `labels` (final: target labels applied) must be in canonical order. */
  #newSeries(st: TargetState, key: string, name: string, labels: Labels, initialCapacity?: number): SeriesRec {
    const internedName = this.#intern(name);
    const finalLabels: Record<string, string> = {};
    for (const k of Object.keys(labels)) setLabel(finalLabels, this.#intern(k), this.#intern(labels[k] as string));
    const pageKey = detachString(key);
    const rec: SeriesRec = {
      target: st,
      name: internedName,
      labels: finalLabels,
      sortKey: undefined,
      pageKey,
      hash: hashRange(pageKey, 0, pageKey.length) & SMI_MASK,
      buf: new SeriesBuffer(this.#limits, initialCapacity),
      withName: undefined,
      seenEpoch: -1,
      explicitTs: false,
      dead: false,
    };
    st.series.add(rec);
    const same = st.byHash.get(rec.hash);
    if (same === undefined) st.byHash.set(rec.hash, rec);
    else if (Array.isArray(same)) same.push(rec);
    else st.byHash.set(rec.hash, [same, rec]);
    let list = st.byName.get(internedName);
    if (list === undefined) {
      list = { recs: [], sorted: true, dead: 0 };
      st.byName.set(internedName, list);
    }
    if (list.recs.length > 0) list.sorted = false;
    list.recs.push(rec);
    this.#seriesCount++;
    return rec;
  }

  #forget(rec: SeriesRec): void {
    const st = rec.target;
    if (!st.series.delete(rec)) return;
    const same = st.byHash.get(rec.hash);
    if (same === rec) {
      st.byHash.delete(rec.hash);
    } else if (Array.isArray(same)) {
      const rest = same.filter((r) => r !== rec);
      st.byHash.set(rec.hash, rest.length === 1 ? (rest[0] as SeriesRec) : rest);
    }
    rec.dead = true;
    const list = st.byName.get(rec.name);
    if (list !== undefined) {
      list.dead++;
      if (list.dead === list.recs.length) st.byName.delete(rec.name);
    }
    this.#seriesCount--;
  }

  #intern(s: string): string {
    let x = this.#strings.get(s);
    if (x === undefined) {
      x = detachString(s);
      this.#strings.set(x, x);
    }
    return x;
  }

  /** Rebuilds the string table from live series so that strings of forgotten series can be collected. */
  #compactStrings(): void {
    const live = new Map<string, string>();
    const keep = (s: string): void => {
      live.set(s, s);
    };
    for (const st of this.#targets.values()) {
      for (const [k, v] of Object.entries(st.labels)) {
        keep(k);
        keep(v);
      }
      for (const rec of st.series) {
        keep(rec.name);
        for (const k of Object.keys(rec.labels)) {
          keep(k);
          keep(rec.labels[k] as string);
        }
      }
    }
    this.#strings.clear();
    for (const [k, v] of live) this.#strings.set(k, v);
  }
}

/** Hashes are cut to 30 bits so that, as map keys, they stay small integers (no boxing). */
const SMI_MASK = 0x3fffffff;

/** The live series of `st` whose page key is `key`. */
function findByKey(st: TargetState, key: string): SeriesRec | undefined {
  const same = st.byHash.get(hashRange(key, 0, key.length) & SMI_MASK);
  if (same === undefined) return undefined;
  if (!Array.isArray(same)) return same.pageKey === key ? same : undefined;
  return same.find((r) => r.pageKey === key);
}

/** The live series of `st` for series `id` of a page, found by hash without making the key string. */
function findInPage(st: TargetState, page: ParsedPage, id: number): SeriesRec | undefined {
  const same = st.byHash.get((page.series.hashes[id] as number) & SMI_MASK);
  if (same === undefined) return undefined;
  if (!Array.isArray(same)) return page.series.keyEquals(id, same.pageKey) ? same : undefined;
  return same.find((r) => page.series.keyEquals(id, r.pageKey));
}

/** A name list without forgotten series, in storage order (compacted and sorted in place when needed). */
function ordered(list: NameList): readonly SeriesRec[] {
  if (list.dead > 0) {
    list.recs = list.recs.filter((r) => !r.dead);
    list.dead = 0;
  }
  if (!list.sorted) {
    list.recs.sort(byStorageOrder);
    list.sorted = true;
  }
  return list.recs;
}

function newCounts(): Counts {
  return { appended: 0, outOfOrder: 0, duplicates: 0, newSeries: 0, staleMarked: 0 };
}

function count(outcome: AppendOutcome, counts: Counts): void {
  switch (outcome) {
    case AppendOutcome.Appended:
      counts.appended++;
      break;
    case AppendOutcome.Duplicate:
      counts.duplicates++;
      break;
    case AppendOutcome.OutOfOrder:
      counts.outOfOrder++;
      break;
    default:
      break;
  }
}

function selectorOf(metric: string, matchers: readonly LabelMatcher[], target: string | undefined): SeriesSelector {
  return target === undefined ? { metric, matchers } : { metric, matchers, target };
}

function byStorageOrder(a: SeriesRec, b: SeriesRec): number {
  a.sortKey ??= sortKeyOf(a.name, a.labels);
  b.sortKey ??= sortKeyOf(b.name, b.labels);
  return a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0;
}

/**
 * A string that sorts like Prometheus's `labels.Compare` on the full label set (`__name__`
 * included): names and values in byte order, separated by a character below any that occurs.
 */
function sortKeyOf(name: string, labels: Labels): string {
  const names = [...Object.keys(labels), LABEL.metricName].sort();
  let key = '';
  for (const n of names) key += `${n}\u0000${n === LABEL.metricName ? name : labels[n]}\u0000`;
  return key;
}
