/**
 * Series selection over the history: the series of one metric that label matchers select, in
 * Prometheus's storage order, and what a query reads of them (sample views, instant samples). The
 * store offers selection only; range functions are applied by src/promql.
 *
 * Contract:
 * - Storage order is Prometheus's `labels.Compare` on the full label set (`__name__` included), so
 *   sums over a selection add in the same order as Prometheus's. Series of one target come out in
 *   that order; series of several targets are merged into it.
 * - Forgotten series are never returned (a name list is compacted when read).
 * - `seriesView` gives the samples in `[startMs, endMs]`, both ends included, stale markers
 *   excluded, as copies. `WindowPoints` gives the same one series at a time in arrays it reuses: what the
 *   evaluator reads, without an allocation per series.
 * - `instantSample` is a PromQL instant selector on one series: the newest sample in
 *   `[atMs - lookbackDeltaMs, atMs]` unless a newer stale marker hides it; labels include `__name__`.
 */
import { compileMatchers, type LabelMatcher, type Labels, makeLabels } from '../exposition/labels.js';
import { LABEL } from '../metrics/names.js';
import type { NameList, SeriesRecord, TargetState } from './target-state.js';

export interface SeriesSelector {
  readonly metric: string;
  readonly matchers?: readonly LabelMatcher[];
  /** Restrict to one target id. */
  readonly target?: string;
}

/** A selected series and its samples (structurally the evaluator's `SeriesPoints`). */
export interface SeriesView {
  readonly target: string;
  readonly name: string;
  /** Final labels (target labels included), without `__name__`. */
  readonly labels: Labels;
  readonly t: Float64Array;
  readonly v: Float64Array;
}

/** An instant-vector sample from `instant`: labels include `__name__`; `timestampMs` is the sample's own time. */
export interface InstantSample {
  readonly labels: Labels;
  readonly value: number;
  readonly timestampMs: number;
}

/**
 * The queries of one target (`forTarget`), in the shape the PromQL evaluator reads (structurally its
 * `SeriesStore`): instant lookups and series selection. Range functions are applied by the evaluator.
 */
export interface SeriesQueries {
  instant(metric: string, matchers: readonly LabelMatcher[], atMs: number): InstantSample[];
  /** The selected series with their samples in `[startMs, endMs]`; see `History.select`. */
  select(metric: string, matchers: readonly LabelMatcher[], startMs: number, endMs: number): SeriesView[];
}

export function selectorOf(
  metric: string,
  matchers: readonly LabelMatcher[],
  target: string | undefined,
): SeriesSelector {
  return target === undefined ? { metric, matchers } : { metric, matchers, target };
}

/**
 * The live series of `selector.metric` in `targets` that the matchers select, in storage order
 * (`mergeTargets`: the targets are several, so their series are sorted together).
 */
export function selectSeries(
  targets: Iterable<TargetState>,
  selector: SeriesSelector,
  merged: MergedNameLists | undefined,
): readonly SeriesRecord[] {
  if (merged !== undefined) return merged.selected(targets, selector.metric, selector.matchers ?? NO_MATCHERS);
  const match = compileMatchers(selector.matchers ?? NO_MATCHERS);
  const out: SeriesRecord[] = [];
  for (const st of targets) {
    const list = st.byName.get(selector.metric);
    if (list === undefined) continue;
    for (const rec of ordered(list)) if (match(rec.labels)) out.push(rec);
  }
  return out;
}

const NO_MATCHERS: readonly LabelMatcher[] = [];

/**
 * Every target's series of a metric in storage order, sorted together once and kept until a series of any
 * target comes or goes (`changed()`), so selections across many targets do not sort on every query; and what
 * matcher lists select of them, kept as long, by matcher list object (an expression's selector holds its own, and
 * evaluates it again and again), so that they are not matched again on every query either.
 */
export class MergedNameLists {
  #generation = 0;
  readonly #lists = new Map<string, { readonly generation: number; readonly recs: readonly SeriesRecord[] }>();
  /** By metric, then by matcher list. */
  readonly #selections = new Map<string, WeakMap<readonly LabelMatcher[], readonly SeriesRecord[]>>();

  /** A series was added or removed. */
  changed(): void {
    this.#generation++;
    this.#lists.clear();
    this.#selections.clear();
  }

  /** The series of `metric` that `matchers` select, in storage order. */
  selected(targets: Iterable<TargetState>, metric: string, matchers: readonly LabelMatcher[]): readonly SeriesRecord[] {
    const recs = this.of(targets, metric);
    if (matchers.length === 0) return recs;
    let byMatchers = this.#selections.get(metric);
    if (byMatchers === undefined) {
      byMatchers = new WeakMap();
      this.#selections.set(metric, byMatchers);
    }
    let selected = byMatchers.get(matchers);
    if (selected === undefined) {
      const match = compileMatchers(matchers);
      selected = recs.filter((rec) => match(rec.labels));
      byMatchers.set(matchers, selected);
    }
    return selected;
  }

