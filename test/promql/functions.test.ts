import { describe, expect, it } from 'vitest';
import { evaluate, type SeriesStore } from '../../src/promql/evaluate.js';
import { aggregateBy, type Expr, selector, sumWithout } from '../../src/promql/expr.js';
import {
  avgOverTime,
  bucketQuantile,
  delta,
  deriv,
  durationSeconds,
  extrapolatedRate,
  histogramQuantile,
  increase,
  maxOverTime,
  minOverTime,
  type Points,
  quantileOverTime,
  rate,
  sumOverTime,
} from '../../src/promql/functions.js';

/** Points from [seconds, value] pairs. */
function pts(...pairs: [number, number][]): Points {
  return { t: pairs.map(([s]) => s * 1000), v: pairs.map(([, v]) => v) };
}

const INF = Number.POSITIVE_INFINITY;

describe('rate / increase / delta (extrapolatedRate)', () => {
  it('needs two points: one point is insufficient data, not zero', () => {
    expect(rate(pts([10, 5]), 60_000, 60_000)).toBeUndefined();
    expect(increase(pts(), 60_000, 60_000)).toBeUndefined();
    expect(delta(pts([10, 5]), 60_000, 60_000)).toBeUndefined();
  });

  it('samples on both window edges: no extrapolation', () => {
    // Window [0 s, 60 s], a sample on each edge, +1 per second.
    const p = pts([0, 0], [15, 15], [30, 30], [45, 45], [60, 60]);
    expect(increase(p, 60_000, 60_000)).toBe(60);
    expect(rate(p, 60_000, 60_000)).toBe(1);
  });

  it('extrapolates to an edge closer than 1.1 × the average interval', () => {
    // Window [0, 60]; samples 5..50 every 15 s (avg 15, threshold 16.5); 5 s to the start, 10 s to the end.
    // Counter from 100: no zero clamp (100 s to zero > 5 s). Increase 45 over 45 s → extrapolated to 60 s.
    const p = pts([5, 100], [20, 115], [35, 130], [50, 145]);
    expect(increase(p, 60_000, 60_000)).toBe(45 * (60 / 45));
    // Prometheus divides the factor by the window, then multiplies (the order matters in the last bit).
    expect(rate(p, 60_000, 60_000)).toBe(45 * (60 / 45 / 60));
  });

  it('extrapolates only half an interval towards an edge further than 1.1 × the average interval', () => {
    // Window [0, 120]; samples 40..100 every 20 s (threshold 22): 40 s to the start → +10 s, 20 s to the end → +20 s.
    const p = pts([40, 1000], [60, 1020], [80, 1040], [100, 1060]);
    expect(increase(p, 120_000, 120_000)).toBe(60 * ((60 + 10 + 20) / 60));
  });

  it('adds counter resets back, as Prometheus does', () => {
    // 10 → 20 → 5 (reset: +20) → 15: increase over the samples = 15 − 10 + 20 = 25, on-edge window.
    const p = pts([0, 10], [15, 20], [30, 5], [45, 15]);
    expect(increase(p, 45_000, 45_000)).toBe(25);
    // delta treats the same data as a gauge: 15 − 10.
    expect(delta(p, 45_000, 45_000)).toBe(5);
  });

  it('does not extrapolate a counter below zero', () => {
    // Window [0, 60]; samples 30..60 = 1, 2, 3: zero would be reached 15 s before the first sample,
    // closer than the window start (30 s): extrapolate 15 s, not 30 s. Increase 2 over 30 s → 45 s.
    const p = pts([30, 1], [45, 2], [60, 3]);
    expect(increase(p, 60_000, 60_000)).toBe(2 * (45 / 30));
    // The same numbers as a gauge extrapolate the full 30 s... up to the 1.1 rule: 30 > 16.5 → +7.5 s.
    expect(delta(p, 60_000, 60_000)).toBe(2 * ((30 + 7.5) / 30));
  });

  it('divides by the window in seconds, including fractional windows', () => {
    expect(durationSeconds(90_500)).toBe(90.5);
    expect(durationSeconds(300_000)).toBe(300);
    const p = pts([0, 0], [90.5, 181]);
    expect(extrapolatedRate(p, 0, 90_500, true, true)).toBe(2);
  });
});

