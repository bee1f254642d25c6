/**
 * PromQL functions with the semantics of Prometheus 2.42 (promql/functions.go, quantile.go,
 * engine.go), as pure functions over samples. Ported line for line where the arithmetic matters,
 * so that results agree with a real Prometheus to the last bit or close to it.
 *
 * Conventions:
 * - Times are unix milliseconds (integers), as in Prometheus's storage; windows are milliseconds.
 * - `Points` are the samples of one series inside the range window, ascending by time, without
 *   stale markers. For a range `metric[w]` evaluated at `t`, Prometheus 2.x selects the samples
 *   with `t - w <= ts <= t` (both ends inclusive; Prometheus 3 made the start exclusive).
 * - A function that needs more samples than the window holds returns `undefined`, meaning
 *   "insufficient data" (Prometheus drops the series from the result). It never returns 0 for that.
 */

import { floatError, readFloat } from '../exposition/float-text.js';
import { type Labels, labelValue } from '../exposition/labels.js';
import { LABEL } from '../metrics/names.js';
import { labelsWithout, signatureWithoutOf } from './derived-labels.js';
import { type Grouping, GroupNumbering } from './grouping.js';
import type { VectorSample } from './vector.js';

/** What `histogram_quantile` groups buckets without. */
const BUCKET_LABELS: readonly string[] = [LABEL.le, LABEL.metricName];
/** The same, for `signatureWithout` (which leaves the metric name out itself). */
const BUCKET_LE: readonly string[] = [LABEL.le];

export type { VectorSample };

export interface Points {
  /** Sample times, unix ms, ascending. */
  readonly t: ArrayLike<number>;
  readonly v: ArrayLike<number>;
}

/** Names of the range-vector functions `evalRangeFunction` understands. */
export type RangeFunctionName =
  | 'rate'
  | 'increase'
  | 'delta'
  | 'deriv'
  | 'avg_over_time'
  | 'min_over_time'
  | 'max_over_time'
  | 'sum_over_time'
  | 'count_over_time'
  | 'last_over_time'
  | 'quantile_over_time';

/** Go's `time.Duration.Seconds()` for a window given in milliseconds. */
export function durationSeconds(windowMs: number): number {
  const ns = windowMs * 1e6;
  const sec = Math.trunc(ns / 1e9);
  const nsec = ns - sec * 1e9;
  return sec + nsec / 1e9;
}

/**
 * Prometheus's `extrapolatedRate`: the increase between the first and last sample (adding back
 * counter resets when `isCounter`), extrapolated towards the range boundaries: to a boundary when
 * the sample is within 1.1 × the average sample interval of it, by half an average interval
 * otherwise; a counter is not extrapolated below zero. Per second when `isRate`.
 * `undefined` with fewer than two points.
 */
export function extrapolatedRate(
  points: Points,
  rangeStartMs: number,
  rangeEndMs: number,
  isCounter: boolean,
  isRate: boolean,
): number | undefined {
  const { t, v } = points;
  const n = t.length;
  if (n < 2) return undefined;
  const first = v[0] as number;
  const last = v[n - 1] as number;
  let resultValue = last - first;
  if (isCounter) {
    let prev = first;
    for (let i = 1; i < n; i++) {
      const cur = v[i] as number;
      if (cur < prev) resultValue += prev;
      prev = cur;
    }
  }
  const t0 = t[0] as number;
  const tn = t[n - 1] as number;
  let durationToStart = (t0 - rangeStartMs) / 1000;
  const durationToEnd = (rangeEndMs - tn) / 1000;
  const sampledInterval = (tn - t0) / 1000;
  const averageDurationBetweenSamples = sampledInterval / (n - 1);

  if (isCounter && resultValue > 0 && first >= 0) {
    const durationToZero = sampledInterval * (first / resultValue);
    if (durationToZero < durationToStart) durationToStart = durationToZero;
  }
  const extrapolationThreshold = averageDurationBetweenSamples * 1.1;
  let extrapolateToInterval = sampledInterval;
  if (durationToStart < extrapolationThreshold) {
    extrapolateToInterval += durationToStart;
  } else {
    extrapolateToInterval += averageDurationBetweenSamples / 2;
  }
  if (durationToEnd < extrapolationThreshold) {
    extrapolateToInterval += durationToEnd;
  } else {
    extrapolateToInterval += averageDurationBetweenSamples / 2;
  }
  let factor = extrapolateToInterval / sampledInterval;
  if (isRate) factor /= durationSeconds(rangeEndMs - rangeStartMs);
  return resultValue * factor;
}