  of(targets: Iterable<TargetState>, metric: string): readonly SeriesRecord[] {
    const kept = this.#lists.get(metric);
    if (kept !== undefined && kept.generation === this.#generation) return kept.recs;
    const recs: SeriesRecord[] = [];
    for (const st of targets) {
      const list = st.byName.get(metric);
      if (list !== undefined) for (const rec of ordered(list)) recs.push(rec);
    }
    sortInStorageOrder(recs);
    this.#lists.set(metric, { generation: this.#generation, recs });
    return recs;
  }
}

/** The samples of `rec` in `[startMs, endMs]`, copied out of its buffer. */
export function seriesView(rec: SeriesRecord, startMs: number, endMs: number): SeriesView {
  const b = rec.buf;
  const { t, v } = b.views(b.lowerBound(startMs), b.upperBound(endMs));
  return { target: rec.target.id, name: rec.name, labels: rec.labels, t, v };
}

/** A series' labels and its samples in a window, as `WindowPoints` hands them out. */
export interface WindowSeries {
  readonly labels: Labels;
  readonly t: Float64Array;
  readonly v: Float64Array;
}

/**
 * The samples of each of `recs` in `[startMs, endMs]` (both ends included, stale markers excluded), one series at
 * a time: each item, and the arrays it holds, are valid only until the iteration moves on (they are reused, one
 * pair of arrays per window length). Iterable once.
 */
export class WindowPoints implements Iterable<WindowSeries> {
  readonly #recs: readonly SeriesRecord[];
  readonly #startMs: number;
  readonly #endMs: number;

  constructor(recs: readonly SeriesRecord[], startMs: number, endMs: number) {
    this.#recs = recs;
    this.#startMs = startMs;
    this.#endMs = endMs;
  }

  [Symbol.iterator](): Iterator<WindowSeries> {
    const recs = this.#recs;
    const startMs = this.#startMs;
    const endMs = this.#endMs;
    const arrays = new Map<number, { t: Float64Array; v: Float64Array }>();
    let next = 0;
    // One item and one result, filled anew for each series (see the class comment).
    const item: { labels: Labels; t: Float64Array; v: Float64Array } = { labels: {}, t: NO_TIMES, v: NO_TIMES };
    const result: IteratorResult<WindowSeries> = { done: false, value: item };
    const done: IteratorResult<WindowSeries> = { done: true, value: undefined };
    return {
      next: () => {
        const rec = recs[next++];
        if (rec === undefined) return done;
        const b = rec.buf;
        const i = b.lowerBound(startMs);
        const j = Math.max(i, b.upperBound(endMs));
        let pair = arrays.get(j - i);
        if (pair === undefined) {
          pair = { t: new Float64Array(j - i), v: new Float64Array(j - i) };
          arrays.set(j - i, pair);
        }
        b.read(i, j, pair.t, pair.v);
        item.labels = rec.labels;
        item.t = pair.t;
        item.v = pair.v;
        return result;
      },
    };
  }
}

const NO_TIMES = new Float64Array(0);

/** The instant selector's sample of `rec` at `atMs`, `undefined` when there is none. */
export function instantSample(rec: SeriesRecord, atMs: number, lookbackDeltaMs: number): InstantSample | undefined {
  const b = rec.buf;
  const j = b.upperBound(atMs) - 1;
  const stale = b.staleAtOrBefore(atMs);
  if (j < b.start) return undefined;
  const t = b.time(j);
  if (stale > t || t < atMs - lookbackDeltaMs) return undefined;
  return { labels: labelsWithName(rec), value: b.value(j), timestampMs: t };
}

/** The labels of `rec` with `__name__`: made once, the same object every time after. */
export function labelsWithName(rec: SeriesRecord): Labels {
  rec.withName ??= makeLabels([[LABEL.metricName, rec.name], ...Object.entries(rec.labels)]);
  return rec.withName;
}

/** Whether `rec` holds a sample in `[startMs, endMs]`. */
export function hasSampleIn(rec: SeriesRecord, startMs: number, endMs: number): boolean {
  const b = rec.buf;
  if (b.end === b.start) return false;
  const newest = b.newestSampleTime();
  // The common case (the range ends now): no search.
  if (newest <= endMs) return newest >= startMs;
  const first = b.lowerBound(startMs);
  return first < b.end && b.time(first) <= endMs;
}

/** A name list without forgotten series, in storage order (compacted and sorted in place when needed). */
function ordered(list: NameList): readonly SeriesRecord[] {
  if (list.dead > 0) {
    list.recs = list.recs.filter((r) => !r.dead);
    list.dead = 0;
  }
  if (!list.sorted) {
    sortInStorageOrder(list.recs);
    list.sorted = true;
  }
  return list.recs;
}

/**
 * Sorts `recs` in place into storage order (stable). Each series' sort key is made once per sort and not kept:
 * sorts come only when series come or go, and a history holds many series (at 1,000 queues the keys took 7 MiB).
 */
function sortInStorageOrder(recs: SeriesRecord[]): void {
  const keyed = recs.map((rec) => ({ rec, key: sortKeyOf(rec.name, rec.labels) }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (let i = 0; i < keyed.length; i++) recs[i] = (keyed[i] as { rec: SeriesRecord }).rec;
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