describe('deriv', () => {
  it('gives the least-squares slope per second', () => {
    expect(deriv(pts([0, 1], [10, 3], [20, 5], [30, 7]))).toBe(0.2);
    // Noisy: x = 0, 15, 30; y = 0, 10, 11 → slope = Σ(x−x̄)(y−ȳ) / Σ(x−x̄)² = (−15·−7 + 0 + 15·4) / 450.
    expect(deriv(pts([0, 0], [15, 10], [30, 11]))).toBeCloseTo(165 / 450, 15);
  });

  it('is 0 for a constant series, NaN for a constant infinite one, undefined with one point', () => {
    expect(deriv(pts([0, 4], [15, 4], [30, 4]))).toBe(0);
    expect(deriv(pts([0, INF], [15, INF]))).toBeNaN();
    expect(deriv(pts([0, 4]))).toBeUndefined();
  });
});

describe('*_over_time', () => {
  it('avg, sum, min, max', () => {
    const p = pts([0, 1], [15, 2], [30, 6]);
    expect(avgOverTime(p)).toBe(3);
    expect(sumOverTime(p)).toBe(9);
    expect(minOverTime(p)).toBe(1);
    expect(maxOverTime(p)).toBe(6);
    expect(avgOverTime(pts())).toBeUndefined();
  });

  it('min and max skip NaN unless every value is NaN', () => {
    expect(maxOverTime(pts([0, Number.NaN], [1, 3], [2, 2]))).toBe(3);
    expect(minOverTime(pts([0, Number.NaN], [1, 3], [2, 2]))).toBe(2);
    expect(maxOverTime(pts([0, Number.NaN]))).toBeNaN();
  });

  it('quantile interpolates between the two values around rank φ × (n − 1), as Prometheus does', () => {
    const p = pts([0, 40], [15, 0], [30, 10], [45, 20]);
    expect(quantileOverTime(p, 0.5)).toBe(15);
    expect(quantileOverTime(p, 0)).toBe(0);
    expect(quantileOverTime(p, 1)).toBe(40);
    expect(quantileOverTime(p, 0.25)).toBeCloseTo(7.5, 12);
    expect(quantileOverTime(pts([0, 7]), 0.5)).toBe(7);
    expect(quantileOverTime(pts(), 0.5)).toBeUndefined();
  });

  it('quantile: one burst in twenty scrapes moves the average, not the median', () => {
    const depths = Array.from({ length: 20 }, (_, i): [number, number] => [i * 15, i === 7 ? 500 : i % 3]);
    expect(avgOverTime(pts(...depths))).toBeGreaterThan(25);
    expect(quantileOverTime(pts(...depths), 0.5)).toBe(1);
  });

  it('quantile: φ outside 0..1 is ∓Inf, a NaN φ is NaN, NaN values sort first', () => {
    const p = pts([0, 1], [15, 2]);
    expect(quantileOverTime(p, -0.1)).toBe(-INF);
    expect(quantileOverTime(p, 1.1)).toBe(INF);
    expect(quantileOverTime(p, Number.NaN)).toBeNaN();
    expect(quantileOverTime(pts([0, 3], [15, Number.NaN], [30, 1]), 0)).toBeNaN();
    expect(quantileOverTime(pts([0, 3], [15, Number.NaN], [30, 1]), 1)).toBe(3);
  });

  it('avg keeps an infinite mean', () => {
    expect(avgOverTime(pts([0, INF], [1, 5]))).toBe(INF);
  });
});