/** `rate(m[w])` at `atMs`, per second. */
export function rate(points: Points, atMs: number, windowMs: number): number | undefined {
  return extrapolatedRate(points, atMs - windowMs, atMs, true, true);
}

/** `increase(m[w])` at `atMs`. */
export function increase(points: Points, atMs: number, windowMs: number): number | undefined {
  return extrapolatedRate(points, atMs - windowMs, atMs, true, false);
}

/** `delta(m[w])` at `atMs` (gauges: no reset handling). */
export function delta(points: Points, atMs: number, windowMs: number): number | undefined {
  return extrapolatedRate(points, atMs - windowMs, atMs, false, false);
}

/**
 * Prometheus's `linearRegression`: least squares with Kahan–Neumaier sums, x in seconds relative to
 * `interceptTimeMs`. A constant series has slope 0 (NaN when the constant is infinite).
 */
export function linearRegression(points: Points, interceptTimeMs: number): { slope: number; intercept: number } {
  const { t, v } = points;
  const len = t.length;
  let n = 0;
  let sumX = 0;
  let cX = 0;
  let sumY = 0;
  let cY = 0;
  let sumXY = 0;
  let cXY = 0;
  let sumX2 = 0;
  let cX2 = 0;
  const initY = v[0] as number;
  let constY = true;
  for (let i = 0; i < len; i++) {
    const y = v[i] as number;
    if (constY && i > 0 && y !== initY) constY = false;
    n += 1;
    const x = ((t[i] as number) - interceptTimeMs) / 1e3;
    let s = sumX + x;
    cX += Math.abs(sumX) >= Math.abs(x) ? sumX - s + x : x - s + sumX;
    sumX = s;
    s = sumY + y;
    cY += Math.abs(sumY) >= Math.abs(y) ? sumY - s + y : y - s + sumY;
    sumY = s;
    const xy = x * y;
    s = sumXY + xy;
    cXY += Math.abs(sumXY) >= Math.abs(xy) ? sumXY - s + xy : xy - s + sumXY;
    sumXY = s;
    const x2 = x * x;
    s = sumX2 + x2;
    cX2 += Math.abs(sumX2) >= Math.abs(x2) ? sumX2 - s + x2 : x2 - s + sumX2;
    sumX2 = s;
  }
  if (constY) {
    if (!Number.isFinite(initY) && !Number.isNaN(initY)) return { slope: Number.NaN, intercept: Number.NaN };
    return { slope: 0, intercept: initY };
  }
  sumX += cX;
  sumY += cY;
  sumXY += cXY;
  sumX2 += cX2;
  const covXY = sumXY - (sumX * sumY) / n;
  const varX = sumX2 - (sumX * sumX) / n;
  const slope = covXY / varX;
  const intercept = sumY / n - (slope * sumX) / n;
  return { slope, intercept };
}

/** `deriv(m[w])`: per-second slope of the least-squares line; `undefined` with fewer than two points. */
export function deriv(points: Points): number | undefined {
  if (points.t.length < 2) return undefined;
  return linearRegression(points, points.t[0] as number).slope;
}

