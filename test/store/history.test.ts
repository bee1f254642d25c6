import { describe, expect, it } from 'vitest';
import type { LabelMatcher } from '../../src/exposition/labels.js';
import { parseExposition } from '../../src/exposition/parser.js';
import { hashRange } from '../../src/exposition/series-index.js';
import { LABEL, WORKQUEUE } from '../../src/metrics/names.js';
import { aggregateBy, histogramQuantile, rangeFn, selector, sumWithout } from '../../src/promql/expr.js';
import { DEFAULT_MAX_SAMPLES_PER_SERIES, History, type ScrapeTarget } from '../../src/store/history.js';
import { collidingKeys } from '../support/colliding-keys.js';
import { evaluateOver, rangeOver } from '../support/history-range.js';

const T0 = 1_700_000_000_000;
const S = 1000;
const TARGET: ScrapeTarget = { id: 'ctrl/a:1', labels: { job: 'ctrl', instance: 'a:1' } };
const page = (text: string) => parseExposition(text);
const eq = (label: string, value: string): LabelMatcher => ({ label, op: '=', value });
const plain = (v: readonly { labels: object; value: number }[]) => v.map((s) => [{ ...s.labels }, s.value]);

/** Appends `values[i]` for `metric{name="q"}` at T0 + 15 s × i. */
function counterHistory(values: readonly number[], metric: string = WORKQUEUE.adds): History {
  const h = new History();
  values.forEach((v, i) => {
    h.append(TARGET, page(`${metric}{name="q"} ${v}\n`), T0 + 15 * S * i);
  });
  return h;
}

describe('History: appending scrapes', () => {
  it('attaches target labels to every series', () => {
    const h = counterHistory([1]);
    expect(plain(h.instant(WORKQUEUE.adds, [], T0))).toEqual([
      [{ __name__: WORKQUEUE.adds, instance: 'a:1', job: 'ctrl', name: 'q' }, 1],
    ]);
    expect(h.targets()).toEqual([
      {
        id: 'ctrl/a:1',
        labels: { instance: 'a:1', job: 'ctrl' },
        series: 1,
        firstMs: T0,
        lastMs: T0,
        firstScrapedMs: T0,
        lastScrapeMs: T0,
      },
    ]);
  });

  it('tells since when a target is scraped apart from the timestamps its page sets', () => {
    const h = new History();
    const sixHoursAgo = T0 - 6 * 3600 * S;
    h.append(TARGET, page(`m{a="stamped"} 1 ${sixHoursAgo}\nm{a="scraped"} 2\n`), T0);
    expect(h.targets()[0]).toMatchObject({ firstMs: sixHoursAgo, firstScrapedMs: T0, lastMs: T0 });
  });

  it('keeps clashing scraped labels as exported_<name> (honor_labels: false)', () => {
    const h = new History();
    h.append(TARGET, page('m{job="scraped",exported_job="taken",instance="x"} 1\n'), T0);
    const [s] = h.select({ metric: 'm' });
    expect({ ...s?.labels }).toEqual({
      instance: 'a:1',
      job: 'ctrl',
      exported_job: 'taken',
      exported_exported_job: 'scraped',
      exported_instance: 'x',
    });
  });

  it('reports out-of-order and duplicate samples and ignores identical repeats', () => {
    const h = new History();
    expect(h.append(TARGET, page('a 1\nb 1 1700000000000\n'), T0)).toEqual({
      appended: 2,
      outOfOrder: 0,
      duplicates: 0,
      newSeries: 2,
      staleMarked: 0,
    });
    // b carries its own (old) timestamp: once the same (ignored), once older, once same time other value.
    expect(
      h.append(TARGET, page('a 2\nb 1 1700000000000\nb 2 1699999999000\nb 3 1700000000000\n'), T0 + 15 * S),
    ).toEqual({ appended: 1, outOfOrder: 1, duplicates: 1, newSeries: 0, staleMarked: 0 });
    // A whole scrape older than the last one is rejected.
    expect(h.append(TARGET, page('a 3\n'), T0 + 5 * S)).toMatchObject({ appended: 0, outOfOrder: 1 });
  });

  it('rejects a target id reused with other labels', () => {
    const h = counterHistory([1]);
    expect(() => h.append({ id: TARGET.id, labels: { job: 'other' } }, page('a 1\n'), T0 + S)).toThrow(
      /first seen with other labels/,
    );
  });

  it('keeps at most 30 minutes and 121 samples per series by default', () => {
    const h = counterHistory(Array.from({ length: 200 }, (_, i) => i));
    const [s] = h.select({ metric: WORKQUEUE.adds });
    expect(DEFAULT_MAX_SAMPLES_PER_SERIES).toBe(121);
    expect(s?.t.length).toBe(121);
    expect(s?.t[0]).toBe(T0 + 15 * S * 79);
    expect(s?.v[0]).toBe(79);
    expect(s?.t[120]).toBe(T0 + 15 * S * 199);
  });

  it('drops by age when scrapes are slower than the sample limit assumes', () => {
    const h = new History({ retentionMs: 60 * S });
    for (let i = 0; i < 10; i++) h.append(TARGET, page('g 1\n'), T0 + 20 * S * i);
    const [s] = h.select({ metric: 'g' });
    // Newest at 180 s; kept: 120, 140, 160, 180.
    expect(Array.from(s?.t ?? [])).toEqual([120, 140, 160, 180].map((x) => T0 + x * S));
  });

  it('forgets series whose samples have all expired', () => {
    const h = new History({ retentionMs: 60 * S });
    h.append(TARGET, page('gone 1\nstays 1\n'), T0);
    h.append(TARGET, page('stays 2\n'), T0 + 30 * S);
    expect(h.metricNames()).toEqual(['gone', 'stays']);
    h.append(TARGET, page('stays 3\n'), T0 + 61 * S);
    expect(h.metricNames()).toEqual(['stays']);
    expect(h.stats()).toMatchObject({ targets: 1, series: 1, samples: 2 });
  });
});