describe('bucketQuantile (Prometheus 2.42)', () => {
  const b = (...pairs: [number, number][]) => pairs.map(([upperBound, count]) => ({ upperBound, count }));

  it('interpolates linearly inside the bucket holding the rank', () => {
    // 100 observations: 20 ≤ 1, 70 ≤ 2, all ≤ +Inf... rank 50 lies in (1, 2]: 1 + (50 − 20) / 50.
    expect(bucketQuantile(0.5, b([1, 20], [2, 70], [4, 100], [INF, 100]))).toEqual({ value: 1.6, inInfBucket: false });
  });

  it('sorts buckets given in any order', () => {
    expect(bucketQuantile(0.5, b([INF, 100], [4, 100], [1, 20], [2, 70]))).toEqual({ value: 1.6, inInfBucket: false });
  });

  it('interpolates from 0 in the lowest bucket when its bound is positive', () => {
    expect(bucketQuantile(0.1, b([2, 40], [INF, 100]))).toEqual({ value: 0.5, inInfBucket: false });
  });

  it('returns the lowest bound when that bound is not positive', () => {
    expect(bucketQuantile(0.1, b([-1, 40], [0, 60], [INF, 100]))).toEqual({ value: -1, inInfBucket: false });
  });

  it('returns the highest finite bound, flagged, when the rank falls in the +Inf bucket', () => {
    expect(bucketQuantile(0.99, b([1, 50], [10, 90], [INF, 100]))).toEqual({ value: 10, inInfBucket: true });
  });

  it('needs a +Inf bucket, two buckets and observations', () => {
    expect(bucketQuantile(0.5, b([1, 5], [2, 10])).value).toBeNaN();
    expect(bucketQuantile(0.5, b([INF, 10])).value).toBeNaN();
    expect(bucketQuantile(0.5, b([1, 0], [INF, 0])).value).toBeNaN();
    expect(bucketQuantile(0.5, []).value).toBeNaN();
  });

  it('merges buckets with the same bound and repairs non-monotonic counts', () => {
    // Two series for le=1 (10 + 10) → 20; le=2 reports 15 < 20 → treated as 20. Rank 30 lies in
    // (2, 4]: 2 + 2 × (30 − 20) / (40 − 20) = 3 (without both repairs it would be 3.2).
    expect(bucketQuantile(0.75, b([1, 10], [1, 10], [2, 15], [4, 40], [INF, 40]))).toEqual({
      value: 3,
      inInfBucket: false,
    });
  });

  it('answers -Inf below 0, +Inf above 1, NaN for NaN', () => {
    const buckets = b([1, 1], [INF, 2]);
    expect(bucketQuantile(-0.1, buckets).value).toBe(Number.NEGATIVE_INFINITY);
    expect(bucketQuantile(1.1, buckets).value).toBe(INF);
    expect(bucketQuantile(Number.NaN, buckets).value).toBeNaN();
  });

  it('quantile 0 and 1', () => {
    expect(bucketQuantile(0, b([1, 10], [2, 20], [INF, 20])).value).toBe(0);
    expect(bucketQuantile(1, b([1, 10], [2, 20], [INF, 20])).value).toBe(2);
  });
});

describe('histogramQuantile over a vector', () => {
  it('groups by the labels other than le and skips unparseable le', () => {
    const v = [
      { labels: { __name__: 'x_bucket', q: 'a', le: '1' }, value: 5 },
      { labels: { __name__: 'x_bucket', q: 'a', le: '+Inf' }, value: 10 },
      { labels: { q: 'b', le: '1e-08' }, value: 0 },
      { labels: { q: 'b', le: 'nope' }, value: 3 },
      { labels: { q: 'b', le: '+Inf' }, value: 4 },
      { labels: { q: 'c' }, value: 4 },
    ];
    expect(histogramQuantile(0.5, v)).toEqual([
      { labels: { q: 'a' }, value: 1, inInfBucket: false },
      { labels: { q: 'b' }, value: 1e-8, inInfBucket: true },
    ]);
  });
});

describe('sum by / without', () => {
  const v = [
    { labels: { name: 'q', priority: 'high', le: '1' }, value: 1 },
    { labels: { name: 'q', priority: 'low', le: '1' }, value: 2 },
    { labels: { name: 'r', priority: 'low', le: '1' }, value: 4 },
    { labels: { name: 'q', le: '+Inf' }, value: 8 },
  ];
  /** The vector as the series of `workqueue_depth` at any time. */
  const store: SeriesStore = {
    instant: () => v.map((s) => ({ ...s, labels: { ...s.labels, __name__: 'workqueue_depth' } })),
    select: () => [],
  };
  const sumOf = (expr: Expr) => evaluate(expr, store, 0).map((s) => [{ ...s.labels }, s.value]);

  it('sum by keeps only the listed labels', () => {
    expect(sumOf(aggregateBy('sum', ['le'], selector('workqueue_depth')))).toEqual([
      [{ le: '1' }, 7],
      [{ le: '+Inf' }, 8],
    ]);
  });

  it('sum without drops the listed labels and the metric name', () => {
    expect(sumOf(sumWithout(['priority'], selector('workqueue_depth')))).toEqual([
      [{ name: 'q', le: '1' }, 3],
      [{ name: 'r', le: '1' }, 4],
      [{ name: 'q', le: '+Inf' }, 8],
    ]);
  });
});