/** `avg_over_time`: Prometheus's incremental mean with Kahan–Neumaier compensation. */
export function avgOverTime(points: Points): number | undefined {
  const v = points.v;
  const len = v.length;
  if (len === 0) return undefined;
  let mean = 0;
  let count = 0;
  let c = 0;
  for (let i = 0; i < len; i++) {
    const x = v[i] as number;
    count++;
    if (isInf(mean)) {
      if (isInf(x) && mean > 0 === x > 0) continue;
      if (!isInf(x) && !Number.isNaN(x)) continue;
    }
    const inc = x / count - mean / count;
    const s = mean + inc;
    c += Math.abs(mean) >= Math.abs(inc) ? mean - s + inc : inc - s + mean;
    mean = s;
  }
  return isInf(mean) ? mean : mean + c;
}

/** `sum_over_time` with Kahan–Neumaier compensation. */
export function sumOverTime(points: Points): number | undefined {
  const v = points.v;
  if (v.length === 0) return undefined;
  let sum = 0;
  let c = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i] as number;
    const s = sum + x;
    c += Math.abs(sum) >= Math.abs(x) ? sum - s + x : x - s + sum;
    sum = s;
  }
  return isInf(sum) ? sum : sum + c;
}

/** `max_over_time`: NaN only when every value is NaN. */
export function maxOverTime(points: Points): number | undefined {
  const v = points.v;
  if (v.length === 0) return undefined;
  let max = v[0] as number;
  for (let i = 0; i < v.length; i++) {
    const x = v[i] as number;
    if (x > max || Number.isNaN(max)) max = x;
  }
  return max;
}

/** `min_over_time`: NaN only when every value is NaN. */
export function minOverTime(points: Points): number | undefined {
  const v = points.v;
  if (v.length === 0) return undefined;
  let min = v[0] as number;
  for (let i = 0; i < v.length; i++) {
    const x = v[i] as number;
    if (x < min || Number.isNaN(min)) min = x;
  }
  return min;
}

/**
 * `quantile_over_time(φ, m[w])`: Prometheus's `quantile` over the window's values, NaN sorted first, a weighted
 * average of the two values around rank φ × (n − 1); −Inf below φ = 0, +Inf above φ = 1, NaN for a NaN φ.
 */
export function quantileOverTime(points: Points, phi: number): number | undefined {
  const n = points.v.length;
  if (n === 0) return undefined;
  if (Number.isNaN(phi)) return Number.NaN;
  if (phi < 0) return Number.NEGATIVE_INFINITY;
  if (phi > 1) return Number.POSITIVE_INFINITY;
  const sorted = Array.from(points.v).sort(nanFirst);
  const rank = phi * (n - 1);
  const lower = Math.max(0, Math.floor(rank));
  const upper = Math.min(n - 1, lower + 1);
  const weight = rank - Math.floor(rank);
  return (sorted[lower] as number) * (1 - weight) + (sorted[upper] as number) * weight;
}

/** Ascending, NaN before every number (Prometheus's `vectorByValueHeap` order). */
function nanFirst(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1;
  return Number.isNaN(b) ? 1 : a - b;
}

export function countOverTime(points: Points): number | undefined {
  return points.v.length === 0 ? undefined : points.v.length;
}

export function lastOverTime(points: Points): number | undefined {
  const n = points.v.length;
  return n === 0 ? undefined : (points.v[n - 1] as number);
}

/**
 * Applies a range function by name; `undefined` means insufficient data (see the module comment). `param` is
 * `quantile_over_time`'s φ (required by it, read by nothing else).
 */
export function evalRangeFunction(
  fn: RangeFunctionName,
  points: Points,
  atMs: number,
  windowMs: number,
  param?: number,
): number | undefined {
  switch (fn) {
    case 'rate':
      return rate(points, atMs, windowMs);
    case 'increase':
      return increase(points, atMs, windowMs);
    case 'delta':
      return delta(points, atMs, windowMs);
    case 'deriv':
      return deriv(points);
    case 'avg_over_time':
      return avgOverTime(points);
    case 'min_over_time':
      return minOverTime(points);
    case 'max_over_time':
      return maxOverTime(points);
    case 'sum_over_time':
      return sumOverTime(points);
    case 'count_over_time':
      return countOverTime(points);
    case 'last_over_time':
      return lastOverTime(points);
    case 'quantile_over_time':
      if (param === undefined) throw new TypeError('quantile_over_time needs its φ');
      return quantileOverTime(points, param);
  }
}