describe('History: staleness and lookback', () => {
  it('marks a series missing from the next scrape stale: instant lookups find nothing after it', () => {
    const h = new History();
    h.append(TARGET, page('a 1\nb 1\n'), T0);
    const report = h.append(TARGET, page('a 2\n'), T0 + 15 * S);
    expect(report.staleMarked).toBe(1);
    expect(h.instant('b', [], T0 + 14 * S).map((s) => s.value)).toEqual([1]);
    expect(h.instant('b', [], T0 + 15 * S)).toEqual([]);
    expect(h.instant('b', [], T0 + 60 * S)).toEqual([]);
    // Not marked again while it stays away; back with a new sample, visible again.
    expect(h.append(TARGET, page('a 3\n'), T0 + 30 * S).staleMarked).toBe(0);
    h.append(TARGET, page('a 4\nb 5\n'), T0 + 45 * S);
    expect(h.instant('b', [], T0 + 45 * S).map((s) => s.value)).toEqual([5]);
    // Range functions skip the stale marker: b has samples at 0 s and 45 s.
    expect(rangeOver(h, 'count_over_time', 'b', [], T0 + 45 * S, 60 * S).samples.map((s) => s.value)).toEqual([2]);
  });

  it('without a stale marker a value holds for the 5-minute lookback, both ends included', () => {
    const h = counterHistory([7], 'g');
    expect(h.instant('g', [], T0 + 300 * S).map((s) => s.value)).toEqual([7]);
    expect(h.instant('g', [], T0 + 300 * S + 1)).toEqual([]);
    expect(h.instant('g', [], T0 - 1)).toEqual([]);
  });

  it('markStale hides every series of a target (scrape failed)', () => {
    const h = new History();
    h.append(TARGET, page('a 1\nb 1\n'), T0);
    expect(h.markStale(TARGET.id, T0 + 15 * S)).toBe(2);
    expect(h.instant('a', [], T0 + 16 * S)).toEqual([]);
    // The next good scrape does not mark anything stale twice.
    expect(h.append(TARGET, page('a 2\n'), T0 + 30 * S).staleMarked).toBe(0);
    expect(h.instant('a', [], T0 + 30 * S).map((s) => s.value)).toEqual([2]);
  });

  it('leaves series with their own timestamps out of staleness tracking', () => {
    const h = new History();
    h.append(TARGET, page('a 1\nb 1 1700000000000\n'), T0);
    expect(h.append(TARGET, page('a 2\n'), T0 + 15 * S).staleMarked).toBe(0);
    expect(h.instant('b', [], T0 + 15 * S).map((s) => s.value)).toEqual([1]);
  });
});

describe('History: range functions', () => {
  it('rate over a counter reset, with Prometheus extrapolation', () => {
    // 0 s … 60 s: 100, 130, 160, 10 (restart), 40. Increase = 40 − 100 + 160 = 100 over 60 s, on-edge window.
    const h = counterHistory([100, 130, 160, 10, 40]);
    expect(plain(rangeOver(h, 'increase', WORKQUEUE.adds, [], T0 + 60 * S, 60 * S).samples)).toEqual([
      [{ instance: 'a:1', job: 'ctrl', name: 'q' }, 100],
    ]);
    expect(rangeOver(h, 'rate', WORKQUEUE.adds, [], T0 + 60 * S, 60 * S).samples.map((s) => s.value)).toEqual([
      100 / 60,
    ]);
  });

  it('names series with fewer than two samples in the window as insufficient data', () => {
    const h = counterHistory([1, 2]);
    h.append(TARGET, page(`${WORKQUEUE.adds}{name="q"} 3\n${WORKQUEUE.adds}{name="new"} 1\n`), T0 + 30 * S);
    const result = rangeOver(h, 'rate', WORKQUEUE.adds, [], T0 + 30 * S, 30 * S);
    expect(result.samples.map((s) => s.labels.name)).toEqual(['q']);
    expect(result.insufficient.map((l) => ({ ...l }))).toEqual([{ instance: 'a:1', job: 'ctrl', name: 'new' }]);
    // The store selects it with its one sample; the range function leaves it out, as Prometheus does.
    expect(h.select({ metric: WORKQUEUE.adds }, T0, T0 + 30 * S).map((v) => [v.labels.name, v.t.length])).toEqual([
      ['new', 1],
      ['q', 3],
    ]);
    // A window with one sample: insufficient too.
    expect(rangeOver(h, 'rate', WORKQUEUE.adds, [], T0 + 30 * S, 10 * S).samples).toEqual([]);
  });

  it('deriv of a gauge growing 1 per second', () => {
    const h = counterHistory([0, 15, 30, 45], WORKQUEUE.longestRunningProcessor);
    expect(
      rangeOver(h, 'deriv', WORKQUEUE.longestRunningProcessor, [], T0 + 45 * S, 60 * S).samples.map((s) => s.value),
    ).toEqual([1]);
  });

  it('selects with =, !=, =~, !~ and treats a missing label as empty', () => {
    const h = new History();
    h.append(TARGET, page('d{name="a",priority="high"} 1\nd{name="b"} 2\nd{name="ab",controller="c"} 3\n'), T0);
    const names = (m: LabelMatcher[]) =>
      h
        .instant('d', m, T0)
        .map((s) => s.labels.name)
        .sort();
    expect(names([eq(LABEL.name, 'a')])).toEqual(['a']);
    expect(names([{ label: LABEL.name, op: '!=', value: 'a' }])).toEqual(['ab', 'b']);
    expect(names([{ label: LABEL.name, op: '=~', value: 'a.*' }])).toEqual(['a', 'ab']);
    expect(names([{ label: LABEL.name, op: '=~', value: 'b' }])).toEqual(['b']);
    expect(names([{ label: LABEL.name, op: '!~', value: 'a|b' }])).toEqual(['ab']);
    expect(names([eq(LABEL.controller, '')])).toEqual(['a', 'b']);
    expect(names([eq(LABEL.job, 'ctrl'), eq(LABEL.priority, 'high')])).toEqual(['a']);
  });

  it('sum without(priority) and a quantile over summed bucket rates', () => {
    const h = new History();
    const scrape = (n: number) =>
      [
        `${WORKQUEUE.depth}{name="q",priority="high"} ${n}`,
        `${WORKQUEUE.depth}{name="q",priority="low"} ${2 * n}`,
        `w_bucket{name="q",le="0.1"} ${10 * n}`,
        `w_bucket{name="q",le="1"} ${30 * n}`,
        `w_bucket{name="q",le="+Inf"} ${40 * n}`,
        '',
      ].join('\n');
    for (let i = 0; i <= 4; i++) h.append(TARGET, page(scrape(i)), T0 + 15 * S * i);
    const at = T0 + 60 * S;
    expect(plain(evaluateOver(h, sumWithout([LABEL.priority], selector(WORKQUEUE.depth)), at))).toEqual([
      [{ instance: 'a:1', job: 'ctrl', name: 'q' }, 12],
    ]);
    // Rates per second: 10/15, 30/15, 40/15 → rank 0.5 × 40/15 in (0.1, 1]: 0.1 + 0.9 × (20 − 10)/(30 − 10).
    const q = evaluateOver(
      h,
      histogramQuantile(0.5, aggregateBy('sum', [LABEL.le], rangeFn('rate', 'w_bucket', 60 * S))),
      at,
    );
    expect(q).toHaveLength(1);
    expect(q[0]?.value).toBeCloseTo(0.55, 12);
  });

  it('serves queries across targets in Prometheus storage order, or for one target', () => {
    const h = new History();
    h.append({ id: 'b', labels: { instance: 'b' } }, page('m 2\n'), T0);
    h.append({ id: 'a', labels: { instance: 'a' } }, page('m 1\n'), T0);
    expect(h.instant('m', [], T0).map((s) => s.value)).toEqual([1, 2]);
    expect(
      h
        .forTarget('b')
        .instant('m', [], T0)
        .map((s) => s.value),
    ).toEqual([2]);
    expect(h.removeTarget('a')).toBe(true);
    expect(h.instant('m', [], T0).map((s) => s.value)).toEqual([2]);
  });
});