/** Minimum number of points a range function needs to give a value. */
export function minimumPoints(fn: RangeFunctionName): number {
  return fn === 'rate' || fn === 'increase' || fn === 'delta' || fn === 'deriv' ? 2 : 1;
}

/** The samples of one selected series in a range window; labels without `__name__`. */
export interface SeriesPoints extends Points {
  readonly labels: Labels;
}

/** A range function over selected series, with the series that lacked samples named explicitly. */
export interface RangeResult {
  /** One sample per series that had enough points; labels without `__name__`. */
  readonly samples: VectorSample[];
  /** Series selected but with too few points in the window ("insufficient data"), labels without `__name__`. */
  readonly insufficient: Labels[];
}

/**
 * `fn(metric[windowMs])` at `atMs` over the series a store selected for `[atMs - windowMs, atMs]`
 * (in storage order): one sample per series, labels as given (no `__name__`); series with too few
 * points are listed in `insufficient` (Prometheus drops them from the result). Each series (its item and points)
 * is read before the next series is taken and never kept, so a store may hand them out in a reused item and arrays.
 */
export function rangeOverSeries(
  fn: RangeFunctionName,
  series: Iterable<SeriesPoints>,
  atMs: number,
  windowMs: number,
  param?: number,
): RangeResult {
  const samples: VectorSample[] = [];
  const insufficient: Labels[] = [];
  const need = minimumPoints(fn);
  for (const s of series) {
    if (s.t.length < need) {
      insufficient.push(s.labels);
      continue;
    }
    const value = evalRangeFunction(fn, s, atMs, windowMs, param);
    if (value === undefined) insufficient.push(s.labels);
    else samples.push({ labels: s.labels, value });
  }
  return { samples, insufficient };
}

function isInf(x: number): boolean {
  return x === Number.POSITIVE_INFINITY || x === Number.NEGATIVE_INFINITY;
}

// ---- histograms ---------------------------------------------------------------------------------

export interface Bucket {
  readonly upperBound: number;
  readonly count: number;
}

export interface QuantileResult {
  readonly value: number;
  /**
   * True when the rank fell into the `+Inf` bucket: `value` is then the highest finite bound, a
   * lower bound of the true quantile (report it as `bound: "ge"`).
   */
  readonly inInfBucket: boolean;
}

/**
 * Prometheus 2.42's `bucketQuantile` over classic buckets (any order): sorts by upper bound,
 * requires a `+Inf` bucket, merges equal bounds, makes counts monotonic, interpolates linearly
 * (from 0 in the lowest bucket when its bound is positive). NaN when there is no `+Inf` bucket,
 * fewer than two buckets, no observations, or q is NaN; -Inf for q < 0; +Inf for q > 1.
 */