describe('History: finding series again', () => {
  it('follows series when a page lists them in another order', () => {
    const h = new History();
    h.append(TARGET, page('m{k="a"} 1\nm{k="b"} 2\nm{k="c"} 3\n'), T0);
    h.append(TARGET, page('m{k="c"} 30\nm{k="a"} 10\nm{k="d"} 40\nm{k="b"} 20\n'), T0 + 15 * S);
    const values = h.select({ metric: 'm' }).map((v) => [v.labels.k, Array.from(v.v)]);
    expect(values.sort()).toEqual([
      ['a', [1, 10]],
      ['b', [2, 20]],
      ['c', [3, 30]],
      ['d', [40]],
    ]);
  });

  it('keeps series apart whose keys have the same hash', () => {
    // Two keys that collide in the 32-bit key hash of the parser and the history (its seed is random per process,
    // so they are searched for: a birthday search finds a pair among about 80,000 keys).
    const [x, y] = collidingKeys();
    expect(hashRange(x, 0, x.length)).toBe(hashRange(y, 0, y.length));
    const first = page(`${x} 1\n${y} 2\n`);
    expect(first.series.count).toBe(2);
    const h = new History();
    h.append(TARGET, first, T0);
    h.append(TARGET, page(`${y} 20\n${x} 10\n`), T0 + 15 * S);
    h.append(TARGET, page(`${x} 100\n`), T0 + 30 * S);
    const labelValueOf = (key: string) => key.slice('m{a="'.length, -'"}'.length);
    const values = new Map(h.select({ metric: 'm' }).map((v) => [v.labels.a, Array.from(v.v)]));
    expect(values).toEqual(
      new Map([
        [labelValueOf(x), [1, 10, 100]],
        [labelValueOf(y), [2, 20]],
      ]),
    );
    expect(h.instant('m', [], T0 + 30 * S).map((s) => s.labels.a)).toEqual([labelValueOf(x)]);
  });
});