export function bucketQuantile(q: number, input: readonly Bucket[]): QuantileResult {
  const nan = { value: Number.NaN, inInfBucket: false };
  if (Number.isNaN(q)) return nan;
  if (q < 0) return { value: Number.NEGATIVE_INFINITY, inInfBucket: false };
  if (q > 1) return { value: Number.POSITIVE_INFINITY, inInfBucket: false };
  if (input.length === 0) return nan;
  const sorted = input.map((b) => ({ upperBound: b.upperBound, count: b.count }));
  sorted.sort((a, b) => a.upperBound - b.upperBound);
  if ((sorted[sorted.length - 1] as Bucket).upperBound !== Number.POSITIVE_INFINITY) return nan;

  // coalesceBuckets
  const buckets: { upperBound: number; count: number }[] = [];
  let last = { ...(sorted[0] as Bucket) };
  for (let i = 1; i < sorted.length; i++) {
    const b = sorted[i] as Bucket;
    if (b.upperBound === last.upperBound) {
      last.count += b.count;
    } else {
      buckets.push(last);
      last = { ...b };
    }
  }
  buckets.push(last);

  // ensureMonotonic
  let max = (buckets[0] as Bucket).count;
  for (let i = 1; i < buckets.length; i++) {
    const b = buckets[i] as { count: number };
    if (b.count > max) max = b.count;
    else if (b.count < max) b.count = max;
  }

  if (buckets.length < 2) return nan;
  const observations = (buckets[buckets.length - 1] as Bucket).count;
  if (observations === 0) return nan;
  let rank = q * observations;
  // sort.Search(len(buckets)-1, count >= rank)
  let lo = 0;
  let hi = buckets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (!((buckets[mid] as Bucket).count >= rank)) lo = mid + 1;
    else hi = mid;
  }
  const b = lo;
  if (b === buckets.length - 1) {
    return { value: (buckets[buckets.length - 2] as Bucket).upperBound, inInfBucket: true };
  }
  const bb = buckets[b] as Bucket;
  if (b === 0 && bb.upperBound <= 0) return { value: bb.upperBound, inInfBucket: false };
  let bucketStart = 0;
  const bucketEnd = bb.upperBound;
  let count = bb.count;
  if (b > 0) {
    const prev = buckets[b - 1] as Bucket;
    bucketStart = prev.upperBound;
    count -= prev.count;
    rank -= prev.count;
  }
  return { value: bucketStart + (bucketEnd - bucketStart) * (rank / count), inInfBucket: false };
}

export interface QuantileSample extends QuantileResult {
  /** The group's labels: the input labels without `le` and `__name__`. */
  readonly labels: Labels;
}

/** The buckets of a `histogram_quantile` input: its samples' groups and each sample's upper bound (its `le`). */
export type BucketGrouping = Grouping & { readonly upperBounds: Float64Array };

/**
 * The groups of `histogram_quantile`'s input: by the other labels than `le` and `__name__`, in order of first
 * appearance. Samples without a parseable `le` are in none (skipped, as Prometheus does). Depends on the labels
 * only (see grouping.ts).
 */
export function bucketGrouping(vector: readonly VectorSample[]): BucketGrouping {
  const groups = new GroupNumbering();
  const groupOf = new Int32Array(vector.length).fill(-1);
  const upperBounds = new Float64Array(vector.length);
  vector.forEach((s, i) => {
    const le = labelValue(s.labels, LABEL.le);
    if (le === undefined) return;
    const upperBound = readFloat(le, 0, le.length);
    if (floatError !== undefined) return;
    // The key from the sample's own labels; the group's labels are made once, for its first sample.
    const key = signatureWithoutOf(s.labels, BUCKET_LE);
    groupOf[i] = groups.numberOf(key) ?? groups.open(key, labelsWithout(s.labels, BUCKET_LABELS));
    upperBounds[i] = upperBound;
  });
  return { groupOf, upperBounds, labels: groups.labels };
}

/** `histogram_quantile(q, v)` over `vector` grouped as `bucketGrouping(vector)` groups it. */
export function bucketQuantiles(
  q: number,
  vector: readonly VectorSample[],
  grouping: BucketGrouping,
): QuantileSample[] {
  const { groupOf, upperBounds, labels } = grouping;
  const buckets: Bucket[][] = labels.map(() => []);
  vector.forEach((s, i) => {
    const group = groupOf[i] as number;
    if (group >= 0) (buckets[group] as Bucket[]).push({ upperBound: upperBounds[i] as number, count: s.value });
  });
  return labels.map((groupLabels, group) => ({
    labels: groupLabels,
    ...bucketQuantile(q, buckets[group] as Bucket[]),
  }));
}

/**
 * `histogram_quantile(q, v)` over a vector of bucket samples (each with an `le` label): groups by
 * the other labels and applies `bucketQuantile`. Samples without a parseable `le` are skipped,
 * as Prometheus does. Groups come out in order of first appearance.
 */
export function histogramQuantile(q: number, vector: readonly VectorSample[]): QuantileSample[] {
  return bucketQuantiles(q, vector, bucketGrouping(vector));
}