describe('History: the words of forgotten series', () => {
  it('series forgotten and targets removed leave the samples of the others whole', async () => {
    const retentionMs = 2 * 60 * S;
    const h = new History({ retentionMs });
    const steady = { id: 'steady' };
    const steadyPage = (i: number) => page(Array.from({ length: 50 }, (_, k) => `m{k="${k}"} ${k + i / 3}\n`).join(''));
    // Each generation of the churning target's series lives four scrapes, then expires and is forgotten.
    const churnPage = (i: number) =>
      page(Array.from({ length: 50 }, (_, k) => `m{g="${Math.floor(i / 4)}",k="${k}"} ${i * 1.5}\n`).join(''));
    for (let i = 0; i < 200; i++) {
      h.append(steady, steadyPage(i), T0 + i * 15 * S);
      h.append({ id: 'churn' }, churnPage(i), T0 + i * 15 * S);
      if (i === 100) {
        h.append({ id: 'removed' }, steadyPage(i), T0 + i * 15 * S);
        h.removeTarget('removed');
        await Promise.resolve();
      }
    }
    const last = 199;
    const kept = retentionMs / (15 * S) + 1;
    const expected = Array.from({ length: 50 }, (_, k) => ({
      k: String(k),
      v: Array.from({ length: kept }, (_, j) => k + (last - kept + 1 + j) / 3),
    }));
    const held = h
      .select({ metric: 'm', target: 'steady' })
      .map((view) => ({ k: view.labels.k, v: Array.from(view.v) }));
    expect(held.sort((a, b) => Number(a.k) - Number(b.k))).toEqual(expected);
    expect(h.targets().find((t) => t.id === 'churn')?.series).toBeLessThanOrEqual(50 * 3);
  });
});

describe('History: chunked appends', () => {
  const bigPage = (n: number, value: number) =>
    page(Array.from({ length: n }, (_, i) => `m{i="${i}"} ${value}`).join('\n'));

  it('yields to the event loop between chunks and gives the same result as append', async () => {
    const h = new History();
    let turns = 0;
    let running = true;
    const spin = () => {
      if (!running) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const report = await h.appendInChunks(TARGET, bigPage(10_000, 1), T0, { chunkSize: 1000 });
    running = false;
    expect(report).toEqual({ appended: 10_000, outOfOrder: 0, duplicates: 0, newSeries: 10_000, staleMarked: 0 });
    // Ten chunks, nine yields: the other setImmediate chain ran in between.
    expect(turns).toBeGreaterThanOrEqual(9);
    const direct = new History();
    direct.append(TARGET, bigPage(10_000, 1), T0);
    expect(h.stats()).toEqual(direct.stats());
  });

  it('runs appends to one target one at a time, in call order', async () => {
    const h = new History();
    const first = h.appendInChunks(TARGET, bigPage(3000, 1), T0, { chunkSize: 100 });
    const second = h.appendInChunks(TARGET, bigPage(2000, 2), T0 + 15 * S, { chunkSize: 100 });
    const [a, b] = await Promise.all([first, second]);
    expect(a.appended).toBe(3000);
    // The second scrape saw the first one complete: 1000 series went stale.
    expect(b).toMatchObject({ appended: 2000, staleMarked: 1000, newSeries: 0 });
  });
});
